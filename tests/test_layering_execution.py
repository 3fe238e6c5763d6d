"""Execution code never decides behaviour by a workflow's dialect.

Execution code is ``runtime/``, ``backends/python/``, ``backends/vm/``
and the plan package ``plan/``. It reads the IR's operations, edge kinds
and attributes and the named flags of the workflow's ``DialectProfile``
(``plan/model.py`` chooses the scheduler by them); it never reads ``Workflow.semantics`` or
``Workflow.dialect`` to choose, never compares a dialect's name, and never
reads ``Node.kind`` (the dialect's own spelling of a step).

- Static: an AST scan of the execution code finds no ``.semantics`` or
  ``.dialect`` read, no comparison, lookup or ``case`` of a dialect name,
  and no read of a plan's ``"kind"`` display field by a scheduler, except
  the display uses in ALLOWED_* (each with its reason). The scanner is
  checked on a snippet that breaks every rule.
- Dynamic: with ``Node.kind`` patched to record who reads it, every corpus
  workflow of the three dialects (tests/data) is compiled by both backends
  and run on both; no read comes from execution code except the display
  fields in ALLOWED_KIND_READS.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

import flowc
import pytest
from flowc.backends import vm
from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.ir.workflow import Node
from flowc.pipeline import driver

ROOT = Path(flowc.__file__).resolve().parent
DATA = Path(__file__).resolve().parent / "data"
DIALECTS = frozenset({"workflowskill", "aevatar", "instruction"})

# Reads of `.semantics` / `.dialect` that only display the name:
# (file, enclosing function, attribute) -> why it is allowed.
ALLOWED_ATTRIBUTE_READS: dict[tuple[str, str, str], str] = {
    ("backends/python/codegen.py", "_prologue", "dialect"):
        "the generated module's header comment names the source's dialect",
    ("backends/python/plan_codegen.py", "_module", "dialect"):
        "the generated module's header comment names the source's dialect",
}
# Reads of a plan node's "kind" (the display field) in execution code:
# (file, enclosing function) -> why it is allowed.
ALLOWED_PLAN_KIND_READS: dict[tuple[str, str], str] = {
    ("backends/vm/disasm.py", "_graph"): "the listing shows each node's source spelling",
}
# Reads of Node.kind from execution code: (module, function) -> why.
ALLOWED_KIND_READS: dict[tuple[str, str], str] = {
    ("flowc.plan.dataflow", "_node"):
        "the plan's display field `kind` (listings only; the scheduler reads `op`)",
}
# Attributes that hold a key of a semantics table, not a dialect name: the
# STRINGIFY keys "aevatar" and "wfs" are spelled like their dialects.
SEMANTIC_KEY_ATTRIBUTES = frozenset({"stringify"})


def execution_files(root: Path = ROOT) -> list[Path]:
    files = [*root.joinpath("runtime").rglob("*.py"), *root.joinpath("backends", "python").rglob("*.py"),
             *root.joinpath("backends", "vm").rglob("*.py"), *root.joinpath("plan").rglob("*.py")]
    return sorted(p for p in files if p.is_file() and "__pycache__" not in p.parts)


# ---------------------------------------------------------------- the scanner
def _is_dialect_name(node: ast.AST, collections: set[str]) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in DIALECTS
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_dialect_name(e, collections) for e in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set",
                                                                                          "tuple"):
        return any(_is_dialect_name(a, collections) for a in node.args)
    return isinstance(node, ast.Name) and node.id in collections


def _dialect_collections(tree: ast.Module) -> set[str]:
    """Module-level names bound to a collection that holds a dialect name."""
    names: set[str] = set()
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
            if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else []
        value = getattr(stmt, "value", None)
        if value is not None and not isinstance(value, ast.Constant) and _is_dialect_name(value, set()):
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _functions(tree: ast.AST):
    """(node, innermost enclosing function name) for every node."""
    stack: list[tuple[ast.AST, str]] = [(tree, "<module>")]
    while stack:
        node, where = stack.pop()
        yield node, where
        inner = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def _semantic_key(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in SEMANTIC_KEY_ATTRIBUTES


def _looks_up_a_dialect(node: ast.AST) -> bool:
    """``table["aevatar"]`` or ``table.get("aevatar")``."""
    if isinstance(node, ast.Subscript):
        return _is_dialect_name(node.slice, set())
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and bool(node.args) and _is_dialect_name(node.args[0], set()))


def _is_plan_kind(node: ast.AST) -> bool:
    """``x["kind"]`` or ``x.get("kind")``."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "kind"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "kind")


def scan(source: str, rel: str) -> list[str]:
    """What in ``source`` decides by the dialect (one line per finding)."""
    tree = ast.parse(source)
    collections = _dialect_collections(tree)
    found = []
    for node, where in _functions(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in ("semantics",
                                                                                               "dialect"):
            if (rel, where, node.attr) not in ALLOWED_ATTRIBUTE_READS:
                found.append(f"{rel}:{line} ({where}) reads .{node.attr}")
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = [o for o in operands if _is_dialect_name(o, collections)]
            if named and not all(_semantic_key(o) for o in operands if o not in named):
                found.append(f"{rel}:{line} ({where}) compares a dialect name")
        elif isinstance(node, ast.match_case) and _is_dialect_name(getattr(node.pattern, "value", None) or
                                                                   ast.Constant(None), collections):
            found.append(f"{rel}:{line} ({where}) matches a dialect name")
        elif _looks_up_a_dialect(node):
            found.append(f"{rel}:{line} ({where}) looks a dialect name up")
        if _is_plan_kind(node) and (rel, where) not in ALLOWED_PLAN_KIND_READS:
            found.append(f"{rel}:{line} ({where}) reads a plan's display field \"kind\"")
    return found


def scan_tree(root: Path = ROOT) -> dict[str, list[str]]:
    """Findings per execution module under ``root`` (modules without any left out)."""
    out = {}
    for path in execution_files(root):
        rel = path.relative_to(root).as_posix()
        found = scan(path.read_text(encoding="utf-8"), rel)
        if found:
            out[rel] = found
    return out


def test_the_scanner_finds_every_kind_of_dialect_decision():
    bad = '''
NAMES = ("workflowskill",)
def choose(wf, e, plan):
    if wf.semantics == "aevatar":
        pass
    if wf.dialect in NAMES:
        pass
    if "instruction" != wf.semantics:
        pass
    profile = PROFILES["aevatar"]
    other = PROFILES.get("instruction")
    match wf.name:
        case "workflowskill":
            pass
    if e.stringify != "aevatar":   # a STRINGIFY key, not a dialect name
        pass
    return plan["kind"], plan.get("kind")
'''
    found = scan(bad, "backends/python/bad.py")
    reasons = Counter(f.split(") ", 1)[1] for f in found)
    assert reasons == {"reads .semantics": 2, "reads .dialect": 1, "compares a dialect name": 3,
                       "looks a dialect name up": 2, "matches a dialect name": 1,
                       'reads a plan\'s display field "kind"': 2}, found


def test_execution_code_never_decides_by_the_dialect():
    assert len(execution_files()) > 30   # the scan sees the execution code
    assert scan_tree() == {}


def test_every_allowed_display_use_still_exists():
    """An allow-list entry whose use went away is removed, so the list stays small and true."""
    seen_attributes = set()
    seen_plan_kind = set()
    for path in execution_files():
        rel = path.relative_to(ROOT).as_posix()
        for node, where in _functions(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("semantics", "dialect"):
                seen_attributes.add((rel, where, node.attr))
            if _is_plan_kind(node):
                seen_plan_kind.add((rel, where))
    assert set(ALLOWED_ATTRIBUTE_READS) <= seen_attributes
    assert set(ALLOWED_PLAN_KIND_READS) <= seen_plan_kind


# ---------------------------------------------------------------- the dynamic check
EXECUTION_PACKAGES = ("flowc.runtime", "flowc.backends.python", "flowc.backends.vm", "flowc.plan")


def _is_execution_module(name: str) -> bool:
    return name.startswith(EXECUTION_PACKAGES)


class _KindSpy:
    """A data descriptor in place of Node's ``kind`` slot: records the
    (module, function) of every direct reader and reads the slot."""

    def __init__(self, slot) -> None:
        self.slot = slot
        self.readers: Counter = Counter()

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        frame = sys._getframe(1)
        self.readers[(frame.f_globals.get("__name__", "?"), frame.f_code.co_name)] += 1
        return self.slot.__get__(obj, owner)

    def __set__(self, obj, value) -> None:
        self.slot.__set__(obj, value)


@pytest.fixture
def kind_spy():
    slot = Node.__dict__["kind"]
    spy = _KindSpy(slot)
    Node.kind = spy
    try:
        yield spy
    finally:
        Node.kind = slot


def corpus_workflows():
    for path in sorted(DATA.rglob("*")):
        if path.is_file() and path.suffix in (".yaml", ".yml", ".md") and driver.looks_like_workflow(str(path)):
            result = driver.compile_file(str(path))
            if result.ok and result.workflow is not None:
                yield path, result.workflow


def _host(workflow) -> ScriptedHost:
    roles = {f"llm:{a.id}": ["urgent", "true", {"error": "rate limited"}] for a in workflow.actors}
    return ScriptedHost({**roles, "human:approval": [True, False], "human:input": "yes",
                         "*": [{"output": {"k": "v", "items": ["a", "b"]}}, "normal", {"error": "boom"}]})


def test_no_execution_code_reads_node_kind(kind_spy):
    inputs = {"input": "hello\n---\nworld", "topic": "flowc"}
    dialects: Counter = Counter()
    for path, workflow in corpus_workflows():
        module = load_module(compile_workflow(workflow))
        program = vm.load(vm.compile_workflow(workflow))
        py = module.run(dict(inputs), _host(workflow))
        got = program.run(dict(inputs), _host(workflow))
        assert py["status"] == got["status"], path
        dialects[workflow.dialect] += 1
    assert dialects["aevatar"] >= 170 and dialects["workflowskill"] >= 10 and dialects["instruction"] >= 3, dialects
    readers = {key for key in kind_spy.readers if _is_execution_module(key[0])}
    assert readers - set(ALLOWED_KIND_READS) == set(), sorted(readers - set(ALLOWED_KIND_READS))
    # The spy sees what it should: the front ends read kind, and so do the
    # allowed display field of the dataflow plans.
    assert any(module.startswith("flowc.compiler.") for module, _ in kind_spy.readers)
    assert set(ALLOWED_KIND_READS) <= readers


# ---------------------------------------------------------------- dispatch by flags
def _first(dialect: str):
    return next(wf for _, wf in corpus_workflows() if wf.dialect == dialect)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_backends_choose_by_the_profile_flags_not_its_name(dialect, monkeypatch):
    """The same flags under another semantics key give the same module and
    bytecode: nothing reads the key itself."""
    import attrs
    from flowc.ir import semantics

    workflow = _first(dialect)
    renamed = attrs.evolve(semantics.PROFILES[workflow.semantics], name="renamed")
    monkeypatch.setitem(semantics.PROFILES, "renamed", renamed)
    twin = attrs.evolve(workflow, semantics="renamed")
    assert compile_workflow(twin) == compile_workflow(workflow)
    assert vm.compile_workflow(twin) == vm.compile_workflow(workflow)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_profile_no_scheduler_implements_is_refused_naming_the_row(dialect, monkeypatch):
    import attrs
    from flowc.backends.python import BackendError
    from flowc.backends.vm import AssembleError
    from flowc.ir import semantics

    workflow = _first(dialect)
    profile = semantics.PROFILES[workflow.semantics]
    other = "ready_nodes" if profile.concurrency != "ready_nodes" else "none"
    monkeypatch.setitem(semantics.PROFILES, "odd", attrs.evolve(profile, name="odd", concurrency=other))
    monkeypatch.setitem(semantics.PROFILES, "new", attrs.evolve(profile, name="new", scheduling="by_moon"))
    wanted = f"{profile.scheduling} scheduling runs concurrency {profile.concurrency!r}, not {other!r}"
    for key, message in (("odd", wanted), ("new", "no backend runs 'by_moon' scheduling")):
        twin = attrs.evolve(workflow, semantics=key)
        with pytest.raises(BackendError, match=message):
            compile_workflow(twin)
        with pytest.raises(AssembleError, match=message):
            vm.compile_workflow(twin)
