"""Translation reads the IR and the runtime only, and never a dialect's name.

flowc.translation converts a workflow by its DialectProfile's rows
(``scheduling``, ``access``, ``transform_output``), the IR's ops and attrs
(an aevatar step's ``primitive``): an AST scan finds no comparison with a
dialect name, no comparison of ``.semantics`` or ``.dialect``, and no rule
that reads a step's written type (``kind.strip().lower()``) in a
comparison. Its imports stay inside the IR, the runtime (``runtime/`` and
the Python backend's runtime modules) and the package itself. The
scanner is checked on a snippet that breaks every rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

import flowc
from test_layering import GRAPH

ROOT = Path(flowc.__file__).resolve().parent
DIALECTS = frozenset({"workflowskill", "aevatar", "instruction"})
# Attributes holding a key of a semantics table, spelt like a dialect
# (STRINGIFY's "aevatar"), not a dialect name.
SEMANTIC_KEY_ATTRIBUTES = frozenset({"stringify"})
RUNTIME = ("flowc.runtime",)


def _names_a_dialect(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in DIALECTS
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_dialect(e) for e in node.elts)
    return isinstance(node, ast.Attribute) and node.attr in ("semantics", "dialect")


def _written_type(node: ast.AST) -> bool:
    """``x.kind.strip().lower()``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "lower" \
        and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Attribute) \
        and node.func.value.func.attr == "strip" and isinstance(node.func.value.func.value, ast.Attribute) \
        and node.func.value.func.value.attr == "kind"


def violations(source: str, name: str = "<snippet>") -> list[str]:
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(isinstance(s, ast.Attribute) and s.attr in SEMANTIC_KEY_ATTRIBUTES for s in sides):
            continue
        if any(_names_a_dialect(s) or _written_type(s) for s in sides):
            out.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return out


def translation_files() -> list[Path]:
    return sorted(p for p in ROOT.joinpath("translation").rglob("*.py") if "__pycache__" not in p.parts)


def test_the_scanner_finds_each_kind_of_comparison():
    snippet = ("a = wf.semantics == 'instruction'\nb = wf.dialect != TARGET\nc = n.kind.strip().lower() == 'x'\n"
               "d = name in ('aevatar', 'other')\ne = t.stringify != 'aevatar'\nf = profile.access == 'cel'\n")
    found = violations(snippet)
    assert [v.split(":")[1] for v in found] == ["1", "2", "3", "4"], found


def test_translation_compares_no_dialect_name():
    files = translation_files()
    assert len(files) > 20
    found = [v for p in files for v in violations(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))]
    assert found == []


def test_translation_imports_only_the_ir_the_runtime_and_itself():
    edges = [(src, dst) for src, dst in GRAPH.edges
             if src.startswith("flowc.translation") and not dst.startswith(("flowc.ir", "flowc.translation",
                                                                             *RUNTIME))]
    assert edges == []
    assert any(src.startswith("flowc.translation") and dst.startswith(RUNTIME) for src, dst in GRAPH.edges)
