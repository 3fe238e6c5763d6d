"""The bytecode backend: checked IR -> flowc bytecode, and the VM that runs it.

``compile_workflow(workflow)`` gives the bytes of a program in the flowc
container (see docs/bytecode.md); ``load(data)`` verifies them and returns
a program whose ``run(inputs, host)`` gives the same run record as the
Python backend.

The VM loads a program of any scheduling model (:mod:`flowc.backends.vm.device`)
and runs its plan by the model's scheduler of flowc.runtime on the
sans-I/O kernel (:mod:`flowc.backends.vm.plan_vm`): standard library only,
MicroPython-compatible. Importing this package loads the VM only; the
assembler (IR, msgpack) loads when something is compiled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowc.backends.vm.errors import VerifyError, VMError
from flowc.backends.vm.plan_vm import Program

if TYPE_CHECKING:
    from flowc.ir.workflow import Workflow

__all__ = ["AssembleError", "Program", "VMError", "VerifyError", "compile_workflow", "disassemble", "load",
           "run"]


def compile_workflow(workflow: Workflow, strip: bool = False) -> bytes:
    """The bytecode of ``workflow``; ``strip`` leaves the source map out.
    The same IR always gives the same bytes. Raises :class:`AssembleError`
    for constructs the bytecode does not express."""
    from flowc.backends.vm.plan_assemble import assemble_plan

    return assemble_plan(workflow, strip=strip)   # the plan + its model's scheduler (plan_vm.py)


def load(data: bytes):
    """Verify and load a program of any scheduling model (docs/bytecode.md):
    the container's header names the model, whose loader verifies its
    sections. Every program has ``run(inputs, host)``; anything wrong with
    the bytes is a :class:`VerifyError`."""
    from flowc.backends.vm.device import load as load_any

    return load_any(data)


def run(data: bytes, inputs: dict, host, max_instructions=None, max_iterations=None, max_host_calls=None):
    """Load, verify and run a program in one call: its run record."""
    return load(data).run(inputs, host, max_instructions, max_iterations, max_host_calls)


def disassemble(data: bytes, source_root: str | None = None) -> str:
    """A readable listing of a verified program: header, plan and code."""
    from flowc.backends.vm.disasm import disassemble as _disassemble

    return _disassemble(data, source_root)


def __getattr__(name: str):
    if name == "AssembleError":
        from flowc.backends.vm.plan_assemble import AssembleError

        return AssembleError
    raise AttributeError(name)
