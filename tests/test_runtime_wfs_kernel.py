"""WorkflowSkill modules on the sans-I/O kernel (flowc.runtime).

The generated step functions are kernel tasks: host calls and sleeps are
``Call``/``Sleep`` requests answered by a driver. Driven by hand, every
recorded case gives the sync record and its journal replays it; the asyncio
driver with a coroutine host gives the sync record (WorkflowSkill stays
sequential); a virtual clock gives each step its start and end times.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import WFS_CASES, WFS_DIR
from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost, ToolError
from flowc.pipeline import driver
from flowc.runtime import drivers

CASES = [c for c in json.loads(WFS_CASES.read_text(encoding="utf-8"))
         if c["expected"].get("error", {}).get("phase") not in ("parse", "validate")]
_modules: dict[str, object] = {}


def module_of(file: str):
    if file not in _modules:
        result = driver.compile_file(str(WFS_DIR / file))
        assert result.ok
        _modules[file] = load_module(compile_workflow(result.workflow))
    return _modules[file]


def dumps(record) -> str:
    return json.dumps(record)  # key order too: the records must be the same bytes


def by_hand(module, inputs, host):
    """The run, its requests answered one at a time by ``host`` (no driver)."""
    run = module.new_run(inputs)
    run.start()
    while not run.finished:
        ready = run.ready()
        assert len(ready) == 1  # WorkflowSkill is sequential: one request at a time
        run.answer(ready[0].id, drivers.perform_sync(host, ready[0]))
    return run


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_every_case_by_hand_gives_the_sync_record_and_its_journal_replays_it(case):
    module = module_of(case["file"])
    sync = module.run(case["inputs"], ScriptedHost(case["host"]))
    run = by_hand(module, case["inputs"], ScriptedHost(case["host"]))
    assert dumps(run.record()) == dumps(sync)
    assert len(run.journal) == len(sync["calls"]) + len(sync["sleeps_ms"])
    replay = module.new_run(case["inputs"])
    replay.start()
    for rid, answer in run.journal:
        assert [r.id for r in replay.ready()] == [rid]
        replay.answer(rid, answer)
    assert replay.finished and dumps(replay.record()) == dumps(sync)


def test_the_retry_loop_is_calls_and_sleeps_in_the_journal():
    module = module_of("fixtures/retry-backoff.md")
    script = {"flaky_api": [{"error": "Temporary failure"}, {"error": "Temporary failure"},
                            {"output": {"data": {"ok": True}}}]}
    run = by_hand(module, {}, ScriptedHost(script))
    assert [a.kind for _rid, a in run.journal] == ["error", "result", "error", "result", "result"]
    assert run.record()["sleeps_ms"] == [100, 200] and run.record()["status"] == "success"


def test_a_host_failure_is_not_retried_and_keeps_its_message():
    module = module_of("fixtures/retry-backoff.md")

    class Host:
        def call(self, capability, name, args):
            raise RuntimeError()  # no message: the record names the type, as before

        def sleep(self, ms):
            raise AssertionError("not retried")

    record = module.run({}, Host())
    assert record["error"] == {"message": "RuntimeError", "step": "flaky_call"}
    assert len(record["calls"]) == 1


class AsyncHost:
    """A host whose calls are coroutines on the asyncio loop."""

    def __init__(self, script):
        self.sync = ScriptedHost(script)
        self.slept = []

    async def call(self, capability, name, args):
        await asyncio.sleep(0.001)
        return self.sync.call(capability, name, args)

    async def sleep(self, ms):
        self.slept.append(ms)
        await asyncio.sleep(0)


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_the_asyncio_driver_with_an_asyncio_host_gives_the_sync_record(case):
    module = module_of(case["file"])
    host = AsyncHost(case["host"])
    got = asyncio.run(module.run_async(case["inputs"], host))
    assert dumps(got) == dumps(module.run(case["inputs"], ScriptedHost(case["host"])))
    assert host.slept == got["sleeps_ms"]


def test_asyncio_tool_errors_are_retried():
    module = module_of("fixtures/retry-backoff.md")

    class Flaky:
        def __init__(self):
            self.n = 0

        async def call(self, capability, name, args):
            self.n += 1
            if self.n < 3:
                raise ToolError("busy")
            return {"data": {"attempt": self.n}}

        async def sleep(self, ms):
            await asyncio.sleep(0)

    record = asyncio.run(module.run_async({}, Flaky()))
    assert record["status"] == "success" and record["sleeps_ms"] == [100, 200]


def times(record):
    return [(s["id"], s.get("start_ms"), s.get("end_ms")) for s in record["steps"]]


def test_virtual_time_gives_each_step_its_start_and_end():
    module = module_of("fixtures/two-step-pipe.md")
    case = next(c for c in CASES if c["file"] == "fixtures/two-step-pipe.md")
    script = {"search": dict(case["host"]["search"], latency_ms=30)}
    record = module.run_virtual(case["inputs"], script)
    # the tool call takes 30 ms; the transform after it takes no virtual time
    assert times(record) == [("fetch", 0, 30), ("reshape", 30, 30)]
    # the rest of the record is the sync record's
    for step in record["steps"]:
        del step["start_ms"], step["end_ms"]
    assert dumps(record) == dumps(module.run(case["inputs"], ScriptedHost(case["host"])))


def test_virtual_time_counts_retry_sleeps_and_branch_arms():
    retry = module_of("fixtures/retry-backoff.md")
    script = {"flaky_api": [{"error": "busy", "latency_ms": 10}, {"error": "busy", "latency_ms": 10},
                            {"output": {"data": {}}, "latency_ms": 10}]}
    # call 0-10, sleep 100, call 110-120, sleep 200, call 320-330
    assert times(retry.run_virtual({}, script)) == [("flaky_call", 0, 330)]
    branch = module_of("fixtures/branch.md")
    record = branch.run_virtual({"value": 42}, {"validate": {"output": {"valid": True}, "latency_ms": 25}})
    assert times(record) == [("check", 0, 25), ("branch", 25, 25), ("exit_success", 25, 25),
                             ("exit_failed", None, None)]
    assert record["status"] == "success"
    # a run without a clock has no times
    assert "start_ms" not in branch.run({"value": 42}, ScriptedHost({"validate": {"output": {"valid": True}}}))["steps"][0]


def test_a_transform_only_workflow_runs_without_requests():
    module = module_of("fixtures/echo.md")
    run = module.new_run({})
    run.start()
    assert run.finished and run.ready() == [] and run.journal == []
    assert run.record()["status"] == "success"


def test_what_no_step_catches_surfaces_from_record():
    """An exception that is no step failure (a bug) is not turned into a
    record: ``record()`` raises it, as the direct calls did."""
    module = module_of("fixtures/retry-backoff.md")

    class Odd:  # an answer the runtime cannot read: no message
        kind = "odd"

    run = module.new_run({})
    run.start()
    run.answer(run.ready()[0].id, Odd())
    assert run.finished
    with pytest.raises(AttributeError):
        run.record()
