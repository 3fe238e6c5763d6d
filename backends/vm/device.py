"""The device-side entry of the VM: ``load(data)`` verifies a program of
any scheduling model and returns it; ``program.run(inputs, host)`` gives
the run record. The container's header names the model (sequential,
kernel, dataflow: docs/bytecode.md); the model's row of ``LOADERS``, the
one loader of every model (plan_vm.py), verifies its sections.
Whatever the bytes, the result is a program or a ``VerifyError``.

This module is the root of what ``flowc bundle DIR`` writes
into one file for a device (flowc.backends.vm.bundle follows its imports;
a bundle of some models keeps only their rows of the tables keyed by
model): MicroPython style, no typing, standard library only.
"""

# MicroPython style: %-formatting reads the same on both interpreters.
# ruff: noqa: UP031

try:
    from flowc.backends.vm import container as _c
    from flowc.backends.vm import plan_vm as _plan
    from flowc.backends.vm.errors import VerifyError
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import container as _c
    import plan_vm as _plan
    from errors import VerifyError

__all__ = ["BY_MODEL", "LOADERS", "load"]


# The tables keyed by model: a bundle of some models keeps only their rows.
BY_MODEL = ("LOADERS",)
# model -> its loader of an opened container: loader(model, data, name, table)
LOADERS = {"sequential": _plan.load_plan, "kernel": _plan.load_plan, "dataflow": _plan.load_plan}


def load(data):
    """A verified program of any model; ``VerifyError`` otherwise."""
    return _c.guarded(_load, data)


def _load(data):
    model, name, table = _c.open_container(data)
    loader = LOADERS.get(model)
    if loader is None:
        raise VerifyError("a %s program: this device runs %s programs" % (model, ", ".join(LOADERS)))
    return loader(model, data, name, table)
