"""IR of an aevatar workflow -> a Python module that runs it.

The module holds one function per step (and per sub-step of a composite)
that evaluates the step's parameters from the run's variables, with every
aevatar expression compiled by :mod:`flowc.backends.python.aevatar_expr` (no
expression text is interpreted at run time), and a ``PLAN``: the steps as
plain data naming those functions (:mod:`flowc.plan`, the
plan the VM's aevatar programs hold too). ``run(inputs, host)`` hands the plan to
the kernel in :mod:`flowc.runtime.routing_run`.

Safety: ids, names, keys, strings and the file name reach the text only
through :mod:`flowc.backends.python.pysource` (constants and comments);
function names are generated (``_p0``, ``_p1`` ...); the docstring holds no
workflow text (the name is the constant ``WORKFLOW``).
"""

from __future__ import annotations

from typing import Any

from flowc.backends.python import pysource
from flowc.backends.python.aevatar_expr import AevatarCompileError, compile_expr
from flowc.backends.python.codegen import BackendError
from flowc.ir import expr as E
from flowc.ir.workflow import Node, Workflow
from flowc.plan import PlanError, build_plan, runs_under

__all__ = ["AevatarCodegenError", "generate"]

class AevatarCodegenError(BackendError):
    """The workflow uses something this generator can't compile."""


class _Name:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _const(value: Any) -> str:
    """Python source for a plain constant (see pysource.const)."""
    try:
        return pysource.const(value, None)
    except pysource.NotAConstant as exc:
        raise AevatarCodegenError(str(exc)) from None


def _render(value: Any, indent: int = 0, depth: int = 0) -> str:
    if depth > 100:
        raise AevatarCodegenError("the plan nests too deeply to compile")
    if isinstance(value, _Name):
        return value.name
    if isinstance(value, dict):
        pad = " " * (indent + 4)
        items = [f"{pad}{_const(str(k))}: {_render(v, indent + 4, depth + 1)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}" if items else "{}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        if all(not isinstance(v, (dict, list, tuple)) for v in value):
            return "[" + ", ".join(_render(v, indent, depth + 1) for v in value) + "]"
        pad = " " * (indent + 4)
        return "[\n" + "\n".join(f"{pad}{_render(v, indent + 4, depth + 1)}," for v in value) + "\n" + \
            " " * indent + "]"
    return _const(value)


class _Generator:
    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        self.functions: list[str] = []

    def params(self, node: Node, entries: list[tuple[str, E.Expr]], ci: bool) -> _Name:
        compiled = []
        for key, value in entries:
            try:
                compiled.append(f"({_const(key)}, {compile_expr(value, ci)})")
            except AevatarCompileError as exc:
                raise AevatarCodegenError(f"step {node.id!r}, parameter {key!r}: {exc}") from None
        name = f"_p{len(self.functions)}"
        body = "[\n        " + ",\n        ".join(compiled) + ",\n    ]" if compiled else "[]"
        self.functions.append(f"def {name}(V):  {pysource.comment(node.id)}\n    return {body}")
        return _Name(name)

    def expression(self, node: Node, expr: E.Expr, what: str, ci: bool) -> _Name:
        try:
            src = compile_expr(expr, ci)
        except AevatarCompileError as exc:
            raise AevatarCodegenError(f"step {node.id!r}, {what}: {exc}") from None
        name = f"_p{len(self.functions)}"
        self.functions.append(f"def {name}(V):  {pysource.comment(node.id + ' ' + what)}\n    return {src}")
        return _Name(name)

    def generate(self) -> str:
        try:
            plan = build_plan(self.wf, self, "kernel")
        except PlanError as exc:
            raise AevatarCodegenError(str(exc)) from None
        out = [
            *pysource.header(self.wf.span.file, self.wf.dialect),
            '"""An aevatar workflow compiled by flowc.',
            "",
            "run(inputs, host) runs it: inputs {\"input\": <prompt>, <run parameters>...}; see",
            "docs/aevatar.md and docs/host.md.",
            '"""',
            "",
            "from flowc.runtime import aevatar_text as _rta  # noqa: F401",
            "from flowc.runtime import routing_run as _run",
            "",
            f"WORKFLOW = {_const(self.wf.name)}",
            "",
            "",
        ]
        out.append("\n\n\n".join(self.functions))
        out += ["", "", "PLAN = " + _render(plan), "", "",
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
                ""]
        return "\n".join(out)


def generate(workflow: Workflow) -> str:
    why_not = runs_under(workflow, "kernel")
    if why_not is not None:
        raise AevatarCodegenError(f"the aevatar kernel's code generator: {why_not}")
    return _Generator(workflow).generate()
