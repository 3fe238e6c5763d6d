"""IR of a dataflow workflow (the instruction dialect) -> a Python module.

The module holds one function per expression (CEL and ``{{ }}`` templates
compiled by :mod:`flowc.backends.python.cel_expr`: no expression text is
interpreted at run time) and a ``PLAN`` (:mod:`flowc.backends.dag_plan`):
the graphs as plain data that name those functions. ``run(inputs, host)``
hands the plan to the scheduler in :mod:`flowc.backends.python.rt_dag`,
the scheduler the VM uses too, so both backends produce the same record.

Safety: ids, names, keys, strings and the file name reach the text only
through :mod:`flowc.backends.python.pysource` (constants and comments);
function names are generated (``_x0``, ``_x1`` ...); the docstring holds no
workflow text.
"""

from __future__ import annotations

from typing import Any

from flowc.backends.dag_plan import PlanError, build_plan, is_dataflow
from flowc.backends.python import pysource
from flowc.backends.python.cel_expr import CelCompileError, compile_cel, compile_cel_lambda
from flowc.backends.python.codegen import BackendError
from flowc.ir import expr as E
from flowc.ir.workflow import Workflow

__all__ = ["DagCodegenError", "generate", "is_dataflow"]


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


def _render(value: Any, indent: int, depth: int = 0) -> str:
    """Python source for plan data: dicts, lists, constants, function names.
    Nodes (dicts with an ``id``) go one per line."""
    if depth > 200:
        raise DagCodegenError("the plan nests too deeply to compile")
    if isinstance(value, _Name):
        return value.name
    if isinstance(value, dict):
        items = [f"{_const(str(k))}: {_render(v, indent + 4, depth + 1)}" for k, v in value.items()]
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        rendered = [_render(v, indent + 4, depth + 1) for v in value]
        if value and all(isinstance(v, dict) and "id" in v for v in value):
            pad = " " * (indent + 4)
            return "[\n" + ",\n".join(pad + r for r in rendered) + ",\n" + " " * indent + "]"
        return "[" + ", ".join(rendered) + "]"
    return _const(value)


class _Generator:
    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        self.functions: list[str] = []

    def expression(self, expr: E.Expr, what: str) -> _Name:
        name = f"_x{len(self.functions)}"
        try:
            if isinstance(expr, E.Lambda):
                self.functions.append(f"{name} = {compile_cel_lambda(expr)}  {pysource.comment(what)}")
            else:
                self.functions.append(f"def {name}(env):  {pysource.comment(what)}\n    return {compile_cel(expr)}")
        except CelCompileError as exc:
            raise DagCodegenError(f"{what}: {exc}") from None
        return _Name(name)

    def generate(self) -> str:
        wf = self.wf
        try:
            plan = build_plan(wf, self.expression)
        except PlanError as exc:
            raise DagCodegenError(str(exc)) from None
        plan["workflow"] = _Name("WORKFLOW")
        out = [
            *pysource.header(wf.span.file, wf.dialect),
            '"""A dataflow workflow compiled by flowc.',
            "",
            "``run(inputs, host)`` runs it with flowc's dataflow scheduler (rt_dag) and",
            "returns the run record (see flowc's docs/host.md and docs/instruction.md).",
            '"""',
            "",
            "from flowc.backends.python import rt_cel as _c",
            "from flowc.backends.python import rt_dag as _d",
            "",
            f"WORKFLOW = {_const(wf.name)}",
            "",
        ]
        out.extend(f + "\n" for f in self.functions)
        out.append(f"PLAN = {_render(plan, 0)}")
        out.append("")
        out.append("")
        out.append("def run(inputs, host, trigger=None, payload=None, max_iterations=None, max_host_calls=None):")
        out.append("    return _d.run(PLAN, inputs, host, trigger, payload, max_iterations, max_host_calls)")
        out.append("")
        out.append("")
        out.append('if __name__ == "__main__":')
        out.append("    raise SystemExit(_d.main(run))")
        return "\n".join(out) + "\n"


def generate(workflow: Workflow) -> str:
    """The Python module source for a checked dataflow ``workflow``."""
    try:
        return _Generator(workflow).generate()
    except RecursionError:
        raise DagCodegenError("the workflow nests too deeply to compile") from None
