"""The import layering of the flowc package, read from the source with `ast`.

- flowc.ir imports nothing of flowc outside flowc.ir (front ends build it,
  backends read it, it knows neither);
- flowc.compiler never imports flowc.backends, and flowc.backends never
  imports flowc.compiler (they meet only in the IR and the CLI);
- no import cycles among flowc modules, counting imports inside functions
  too (a lazy import hides a cycle from the interpreter, not from readers),
  and none either when the imports under `if TYPE_CHECKING:` count;
- flowc.diagrams (pictures of a workflow) imports only flowc.ir and
  flowc.termtext, and only the `flowc graph` command imports it;
- flowc.compiler.analyze imports only flowc.ir (the analyses are
  dialect-independent: they read the IR and the dialects' profiles);
- a dialect module of flowc.ir.dialects imports only flowc.ir.specs (no
  dialect reads or changes another's tables);
- flowc.runtime imports nothing of flowc outside flowc.runtime (generated
  modules and the VM import the runtime, never the other way round), and
  the runtime modules a device loads import only the standard library and
  each other.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import flowc
import networkx as nx
import pytest
from flowc.backends.vm import bundle

ROOT = Path(flowc.__file__).resolve().parent
# Directories of the repository that are not part of the package.
NOT_PACKAGE = {"tests", "benchmarks", "build", "dist", "docs", "examples", "node_modules", "scripts"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["flowc", *parts])


def package_modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).parts
        if rel[0] in NOT_PACKAGE or any(p.startswith(".") or p == "__pycache__" or "egg-info" in p
                                        for p in rel):
            continue
        # Only directories that are packages (have __init__.py all the way up).
        if all((ROOT.joinpath(*rel[:i]) / "__init__.py").is_file() for i in range(1, len(rel))):
            modules[_module_name(path)] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, type_checking: bool = False):
    """Import statements, skipping `if TYPE_CHECKING:` blocks unless
    ``type_checking``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if not type_checking and isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def import_graph(type_checking: bool = False) -> nx.DiGraph:
    modules = package_modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in _imports(tree, type_checking):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = (_resolve_relative(name, is_package, node.level, node.module) if node.level
                        else node.module or "")
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            for target in targets:
                if target == "flowc" or target.startswith("flowc."):
                    # `import flowc.a.b` where flowc.a.b is not a module: the nearest module.
                    while target not in modules and "." in target:
                        target = target.rsplit(".", 1)[0]
                    if target != name:
                        graph.add_edge(name, target, line=node.lineno)
    return graph


GRAPH = import_graph()


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _violations(source_pkg: str, allowed) -> list[str]:
    out = []
    for src, dst, data in GRAPH.edges(data=True):
        if _in(src, source_pkg) and not allowed(dst):
            out.append(f"{src} (line {data['line']}) imports {dst}")
    return sorted(out)


# ------------------------------------------------------------------ the intended layering
# Data flows one way: source -> front end -> IR -> analyze -> plan -> runtime
# -> (Python module | VM); translation reads the IR; the pipeline wires the
# pieces together and the command line sits on top. Each row: a package and
# the packages of flowc it may import (its own modules always). The leaf
# modules (sourcefile: bounded file reading, termtext: escaping for people)
# import nothing of flowc and anyone may use them; `flowc` itself is the
# package's version. docs/ARCHITECTURE.md has the same table.
LEAVES = ("flowc.sourcefile", "flowc.termtext")
FRONT_END_SHARED = ("flowc.ir", "flowc.grammar", "flowc.compiler.yamlsrc", "flowc.compiler.numbers",
                    "flowc.compiler.suggest", "flowc.compiler.code_types", "flowc.compiler.codes",
                    "flowc.compiler.codes_examples")
LAYERS: dict[str, tuple[str, ...]] = {
    "flowc.ir": (),
    "flowc.grammar": (),
    "flowc.sourcefile": (),
    "flowc.termtext": (),
    "flowc.compiler.workflowskill": FRONT_END_SHARED,
    "flowc.compiler.aevatar": FRONT_END_SHARED,
    "flowc.compiler.instruction": FRONT_END_SHARED,
    "flowc.compiler.analyze": ("flowc.ir",),
    "flowc.compiler.yamlsrc": ("flowc.ir",),
    "flowc.compiler.numbers": (),
    "flowc.compiler.suggest": (),
    "flowc.compiler.code_types": (),
    "flowc.compiler.codes_examples": ("flowc.compiler.code_types",),
    # the one registry of finding codes lists every dialect's codes
    "flowc.compiler.codes": ("flowc.compiler.code_types", "flowc.compiler.codes_examples",
                             "flowc.compiler.workflowskill", "flowc.compiler.aevatar", "flowc.compiler.instruction"),
    "flowc.compiler.schema": ("flowc.compiler.workflowskill",),
    "flowc.plan": ("flowc.ir",),
    "flowc.runtime": (),
    "flowc.backends.python": ("flowc", "flowc.ir", "flowc.plan", "flowc.runtime"),
    "flowc.backends.vm": ("flowc.ir", "flowc.plan", "flowc.runtime"),
    "flowc.translation": ("flowc.ir", "flowc.runtime"),
    "flowc.diagrams": ("flowc.ir",),
    "flowc.journal": ("flowc.runtime",),
    "flowc.host": ("flowc.ir",),
    "flowc.hosts": ("flowc.ir", "flowc.host"),
}
# The packages above the execution layers: they may import anything below,
# never the command line.
ABOVE = ("flowc.pipeline", "flowc.testing", "flowc.cluster")


def _allowed(source: str, target: str) -> bool:
    """May module ``source`` import module ``target``?"""
    if any(_in(target, leaf) for leaf in LEAVES):
        return True
    for package, allowed in LAYERS.items():
        if _in(source, package):
            return _in(target, package) or any(target == a or _in(target, a) if a != "flowc" else target == a
                                               for a in allowed)
    if any(_in(source, package) for package in ABOVE):
        return not _in(target, "flowc.cli")
    return True  # the command line, codes_doc, __main__: on top


def test_every_import_follows_the_intended_layering():
    broken = sorted(f"{src} (line {data['line']}) imports {dst}" for src, dst, data in GRAPH.edges(data=True)
                    if not _allowed(src, dst))
    assert broken == []


def test_every_module_has_a_layer():
    placed = set(LAYERS) | set(ABOVE) | {"flowc", "flowc.cli", "flowc.codes_doc", "flowc.__main__", "flowc.vm",
                                         "flowc.compiler", "flowc.backends"}
    unplaced = sorted(m for m in GRAPH.nodes if not any(_in(m, q) for q in set(placed) - {"flowc", "flowc.compiler",
                                                                                            "flowc.backends"})
                      and m not in placed)
    assert unplaced == []


def test_the_layering_rules_refuse_what_runs_back_up():
    assert not _allowed("flowc.runtime.kernel", "flowc.backends.python.codegen")
    assert not _allowed("flowc.backends.vm.plan_steps", "flowc.backends.python.aevatar_expr")
    assert not _allowed("flowc.compiler.instruction.frontend", "flowc.compiler.analyze")
    assert not _allowed("flowc.translation.fold", "flowc.plan.kernel")
    assert not _allowed("flowc.pipeline.driver", "flowc.cli.app")
    assert not _allowed("flowc.ir.workflow", "flowc.compiler.yamlsrc")
    assert _allowed("flowc.backends.vm.disasm", "flowc.termtext")
    assert _allowed("flowc.cli.app", "flowc.pipeline.driver")


def test_the_graph_is_not_empty():
    assert {"flowc.ir", "flowc.ir.workflow", "flowc.compiler.yamlsrc", "flowc.pipeline.driver", "flowc.cli"} \
        <= set(GRAPH.nodes)
    assert GRAPH.has_edge("flowc.pipeline.driver", "flowc.compiler.analyze")
    assert GRAPH.has_edge("flowc.ir.workflow", "flowc.ir.expr")
    assert GRAPH.number_of_edges() > 30


def test_ir_imports_only_ir():
    assert _violations("flowc.ir", lambda dst: _in(dst, "flowc.ir")) == []


def test_compiler_does_not_import_backends():
    assert _violations("flowc.compiler", lambda dst: not _in(dst, "flowc.backends")) == []


def test_backends_do_not_import_the_compiler():
    assert _violations("flowc.backends", lambda dst: not _in(dst, "flowc.compiler")) == []


def test_the_plan_imports_only_the_ir_and_itself():
    # both backends build the plan; it knows neither of them, nor the front ends
    assert _violations("flowc.plan", lambda dst: _in(dst, "flowc.ir") or _in(dst, "flowc.plan")) == []
    assert GRAPH.has_edge("flowc.backends.vm.plan_assemble", "flowc.plan")


def test_the_diagrams_read_only_the_ir():
    # pictures of a workflow: they read the IR and print text, and nothing
    # that compiles, runs or translates a workflow imports them
    assert _violations("flowc.diagrams", lambda dst: _in(dst, "flowc.ir") or _in(dst, "flowc.diagrams")
                       or dst == "flowc.termtext") == []
    importers = {src for src, dst in GRAPH.edges if _in(dst, "flowc.diagrams") and not _in(src, "flowc.diagrams")}
    assert importers == {"flowc.cli.graph"}


def test_hosts_import_neither_the_compiler_nor_the_backends():
    assert _violations("flowc.hosts", lambda dst: not (_in(dst, "flowc.compiler") or _in(dst, "flowc.backends"))) \
        == []


def test_backends_never_import_the_hosts():
    # a generated module's command line reaches them through flowc.hosts.runner.module_main
    edges = sorted((src, dst) for src, dst in GRAPH.edges if _in(src, "flowc.backends") and _in(dst, "flowc.hosts"))
    assert edges == []


def test_the_pipeline_never_imports_the_command_line():
    assert _violations("flowc.pipeline", lambda dst: not _in(dst, "flowc.cli")) == []


def test_no_import_cycles():
    cycles = [sorted(c) for c in nx.strongly_connected_components(GRAPH) if len(c) > 1]
    assert cycles == []


def test_no_import_cycles_counting_type_checking_imports():
    graph = import_graph(type_checking=True)
    assert graph.number_of_edges() >= GRAPH.number_of_edges()
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == []


def test_analyze_imports_only_the_ir():
    assert _violations("flowc.compiler.analyze",
                       lambda dst: _in(dst, "flowc.ir") or _in(dst, "flowc.compiler.analyze")) == []


def test_a_dialect_module_of_the_ir_imports_only_the_specs():
    assert _violations("flowc.ir.dialects", lambda dst: dst == "flowc.ir.specs") == []
    assert GRAPH.has_edge("flowc.ir.semantics", "flowc.ir.dialects.aevatar")


def test_the_runtime_imports_only_itself():
    # counting imports inside functions (the asyncio driver's, a command line's)
    assert _violations("flowc.runtime", lambda dst: _in(dst, "flowc.runtime")) == []
    assert GRAPH.has_edge("flowc.runtime.dataflow_run", "flowc.runtime.cel")
    assert GRAPH.has_edge("flowc.backends.vm.plan_vm", "flowc.runtime.dataflow_run")
    assert GRAPH.has_edge("flowc.backends.vm.plan_vm", "flowc.runtime.routing_run")


def test_generated_modules_and_the_vm_import_the_runtime_not_a_backend():
    # the run-time modules live in flowc.runtime: nothing of a backend package runs inside a run
    users = {src for src, dst in GRAPH.edges if _in(dst, "flowc.runtime") and not _in(src, "flowc.runtime")}
    assert {"flowc.backends.vm.plan_steps", "flowc.backends.vm.plan_vm"} <= users
    python_backend = [m for m in GRAPH.nodes if _in(m, "flowc.backends.python")]
    assert not [m for m in python_backend if m.rsplit(".", 1)[-1].startswith("rt_") or m.endswith(".runtime")]


# Optional accelerators a device module may try to import (with an ImportError
# fallback): name -> why.
OPTIONAL_IMPORTS = {"re2": "runtime/nfa.py matches with RE2 where it is installed, else its own automaton"}


def _top_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.add((node.module or "").split(".")[0])
    return names


def _device_runtime_modules() -> dict[str, Path]:
    names = set()
    for models in (None, ("sequential",), ("kernel",), ("dataflow",)):
        names.update(m.name for m in bundle.closure(bundle.entry_of(models), models) if _in(m.name, "flowc.runtime"))
    modules = package_modules()
    return {name: modules[name] for name in sorted(names)}


def test_device_runtime_modules_import_only_the_standard_library_and_each_other():
    device = _device_runtime_modules()
    assert {"flowc.runtime.kernel", "flowc.runtime.cel", "flowc.runtime.routing_run",
            "flowc.runtime.dataflow_run"} <= set(device)
    siblings = {name.rsplit(".", 1)[-1] for name in package_modules() if _in(name, "flowc.runtime")}
    for name, path in device.items():
        for top in _top_names(path):
            if top == "flowc":
                continue   # flowc.runtime only: test_the_runtime_imports_only_itself
            assert top in sys.stdlib_module_names or top in siblings or top in OPTIONAL_IMPORTS, (name, top)


# ------------------------------------------------------------------ the checker itself
@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    def make(files: dict[str, str]) -> nx.DiGraph:
        for rel, text in files.items():
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
        return import_graph()
    return make


def test_checker_counts_type_checking_imports_when_asked(fake_package):
    fake_package({
        "__init__.py": "",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from flowc.b import B\n",
        "b.py": "def f():\n    from flowc import a\n",
    })
    assert set(import_graph().edges) == {("flowc.b", "flowc.a")}
    assert set(import_graph(type_checking=True).edges) == {("flowc.b", "flowc.a"), ("flowc.a", "flowc.b")}


def test_checker_sees_relative_lazy_and_submodule_imports(fake_package):
    graph = fake_package({
        "__init__.py": "",
        "ir/__init__.py": "from . import expr\n",
        "ir/expr.py": "def f():\n    from flowc.compiler import x\n",
        "compiler/__init__.py": "",
        "compiler/x.py": "from ..ir.expr import thing\nimport flowc.ir\n",
        "compiler/y.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import flowc.backends\n",
        "backends/__init__.py": "",
        "tests/test_a.py": "import flowc.compiler.x\n",
    })
    assert set(graph.edges) == {
        ("flowc.ir", "flowc.ir.expr"),
        ("flowc.ir.expr", "flowc.compiler.x"),
        ("flowc.compiler.x", "flowc.ir.expr"),
        ("flowc.compiler.x", "flowc.ir"),
    }
    assert nx.find_cycle(graph)
