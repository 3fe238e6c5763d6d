"""Run a dataflow plan (the instruction dialect): the entry points of both backends.

The scheduling lives in :mod:`flowc.runtime.dag` (the dataflow program on
the sans-I/O kernel of :mod:`flowc.runtime.kernel`); this module only binds
it to drivers, so generated modules and the VM keep their API:

- ``run(plan, inputs, host, ...)``: the sync driver (``host.call`` /
  ``host.sleep`` one request at a time), the reference record;
- ``run_async(plan, inputs, host, ...)``: a coroutine; the asyncio driver
  with every ready request running at once (``concurrent=True`` by default);
- ``run_virtual(plan, inputs, script, ...)``: the virtual-time driver.

See docs/runtime.md. MicroPython-compatible (the copies sit side by side there).
"""

try:
    from flowc.runtime import dag as _dag
    from flowc.runtime import drivers as _drivers
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import dag as _dag
    import drivers as _drivers

# What the backends and their tests use, under the names they always had.
DEFAULT_MAX_ITERATIONS = _dag.DEFAULT_MAX_ITERATIONS
DEFAULT_MAX_HOST_CALLS = _dag.DEFAULT_MAX_HOST_CALLS
StepFailure = _dag.StepFailure
OutOfFuel = _dag.OutOfFuel
jitter_factor = _dag.jitter_factor
schema_errors = _dag.schema_errors
_OPS = _dag._OPS
_CONTROL_ATTRS = _dag._CONTROL_ATTRS


def new_run(plan, inputs, trigger=None, payload=None, max_iterations=None, max_host_calls=None,
            concurrent=False, max_instructions=None):
    """The run of ``plan`` on the kernel, not started: a driver answers its
    requests (``max_instructions``: the VM's CEL machine draws on them)."""
    return _dag.new_run(plan, inputs, trigger, payload, max_iterations, max_host_calls, concurrent,
                        max_instructions)


def run(plan, inputs, host, trigger=None, payload=None, max_iterations=None, max_host_calls=None):
    """Run a compiled plan: returns the run record
    ``{"status", "outputs", "error", "steps", "calls", "sleeps_ms"}``. A run
    past ``max_iterations`` loop iterations (items, iterations, retries) or
    ``max_host_calls`` host calls fails with "fuel exhausted"."""
    r = _dag.new_run(plan, inputs, trigger, payload, max_iterations, max_host_calls)
    return _drivers.drive_sync(r, host)


def run_async(plan, inputs, host, trigger=None, payload=None, max_iterations=None, max_host_calls=None,
              concurrent=True):
    """A coroutine: the record of the run driven by asyncio (``host.call``
    may be a coroutine). ``concurrent=False`` keeps the sequential order
    (the same record as :func:`run` for the same answers)."""
    from flowc.runtime.aio import drive_async

    r = _dag.new_run(plan, inputs, trigger, payload, max_iterations, max_host_calls, concurrent)
    return drive_async(r, host)


def run_virtual(plan, inputs, script, trigger=None, payload=None, max_iterations=None, max_host_calls=None,
                concurrent=True):
    """The record of the run on a virtual clock (``script``: see
    :class:`flowc.runtime.drivers.VirtualHost`); steps carry ``start_ms``/``end_ms``."""
    host = script if hasattr(script, "answer") else _drivers.VirtualHost(script)
    r = _dag.new_run(plan, inputs, trigger, payload, max_iterations, max_host_calls, concurrent)
    return _drivers.drive_virtual(r, host)


def main(run_fn, argv=None):
    """``python workflow.py --inputs in.json --host script.json [--trigger ID]``
    (see flowc.host.script_main); a run succeeds when it is ``completed``."""
    from flowc.host import script_main
    from flowc.hosts.runner import configured_main

    return script_main(run_fn, argv, success="completed", triggers=True, configured=configured_main(run_fn))
