"""The bytecode backend: checked IR -> flowc bytecode, and the VM that runs it.

``compile_workflow(workflow)`` gives the bytes of a bytecode file (see
docs/bytecode.md); ``load(data)`` verifies them and returns a program whose
``run(inputs, host)`` gives the same run record as the Python backend.

The VM (:mod:`flowc.backends.vm.vm`) is one module on the sans-I/O kernel
(flowc.runtime.kernel and drivers): standard library only,
MicroPython-compatible. Importing this package loads the VM only; the
assembler (IR, msgpack) loads when something is compiled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowc.backends.vm.vm import Program, VerifyError, VMError, run
from flowc.backends.vm.vm import load as _load_bytecode

if TYPE_CHECKING:
    from flowc.ir.workflow import Workflow

__all__ = ["AssembleError", "Program", "VMError", "VerifyError", "compile_workflow", "disassemble", "load",
           "run"]


def compile_workflow(workflow: Workflow, strip: bool = False) -> bytes:
    """The bytecode of ``workflow``; ``strip`` leaves the source map out.
    The same IR always gives the same bytes. Raises :class:`AssembleError`
    for constructs the bytecode does not express."""
    from flowc.backends.dag_plan import is_dataflow
    from flowc.backends.vm.assemble import assemble

    if is_dataflow(workflow):   # instruction dialect: a dataflow program (backends/vm/dataflow.py)
        from flowc.backends.vm.dataflow_assemble import assemble_dataflow

        return assemble_dataflow(workflow)
    if workflow.semantics == "aevatar":   # aevatar: the plan + the rt_aevatar_run kernel (aevatar_vm.py)
        from flowc.backends.vm.aevatar_assemble import assemble_aevatar

        return assemble_aevatar(workflow)
    return assemble(workflow, strip=strip)


def load(data: bytes):
    """Verify and load a program: WorkflowSkill bytecode, a dataflow
    program (instruction dialect) or an aevatar program; all have
    ``run(inputs, host)``."""
    from flowc.backends.vm import aevatar_vm, dataflow

    if dataflow.is_dataflow(data):
        return dataflow.load(data)
    if aevatar_vm.is_aevatar(data):
        return aevatar_vm.load(data)
    return _load_bytecode(data)


def disassemble(data: bytes, source_root: str | None = None) -> str:
    """A readable listing of verified bytecode."""
    from flowc.backends.vm import dataflow

    if dataflow.is_dataflow(data):   # instruction dialect
        from flowc.backends.vm.dataflow_disasm import disassemble_dataflow

        return disassemble_dataflow(data)
    from flowc.backends.vm import aevatar_vm

    if aevatar_vm.is_aevatar(data):
        from flowc.backends.vm.aevatar_disasm import disassemble_aevatar

        return disassemble_aevatar(data)
    from flowc.backends.vm.disasm import disassemble as _disassemble

    return _disassemble(data, source_root)


def __getattr__(name: str):
    if name == "AssembleError":
        from flowc.backends.vm.assemble import AssembleError

        return AssembleError
    raise AttributeError(name)
