"""The device-side entry of the VM: ``load(data)`` verifies a program of
any kind (WorkflowSkill bytecode, an instruction-dialect dataflow program,
an aevatar program) and returns it; ``program.run(inputs, host)`` gives the
run record. ``VMError`` and ``VerifyError`` are the VM's (the
bundle holds them beside ``load``).

This module is the root of what ``python -m flowc.vm --bundle DIR`` writes
into one file for a device (flowc.backends.vm.bundle follows its imports):
MicroPython style, no typing, standard library only.
"""

try:
    from flowc.backends.vm import aevatar_vm as _aevatar
    from flowc.backends.vm import dataflow as _dataflow
    from flowc.backends.vm import vm as _vm
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import aevatar_vm as _aevatar
    import dataflow as _dataflow

    import vm as _vm


def load(data):
    """Verify and load a program of any kind; raises VerifyError (or the
    dataflow loader's DataflowError) when the bytes do not verify."""
    if _dataflow.is_dataflow(data):
        return _dataflow.load(data)
    if _aevatar.is_aevatar(data):
        return _aevatar.load(data)
    return _vm.load(data)
