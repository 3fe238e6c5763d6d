"""IR of a dataflow workflow (the instruction dialect) -> a Python module.

The module holds one function per expression (CEL and ``{{ }}`` templates
compiled by :mod:`flowc.backends.python.cel_expr`: no expression text is
interpreted at run time) and a ``PLAN`` (:mod:`flowc.plan`):
the graphs as plain data that name those functions. ``run(inputs, host)``
hands the plan to the scheduler in :mod:`flowc.runtime.dataflow_run`,
the scheduler the VM uses too, so both backends produce the same record.

Safety: ids, names, keys, strings and the file name reach the text only
through :mod:`flowc.backends.python.pysource` (constants and comments);
function names are generated (``_x0``, ``_x1`` ...); the docstring holds no
workflow text.
"""

from __future__ import annotations

import ast
import heapq
from typing import Any

from flowc.backends.python import pysource
from flowc.backends.python.cel_expr import CelCompileError, compile_cel, compile_cel_lambda
from flowc.backends.python.codegen import BackendError, wrap_expression
from flowc.ir import expr as E
from flowc.ir.workflow import Node, Workflow
from flowc.plan import PlanError, build_plan

__all__ = ["DagCodegenError", "generate"]


class DagCodegenError(BackendError):
    """The workflow uses something this generator can't compile."""


class _Name:
    """A generated function's name inside the plan (rendered bare)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _const(value: Any) -> str:
    """Python source for a plain constant (see pysource.const)."""
    try:
        return pysource.const(value, "_c")
    except pysource.NotAConstant as exc:
        raise DagCodegenError(str(exc)) from None


_WIDTH = 100  # plan data is laid out to about this many columns


def _render(value: Any, indent: int, depth: int = 0, lead: int = 0) -> str:
    """Python source for plan data: dicts, lists, constants, function names.
    A dict or list that does not fit in the line (``indent`` columns before
    it, ``lead`` more on its first line) goes one entry per line."""
    if depth > 200:
        raise DagCodegenError("the plan nests too deeply to compile")
    if isinstance(value, _Name):
        return value.name
    if isinstance(value, dict):
        keys = [_const(str(k)) + ": " for k in value]
        flat = "{" + ", ".join(k + _render(v, 0, depth + 1, 10**6) for k, v in zip(keys, value.values())) + "}"
        if not value or indent + lead + len(flat) <= _WIDTH:
            return flat
        pad = " " * (indent + 4)
        items = [pad + k + _render(v, indent + 4, depth + 1, len(k)) + ","
                 for k, v in zip(keys, value.values())]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, (list, tuple)):
        flat = "[" + ", ".join(_render(v, 0, depth + 1, 10**6) for v in value) + "]"
        if not value or indent + lead + len(flat) <= _WIDTH:
            return flat
        pad = " " * (indent + 4)
        items = [pad + _render(v, indent + 4, depth + 1) + "," for v in value]
        return "[\n" + "\n".join(items) + "\n" + " " * indent + "]"
    return _const(value)


def _names(value: Any, depth: int = 0) -> list[str]:
    """The generated functions plan data refers to, in order."""
    if depth > 200:
        raise DagCodegenError("the plan nests too deeply to compile")
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


class _Generator:
    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        self.functions: list[str] = []
        self.by_name: dict[str, int] = {}  # a function's name -> its index in functions
        self.constants: set[str] = set()

    def params(self, node: Node, entries, ci: bool) -> _Name:
        raise DagCodegenError(f"step {node.id!r}: a dataflow step has no kernel parameters")

    def expression(self, node: Node | None, expr: E.Expr, what: str, ci: bool = False) -> _Name:
        name = f"_x{len(self.functions)}"
        try:
            if isinstance(expr, E.Lambda):
                self.functions.append(f"{name} = {compile_cel_lambda(expr)}  {pysource.comment(what)}")
            else:
                body = compile_cel(expr)
                if _is_plain_constant(body):
                    # a constant is written as one, in the plan (see _const in the module)
                    self.constants.add(name)
                    self.functions.append("")
                    return _Name(f"_const({body})")
                lines = wrap_expression(body, "    ", "return ")
                self.functions.append(f"def {name}(env):  {pysource.comment(what)}\n" + "\n".join(lines))
        except CelCompileError as exc:
            raise DagCodegenError(f"{what}: {exc}") from None
        self.by_name[name] = len(self.functions) - 1
        return _Name(name)

    def generate(self) -> str:
        wf = self.wf
        try:
            plan = build_plan(wf, self, "dataflow")
        except PlanError as exc:
            raise DagCodegenError(str(exc)) from None
        plan["name"] = _Name("WORKFLOW")
        out = [
            *pysource.header(wf.span.file, wf.dialect),
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
            "",
            f"WORKFLOW = {_const(wf.name)}",
            "",
        ]
        if self.constants:
            out += ["def _const(value):",
                    "    # a plan attribute that is a constant: the scheduler calls every attribute with env",
                    "    return lambda env: value",
                    "", ""]
        nodes = plan.get("nodes")
        emitted: set[str] = set()
        if isinstance(nodes, list) and nodes and all(isinstance(n, dict) and "id" in n for n in nodes):
            # Each step with its expressions, in dependency order; the plan
            # lists them in the scheduler's order (by id), which decides which
            # of two ready steps runs first.
            out.append("# the steps, each after those it depends on")
            out.append("")
            for i in _dependency_order(nodes, plan["edges"]):
                for name in _names(nodes[i]):
                    if name in self.by_name and name not in emitted:
                        emitted.add(name)
                        out.append(self.functions[self.by_name[name]] + "\n")
                out.append(f"_n{i} = {_render(nodes[i], 0, 0, len(f'_n{i} = '))}")
                out.append("")
            plan["nodes"] = [_Name(f"_n{i}") for i in range(len(nodes))]
        for name, index in sorted(self.by_name.items(), key=lambda item: item[1]):
            if name not in emitted:
                out.insert(len(out), self.functions[index] + "\n")
        out.append(f"PLAN = {_render(plan, 0, 0, len('PLAN = '))}")
        out.append("")
        out.append("")
        out.append("def new_run(inputs, trigger=None, payload=None, max_iterations=None, max_host_calls=None,")
        out.append("            concurrent=False):")
        out.append("    return _d.new_run(PLAN, inputs, trigger, payload, max_iterations, max_host_calls, concurrent)")
        out.append("")
        out.append("")
        out.append("def run(inputs, host, trigger=None, payload=None, max_iterations=None, max_host_calls=None):")
        out.append("    return _d.run(PLAN, inputs, host, trigger, payload, max_iterations, max_host_calls)")
        out.append("")
        out.append("")
        out.append("def run_async(inputs, host, trigger=None, payload=None, max_iterations=None, max_host_calls=None,")
        out.append("              concurrent=True):")
        out.append("    return _d.run_async(PLAN, inputs, host, trigger, payload, max_iterations, max_host_calls,")
        out.append("                        concurrent)")
        out.append("")
        out.append("")
        out.append("def run_virtual(inputs, script, trigger=None, payload=None, max_iterations=None,")
        out.append("                max_host_calls=None, concurrent=True):")
        out.append("    return _d.run_virtual(PLAN, inputs, script, trigger, payload, max_iterations, max_host_calls,")
        out.append("                          concurrent)")
        out.append("")
        out.append("")
        out.append('if __name__ == "__main__":')
        out.append("    from flowc.hosts.runner import module_main")
        out.append('    raise SystemExit(module_main(run, success="completed", triggers=True))')
        return "\n".join(out) + "\n"


def generate(workflow: Workflow) -> str:
    """The Python module source for a checked dataflow ``workflow``."""
    try:
        return _Generator(workflow).generate()
    except RecursionError:
        raise DagCodegenError("the workflow nests too deeply to compile") from None
