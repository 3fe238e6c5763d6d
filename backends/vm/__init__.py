"""The bytecode backend: checked IR -> flowc bytecode, and the VM that runs it.

``compile_workflow(workflow)`` gives the bytes of a program in the flowc
container (see docs/bytecode.md); ``load(data)`` verifies them and returns
a program whose ``run(inputs, host)`` gives the same run record as the
Python backend.

The VM (:mod:`flowc.backends.vm.sequential`) is one module on the sans-I/O kernel
(flowc.runtime.kernel and drivers): standard library only,
MicroPython-compatible. Importing this package loads the VM only; the
assembler (IR, msgpack) loads when something is compiled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowc.backends.vm.sequential import Program, VerifyError, VMError, run

if TYPE_CHECKING:
    from flowc.ir.workflow import Workflow

__all__ = ["AssembleError", "Program", "VMError", "VerifyError", "compile_workflow", "disassemble", "load",
           "run"]


def compile_workflow(workflow: Workflow, strip: bool = False) -> bytes:
    """The bytecode of ``workflow``; ``strip`` leaves the source map out.
    The same IR always gives the same bytes. Raises :class:`AssembleError`
    for constructs the bytecode does not express."""
    from flowc.backends.vm.assemble import AssembleError, assemble
    from flowc.plan import ExecutionModelError, execution_model

    try:
        scheduling = execution_model(workflow)   # the profile's flags, never the dialect
    except ExecutionModelError as exc:
        raise AssembleError(str(exc)) from None
    from flowc.backends.vm.plan_assemble import MODELS as PLAN_MODELS
    from flowc.backends.vm.plan_assemble import assemble_plan

    if scheduling in PLAN_MODELS:   # the plan + its model's scheduler (kernel routing, dataflow: plan_vm.py)
        return assemble_plan(workflow)
    return assemble(workflow, strip=strip)


def load(data: bytes):
    """Verify and load a program of any scheduling model (docs/bytecode.md):
    the container's header names the model, whose loader verifies its
    sections. Every program has ``run(inputs, host)``; anything wrong with
    the bytes is a :class:`VerifyError`."""
    from flowc.backends.vm.device import load as load_any

    return load_any(data)


def disassemble(data: bytes, source_root: str | None = None) -> str:
    """A readable listing of a verified program: header, plan and code."""
    from flowc.backends.vm.disasm import disassemble as _disassemble

    return _disassemble(data, source_root)


def __getattr__(name: str):
    if name == "AssembleError":
        from flowc.backends.vm.assemble import AssembleError

        return AssembleError
    raise AttributeError(name)
