"""Deadlines enforced by the kernel (flowc.runtime.kernel.with_deadline).

A deadline is a ``Sleep(ms, deadline=True)`` timer raced against the body it
bounds: the first done wins, the other is cancelled. Virtual time decides
every rule here without sleeping, and both backends (the generated module
and the VM program) give the same virtual records:

- the instruction dialect: a step's ``timeout`` bounds the whole step (every
  attempt and the retry pauses), a race's ``timeout`` cancels every branch
  still running, a timeout routes to ``on_timeout``, unset it is 600 s;
- aevatar: a step's ``timeout_ms`` bounds each dispatch (all its host calls
  and sub-steps; a retry is a new dispatch) and fails the run with ``TIMEOUT
  after <n>ms`` past retry and on_error; wait_signal has its module's timer,
  human_input the suspension's timeout.

The sync driver has no clock: no timer is ever issued there. One test runs a
real asyncio host whose calls sleep, and a deadline fires on the event loop;
another runs the kernel's deadlines on MicroPython.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import textwrap
import time
from pathlib import Path

import msgpack
import pytest
from flowc.backends import vm
from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.pipeline import driver
from flowc.runtime import dataflow_run, drivers, routing_run
from flowc.runtime.aio import drive_async
from flowc.runtime.kernel import Call, Kernel, Result, Spawn, Wait, with_deadline

from tests.device_modules import device_module_files


def _workflow(text: str, dialect: str):
    result = driver.compile_text(textwrap.dedent(text), "w.yaml", dialect)
    assert result.ok, [(d.code, d.message) for d in result.diagnostics if d.is_error]
    return result.workflow


def compiled(text: str, dialect: str):
    """(generated module, VM program) of one workflow."""
    wf = _workflow(text, dialect)
    return load_module(compile_workflow(wf)), vm.load(vm.compile_workflow(wf))


def dumps(record) -> str:
    return json.dumps(record, sort_keys=True)


def both_virtual(programs, inputs, script, **kw):
    """The virtual record, the same on both backends."""
    module, program = programs
    record = module.run_virtual(inputs, script, **kw)
    assert dumps(program.run_virtual(inputs, script, **kw)) == dumps(record)
    return record


def step(record, sid):
    return next(s for s in record["steps"] if s["id"] == sid)


class Watched:
    """Drive a run on virtual time and note every request issued and every
    request id the kernel cancelled (``run.cancelled()``)."""

    def __init__(self, run):
        self.run = run
        self.issued = {}
        self.cancelled = []
        ready, cancelled = run.ready, run.cancelled

        def watch_ready():
            reqs = ready()
            for req in reqs:
                self.issued[req.id] = req
            return reqs

        def watch_cancelled():
            ids = cancelled()
            self.cancelled.extend(ids)
            return ids

        run.ready, run.cancelled = watch_ready, watch_cancelled

    def drive(self, script):
        record = drivers.drive_virtual(self.run, drivers.VirtualHost(script))
        self.run.cancelled()  # what the last answer cancelled
        return record

    def cancelled_calls(self):
        return sorted(self.issued[i].name for i in self.cancelled if self.issued[i].kind == "call")

    def timers(self):
        return [r for r in self.issued.values() if r.kind == "sleep" and r.deadline]


# ---------------------------------------------------------------- the kernel's helper

class _Bounded(Kernel):
    """A run of one call bounded by a deadline; record() = (in time, value)."""

    def __init__(self, ms):
        Kernel.__init__(self)
        self.ms = ms

    def start(self):
        return Kernel.start(self, self.main())

    def main(self):
        return (yield from with_deadline(self, self.body(), self.ms))

    def body(self):
        answer = yield Call("tool", "slow", {})
        return answer.value

    def record(self):
        return self.outcome()


def test_with_deadline_the_first_done_wins_and_the_loser_is_cancelled():
    on_time = Watched(_Bounded(100))
    assert on_time.drive({"slow": {"output": 7, "latency_ms": 100}}) == (True, 7)   # a tie is in time
    assert len(on_time.timers()) == 1 and on_time.cancelled == [on_time.timers()[0].id]
    late = Watched(_Bounded(100))
    assert late.drive({"slow": {"output": 7, "latency_ms": 101}}) == (False, None)
    assert late.cancelled_calls() == ["slow"]


def test_without_a_clock_the_body_runs_inline_and_no_timer_is_issued():
    run = _Bounded(100).start()
    assert not run.clock
    (req,) = run.ready()
    assert (req.kind, req.id) == ("call", 1)
    run.answer(req.id, Result(3))
    assert run.finished and run.record() == (True, 3) and len(run.journal) == 1


# ---------------------------------------------------------------- the instruction dialect

RACE = """\
name: r
steps:
  start: { kind: manual }
  race:
    kind: race
    depends_on: start
    timeout: 100ms
    on_error: continue
    branches:
      a: { steps: { v: { kind: tool, name: alpha } } }
      b: { steps: { v: { kind: tool, name: beta } } }
  done: { kind: finish, depends_on: race, output: "{{ steps.race.output }}" }
"""


def test_a_race_past_its_timeout_cancels_every_branch():
    programs = compiled(RACE, "instruction")
    script = {"alpha": {"output": "A", "latency_ms": 300}, "beta": {"output": "B", "latency_ms": 500}}
    record = both_virtual(programs, {}, script)
    assert record["status"] == "completed" and record["outputs"] == {"error": "timeout"}
    race = step(record, "race")
    assert (race["status"], race["error"], race["start_ms"], race["end_ms"]) == ("done", "timeout", 0, 100)
    assert [s["id"] for s in record["steps"]] == ["start", "race", "done"]   # the branches left no record
    watched = Watched(dataflow_run.new_run(programs[0].PLAN, {}, concurrent=True))
    watched.drive(script)
    assert watched.cancelled_calls() == ["alpha", "beta"]


def test_a_race_won_in_time_cancels_the_losers_and_the_timer():
    programs = compiled(RACE, "instruction")
    script = {"alpha": {"output": "A", "latency_ms": 60}, "beta": {"output": "B", "latency_ms": 500}}
    record = both_virtual(programs, {}, script)
    assert record["outputs"] == {"winner": "a", "output": "A"} and step(record, "race")["end_ms"] == 60
    watched = Watched(dataflow_run.new_run(programs[0].PLAN, {}, concurrent=True))
    watched.drive(script)
    assert watched.cancelled_calls() == ["beta"]
    race_timer = [t for t in watched.timers() if t.ms == 100]
    assert len(race_timer) == 1 and race_timer[0].id in watched.cancelled


def test_a_sequential_race_past_its_timeout_never_starts_the_next_branch():
    programs = compiled(RACE, "instruction")
    script = {"alpha": {"output": "A", "latency_ms": 80}, "beta": {"output": "B", "latency_ms": 80}}
    record = both_virtual(programs, {}, script, concurrent=False)
    # a runs 0..80, b 80..160: the deadline (100) cancels b; b's call was made
    assert record["outputs"] == {"error": "timeout"} and [c["name"] for c in record["calls"]] == ["alpha", "beta"]


RETRIES = """\
name: t
steps:
  start: { kind: manual }
  get: { kind: tool, depends_on: start, name: flaky, timeout: 250ms, retry: { max: 5, backoff: 100ms },
         on_error: continue }
  done: { kind: finish, depends_on: get, output: "{{ steps.get }}" }
"""


def test_a_step_timeout_bounds_every_attempt_and_the_pauses_between():
    programs = compiled(RETRIES, "instruction")
    record = both_virtual(programs, {}, {"flaky": {"error": "down", "latency_ms": 50}})
    # attempt 1: 0..50, pause ~100, attempt 2: ~150..200, pause ~200: the deadline (250) ends it
    assert record["outputs"] == {"status": "done", "output": {"error": "timeout"}, "error": "timeout",
                                 "attempt": 2}
    assert len(record["calls"]) == 2 and len(record["sleeps_ms"]) == 2
    assert step(record, "get")["end_ms"] == 250
    # each call was far quicker than the timeout: a per-call limit would have let all 6 attempts run
    slack = both_virtual(compiled(RETRIES.replace("250ms", "10s"), "instruction"), {},
                         {"flaky": {"error": "down", "latency_ms": 50}})
    assert len(slack["calls"]) == 6 and slack["outputs"]["error"] == "down"


ON_TIMEOUT = """\
name: w
steps:
  start: { kind: manual }
  w: { kind: wait, depends_on: start, on: signal, signal: go, timeout: 100ms, on_timeout: late,
       retry: { max: 3, backoff: 10ms } }
  late: { kind: assign, value: late }
  ok: { kind: assign, depends_on: w, value: ok }
  done: { kind: finish, depends_on: late, output: "{{ steps.late.output }}" }
  fine: { kind: finish, depends_on: ok, output: "{{ steps.ok.output }}" }
"""


def test_a_timeout_routes_to_on_timeout_and_is_not_retried():
    programs = compiled(ON_TIMEOUT, "instruction")
    record = both_virtual(programs, {}, {"signal:signal": {"output": 1, "latency_ms": 500}})
    assert record["outputs"] == "late" and len(record["calls"]) == 1
    assert (step(record, "w")["status"], step(record, "w")["error"], step(record, "w")["end_ms"]) == \
        ("failed", "timeout", 100)
    in_time = both_virtual(programs, {}, {"signal:signal": {"output": 1, "latency_ms": 40}})
    assert in_time["outputs"] == "ok"


def test_an_unset_timeout_is_600_seconds():
    programs = compiled(RETRIES.replace(" timeout: 250ms,", "").replace("retry: { max: 5, backoff: 100ms },", ""),
                        "instruction")
    slow = both_virtual(programs, {}, {"flaky": {"output": 1, "latency_ms": 600001}})
    assert slow["outputs"]["error"] == "timeout" and step(slow, "get")["end_ms"] == 600000
    assert both_virtual(programs, {}, {"flaky": {"output": 1, "latency_ms": 600000}})["outputs"]["output"] == 1


def test_the_sync_driver_fires_no_deadline():
    module, program = compiled(RACE, "instruction")
    for p in (module, program):
        record = p.run({}, ScriptedHost({"alpha": "A", "beta": "B"}))
        assert record["outputs"] == {"winner": "a", "output": "A"}
    run = dataflow_run.new_run(module.PLAN, {})
    drivers.drive_sync(run, ScriptedHost({"alpha": "A", "beta": "B"}))
    assert [rid for rid, _answer in run.journal] == [1, 2]   # the two calls, no timer


PER_CALL = """\
name: per_call
steps:
  start: { kind: manual }
  get: { kind: http, depends_on: start, url: "https://example.com/x", timeout: 2s,
         retry: { max: 2, backoff: 100ms }, on_error: continue }
  send: { kind: a2a.send, depends_on: get, to: peer, timeout: 300ms, on_error: continue }
  ask: { kind: a2a.delegate, depends_on: send, peer: p, objective: go, timeout: 300ms, on_error: continue }
  reply: { kind: a2a.wait, depends_on: ask, from: p, timeout: 300ms, on_error: continue }
  child: { kind: workflow.wait, depends_on: reply, run: r1, timeout: 300ms, on_error: continue }
  done: { kind: finish, depends_on: child, output: "{{ steps.get }}" }
"""

QUICK = {"a2a:send": {"output": "sent", "latency_ms": 10}, "a2a:delegate": {"output": "t1", "latency_ms": 10},
         "a2a:wait": {"output": "r", "latency_ms": 10}, "workflow:workflow.wait": {"output": "ok", "latency_ms": 10}}


def test_an_http_timeout_bounds_each_request_and_the_retries_run():
    """http, a2a.* and workflow.wait: the step's ``timeout`` goes with every
    call (Call.timeout_ms); a slower call is a failed attempt (retried), not
    the end of the step."""
    programs = compiled(PER_CALL, "instruction")
    script = dict(QUICK, **{"http:request": [{"output": 1, "latency_ms": 5000}, {"output": 1, "latency_ms": 3000},
                                             {"output": "body", "latency_ms": 50}]})
    record = both_virtual(programs, {}, script)
    # attempt 1: 0..2000 (timed out), pause ~100, attempt 2: ~2100..~4100 (timed out), pause ~200, attempt 3
    get = step(record, "get")
    assert record["outputs"] == {"status": "done", "output": "body", "error": None, "attempt": 3}
    assert [c["name"] for c in record["calls"]][:3] == ["request"] * 3 and len(record["sleeps_ms"]) == 2
    assert get["end_ms"] == 2000 + record["sleeps_ms"][0] + 2000 + record["sleeps_ms"][1] + 50
    # every attempt timed out: the step fails with the timeout (on_error: continue)
    slow = both_virtual(programs, {}, dict(QUICK, **{"http:request": {"output": 1, "latency_ms": 5000}}))
    assert slow["outputs"] == {"status": "done", "output": {"error": "timeout"}, "error": "timeout", "attempt": 3}
    assert step(slow, "get")["end_ms"] == 3 * 2000 + sum(slow["sleeps_ms"])


def test_each_per_call_kind_carries_its_timeout_on_both_drivers():
    module, program = compiled(PER_CALL, "instruction")
    want = {"http": 2000, "a2a": 300, "workflow": 300}
    for new_run in (module.new_run, program.new_run):
        for clock in (False, True):
            run = new_run({})
            run.clock = clock  # a driver with a clock says so before the run starts
            run.start()
            seen = []
            while not run.finished:
                req = next(r for r in run.ready() if r.kind == "call")
                seen.append((req.capability, req.timeout_ms))
                run.answer(req.id, Result("x"))
            assert seen == [(c, want[c]) for c in ("http", "a2a", "a2a", "a2a", "workflow")], (clock, seen)


def test_each_a2a_and_workflow_wait_call_is_bounded():
    programs = compiled(PER_CALL, "instruction")
    base = dict(QUICK, **{"http:request": {"output": "body", "latency_ms": 50}})
    for key, sid in (("a2a:send", "send"), ("a2a:delegate", "ask"), ("a2a:wait", "reply"),
                     ("workflow:workflow.wait", "child")):
        slow = both_virtual(programs, {}, dict(base, **{key: {"output": 1, "latency_ms": 301}}))
        assert step(slow, sid)["error"] == "timeout" and step(slow, sid)["status"] == "done", sid
        assert step(slow, sid)["end_ms"] - step(slow, sid)["start_ms"] == 300
        in_time = both_virtual(programs, {}, dict(base, **{key: {"output": 1, "latency_ms": 300}}))
        assert "error" not in step(in_time, sid), sid


# ---------------------------------------------------------------- aevatar

FAN = """\
name: fan
roles: [{id: a}, {id: b}, {id: c}]
steps:
  - id: fan
    type: parallel
    timeout_ms: 200
    retry: {max_attempts: 3, delay_ms: 10}
    on_error: {strategy: skip}
    parameters: {workers: "a,b,c"}
  - id: after
    type: transform
"""


def test_an_aevatar_step_timeout_fails_the_run_past_retry_and_on_error():
    programs = compiled(FAN, "aevatar")
    script = {"llm:a": {"output": "A", "latency_ms": 100}, "llm:b": {"output": "B", "latency_ms": 300},
              "llm:c": {"output": "C", "latency_ms": 400}}
    record = both_virtual(programs, {"input": "q"}, script)
    assert record["status"] == "failed" and record["error"] == {"message": "TIMEOUT after 200ms", "step": "fan"}
    assert record["steps"] == [{"id": "fan_sub_0", "status": "success", "output": "A"},
                               {"id": "fan", "status": "failed", "output": "", "error": "TIMEOUT after 200ms"}]
    assert len(record["calls"]) == 3 and record["sleeps_ms"] == []      # no retry, no skip to `after`
    watched = Watched(routing_run.Run(programs[0].PLAN, {"input": "q"}, concurrent=True))
    watched.drive(script)
    assert watched.cancelled_calls() == ["b", "c"]
    in_time = both_virtual(programs, {"input": "q"}, {"llm:a": "A", "llm:b": "B", "llm:c": "C"})
    assert in_time["status"] == "success"


def test_a_journal_with_a_fired_deadline_replays_the_run():
    module, _program = compiled(FAN, "aevatar")
    script = {"llm:a": {"output": "A", "latency_ms": 100}, "llm:b": {"output": "B", "latency_ms": 300},
              "llm:c": {"output": "C", "latency_ms": 400}}
    first = routing_run.Run(module.PLAN, {"input": "q"}, concurrent=True)
    record = drivers.drive_virtual(first, drivers.VirtualHost(script))
    assert record["error"]["message"] == "TIMEOUT after 200ms"
    again = routing_run.Run(module.PLAN, {"input": "q"}, concurrent=True)
    again.clock = True        # the timers are requests of the journal: replay them on a run that has them
    again.start()
    for rid, answer in first.journal:
        again.answer(rid, answer)
    assert again.finished and dumps(again.record()) == dumps(record)


REFLECT = """\
name: think
roles: [{id: a}]
steps:
  - id: draft
    type: reflect
    target_role: a
    timeout_ms: 100
    parameters: {max_rounds: "1"}
"""


def test_an_aevatar_step_timeout_covers_all_the_calls_of_the_dispatch():
    programs = compiled(REFLECT, "aevatar")
    # draft 0..60, critique 60..120: each call in time, the dispatch is not
    record = both_virtual(programs, {"input": "q"}, {"llm:a": {"output": "text", "latency_ms": 60}})
    assert record["error"] == {"message": "TIMEOUT after 100ms", "step": "draft"} and len(record["calls"]) == 2
    quick = both_virtual(programs, {"input": "q"}, {"llm:a": [{"output": "d", "latency_ms": 40},
                                                              {"output": "PASS", "latency_ms": 40}]})
    assert quick["status"] == "success" and quick["outputs"]["output"] == "d"


RETRY = """\
name: again
roles: [{id: a}]
steps:
  - id: ask
    type: llm_call
    target_role: a
    timeout_ms: 100
    retry: {max_attempts: 2, delay_ms: 500}
"""


def test_an_aevatar_retry_is_a_new_dispatch_with_a_new_deadline():
    programs = compiled(RETRY, "aevatar")
    script = {"llm:a": [{"error": "busy", "latency_ms": 80}, {"output": "fine", "latency_ms": 80}]}
    record = both_virtual(programs, {"input": "q"}, script)
    # 0..80 fails, the pause 80..580 is outside any deadline, 580..660 succeeds
    assert record["status"] == "success" and record["outputs"]["output"] == "fine"
    assert record["sleeps_ms"] == [500] and len(record["calls"]) == 2


SIGNAL = """\
name: hold
steps:
  - id: hold
    type: wait_signal
    retry: {max_attempts: 3, delay_ms: 10}
    on_error: {strategy: skip}
    parameters: {signal_name: Go, timeout_ms: "1000"}
"""


def test_wait_signal_has_its_module_timer():
    programs = compiled(SIGNAL, "aevatar")
    late = both_virtual(programs, {"input": "q"}, {"signal:go": {"output": "now", "latency_ms": 5000}})
    assert late["status"] == "failed" and late["error"] == {"message": "signal 'go' timed out after 1000ms",
                                                            "step": "hold"}
    assert len(late["calls"]) == 1            # a timeout: no retry, no skip
    on_time = both_virtual(programs, {"input": "q"}, {"signal:go": {"output": "now", "latency_ms": 500}})
    assert on_time["status"] == "success" and on_time["outputs"]["output"] == "now"
    seconds = compiled(SIGNAL.replace('timeout_ms: "1000"', 'timeout_seconds: "2"'), "aevatar")
    assert both_virtual(seconds, {"input": "q"}, {"signal:go": {"output": "x", "latency_ms": 2500}})["error"][
        "message"] == "signal 'go' timed out after 2000ms"


HUMAN = """\
name: ask
steps:
  - id: ask
    type: human_input
    on_error: {strategy: skip, default_output: nobody}
    parameters: {prompt: "Name?", timeout_seconds: "2", on_timeout: ON}
"""


def test_human_input_times_out_after_the_suspensions_timeout():
    failing = compiled(HUMAN.replace("ON", "fail"), "aevatar")
    late = {"human:input": {"output": "Ada", "latency_ms": 2500}}
    record = both_virtual(failing, {"input": "q"}, late)
    # the engine's timed-out resume: "Human input timed out" is not a timeout error, so on_error applies
    assert step(record, "ask")["error"] == "Human input timed out"
    assert record["status"] == "success" and record["outputs"]["output"] == "nobody"
    lenient = compiled(HUMAN.replace("ON", "continue"), "aevatar")
    assert both_virtual(lenient, {"input": "q"}, late)["outputs"]["output"] == "q"      # out = in
    assert both_virtual(lenient, {"input": "q"}, {"human:input": {"output": "Ada", "latency_ms": 1500}})[
        "outputs"]["output"] == "Ada"


def test_aevatar_deadlines_never_fire_under_the_sync_driver():
    for text, script in ((FAN, {"llm:a": "A", "llm:b": "B", "llm:c": "C"}), (SIGNAL, {"signal:go": "now"}),
                         (HUMAN.replace("ON", "fail"), {"human:input": "Ada"})):
        module, program = compiled(text, "aevatar")
        want = module.run({"input": "q"}, ScriptedHost(script))
        assert want["status"] == "success"
        assert dumps(program.run({"input": "q"}, ScriptedHost(script))) == dumps(want)


# ---------------------------------------------------------------- a real asyncio host

class SleepyHost:
    """Every call awaits ``asyncio.sleep`` for its name's delay; notes the cancelled ones."""

    def __init__(self, delays):
        self.delays = delays
        self.cancelled = []

    async def call(self, capability, name, args):
        try:
            await asyncio.sleep(self.delays[name])
        except asyncio.CancelledError:
            self.cancelled.append(name)
            raise
        return name

    async def sleep(self, ms):
        await asyncio.sleep(ms / 1000)


def test_a_real_asyncio_deadline_fires_and_cancels_the_host_calls():
    module, _program = compiled(RACE, "instruction")
    host = SleepyHost({"alpha": 2.0, "beta": 3.0})
    start = time.perf_counter()
    record = asyncio.run(module.run_async({}, host))
    took = time.perf_counter() - start
    assert record["outputs"] == {"error": "timeout"} and sorted(host.cancelled) == ["alpha", "beta"]
    assert 0.1 <= took < 1.0, took
    _fan_module, fan_program = compiled(FAN.replace("timeout_ms: 200", "timeout_ms: 150"), "aevatar")
    host = SleepyHost({"a": 0.01, "b": 2.0, "c": 2.0})
    start = time.perf_counter()
    record = asyncio.run(fan_program.run_async({"input": "q"}, host))
    took = time.perf_counter() - start
    assert record["error"] == {"message": "TIMEOUT after 150ms", "step": "fan"}
    assert sorted(host.cancelled) == ["b", "c"] and 0.15 <= took < 1.0, took


# ---------------------------------------------------------------- MicroPython

MP_DIR = Path(__file__).resolve().parent / "micropython"

MP_DRIVER = '''
import json

import dataflow_run
import drivers
import json_text
import device
from container import unpackb


def main(path):
    with open(path, "rb") as f:
        jobs = unpackb(f.read())
    for kind, program, inputs, script in jobs:
        if kind == "dataflow":
            run = dataflow_run.new_run(device.load(program).plan, inputs, concurrent=True)
            print(json.dumps(drivers.drive_virtual(run, drivers.VirtualHost(script))))
        else:
            print(json_text.json_dumps(device.load(program).run_virtual(inputs, script)))
'''


def test_deadlines_fire_the_same_on_micropython(tmp_path):
    """kernel.py, drivers.py, dataflow_run.py, edges.py and routing_run.py copied unmodified
    into MicroPython: a race past its timeout, an aevatar step past its
    timeout_ms and a run past its `limits.deadline` (the kernel's timer)
    give the virtual records CPython gives."""
    node = shutil.which("node")
    assert node, "node is needed to run MicroPython (tests/micropython)"
    race = compiled(RACE, "instruction")[1]
    fan = compiled(FAN, "aevatar")[1]
    race_script = {"alpha": {"output": "A", "latency_ms": 300}, "beta": {"output": "B", "latency_ms": 500}}
    fan_script = {"llm:a": {"output": "A", "latency_ms": 100}, "llm:b": {"output": "B", "latency_ms": 300},
                  "llm:c": {"output": "C", "latency_ms": 400}}
    limited = compiled(LIMITED_RUN, "instruction")[1]
    limited_script = {"a": {"output": "A", "latency_ms": 250}, "b": {"output": "B", "latency_ms": 100}}
    jobs = [["dataflow", vm.compile_workflow(_workflow(RACE, "instruction")), {}, race_script],
            ["aevatar", vm.compile_workflow(_workflow(FAN, "aevatar")), {"input": "q"}, fan_script],
            ["dataflow", vm.compile_workflow(_workflow(LIMITED_RUN, "instruction")), {}, limited_script]]
    jobs_file = tmp_path / "jobs.bin"
    jobs_file.write_bytes(msgpack.packb(jobs, use_bin_type=True))
    driver_file = tmp_path / "mp_deadlines.py"
    driver_file.write_text(MP_DRIVER, encoding="utf-8")
    modules = device_module_files()
    proc = subprocess.run([node, str(MP_DIR / "run_dataflow.mjs"), str(driver_file), str(jobs_file), *modules],
                          check=False, capture_output=True, text=True, timeout=300, cwd=MP_DIR)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    want_race = race.run_virtual({}, race_script)
    want_fan = fan.run_virtual({"input": "q"}, fan_script)
    assert want_race["outputs"] == {"error": "timeout"}
    assert want_fan["error"] == {"message": "TIMEOUT after 200ms", "step": "fan"}
    want_limited = limited.run_virtual({}, limited_script)
    assert want_limited["error"] == {"message": DEADLINE, "step": "b"}
    assert [dumps(line) for line in lines] == [dumps(want_race), dumps(json.loads(json.dumps(want_fan))),
                                               dumps(want_limited)]


LIMITED_RUN = """\
name: limited
limits: { deadline: 300ms }
steps:
  go: { kind: manual }
  a: { kind: tool, depends_on: go, name: a }
  b: { kind: tool, depends_on: a, name: b }
  done: { kind: finish, depends_on: b, output: "{{ steps.b.output }}" }
"""


@pytest.mark.parametrize("backend", ["python", "vm"])
def test_limits_deadline_bounds_a_plain_asyncio_run(backend):
    """The instruction dialect's `limits.deadline` under `run_async`: past it
    the call in flight is answered TimedOut and nothing more is sent, as the
    journaling driver does (docs/durable.md)."""
    class Slow:
        def __init__(self):
            self.calls = []

        async def call(self, capability, name, args):
            self.calls.append(name)
            await asyncio.sleep(5)
            return "x"

        def sleep(self, ms):
            return asyncio.sleep(ms / 1000)

    workflow = _workflow(LIMITED_RUN, "instruction")
    program = (load_module(compile_workflow(workflow)) if backend == "python"
               else vm.load(vm.compile_workflow(workflow)))
    host = Slow()
    started = time.monotonic()
    record = asyncio.run(program.run_async({}, host))
    assert time.monotonic() - started < 2.5  # not the 5 s the call would take
    assert host.calls == ["a"]
    assert record["status"] == "failed"
    assert record["error"]["message"] == "limits.deadline: the run's deadline of 300 ms has passed"


DEADLINE = "limits.deadline: the run's deadline of 300 ms has passed"


def test_limits_deadline_on_the_virtual_clock_stops_the_call_in_flight():
    """`limits.deadline` under `run_virtual`, as under `run_async`: the call
    still running at 300 ms is answered TimedOut then, and nothing more is
    sent; the same record on both backends."""
    record = both_virtual(compiled(LIMITED_RUN, "instruction"), {},
                          {"a": {"output": "A", "latency_ms": 1000}, "b": {"output": "B", "latency_ms": 10}})
    assert record["status"] == "failed"
    assert record["error"]["message"] == DEADLINE
    assert [c["name"] for c in record["calls"]] == ["a"]
    assert step(record, "a")["end_ms"] == 300


def test_limits_deadline_on_the_virtual_clock_answers_a_call_asked_late():
    """`a` finishes in time at 250 ms; `b`, asked then, would finish at 350:
    it is answered at the deadline; a run that ends by 300 ms is untouched."""
    programs = compiled(LIMITED_RUN, "instruction")
    late = both_virtual(programs, {}, {"a": {"output": "A", "latency_ms": 250},
                                       "b": {"output": "B", "latency_ms": 100}})
    assert late["error"] == {"message": DEADLINE, "step": "b"}
    assert [c["name"] for c in late["calls"]] == ["a", "b"]
    assert (step(late, "a")["end_ms"], step(late, "b")["end_ms"]) == (250, 300)
    in_time = both_virtual(programs, {}, {"a": {"output": "A", "latency_ms": 250},
                                          "b": {"output": "B", "latency_ms": 50}})   # ends at 300: in time
    assert in_time["status"] == "completed"
    assert in_time["outputs"] == "B"


# ---------------------------------------------------------------- the run's deadline, kept by the kernel

class _Limited(Kernel):
    """A bare run under ``limits.deadline``; its record is ``main``'s outcome."""

    def __init__(self, main, deadline_ms, elapsed_ms=0):
        Kernel.__init__(self)
        self.limits = {"deadline_ms": deadline_ms}
        self.elapsed_ms = elapsed_ms
        self.main = main

    def start(self):
        return Kernel.start(self, self.main(self))

    def record(self):
        return self.outcome()


def _asks(*names):
    """Asks ``names`` one after another: [(name, answer kind, value or message), ...]."""
    got = []
    for name in names:
        answer = yield Call("tool", name, {})
        got.append((name, answer.kind, answer.value if answer.kind == "result" else answer.message))
    return got


def _fan(*chains):
    def main(run):
        tasks = yield Spawn([_asks(*chain) for chain in chains])
        yield Wait(tasks)
        return [t.result() for t in tasks] + (yield from _asks("after"))
    return main


def _deadline(ms):
    return "limits.deadline: the run's deadline of " + str(ms) + " ms has passed"


def test_the_kernel_answers_what_is_outstanding_when_its_deadline_timer_is_answered():
    """By hand, sans I/O: the timer is request 0, outside ready(); answered,
    the kernel answers the outstanding requests TimedOut in issue order
    (each followed by what it made the run ask), the driver is told to
    stop them, and what is asked later never reaches the driver."""
    run = _Limited(_fan(["a", "a2"], ["b"], ["c"]), 100).start()
    timer = run.deadline_timer
    assert (timer.id, timer.kind, timer.ms, timer.deadline) == (0, "sleep", 100, True)
    a, b, c = run.ready()
    assert [r.id for r in (a, b, c)] == [1, 2, 3]
    run.answer(b.id, Result("B"))
    run.answer(timer.id, Result(None))  # the deadline passes
    assert run.finished and run.past_deadline and run.ready() == []
    assert run.cancelled() == [a.id, c.id]  # handed to the driver: it stops them
    late = _deadline(100)
    assert run.outcome() == [[("a", "timeout", late), ("a2", "timeout", late)], [("b", "result", "B")],
                             [("c", "timeout", late)], ("after", "timeout", late)]
    # a2, asked when a was answered, is answered before c; neither a2 nor after was handed to the driver
    assert [rid for rid, _ in run.journal] == [b.id, a.id, 4, c.id, 5]
    assert [req.name for req, _ in run.deadline_answers] == ["a", "a2", "c", "after"]
    assert [run.answered_itself(rid) for rid in range(1, 6)] == [True, False, True, True, True]
    run.answer(a.id, Result("A"))  # the driver's answer that still comes is ignored
    assert run.late == [a.id]
    run.answer(timer.id, Result(None))  # and so is the timer's, once the run is over
    # the journal replays the run on a fresh kernel whose timer never fires
    again = _Limited(_fan(["a", "a2"], ["b"], ["c"]), 100).start()
    for rid, answer in run.journal:
        again.answer(rid, answer)
    assert again.finished and again.outcome() == run.outcome() and not again.past_deadline


def test_a_resumed_run_gets_a_timer_for_what_is_left_of_its_deadline():
    """The driver tells the kernel how much time has gone (``elapsed_ms``,
    e.g. since the journal's recorded start); the kernel reads no clock."""
    assert _Limited(_fan(["a"]), 100, elapsed_ms=70).start().deadline_timer.ms == 30
    assert _Limited(_fan(["a"]), 100, elapsed_ms=150).start().deadline_timer.ms == 0
    unlimited = Kernel()
    unlimited.start(_fan(["a"])(unlimited))
    assert unlimited.deadline_timer is None and [r.id for r in unlimited.ready()] == [1]


def test_the_sync_driver_never_answers_the_run_deadline_timer():
    run = _Limited(_fan(["a", "b"]), 0)
    assert drivers.drive_sync(run, ScriptedHost({"*": "x"})) == [[("a", "result", "x"), ("b", "result", "x")],
                                                               ("after", "result", "x")]
    assert not run.past_deadline


class _Seen(drivers.VirtualHost):
    """A virtual host that notes the calls the driver started."""

    def __init__(self, script):
        super().__init__(script)
        self.started = []

    def answer(self, req):
        self.started.append(req.name)
        return super().answer(req)


def test_the_run_deadline_on_the_virtual_clock():
    """A call finishing at the deadline is in time; one asked then is past
    it (answered by the kernel, never started by the driver); one still
    running is answered at the deadline, after a step deadline due then."""
    def main(run):
        tasks = yield Spawn([_asks("exact", "asked-at-100"), _asks("slow"),
                             with_deadline(run, _asks("bounded"), 100)])
        yield Wait(tasks)
        return [t.result() for t in tasks]

    host = _Seen({"exact": {"output": 1, "latency_ms": 100}, "slow": {"output": 2, "latency_ms": 300},
                  "bounded": {"output": 3, "latency_ms": 500}})
    run = _Limited(main, 100)
    late = _deadline(100)
    assert drivers.drive_virtual(run, host) == [[("exact", "result", 1), ("asked-at-100", "timeout", late)],
                                                [("slow", "timeout", late)], (False, None)]
    assert host.started == ["exact", "slow", "bounded"] and run.now == 100


def test_the_run_deadline_under_asyncio_cancels_the_host_calls_and_tells_their_answers():
    """The real asyncio driver and a host whose calls sleep: at the deadline
    the kernel answers the calls still sleeping, the driver cancels them,
    and the observer is told their TimedOut answer, not a cancellation."""
    class Sleepy:
        def __init__(self):
            self.cancelled = []
            self.events = []

        async def call(self, capability, name, args):
            try:
                await asyncio.sleep(0.05 if name == "quick" else 5)
            except asyncio.CancelledError:
                self.cancelled.append(name)
                raise
            return name

        def sleep(self, ms):
            return asyncio.sleep(ms / 1000)

        def observer(self, event):
            if event[0] == "start":
                self.events.append(("start", event[1].id))
            elif event[0] == "answer":
                self.events.append(("answer", event[1], event[2].kind))
            elif event[0] == "cancel":
                self.events.append(event)

    async def main():
        record = await drive_async(_Limited(_fan(["quick", "slow"], ["slower"]), 300), host)
        await asyncio.sleep(0)  # the cancelled host calls unwind
        return record

    host = Sleepy()
    started = time.monotonic()
    record = asyncio.run(main())
    assert time.monotonic() - started < 2.5  # not the 5 s the calls would take
    late = _deadline(300)
    assert record == [[("quick", "result", "quick"), ("slow", "timeout", late)], [("slower", "timeout", late)],
                      ("after", "timeout", late)]
    assert sorted(host.cancelled) == ["slow", "slower"]
    # quick (1) and slower (2) are asked first, slow (3) after quick: the kernel answers 2 and 3 in issue order
    answers = [e for e in host.events if e[0] in ("answer", "cancel")]
    assert answers == [("answer", 1, "result"), ("answer", 2, "timeout"), ("answer", 3, "timeout"),
                       ("answer", 4, "timeout")]
    assert ("start", 4) in host.events  # never handed to the driver, told as started by the kernel
