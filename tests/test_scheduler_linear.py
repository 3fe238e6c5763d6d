"""The schedulers stay linear in the number of steps.

Counted, not timed: a run's work is the readiness verdicts the dataflow
scheduler computes (each weighed by the dependencies it reads), the
variables the aevatar step loop copies, and the kernel's task resumptions.
At 4x the steps that work must stay within ~4.5x: a scheduler that looks
at every step at every step (or copies every variable at every step) does
~16x. Wall time per step is measured in benchmarks/bench_bundle.py."""

from __future__ import annotations

import heapq
import random
import sys

import pytest
from flowc.backends.python import compile_workflow, load_module
from flowc.backends.vm import compile_workflow as compile_bytecode
from flowc.backends.vm import load as load_program
from flowc.pipeline import driver
from flowc.runtime import dataflow_run, drivers, kernel, routing_run
from flowc.runtime.kernel import Kernel

RATIO = 4.5


class Host:
    """Answers every call with {} at once."""

    def call(self, capability, name, args):
        return {}

    def sleep(self, ms):
        pass


class Work:
    """Counts the scheduling work of the runs made while it is installed."""

    def __init__(self, monkeypatch):
        self.units = 0
        readiness, resume = dataflow_run.DataflowRun.readiness, Kernel._resume

        def counted_readiness(run, node, deps, state, forced, top):
            self.units += 1 + len(deps)
            return readiness(run, node, deps, state, forced, top)

        def counted_resume(kernel, task, value, error):
            self.units += 1
            return resume(kernel, task, value, error)

        class CountedObj(routing_run._Obj):
            def __init__(inner, *args):
                super().__init__(*args)
                self.units += len(inner)

        monkeypatch.setattr(dataflow_run.DataflowRun, "readiness", counted_readiness)
        monkeypatch.setattr(Kernel, "_resume", counted_resume)
        monkeypatch.setattr(routing_run, "_Obj", CountedObj)

    def of(self, fn) -> int:
        before = self.units
        fn()
        return self.units - before


def instruction_chain(n: int) -> str:
    steps = "".join(f"  s{i:03}: {{ kind: assign, depends_on: {'start' if i == 0 else f's{i - 1:03}'}, value: {i} }}\n"
                    for i in range(n))
    return f"name: chain\nsteps:\n  start: {{ kind: manual }}\n{steps}  z: {{ kind: finish, depends_on: s{n - 1:03} }}\n"


def instruction_fan(n: int) -> str:
    """One step fanning out to n independent steps, all joined by one."""
    steps = "".join(f"  w{i:03}: {{ kind: assign, depends_on: start, value: {i} }}\n" for i in range(n))
    joined = ", ".join(f"w{i:03}" for i in range(n))
    return f"name: fan\nsteps:\n  start: {{ kind: manual }}\n{steps}  z: {{ kind: finish, depends_on: [{joined}] }}\n"


def aevatar_chain(n: int) -> str:
    return "name: chain\nsteps:\n" + "".join(
        f"  - id: s{i}\n    type: assign\n    parameters: {{target: v{i}, value: x}}\n" for i in range(n))


def _runners(text: str, dialect: str):
    result = driver.compile_text(text, "w.yaml", dialect)
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    return {"python": load_module(compile_workflow(result.workflow)),
            "vm": load_program(compile_bytecode(result.workflow))}


def _runs(runner, how: str, steps: int):
    """The run the work is counted for; checks it ran every step."""
    def go():
        if how == "sync":
            record = runner.run({}, Host())
        else:
            record = runner.run_virtual({}, {}, concurrent=how == "concurrent")
        assert record["status"] in ("completed", "success"), record["status"]
        assert len(record["steps"]) == steps
    return go


CASES = [("instruction", instruction_chain, 100, 2), ("instruction", instruction_fan, 100, 2),
         ("aevatar", aevatar_chain, 250, 0)]


@pytest.mark.parametrize("backend", ["python", "vm"])
@pytest.mark.parametrize("how", ["sync", "sequential", "concurrent"])
@pytest.mark.parametrize(("dialect", "make", "n", "extra"), CASES, ids=["chain", "fan", "aevatar-chain"])
def test_scheduling_work_grows_linearly(monkeypatch, backend, how, dialect, make, n, extra):
    small, large = _runners(make(n), dialect)[backend], _runners(make(4 * n), dialect)[backend]
    work = Work(monkeypatch)
    w_small = work.of(_runs(small, how, n + extra))
    w_large = work.of(_runs(large, how, 4 * n + extra))
    assert w_small > n   # it counted something
    assert w_large <= RATIO * w_small, (w_small, w_large, w_large / w_small)


def test_the_book_keeps_the_reference_order():
    # declared in reverse, and the finish ready after w05: still the smallest id first
    steps = "".join(f"  w{i:02}: {{ kind: assign, depends_on: start, value: {i} }}\n" for i in reversed(range(12)))
    text = f"name: fan\nsteps:\n  start: {{ kind: manual }}\n{steps}  z: {{ kind: finish, depends_on: [w00, w05] }}\n"
    want = ["start"] + [f"w{i:02}" for i in range(12)] + ["z"]
    for runner in _runners(text, "instruction").values():
        assert [s["id"] for s in runner.run({}, Host())["steps"]] == want
        assert [s["id"] for s in runner.run_virtual({}, {}, concurrent=True)["steps"]] == want


SWITCH_PRUNES_A_RUNNING_STEP = """\
name: sw
steps:
  start: { kind: manual }
  p: { kind: switch, on: "{{ inputs.pick }}", cases: { x: n, y: a }, depends_on: [start] }
  u: { kind: tool, name: t1, on_error: continue, depends_on: [start, p] }
  n: { kind: switch, on: "{{ inputs.pick }}", cases: { x: a, y: ba }, depends_on: [p, u] }
  h: { kind: assign, value: 3, depends_on: [u] }
  ba: { kind: assign, value: 4, depends_on: [p, h] }
  a: { kind: tool, name: t0, depends_on: [start] }
  zfin: { kind: finish, depends_on: [h, a] }
"""


def test_a_step_pruned_while_running_still_counts_once_for_its_dependents():
    # concurrent: `a` runs when switch `p` prunes it, then ends done; `zfin`
    # must wait for `h` too (the reference record: completed, not stalled)
    script = {"t0": {"output": 1, "latency_ms": 5}, "t1": {"output": 2, "latency_ms": 7}}
    for runner in _runners(SWITCH_PRUNES_A_RUNNING_STEP, "instruction").values():
        record = runner.run_virtual({"pick": "x"}, script, concurrent=True)
        assert record["status"] == "completed"
        assert [(s["id"], s["status"]) for s in record["steps"]] == [
            ("start", "done"), ("p", "done"), ("a", "pruned"), ("n", "done"), ("ba", "pruned"), ("a", "done"),
            ("u", "done"), ("h", "done"), ("zfin", "done")]


def test_the_kernels_heap_orders_like_heapq():
    # the scheduler and the virtual driver share the kernel's heap: not every
    # MicroPython build has heapq (the driver's holds (time, timer) pairs)
    rng = random.Random(7)
    ours, theirs = [], []
    for _ in range(2000):
        if theirs and rng.random() < 0.45:
            assert kernel.heappop(ours) == heapq.heappop(theirs)
        else:
            x = (rng.randrange(300), rng.randrange(2))
            kernel.heappush(ours, x)
            heapq.heappush(theirs, x)
    while theirs:
        assert kernel.heappop(ours) == heapq.heappop(theirs)
    assert ours == []


# ------------------------------------------------------------------ the kernel itself

def kernel_lines(fn, path: str = kernel.__file__) -> int:
    """The lines of runtime/kernel.py (or of the module at ``path``)
    executed while ``fn`` runs: the kernel's own Python-level work. Scans
    in C over a list a caller hands it (a Wait's tasks) or asks for
    (``ready()``'s copy) are not counted: their length is what the caller
    passes or is given."""
    count = [0]

    def local(frame, event, arg):
        if event == "line":
            count[0] += 1
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code.co_filename == path else None

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count[0]


def instruction_tool_fan(n: int) -> str:
    """n independent tool steps, all outstanding at once on a concurrent run."""
    steps = "".join(f"  w{i:03}: {{ kind: tool, name: t, depends_on: start }}\n" for i in range(n))
    joined = ", ".join(f"w{i:03}" for i in range(n))
    return f"name: fan\nsteps:\n  start: {{ kind: manual }}\n{steps}  z: {{ kind: finish, depends_on: [{joined}] }}\n"


def instruction_parallel(n: int) -> str:
    branches = "".join(f"      b{i:03}:\n        steps:\n          x: {{ kind: tool, name: t }}\n" for i in range(n))
    return ("name: par\nsteps:\n  start: { kind: manual }\n  par:\n    kind: parallel\n    depends_on: [start]\n"
            f"    branches:\n{branches}  z: {{ kind: finish, depends_on: par }}\n")


def aevatar_parallel(n: int) -> str:
    roles = "".join(f"  - id: r{i:03}\n    name: R{i:03}\n" for i in range(n))
    workers = ",".join(f"r{i:03}" for i in range(n))
    return f'name: par\nroles:\n{roles}steps:\n  - id: s\n    type: parallel\n    parameters:\n      workers: "{workers}"\n'


# every call answers after 5 ms: on the virtual clock all branches are outstanding together
SCRIPT = {"t": {"output": 1, "latency_ms": 5}} | {f"r{i:03}": {"output": "x", "latency_ms": 5} for i in range(400)}
FANS = [("instruction", instruction_tool_fan, 2), ("instruction", instruction_parallel, 2),
        ("aevatar", aevatar_parallel, 1)]


def _concurrent_run(runner, records: list):
    return lambda: records.append(runner.run_virtual({}, SCRIPT, concurrent=True))


@pytest.mark.parametrize("backend", ["python", "vm"])
@pytest.mark.parametrize(("dialect", "make", "extra"), FANS, ids=["independent-steps", "parallel", "aevatar-parallel"])
def test_the_kernel_does_constant_work_per_branch_of_a_concurrent_fan(backend, dialect, make, extra):
    n = 60
    work = []
    for size in (n, 4 * n):
        runner = _runners(make(size), dialect)[backend]
        records: list[dict] = []
        work.append(kernel_lines(_concurrent_run(runner, records)))
        record = records[0]
        assert record["status"] in ("completed", "success"), record.get("error")
        assert len(record["calls"]) == size
        if dialect == "instruction" and make is instruction_tool_fan:
            assert len(record["steps"]) == size + extra
            assert {s["start_ms"] for s in record["steps"][1:-1]} == {0}  # all at once
    assert work[0] > 10 * n  # it counted the kernel's work
    assert work[1] <= RATIO * work[0], (work, work[1] / work[0])


@pytest.mark.parametrize("backend", ["python", "vm"])
@pytest.mark.parametrize(("dialect", "make", "extra"), FANS, ids=["independent-steps", "parallel", "aevatar-parallel"])
def test_the_virtual_driver_does_constant_work_per_branch_of_a_concurrent_fan(backend, dialect, make, extra):
    # the virtual clock's driver starts only the requests issued since the
    # last answer and keeps those in flight in a heap: a driver that walks
    # every outstanding request at every answer does ~16x at 4x the branches
    n = 60
    work = []
    for size in (n, 4 * n):
        runner = _runners(make(size), dialect)[backend]
        records: list[dict] = []
        work.append(kernel_lines(_concurrent_run(runner, records), drivers.__file__))
        assert records[0]["status"] in ("completed", "success"), records[0].get("error")
        assert len(records[0]["calls"]) == size
    assert work[0] > 5 * n  # it counted the driver's work
    assert work[1] <= RATIO * work[0], (work, work[1] / work[0])
