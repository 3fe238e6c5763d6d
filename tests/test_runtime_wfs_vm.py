"""WorkflowSkill bytecode on the sans-I/O kernel (flowc.runtime).

The VM's interpreter loop is a kernel task: a CALL instruction yields a
``Call`` request, a retry's backoff and an each's delay a ``Sleep``, and a
driver answers. So a loaded program has ``new_run``, ``run`` (the sync
driver), ``run_async`` and ``run_virtual``, and each gives the record the
Python backend's module gives for the same workflow and answers: under a
virtual clock (start and end times included) and under asyncio with a host
whose calls are coroutines. The sync records are byte-identical to the ones
the VM gave before it ran on the kernel (tests/data/workflowskill/vm_sync_records.json,
hashed then; regenerate it with ``python tests/test_runtime_wfs_vm.py --write``,
flowc importable, only when a change of the records is intended).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import textwrap
from pathlib import Path

import pytest
from flowc.backends.python import compile_workflow as python_compile
from flowc.backends.python import load_module
from flowc.backends.vm import compile_workflow, load
from flowc.host import ScriptedHost, ToolError
from flowc.pipeline import driver
from flowc.runtime import drivers
from flowc.runtime.kernel import Result
from flowc.testing import strategies as wst
from flowc.testing.properties import vm_unsupported
from hypothesis import HealthCheck, assume, given, settings

TESTS = Path(__file__).resolve().parent
WFS_DIR = TESTS / "data" / "workflowskill"
HASHES = WFS_DIR / "vm_sync_records.json"
CASES = [c for c in json.loads((WFS_DIR / "cases.json").read_text(encoding="utf-8"))
         if c["expected"].get("error", {}).get("phase") not in ("parse", "validate")]


def dumps(record) -> str:
    return json.dumps(record)  # key order too: the records must be the same bytes


def compiled(path_or_text: str, name: str | None = None):
    """(VM program, Python module) of a corpus file or of workflow text."""
    if name is None:
        result = driver.compile_file(str(WFS_DIR / path_or_text))
    else:
        result = driver.compile_text(textwrap.dedent(path_or_text), name)
    assert result.ok, [d.message for d in result.diagnostics if d.is_error]
    return load(compile_workflow(result.workflow)), load_module(python_compile(result.workflow))


# ------------------------------------------------------------------ workflows with effects

RETRY = """
    steps:
      - id: fetch
        type: tool
        tool: flaky
        retry: {max: 3, delay: "100ms", backoff: 1.5}
      - id: after
        type: tool
        tool: t
"""

PACED = """
    inputs:
      xs: {type: array, default: [1, 2, 3, 4]}
    outputs:
      out: {type: array, value: $steps.loop.output}
    steps:
      - id: loop
        type: tool
        tool: t
        each: $inputs.xs
        delay: "2s"
        on_error: ignore
        retry: {max: 1, delay: "250ms", backoff: 2.0}
        inputs:
          x: {type: int, value: $item}
          i: {type: int, value: $index}
      - id: doubled
        type: transform
        operation: map
        inputs:
          items: {type: array, value: $steps.loop.output}
        outputs:
          items: {type: array}
        expression:
          v: $item
"""

BRANCHED = """
    inputs:
      go: {type: boolean}
    outputs:
      result: {type: object}
    steps:
      - id: first
        type: tool
        tool: t0
      - id: check
        type: conditional
        condition: $inputs.go
        then: [a, b, inner]
        else: [b]
      - id: a
        type: tool
        tool: ta
        on_error: ignore
      - id: b
        type: tool
        tool: tb
        condition: $inputs.go == false
      - id: inner
        type: conditional
        condition: $steps.first.output.more
        then: [c]
      - id: c
        type: tool
        tool: tc
        each: $steps.first.output.items
        delay: "1s"
      - id: stop
        type: exit
        status: success
        output: $steps.first.output
"""

SCENARIOS = [
    ("retry-succeeds", RETRY, {}, {"flaky": [{"error": "busy", "latency_ms": 20}, {"error": "busy", "latency_ms": 30},
                                             {"output": {"ok": True}, "latency_ms": 40}],
                                   "t": {"output": 1, "latency_ms": 5}}),
    ("retry-exhausted", RETRY, {}, {"flaky": {"error": "down", "latency_ms": 10}}),
    ("retry-thrown", RETRY, {}, {"flaky": {"throw": "boom", "latency_ms": 10}}),
    ("each-delay", PACED, {}, {"t": [{"output": "a", "latency_ms": 3}, {"error": "bad", "latency_ms": 4},
                                     {"output": "b", "latency_ms": 5}, {"throw": "gone", "latency_ms": 1},
                                     {"output": "c", "latency_ms": 2}]}),
    ("each-delay-empty", PACED, {"xs": []}, {}),
    ("branch-then", BRANCHED, {"go": True},
     {"t0": {"output": {"more": True, "items": [1, 2, 3]}, "latency_ms": 11},
      "ta": {"error": "no", "latency_ms": 7}, "tc": {"output": "c", "latency_ms": 13}}),
    ("branch-else", BRANCHED, {"go": False},
     {"t0": {"output": {"more": False}, "latency_ms": 11}, "tb": {"output": {"x": 1}, "latency_ms": 2}}),
    ("branch-fails-in-arm", BRANCHED, {"go": True},
     {"t0": {"output": {"more": True, "items": [1, 2]}}, "ta": {"output": 1, "latency_ms": 1},
      "tc": [{"output": "c", "latency_ms": 3}, {"error": "late", "latency_ms": 4}]}),
    ("bad-input", BRANCHED, {"go": "yes"}, {}),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_virtual_time_gives_the_python_backends_record(scenario):
    name, text, inputs, script = scenario
    program, module = compiled(text, name + ".yaml")
    got = program.run_virtual(inputs, script)
    assert dumps(got) == dumps(module.run_virtual(inputs, script))
    # a step that ran has its times; without them the record is the sync one
    for step in got["steps"]:
        if step["status"] != "skipped" or step.get("reason") == "Guard condition evaluated to false":
            assert 0 <= step["start_ms"] <= step["end_ms"], step
        step.pop("start_ms", None)
        step.pop("end_ms", None)
    plain = {k: {kk: vv for kk, vv in v.items() if kk != "latency_ms"} if isinstance(v, dict)
             else [{kk: vv for kk, vv in x.items() if kk != "latency_ms"} for x in v] for k, v in script.items()}
    assert dumps(got) == dumps(program.run(inputs, ScriptedHost(plain)))


def times(record):
    return [(s["id"], s.get("start_ms"), s.get("end_ms")) for s in record["steps"]]


def test_virtual_times_count_latencies_backoff_delays_and_arms():
    program, _module = compiled(RETRY, "retry.yaml")
    # calls 0-20, sleep 100, 120-150, sleep 150, 300-340; then 340-345
    assert times(program.run_virtual({}, SCENARIOS[0][3])) == [("fetch", 0, 340), ("after", 340, 345)]
    program, _module = compiled(PACED, "paced.yaml")
    record = program.run_virtual({}, SCENARIOS[3][3])
    # 4 items 2 s apart; item 2's tool error is retried after 250 ms
    assert record["sleeps_ms"] == [2000, 250, 2000, 2000] and times(record)[0] == ("loop", 0, 6265)
    program, _module = compiled(BRANCHED, "branched.yaml")
    record = program.run_virtual({"go": True}, SCENARIOS[5][3])
    # the conditionals end when their arms do: c's three calls 13 ms each, 1 s apart
    assert times(record) == [("first", 0, 11), ("check", 11, 2057), ("a", 11, 18), ("b", 18, 18),
                             ("inner", 18, 2057), ("c", 18, 2057), ("stop", 2057, 2057)]


class Timed:
    """A virtual-time host over a recorded host script: the scripted host's
    answers (its exceptions read as the sync driver reads them), each
    arriving after a latency that changes from call to call."""

    LATENCIES = (30, 5, 12, 0, 7)

    def __init__(self, script):
        self.host = ScriptedHost(script)
        self.n = 0

    def answer(self, req):
        self.n += 1
        latency = self.LATENCIES[self.n % len(self.LATENCIES)]
        try:
            return Result(self.host.call(req.capability, req.name, req.args)), latency
        except Exception as exc:  # noqa: BLE001 - every host failure is an answer
            return drivers.answer_of_exception(exc), latency


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_every_recorded_case_on_a_virtual_clock_gives_the_python_backends_record(case):
    program, module = compiled(case["file"])
    got = program.run_virtual(case["inputs"], Timed(case["host"]))
    assert dumps(got) == dumps(module.run_virtual(case["inputs"], Timed(case["host"])))
    assert got["steps"][0].get("start_ms") == 0


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wst.runnable_workflows("workflowskill"))
def test_generated_workflows_on_a_virtual_clock_agree_with_the_python_backend(case):
    """Every step kind, each with delays, retries, error policies, guards,
    branches, tool errors and host failures (flowc.testing.strategies)."""
    wf = case.workflow()
    assume(vm_unsupported(wf) is None)
    program, module = load(compile_workflow(wf)), load_module(python_compile(wf))
    got = program.run_virtual(case.inputs, Timed(case.host_script))
    assert dumps(got) == dumps(module.run_virtual(case.inputs, Timed(case.host_script))), case.text
    for step in got["steps"]:
        step.pop("start_ms", None)
        step.pop("end_ms", None)
    # a virtual clock changes the times only: the rest is the sync record
    assert dumps(got) == dumps(program.run(case.inputs, ScriptedHost(case.host_script))), case.text


# ------------------------------------------------------------------ asyncio

class AsyncHost:
    """A real asyncio host: each call awaits the loop once, then answers
    from the script; sleeps are awaited too."""

    def __init__(self, script):
        self.sync = ScriptedHost(script)
        self.slept = []

    async def call(self, capability, name, args):
        await asyncio.sleep(0.001)
        return self.sync.call(capability, name, args)

    async def sleep(self, ms):
        self.slept.append(ms)
        await asyncio.sleep(0)


def plain_script(script):
    """A virtual-time script as a ScriptedHost script (latencies dropped)."""
    def strip(spec):
        return {k: v for k, v in spec.items() if k != "latency_ms"}
    return {k: [strip(x) for x in v] if isinstance(v, list) else strip(v) for k, v in script.items()}


ASYNC = [(c["case"], c["file"], None, c["inputs"], c["host"]) for c in CASES] + \
        [(s[0], None, s[1], s[2], plain_script(s[3])) for s in SCENARIOS]


@pytest.mark.parametrize("job", ASYNC, ids=[j[0] for j in ASYNC])
def test_asyncio_with_an_asyncio_host_gives_the_python_backends_record_and_the_sync_one(job):
    name, file, text, inputs, script = job
    program, module = compiled(file) if file else compiled(text, name + ".yaml")
    host = AsyncHost(script)
    got = asyncio.run(program.run_async(inputs, host))
    assert dumps(got) == dumps(asyncio.run(module.run_async(inputs, AsyncHost(script))))
    assert dumps(got) == dumps(program.run(inputs, ScriptedHost(script)))
    assert host.slept == got["sleeps_ms"]


def test_asyncio_tool_errors_are_retried_with_backoff():
    program, _module = compiled(RETRY, "retry.yaml")

    class Flaky:
        def __init__(self):
            self.n = 0

        async def call(self, capability, name, args):
            self.n += 1
            await asyncio.sleep(0)
            if self.n < 3:
                raise ToolError("busy")
            return {"attempt": self.n}

        async def sleep(self, ms):
            await asyncio.sleep(0)

    record = asyncio.run(program.run_async({}, Flaky()))
    assert record["status"] == "success" and record["sleeps_ms"] == [100, 150]
    assert len(record["calls"]) == 4


# ------------------------------------------------------------------ the protocol by hand

def by_hand(program, inputs, host, *limits):
    """The run, its requests answered one at a time by ``host`` (no driver)."""
    run = program.new_run(inputs, *limits)
    run.start()
    while not run.finished:
        ready = run.ready()
        assert len(ready) == 1  # WorkflowSkill is sequential: one request at a time
        run.answer(ready[0].id, drivers.perform_sync(host, ready[0]))
    return run


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_every_case_by_hand_gives_the_sync_record_and_its_journal_replays_it(case):
    program, _module = compiled(case["file"])
    sync = program.run(case["inputs"], ScriptedHost(case["host"]))
    run = by_hand(program, case["inputs"], ScriptedHost(case["host"]))
    assert dumps(run.record()) == dumps(sync)
    assert len(run.journal) == len(sync["calls"]) + len(sync["sleeps_ms"])
    replay = program.new_run(case["inputs"])
    replay.start()
    for rid, answer in run.journal:
        assert [r.id for r in replay.ready()] == [rid]
        replay.answer(rid, answer)
    assert replay.finished and dumps(replay.record()) == dumps(sync)


def test_the_retry_loop_is_calls_and_sleeps_in_the_journal():
    program, _module = compiled("fixtures/retry-backoff.md")
    script = {"flaky_api": [{"error": "Temporary failure"}, {"error": "Temporary failure"},
                            {"output": {"data": {"ok": True}}}]}
    run = by_hand(program, {}, ScriptedHost(script))
    assert [a.kind for _rid, a in run.journal] == ["error", "result", "error", "result", "result"]
    assert run.record()["sleeps_ms"] == [100, 200] and run.record()["status"] == "success"


def test_a_transform_only_workflow_runs_without_requests():
    program, _module = compiled("fixtures/echo.md")
    run = program.new_run({})
    run.start()
    assert run.finished and run.ready() == [] and run.journal == []
    assert run.record()["status"] == "success"


def test_a_run_out_of_fuel_stops_at_its_request():
    """Host-call fuel is charged before the request is issued: the run
    fails without asking, as before."""
    program, _module = compiled(RETRY, "retry.yaml")
    run = by_hand(program, {}, ScriptedHost({"flaky": {"error": "busy"}}), None, None, 2)
    # call, sleep, call, sleep: the third call is never asked
    assert [a.kind for _rid, a in run.journal] == ["error", "result", "error", "result"]
    assert run.record()["error"] == {"message": "fuel exhausted: more than 2 host calls", "step": "fetch"}


def test_host_failures_map_as_on_the_python_backend():
    program, module = compiled(RETRY, "retry.yaml")

    class NoMessage:
        def call(self, capability, name, args):
            raise RuntimeError()  # no message: named by its type

        def sleep(self, ms):
            raise AssertionError("not retried")

    class NoSleep(ScriptedHost):
        def sleep(self, ms):
            raise OSError("no sleeping here")

    record = program.run({}, NoMessage())
    assert record["error"] == {"message": "RuntimeError", "step": "fetch"} and len(record["calls"]) == 1
    assert dumps(record) == dumps(module.run({}, NoMessage()))
    record = program.run({}, NoSleep({"flaky": {"error": "busy"}}))
    assert record["error"] == {"message": "no sleeping here", "step": "fetch"} and record["sleeps_ms"] == [100]
    assert dumps(record) == dumps(module.run({}, NoSleep({"flaky": {"error": "busy"}})))


def test_what_no_step_catches_surfaces_from_record():
    program, _module = compiled("fixtures/retry-backoff.md")

    class Odd:  # an answer the run cannot read: no message
        kind = "odd"

    run = program.new_run({})
    run.start()
    run.answer(run.ready()[0].id, Odd())
    assert run.finished
    with pytest.raises(AttributeError):
        run.record()


def test_inputs_must_be_a_dict_before_anything_runs():
    program, _module = compiled("fixtures/echo.md")
    with pytest.raises(TypeError, match="must be a dict"):
        program.new_run(["x"])


# ------------------------------------------------------------------ the sync records, as before

class _Raising:
    def __init__(self, exc):
        self.exc = exc

    def call(self, capability, name, args):
        raise self.exc

    def sleep(self, ms):
        pass


def sync_records():
    """(key, record) for every recorded case: plain, stripped of its source
    map, under instruction, iteration and host-call fuel, and against a host
    that fails every call."""
    for case in CASES:
        result = driver.compile_file(str(WFS_DIR / case["file"]))
        assert result.ok
        inputs, script = case["inputs"], case["host"]
        key = case["case"]
        program = load(compile_workflow(result.workflow))
        yield key, program.run(inputs, ScriptedHost(script))
        yield key + " stripped", load(compile_workflow(result.workflow, strip=True)).run(inputs, ScriptedHost(script))
        for budget in (0, 7, 40, 400):
            yield key + " instructions=" + str(budget), program.run(inputs, ScriptedHost(script), budget)
        for budget in (0, 1, 2):
            yield key + " iterations=" + str(budget), program.run(inputs, ScriptedHost(script), None, budget)
        for budget in (0, 1, 2):
            yield key + " host calls=" + str(budget), program.run(inputs, ScriptedHost(script), None, None, budget)
        yield key + " host fails", program.run(inputs, _Raising(RuntimeError()))
        yield key + " tool error", program.run(inputs, _Raising(ToolError("nope")))


def _digest(record) -> str:
    return hashlib.sha256(json.dumps(record).encode("utf-8")).hexdigest()[:20]


def test_sync_records_are_the_bytes_the_vm_gave_before_the_kernel():
    want = json.loads(HASHES.read_text(encoding="utf-8"))
    got = {key: _digest(record) for key, record in sync_records()}
    assert len(got) == len(want) > 300
    assert [k for k in want if got.get(k) != want[k]] == []


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    table = {key: _digest(record) for key, record in sync_records()}
    HASHES.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(len(table), "records hashed into", HASHES)
