"""The one loader entry of every flowc program (docs/bytecode.md): open the
container, then hand its sections to the loader of the scheduling model the
header names. Whatever the bytes, the result is a program or a VerifyError."""

from __future__ import annotations

from flowc.backends.vm import aevatar_vm, dataflow
from flowc.backends.vm import vm as V

__all__ = ["load"]

_LOADERS = {"sequential": V.load_sequential, "kernel": aevatar_vm.load_kernel, "dataflow": dataflow.load_dataflow}


def load(data: bytes):
    """A verified program of any model; :class:`VerifyError` otherwise."""
    return V.guarded(_load, data)


def _load(data: bytes):
    model, name, table = V.open_container(data)
    return _LOADERS[model](data, name, table)
