"""The device-side entry of the VM: ``load(data)`` verifies a program of
any scheduling model and returns it; ``program.run(inputs, host)`` gives
the run record. The container's header names the model (sequential,
kernel, dataflow: docs/bytecode.md); the model's loader verifies its
sections. Whatever the bytes, the result is a program or a ``VerifyError``.

This module is the root of what ``flowc bundle DIR`` writes
into one file for a device (flowc.backends.vm.bundle follows its imports):
MicroPython style, no typing, standard library only.
"""

try:
    from flowc.backends.vm import aevatar_vm as _aevatar
    from flowc.backends.vm import dataflow as _dataflow
    from flowc.backends.vm import sequential as _vm
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import aevatar_vm as _aevatar
    import dataflow as _dataflow
    import sequential as _vm

_LOADERS = {"sequential": _vm.load_sequential, "kernel": _aevatar.load_kernel, "dataflow": _dataflow.load_dataflow}


def load(data):
    """A verified program of any model; ``VerifyError`` otherwise."""
    return _vm.guarded(_load, data)


def _load(data):
    model, name, table = _vm.open_container(data)
    return _LOADERS[model](data, name, table)
