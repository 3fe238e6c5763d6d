"""Dialect rules are data: each dialect's tables live in its own module, the
combined tables are built without changing them, and the compiler reads
named profile flags instead of comparing dialect names.

- ir/dialects/<name>.py define each dialect's profile, operators,
  functions and operations; ir/semantics.py and ir/ops.py combine them
  into new tables (a key two dialects define must mean the same).
- The finding codes: each dialect package exports its codes and examples;
  compiler/codes.py lists them without changing any module's table.
- No module of the package compares a dialect's name (or looks one up by
  its spelling) but the dialects' test generators (testing/) and the
  translation modules, which have their own scan; the few strings spelled
  like a dialect that are something else are listed with what they are.
- The analyses behave the same for a profile under another name, and
  differently when one of its flags is flipped (so the flag is what they
  read).
"""

from __future__ import annotations

import ast
from pathlib import Path

import attrs
import flowc
import pytest
from flowc.compiler import code_types, codes, codes_examples
from flowc.compiler.aevatar import code_examples as aevatar_examples
from flowc.compiler.aevatar import codes as aevatar_codes
from flowc.compiler.analyze import analyze
from flowc.compiler.analyze.structure import check_structure
from flowc.compiler.instruction import code_examples as instruction_examples
from flowc.compiler.instruction import codes as instruction_codes
from flowc.compiler.workflowskill import code_examples as workflowskill_examples
from flowc.compiler.workflowskill import codes as workflowskill_codes
from flowc.ir import expr as E
from flowc.ir import ops, semantics, specs
from flowc.ir.dialects import aevatar, common, instruction, workflowskill
from flowc.ir.workflow import Attr, Edge, EdgeKind, Node, Workflow
from flowc.pipeline import driver

ROOT = Path(flowc.__file__).resolve().parent
DATA = Path(__file__).resolve().parent / "data"
DIALECT_NAMES = frozenset({"workflowskill", "aevatar", "instruction"})
DIALECT_MODULES = {"workflowskill": workflowskill, "instruction": instruction, "aevatar": aevatar}
# The key prefixes of each dialect's operators and functions.
KEY_PREFIXES = {"workflowskill": ("wfs.",), "instruction": ("cel.", "tmpl."), "aevatar": ("aevatar.",)}


# ------------------------------------------------------------------ the IR tables
@pytest.mark.parametrize("name", sorted(DIALECT_MODULES))
def test_each_dialect_module_defines_its_own_profile_and_keys(name):
    module = DIALECT_MODULES[name]
    assert module.PROFILE.name == name
    assert semantics.PROFILES[name] is module.PROFILE
    for key in [*module.OPERATORS, *module.FUNCTIONS]:
        assert key.startswith(KEY_PREFIXES[name]), key
    for table in ("OPERATORS", "FUNCTIONS", "TRUTHINESS", "STRINGIFY"):
        assert getattr(module, table).items() <= getattr(semantics, table).items()
    assert module.OPERATIONS.items() <= ops.OPERATIONS.items()


def test_the_combined_tables_are_new_and_hold_exactly_the_dialects_entries():
    modules = list(DIALECT_MODULES.values())
    for table in ("OPERATORS", "FUNCTIONS", "TRUTHINESS", "STRINGIFY"):
        combined = getattr(semantics, table)
        assert all(combined is not getattr(m, table) for m in modules)
        assert set(combined) == {k for m in modules for k in getattr(m, table)}
    assert set(ops.OPERATIONS) == set(common.OPERATIONS).union(*(m.OPERATIONS for m in modules))
    assert ops.OPERATIONS is not common.OPERATIONS
    assert ops.END_NODE_ID == common.END_NODE_ID == "$end"


def test_operations_shared_by_dialects_are_defined_once():
    own = [set(m.OPERATIONS) for m in DIALECT_MODULES.values()]
    for i, a in enumerate(own):
        assert not a & set(common.OPERATIONS)
        for b in own[i + 1:]:
            assert not a & b


def test_merging_refuses_a_key_with_two_meanings():
    one = {"x.eq": specs.OperatorSpec("x.eq", "==", 2, "one meaning")}
    same = {"x.eq": specs.OperatorSpec("x.eq", "==", 2, "one meaning")}
    other = {"x.eq": specs.OperatorSpec("x.eq", "==", 2, "another meaning")}
    assert specs.merged(one, same) == one
    with pytest.raises(ValueError, match="x.eq"):
        specs.merged(one, other)


# ------------------------------------------------------------------ finding codes
def _prefix(code: str) -> str:
    return code.rstrip("0123456789")


@pytest.mark.parametrize(("codes_module", "examples_module", "prefixes"), [
    (workflowskill_codes, workflowskill_examples, {"WFS"}),
    (instruction_codes, instruction_examples, {"INS", "CEL"}),
    (aevatar_codes, aevatar_examples, {"AEV"}),
], ids=["workflowskill", "instruction", "aevatar"])
def test_each_dialect_package_exports_its_codes_and_examples(codes_module, examples_module, prefixes):
    assert codes_module.CODES and {_prefix(c) for c in codes_module.CODES} == prefixes
    assert {_prefix(c) for c in examples_module.EXAMPLES} == prefixes
    assert set(examples_module.NOT_STANDALONE) <= set(codes_module.CODES)
    for code, info in codes_module.CODES.items():
        example = examples_module.EXAMPLES.get(code)
        assert example is not None, f"{code} has no example in its package"
        assert (info.wrong, info.right, info.example_file) == (example.wrong, example.right, example.file)
        assert codes.CODES[code] is info


def test_the_registry_changes_no_table_it_reads():
    # codes_examples holds only the codes no dialect owns, also after the
    # registry (imported above) has combined every table.
    shared = {"FLC", "YAML", "ANA", "LIM", "TRN", "HST"}
    assert {_prefix(c) for c in codes_examples.EXAMPLES} <= shared
    assert {_prefix(c) for c in codes_examples.NOT_STANDALONE} <= shared
    modules = (codes_examples, workflowskill_examples, instruction_examples, aevatar_examples)
    assert sum(len(m.EXAMPLES) for m in modules) == len(codes.EXAMPLES)
    assert all(codes.EXAMPLES is not m.EXAMPLES for m in modules)
    assert sum(len(m.NOT_STANDALONE) for m in modules) == len(codes.NOT_STANDALONE)


def test_a_code_defined_twice_is_refused():
    info = code_types.CodeInfo("XYZ001", "t", "e")
    with pytest.raises(ValueError, match="XYZ001"):
        code_types.combined({"XYZ001": info}, {"XYZ001": info})


# ------------------------------------------------------------------ no dialect names in rules
def _names_in(node: ast.AST) -> set[str]:
    """The dialect names a comparison operand spells (a string, or a set,
    tuple, list or frozenset of strings)."""
    if isinstance(node, ast.Constant) and node.value in DIALECT_NAMES:
        return {node.value}
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return set().union(*(_names_in(e) for e in node.elts)) if node.elts else set()
    if isinstance(node, ast.Call) and node.args and getattr(node.func, "id", "") in ("frozenset", "set"):
        return _names_in(node.args[0])
    return set()


def _looks_up_a_name(node: ast.AST) -> bool:
    """``table["aevatar"]`` or ``table.get("aevatar")``: a comparison by
    another spelling."""
    if isinstance(node, ast.Subscript):
        return bool(_names_in(node.slice))
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and bool(node.args) and bool(_names_in(node.args[0])))


def _assigns_a_name_set(node: ast.AST) -> bool:
    return (isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, (ast.Set, ast.Call))
            and bool(_names_in(node.value)))


def dialect_name_rules(source: str) -> list[tuple[int, str]]:
    """Comparisons, `case` patterns and lookups with a dialect name, and
    name sets assigned at module level (the data of such a comparison
    elsewhere)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                if _names_in(operand):
                    found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.MatchValue) and _names_in(node.value):
            found.append((node.lineno, ast.unparse(node.value)))
        elif _assigns_a_name_set(node) or _looks_up_a_name(node):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_scanner_finds_every_kind_of_dialect_name_rule():
    source = '''
a = wf.semantics == "workflowskill"
b = dialect in {"aevatar", "other"}
c = "instruction" != x
CYCLES = frozenset({"aevatar"})
match d:
    case "aevatar":
        pass
DIALECT = "aevatar"
e = x == "workflow"
f = FRONT_ENDS["aevatar"].strict
g = FRONT_ENDS.get("instruction")
h = FRONT_ENDS[dialect].strict
TABLE = {"aevatar": 1}
'''
    assert sorted(line for line, _ in dialect_name_rules(source)) == [2, 3, 4, 5, 7, 11, 12]


# Comparisons and lookups with a string that is spelled like a dialect but
# is not one: (file, the comparison or lookup) -> what the string is.
NOT_DIALECT_NAMES: dict[tuple[str, str], str] = {
    ("compiler/instruction/frontend.py", "'instruction' in body"): "a subagent step's field `instruction`",
    ("hosts/llm_args.py", "'instruction' in args"):
        "the argument `instruction` of an agent step's LLM call (its prompt)",
    ("hosts/llm_args.py", "args.get('instruction')"):
        "the argument `instruction` of an agent step's LLM call (its prompt)",
}

# What the scan leaves out, each with its reason. The generators of
# testing/ draw documents of each dialect by name: they are the dialects'
# test generators. The translation modules (an emitter per target dialect
# and what they share) are scanned by their own package's test.
NOT_SCANNED: dict[str, str] = {
    "tests": "not part of the package",
    "benchmarks": "not part of the package",
    "examples": "not part of the package",
    "docs": "not part of the package",
    "build": "not part of the package (a build's copy)",
    "dist": "not part of the package (a build's copy)",
    "node_modules": "not part of the package",
    "testing": "the dialects' test generators choose what to draw by dialect",
    "translation": "the translation package scans its own modules",
}


def scanned_modules() -> list[Path]:
    """Every module of the flowc package but those of NOT_SCANNED."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(ROOT).parts):
            continue
        if not any(rel.startswith(prefix + "/") for prefix in NOT_SCANNED):
            out.append(path)
    return out


def test_the_scan_covers_every_package_but_the_generators_and_translation():
    packages = {p.relative_to(ROOT).parts[0] for p in scanned_modules() if len(p.relative_to(ROOT).parts) > 1}
    assert {"ir", "compiler", "pipeline", "cli", "backends", "diagrams", "hosts", "cluster", "journal", "plan",
            "runtime"} <= packages
    assert "testing" not in packages
    scanned = {p.relative_to(ROOT).as_posix() for p in scanned_modules()}
    assert {"host.py", "pipeline/driver.py", "backends/python/aevatar_expr.py", "cli/check.py"} <= scanned
    assert not any(rel.startswith("translation/") for rel in scanned)


def test_no_module_compares_a_dialect_name():
    """A rule about one dialect is a field of its profile
    (ir/dialects/<name>.py), of its front end (pipeline/frontends.py), an
    IR attr, or a row of a table keyed by the name, never a comparison."""
    found = []
    for path in scanned_modules():
        rel = path.relative_to(ROOT).as_posix()
        for line, text in dialect_name_rules(path.read_text(encoding="utf-8")):
            if (rel, text) not in NOT_DIALECT_NAMES:
                found.append(f"{rel}:{line}: {text}")
    assert found == []


def test_every_allowed_use_still_exists():
    """An allow-list entry whose use went away is removed, so the list stays small and true."""
    seen = {(rel, text) for rel, _ in NOT_DIALECT_NAMES
            for _, text in dialect_name_rules((ROOT / rel).read_text(encoding="utf-8"))}
    assert set(NOT_DIALECT_NAMES) <= seen


# ------------------------------------------------------------------ the analyses read the flags
def _compiled(rel: str) -> Workflow:
    path = DATA / rel
    result = driver.compile_text(path.read_text(encoding="utf-8"), str(path), None)
    assert result.workflow is not None
    return result.workflow


def _findings(workflow: Workflow) -> list[str]:
    return sorted(f"{d.code} {d.message}" for d in analyze(workflow))


def _as(monkeypatch, workflow: Workflow, name: str, **flags) -> Workflow:
    profile = attrs.evolve(semantics.PROFILES[workflow.semantics], name=name, **flags)
    monkeypatch.setitem(semantics.PROFILES, name, profile)
    return attrs.evolve(workflow, semantics=name)


# An aevatar workflow that loops back (allowed there), and a WorkflowSkill
# one that reads `.length` of an array.
LOOPING = "aevatar/aevatarAI__aevatar/workflows/turing-completeness/counter-addition.yaml"
LENGTH = "workflowskill/fixtures/filter-exit.md"


@pytest.mark.parametrize("rel", [LOOPING, LENGTH])
def test_a_profile_under_another_name_is_analysed_the_same(monkeypatch, rel):
    workflow = _compiled(rel)
    assert _findings(_as(monkeypatch, workflow, "renamed")) == _findings(workflow)


def test_control_cycles_allowed_is_what_allows_a_loop(monkeypatch):
    workflow = _compiled(LOOPING)
    assert not any(f.startswith("ANA403") for f in _findings(workflow))
    strict = _as(monkeypatch, workflow, "no_loops", control_cycles_allowed=False)
    assert any(f.startswith("ANA403") for f in _findings(strict))


def test_array_length_field_is_what_types_length(monkeypatch):
    workflow = _compiled(LENGTH)
    assert not any(f.startswith("ANA504") for f in _findings(workflow))
    plain = _as(monkeypatch, workflow, "no_length", array_length_field=False)
    assert any(f.startswith("ANA504") and "length" in f for f in _findings(plain))


def test_branch_arms_route_on_is_what_stops_arms_returning(monkeypatch):
    # check: a branch whose arms `a` and `b` have no edges of their own;
    # they return to the branch's successor `$end` unless arms route on.
    nodes = (Node("check", "branch", "conditional", attrs=(Attr("condition", E.Literal(True)),)),
             Node("a", "call", "tool"), Node("b", "call", "tool"), Node("$end", "end", "end"))
    edges = (Edge("check", "a", EdgeKind.BRANCH, "then"), Edge("check", "b", EdgeKind.BRANCH, "else"),
             Edge("check", "$end", EdgeKind.SEQUENCE))
    workflow = Workflow("arms", "workflowskill", "workflowskill", nodes, edges, ("check",), "$end")
    assert [d.code for d in check_structure(workflow)] == []
    routed = _as(monkeypatch, workflow, "arms_route_on", branch_arms_route_on=True)
    assert sorted(d.message for d in check_structure(routed) if d.code == "ANA404") == [
        "step 'a' never reaches the end of the workflow", "step 'b' never reaches the end of the workflow"]
