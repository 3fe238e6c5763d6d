"""Aevatar workflows on the sans-I/O kernel (flowc.runtime.kernel).

The aevatar step loop (runtime/routing_run.py) is a kernel task:
host calls and sleeps are requests a driver answers. These tests drive the
kernel by hand (it gives the sync record), with the asyncio driver and a
real asyncio host (composites' workers run at once), and on virtual time
(race winners, arrival order, worker limits and step deadlines decided by
the script), on both backends and on MicroPython.
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
from flowc.runtime import routing_run as K
from flowc.runtime.drivers import perform_sync
from flowc.runtime.kernel import Kernel

from tests.test_aevatar_run import SCRIPTS, build
from tests.test_aevatar_vm import seed


def workflow(text: str):
    result = driver.compile_text(textwrap.dedent(text), "workflow.yaml", "aevatar")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics if d.is_error]
    return result.workflow


def backends(text: str):
    """(generated module, VM program) of one workflow."""
    wf = workflow(text)
    return load_module(compile_workflow(wf)), vm.load(vm.compile_workflow(wf))


FAN = """\
    name: fan
    roles: [{id: a}, {id: b}, {id: c}]
    steps:
      - id: fan
        type: parallel
        parameters: {workers: "a,b,c"}
    """

RACE = """\
    name: race
    roles: [{id: a}, {id: b}]
    steps:
      - id: pick
        type: race
        parameters: {workers: "a,b"}
    """


# ---------------------------------------------------------------- the kernel by hand
@pytest.mark.parametrize("letter", sorted(SCRIPTS))
def test_the_kernel_driven_by_hand_gives_the_sync_record(letter):
    inputs, script, _expected = SCRIPTS[letter]
    module = load_module(compile_workflow(seed(letter)))
    want = module.run(inputs, ScriptedHost(script))
    run = K.Run(module.PLAN, inputs)
    assert isinstance(run, Kernel) and not run.started
    run.start()
    host = ScriptedHost(script)
    issued = 0
    while not run.finished:
        ready = run.ready()
        assert ready and ready[0].id == issued + 1     # one request at a time, ids in issue order
        issued = ready[0].id
        run.answer(ready[0].id, perform_sync(host, ready[0]))
    assert json.dumps(run.record()) == json.dumps(want)
    assert len(run.journal) == issued == len(want["calls"]) + len(want["sleeps_ms"])


def test_a_journal_replays_the_run():
    module = build(FAN)
    first = K.Run(module.PLAN, {"input": "q"})
    record = K.drive_sync(first, ScriptedHost({"llm:a": "A", "llm:b": "B", "llm:c": "C"}))
    again = K.Run(module.PLAN, {"input": "q"}).start()
    for rid, answer in first.journal:
        again.answer(rid, answer)
    assert again.finished and again.record() == record


def test_a_failing_sleep_escapes_the_run_as_before():
    module = build("""\
        name: d
        steps:
          - id: wait
            type: delay
            parameters: {duration_ms: "5"}
        """)

    class Broken(ScriptedHost):
        def sleep(self, ms):
            raise RuntimeError("no clock")

    with pytest.raises(K.HostFailure, match="no clock"):
        module.run({}, Broken({}))


# ---------------------------------------------------------------- asyncio
class SlowHost:
    """A real asyncio host: every call sleeps ``delay`` seconds."""

    def __init__(self, delay):
        self.delay = delay
        self.running = 0
        self.most = 0

    async def call(self, capability, name, args):
        self.running += 1
        self.most = max(self.most, self.running)
        await asyncio.sleep(self.delay)
        self.running -= 1
        return name.upper()

    def sleep(self, ms):
        return asyncio.sleep(ms / 1000)


@pytest.mark.parametrize("backend", [0, 1])
def test_asyncio_runs_the_workers_of_a_parallel_step_at_once(backend):
    program = backends(FAN)[backend]
    host = SlowHost(0.3)
    began = time.monotonic()
    record = asyncio.run(program.run_async({"input": "q"}, host))
    elapsed = time.monotonic() - began
    assert host.most == 3 and elapsed < 0.75          # three 300 ms calls side by side, not 900 ms
    assert record["status"] == "success"
    assert sorted(record["outputs"]["output"].split(K.SEP)) == ["A", "B", "C"]


def test_asyncio_sequential_gives_the_sync_record():
    module = build(FAN)
    script = {"llm:a": "A", "llm:b": {"error": "down"}, "llm:c": "C"}

    class AsyncScripted(ScriptedHost):
        async def call(self, capability, name, args):
            return ScriptedHost.call(self, capability, name, args)

    want = module.run({"input": "q"}, ScriptedHost(script))
    got = asyncio.run(module.run_async({"input": "q"}, AsyncScripted(script), concurrent=False))
    assert json.dumps(got) == json.dumps(want)


def test_asyncio_max_concurrent_workers_bounds_a_foreach():
    module = build("""\
        name: each
        roles: [{id: w}]
        steps:
          - id: per
            type: foreach
            parameters: {sub_step_type: llm_call, sub_target_role: w, max_concurrent_workers: "2"}
        """)
    host = SlowHost(0.05)
    record = asyncio.run(module.run_async({"input": "1\n---\n2\n---\n3\n---\n4\n---\n5"}, host))
    assert record["status"] == "success" and host.most == 2
    assert [s["id"] for s in record["steps"]].count("per") == 1 and len(record["calls"]) == 5


# ---------------------------------------------------------------- virtual time
@pytest.mark.parametrize("backend", [0, 1])
def test_virtual_time_race_the_fastest_success_wins(backend):
    program = backends(RACE)[backend]
    record = program.run_virtual({"input": "q"}, {"llm:a": {"output": "slow", "latency_ms": 50},
                                                  "llm:b": {"output": "fast", "latency_ms": 10}})
    assert record["outputs"]["output"] == "fast"
    assert [s["id"] for s in record["steps"]] == ["pick_race_1", "pick"]   # a was cancelled: no record


def test_virtual_time_race_a_fast_failure_does_not_win():
    module = build(RACE)
    record = module.run_virtual({"input": "q"}, {"llm:a": {"output": "slow", "latency_ms": 50},
                                                 "llm:b": {"error": "down", "latency_ms": 10}})
    assert record["outputs"]["output"] == "slow"
    failed = module.run_virtual({"input": "q"}, {"llm:a": {"error": "x"}, "llm:b": {"error": "y"}})
    assert failed["error"] == {"message": "all race branches failed", "step": "pick"}


def test_virtual_time_parallel_joins_in_arrival_order():
    module = build(FAN)
    script = {"llm:a": {"output": "A", "latency_ms": 30}, "llm:b": {"output": "B", "latency_ms": 10},
              "llm:c": {"output": "C", "latency_ms": 20}}
    assert module.run_virtual({"input": "q"}, script)["outputs"]["output"] == K.SEP.join("BCA")
    # sequential: document order, whatever the latencies
    assert module.run_virtual({"input": "q"}, script, concurrent=False)["outputs"]["output"] == K.SEP.join("ABC")


def test_virtual_time_map_reduce_a_failed_mapper_cancels_the_rest():
    module, program = backends("""\
        name: mr
        roles: [{id: m}, {id: r}]
        steps:
          - id: mr
            type: map_reduce
            parameters: {map_step_type: llm_call, map_target_role: m, reduce_step_type: llm_call,
                         reduce_target_role: r}
        """)
    script = {"llm:m": [{"output": "1", "latency_ms": 5}, {"error": "bad", "latency_ms": 10},
                        {"output": "3", "latency_ms": 50}], "llm:r": {"output": "R"}}
    for p in (module, program):
        record = p.run_virtual({"input": "x\n---\ny\n---\nz"}, script)
        assert record["status"] == "failed" and record["error"]["message"] == "bad"
        assert [s["id"] for s in record["steps"]] == ["mr_map_0", "mr_map_1", "mr"]   # mr_map_2 cancelled
        ok = p.run_virtual({"input": "x\n---\ny"}, {"llm:m": {"output": "M"}, "llm:r": {"output": "R"}})
        assert ok["outputs"]["output"] == "R" and ok["calls"][-1]["args"]["prompt"] == "M" + K.SEP + "M"


def test_virtual_time_a_step_deadline_fails_the_run_past_retry_and_on_error():
    module, program = backends("""\
        name: slow
        roles: [{id: a}]
        steps:
          - id: ask
            type: llm_call
            target_role: a
            timeout_ms: 100
            retry: {max_attempts: 3, delay_ms: 10}
            on_error: {strategy: skip}
        """)
    for p in (module, program):
        record = p.run_virtual({"input": "q"}, {"llm:a": {"output": "late", "latency_ms": 500}})
        assert record["status"] == "failed"
        assert record["error"] == {"message": "TIMEOUT after 100ms", "step": "ask"}
        assert len(record["calls"]) == 1 and record["sleeps_ms"] == []     # no retry
        fast = p.run_virtual({"input": "q"}, {"llm:a": {"output": "ok", "latency_ms": 50}})
        assert fast["status"] == "success"
    # the sync driver has no clock: the deadline cannot fire
    assert module.run({"input": "q"}, ScriptedHost({"llm:a": "ok"}))["status"] == "success"


# ---------------------------------------------------------------- MicroPython
MP_DIR = Path(__file__).resolve().parent / "micropython"

MP_DRIVER = '''
import flowc_vm as V


def main(path):
    with open(path, "rb") as f:
        jobs = V.unpackb(f.read())
    for name, program, inputs, script in jobs:
        record = V.load(program).run_virtual(inputs, script)
        print(V.json_dumps({"name": name, "record": record}))
'''


def test_concurrent_aevatar_runs_on_micropython(tmp_path):
    """The VM bundle on MicroPython: a race, a parallel step and a
    map_reduce of aevatar programs on virtual time give the records CPython
    gives."""
    from flowc.backends.vm.bundle import write_bundle

    node = shutil.which("node")
    assert node, "node is needed to run MicroPython (tests/micropython)"
    race = {"llm:a": {"output": "slow", "latency_ms": 50}, "llm:b": {"output": "fast", "latency_ms": 10}}
    fan = {"llm:a": {"output": "A", "latency_ms": 30}, "llm:b": {"output": "B", "latency_ms": 10},
           "llm:c": {"output": "C", "latency_ms": 20}}
    jobs = [["race", vm.compile_workflow(workflow(RACE)), {"input": "q"}, race],
            ["fan", vm.compile_workflow(workflow(FAN)), {"input": "q"}, fan]]
    jobs_file = tmp_path / "jobs.bin"
    jobs_file.write_bytes(msgpack.packb(jobs, use_bin_type=True))
    driver_file = tmp_path / "mp_driver.py"
    driver_file.write_text(MP_DRIVER, encoding="utf-8")
    bundle, _ = write_bundle(tmp_path)
    modules = [str(bundle)]
    proc = subprocess.run([node, str(MP_DIR / "run_dataflow.mjs"), str(driver_file), str(jobs_file), *modules],
                          check=False, capture_output=True, text=True, timeout=300, cwd=MP_DIR)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(line) for line in proc.stdout.split("\n") if line.strip()]
    assert [x["name"] for x in lines] == ["race", "fan"], proc.stdout[-2000:]
    for (_name, program, inputs, script), got in zip(jobs, lines, strict=True):
        assert got["record"] == json.loads(json.dumps(vm.load(program).run_virtual(inputs, script)))
    assert lines[0]["record"]["outputs"]["output"] == "fast"
    assert lines[1]["record"]["outputs"]["output"] == K.SEP.join("BCA")
