"""IR of a workflow run by its plan -> a Python module that runs it.

Two scheduling models run a workflow as plain data: kernel routing (the
step loop of :mod:`flowc.runtime.routing_run`) and dataflow (the ready-node
scheduler of :mod:`flowc.runtime.dataflow_run`). For both, the module holds
one generated function per expression of the plan's nodes (no expression
text is interpreted at run time) and a ``PLAN`` (:mod:`flowc.plan`): the
graph as plain data naming those functions, the plan the VM's programs
hold too. ``run(inputs, host)`` hands the plan to the model's scheduler,
which the VM uses as well, so both backends give the same run record.

What differs between the models is a row of :data:`MODELS`, keyed by the
plan's model: the expression compiler and its function names
(:class:`ExpressionRow`), how plan data is laid out, and the module's
docstring, imports and entry points (:class:`ModuleRow`).

Safety: ids, names, keys, strings and the file name reach the text only
through :mod:`flowc.backends.python.pysource` (constants and comments);
function names are generated (``_p0``, ``_x0`` ...); the docstring holds no
workflow text (the name is the constant ``WORKFLOW``).
"""

from __future__ import annotations

import ast
import heapq
from collections.abc import Callable
from typing import Any

import attrs
from flowc.backends.python import pysource
from flowc.backends.python.aevatar_expr import AevatarCompileError, compile_expr
from flowc.backends.python.cel_expr import CelCompileError, compile_cel, compile_cel_lambda
from flowc.backends.python.codegen import BackendError, wrap_expression
from flowc.ir import expr as E
from flowc.ir.workflow import Node, Workflow
from flowc.plan import ExecutionModelError, PlanError, build_plan, execution_model

__all__ = ["MODELS", "PlanCodegenError", "generate"]


class PlanCodegenError(BackendError):
    """The workflow uses something this generator can't compile."""


class _Name:
    """A generated function's name inside the plan (rendered bare)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


# ================================================================ plan data as source


def _const(value: Any, runtime: str | None) -> str:
    """Python source for a plain constant (see pysource.const; ``runtime``
    names the module that holds NAN and INF, if any)."""
    try:
        return pysource.const(value, runtime)
    except pysource.NotAConstant as exc:
        raise PlanCodegenError(str(exc)) from None


class _Renderer:
    """Plan data (dicts, lists, constants, function names) as Python source:
    a dict or list on one line when it fits in ``width`` columns (a list of
    scalars always, with ``flat_scalar_lists``), else one entry per line."""

    def __init__(self, runtime: str | None, max_depth: int, width: int, flat_scalar_lists: bool) -> None:
        self.runtime = runtime   # the module alias whose NAN / INF name non-finite floats
        self.max_depth = max_depth
        self.width = width
        self.flat_scalar_lists = flat_scalar_lists

    def const(self, value: Any) -> str:
        return _const(value, self.runtime)

    def render(self, value: Any, indent: int = 0, depth: int = 0, lead: int = 0) -> str:
        """``value`` with ``indent`` columns before it (``lead`` more on its first line)."""
        if depth > self.max_depth:
            raise PlanCodegenError("the plan nests too deeply to compile")
        if isinstance(value, _Name):
            return value.name
        if isinstance(value, dict):
            keys = [self.const(str(k)) + ": " for k in value]
            flat = "{" + ", ".join(k + self.render(v, 0, depth + 1, 10**6) for k, v in zip(keys, value.values())) + "}"
            if not value or indent + lead + len(flat) <= self.width:
                return flat
            pad = " " * (indent + 4)
            items = [pad + k + self.render(v, indent + 4, depth + 1, len(k)) + "," for k, v in zip(keys, value.values())]
            return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
        if isinstance(value, (list, tuple)):
            flat = "[" + ", ".join(self.render(v, 0, depth + 1, 10**6) for v in value) + "]"
            scalars = self.flat_scalar_lists and all(not isinstance(v, (dict, list, tuple)) for v in value)
            if not value or scalars or indent + lead + len(flat) <= self.width:
                return flat
            pad = " " * (indent + 4)
            items = [pad + self.render(v, indent + 4, depth + 1) + "," for v in value]
            return "[\n" + "\n".join(items) + "\n" + " " * indent + "]"
        return self.const(value)


def _names(value: Any, depth: int = 0) -> list[str]:
    """The generated functions plan data refers to, in order."""
    if depth > 200:
        raise PlanCodegenError("the plan nests too deeply to compile")
    if isinstance(value, _Name):
        return [value.name]
    if isinstance(value, dict):
        return [n for v in value.values() for n in _names(v, depth + 1)]
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in _names(v, depth + 1)]
    return []


def _dependency_order(nodes: list[dict], edges: list) -> list[int]:
    """Indexes of ``nodes`` with every node after the nodes it depends on
    (its ``dependency`` edges), ties in plan order; nodes on a cycle (goto
    loops) follow in plan order. (Kahn's algorithm with a heap: O(n log n + edges).)"""
    position = {node["id"]: i for i, node in enumerate(nodes)}
    waiting = [0] * len(nodes)
    dependents: list[list[int]] = [[] for _ in nodes]
    deps: dict[int, set] = {}
    for source, target, kind, _label in edges:
        if kind == "dependency" and target in position:
            deps.setdefault(position[target], set()).add(source)
    for i in range(len(nodes)):
        for d in deps.get(i, ()):
            j = position.get(d)
            if j is not None and j != i:
                waiting[i] += 1
                dependents[j].append(i)
    ready = [i for i in range(len(nodes)) if waiting[i] == 0]
    heapq.heapify(ready)
    done: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        done.append(i)
        for k in dependents[i]:
            waiting[k] -= 1
            if waiting[k] == 0:
                heapq.heappush(ready, k)
    placed = set(done)
    return done + [i for i in range(len(nodes)) if i not in placed]


def _is_plain_constant(source: str) -> bool:
    """Is ``source`` (compiled CEL) a literal string, number, bool or None?"""
    try:
        value = ast.literal_eval(source)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False
    return type(value) in (str, int, float, bool, type(None))


# ================================================================ bodies: expression functions


class _Functions:
    """The generated functions, in the order they were made."""

    def __init__(self) -> None:
        self.functions: list[str] = []
        self.by_name: dict[str, int] = {}  # a function's name -> its index in functions
        self.constants: set[str] = set()   # expressions written as constants (fitted layout)

    def add(self, name: str, text: str) -> _Name:
        self.functions.append(text)
        self.by_name[name] = len(self.functions) - 1
        return _Name(name)


class _FlatKeyBodies:
    """Kernel steps' parameters and conditions over flat variable keys
    (:mod:`flowc.backends.python.aevatar_expr`): functions ``_p<n>(V)``."""

    def __init__(self, out: _Functions) -> None:
        self.out = out

    def _next_name(self) -> str:
        return f"_p{len(self.out.functions)}"

    def params(self, node: Node, entries: list[tuple[str, E.Expr]], ci: bool) -> _Name:
        compiled = []
        for key, value in entries:
            try:
                compiled.append(f"({_const(key, None)}, {compile_expr(value, ci)})")
            except AevatarCompileError as exc:
                raise PlanCodegenError(f"step {node.id!r}, parameter {key!r}: {exc}") from None
        name = self._next_name()
        body = "[\n        " + ",\n        ".join(compiled) + ",\n    ]" if compiled else "[]"
        return self.out.add(name, f"def {name}(V):  {pysource.comment(node.id)}\n    return {body}")

    def expression(self, node: Node, expr: E.Expr, what: str, ci: bool) -> _Name:
        try:
            src = compile_expr(expr, ci)
        except AevatarCompileError as exc:
            raise PlanCodegenError(f"step {node.id!r}, {what}: {exc}") from None
        name = self._next_name()
        return self.out.add(name, f"def {name}(V):  {pysource.comment(node.id + ' ' + what)}\n    return {src}")


class _CelBodies:
    """Dataflow nodes' expressions (:mod:`flowc.backends.python.cel_expr`):
    functions ``_x<n>(env)``, lambdas, and constants written in the plan."""

    def __init__(self, out: _Functions) -> None:
        self.out = out

    def params(self, node: Node, entries, ci: bool) -> _Name:
        raise PlanCodegenError(f"step {node.id!r}: a dataflow step has no kernel parameters")

    def expression(self, node: Node | None, expr: E.Expr, what: str, ci: bool = False) -> _Name:
        out = self.out
        name = f"_x{len(out.functions)}"
        try:
            if isinstance(expr, E.Lambda):
                return out.add(name, f"{name} = {compile_cel_lambda(expr)}  {pysource.comment(what)}")
            body = compile_cel(expr)
            if _is_plain_constant(body):
                # a constant is written as one, in the plan (see _const in the module)
                out.constants.add(name)
                out.functions.append("")
                return _Name(f"_const({body})")
            lines = wrap_expression(body, "    ", "return ")
            return out.add(name, f"def {name}(env):  {pysource.comment(what)}\n" + "\n".join(lines))
        except CelCompileError as exc:
            raise PlanCodegenError(f"{what}: {exc}") from None


# ================================================================ module layouts


def _layout_in_order(plan: dict, out: _Functions, render: _Renderer) -> list[str]:
    """Every function in the order made, then the plan, one entry per line."""
    return ["", "\n\n\n".join(out.functions), "", "", "PLAN = " + render.render(plan)]


def _layout_by_dependency(plan: dict, out: _Functions, render: _Renderer) -> list[str]:
    """Each node as ``_n<i>`` after its functions, in dependency order (the
    plan lists the nodes in the scheduler's order, by id, which decides
    which of two ready nodes runs first), then the plan, fitted."""
    plan["name"] = _Name("WORKFLOW")
    lines: list[str] = []
    if out.constants:
        lines += ["def _const(value):",
                  "    # a plan attribute that is a constant: the scheduler calls every attribute with env",
                  "    return lambda env: value",
                  "", ""]
    nodes = plan.get("nodes")
    emitted: set[str] = set()
    if isinstance(nodes, list) and nodes and all(isinstance(n, dict) and "id" in n for n in nodes):
        lines += ["# the steps, each after those it depends on", ""]
        for i in _dependency_order(nodes, plan["edges"]):
            for name in _names(nodes[i]):
                if name in out.by_name and name not in emitted:
                    emitted.add(name)
                    lines.append(out.functions[out.by_name[name]] + "\n")
            lines += [f"_n{i} = {render.render(nodes[i], 0, 0, len(f'_n{i} = '))}", ""]
        plan["nodes"] = [_Name(f"_n{i}") for i in range(len(nodes))]
    for name, index in sorted(out.by_name.items(), key=lambda item: item[1]):
        if name not in emitted:
            lines.append(out.functions[index] + "\n")
    return [*lines, f"PLAN = {render.render(plan, 0, 0, len('PLAN = '))}"]


# ================================================================ the models' rows


@attrs.frozen
class ModuleRow:
    """How one model's module is written."""

    bodies: Callable[[_Functions], Any]   # the plan's Bodies: the model's expression compiler
    render: Callable[[], _Renderer]   # how plan data is written
    layout: Callable[[dict, _Functions, _Renderer], list[str]]   # functions and PLAN, as lines
    preamble: tuple[str, ...]   # the docstring and imports
    entry_points: tuple[str, ...]   # new_run, run, run_async, run_virtual, the command line


_KERNEL_PREAMBLE = (
    '"""An aevatar workflow compiled by flowc.',
    "",
    "run(inputs, host) runs it: inputs {\"input\": <prompt>, <run parameters>...}; see",
    "docs/aevatar.md and docs/host.md.",
    '"""',
    "",
    "from flowc.runtime import aevatar_text as _rta  # noqa: F401",
    "from flowc.runtime import routing_run as _run",
)
_KERNEL_ENTRY_POINTS = (
    "def new_run(inputs, max_iterations=None, max_host_calls=None, concurrent=False):",
    '    """The run on the sans-I/O kernel, not started (docs/runtime.md)."""',
    "    return _run.Run(PLAN, inputs, None, _run.MAX_STEPS, max_iterations, max_host_calls, concurrent)",
    "", "",
    "def run(inputs, host, max_iterations=None, max_host_calls=None):",
    '    """Run the workflow with ``inputs`` against ``host``; return the run record."""',
    "    return _run.run(PLAN, inputs, host, _run.MAX_STEPS, max_iterations, max_host_calls)",
    "", "",
    "def run_async(inputs, host, max_iterations=None, max_host_calls=None, concurrent=True):",
    '    """A coroutine: the run driven by asyncio (composites\' workers run at once)."""',
    "    return _run.run_async(PLAN, inputs, host, _run.MAX_STEPS, max_iterations, max_host_calls,",
    "                          concurrent)",
    "", "",
    "def run_virtual(inputs, script, max_iterations=None, max_host_calls=None, concurrent=True):",
    '    """The run on a virtual clock (script: see flowc.runtime.drivers.VirtualHost)."""',
    "    return _run.run_virtual(PLAN, inputs, script, _run.MAX_STEPS, max_iterations, max_host_calls,",
    "                            concurrent)",
    "", "",
    'if __name__ == "__main__":',
    "    from flowc.hosts.runner import module_main",
    "    raise SystemExit(module_main(run))",
)
_DATAFLOW_PREAMBLE = (
    '"""A dataflow workflow compiled by flowc.',
    "",
    "``run(inputs, host)`` runs it with flowc's dataflow scheduler (dataflow_run) and",
    "returns the run record (see flowc's docs/host.md and docs/instruction.md);",
    "``await run_async(inputs, host)`` runs independent steps concurrently",
    "and ``run_virtual(inputs, script)`` on a virtual clock (docs/runtime.md).",
    '"""',
    "",
    "from flowc.runtime import cel as _c",
    "from flowc.runtime import dataflow_run as _d",
)
_DATAFLOW_ENTRY_POINTS = (
    "def new_run(inputs, trigger=None, payload=None, max_iterations=None, max_host_calls=None,",
    "            concurrent=False):",
    "    return _d.new_run(PLAN, inputs, trigger, payload, max_iterations, max_host_calls, concurrent)",
    "", "",
    "def run(inputs, host, trigger=None, payload=None, max_iterations=None, max_host_calls=None):",
    "    return _d.run(PLAN, inputs, host, trigger, payload, max_iterations, max_host_calls)",
    "", "",
    "def run_async(inputs, host, trigger=None, payload=None, max_iterations=None, max_host_calls=None,",
    "              concurrent=True):",
    "    return _d.run_async(PLAN, inputs, host, trigger, payload, max_iterations, max_host_calls,",
    "                        concurrent)",
    "", "",
    "def run_virtual(inputs, script, trigger=None, payload=None, max_iterations=None,",
    "                max_host_calls=None, concurrent=True):",
    "    return _d.run_virtual(PLAN, inputs, script, trigger, payload, max_iterations, max_host_calls,",
    "                          concurrent)",
    "", "",
    'if __name__ == "__main__":',
    "    from flowc.hosts.runner import module_main",
    '    raise SystemExit(module_main(run, success="completed", triggers=True))',
)

# The plan-run models, by the plan's model (plan/model.py MODELS).
MODELS: dict[str, ModuleRow] = {
    # plan data one entry per line (but lists of scalars), no NAN / INF constants
    "kernel": ModuleRow(_FlatKeyBodies, lambda: _Renderer(None, 100, -1, True), _layout_in_order,
                        _KERNEL_PREAMBLE, _KERNEL_ENTRY_POINTS),
    # plan data fitted to 100 columns, the runtime's NAN and INF
    "dataflow": ModuleRow(_CelBodies, lambda: _Renderer("_c", 200, 100, False), _layout_by_dependency,
                          _DATAFLOW_PREAMBLE, _DATAFLOW_ENTRY_POINTS),
}


def _module(workflow: Workflow, model: str) -> str:
    row = MODELS[model]
    functions = _Functions()
    try:
        plan = build_plan(workflow, row.bodies(functions), model)
    except PlanError as exc:
        raise PlanCodegenError(str(exc)) from None
    render = row.render()
    out = [*pysource.header(workflow.span.file, workflow.dialect), *row.preamble, "",
           f"WORKFLOW = {render.const(workflow.name)}", ""]
    out += row.layout(plan, functions, render)
    out += ["", "", *row.entry_points]
    return "\n".join(out) + "\n"


def generate(workflow: Workflow) -> str:
    """The Python module source for a checked ``workflow`` its profile runs
    by a plan (kernel routing or dataflow)."""
    try:
        model = execution_model(workflow)
    except ExecutionModelError as exc:
        raise PlanCodegenError(str(exc)) from None
    if model not in MODELS:
        raise PlanCodegenError(f"the plan code generator runs {' and '.join(MODELS)} plans, not {model}")
    try:
        return _module(workflow, model)
    except RecursionError:
        raise PlanCodegenError("the workflow nests too deeply to compile") from None
