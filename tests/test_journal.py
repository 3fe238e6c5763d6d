"""Durable runs (flowc.journal, docs/durable.md) in one process: replay
after any number of answers, the asyncio driver, sleeps resumed with the
time they have left, in-flight calls, idempotency keys, refusals, damaged
journals, and the command line. Crashes of real processes are in
tests/test_journal_crash.py."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import flowc
import pytest
from flowc import cli, journal
from flowc.host import ScriptedHost
from flowc.journal import store as store_mod
from flowc.testing import strategies
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from journal_cases import CASES, DATA, backends, compiled, program, reference, script_for


def same(a: dict, b: dict) -> bool:
    return json.dumps(a, sort_keys=True, default=repr) == json.dumps(b, sort_keys=True, default=repr)


def _stop_and_resume(store, prog, inputs, host, k, resume_host=None):
    run_id = journal.begin(store, workflow="w", workflow_hash="h", inputs=inputs)
    first = journal.drive(store, run_id, lambda: prog.new_run(dict(inputs)), host, max_answers=k)
    if first.finished:
        return first
    return journal.resume(store, run_id, lambda: prog.new_run(dict(inputs)), resume_host or host,
                          workflow_hash="h")


# ------------------------------------------------------------------ replay
@pytest.mark.parametrize("case", CASES, ids=[c[0].rsplit("/", 1)[1] for c in CASES])
def test_stopping_after_any_k_answers_and_resuming_gives_the_uninterrupted_record(case, tmp_path):
    rel, inputs, extra = case
    workflow = compiled(rel)
    store = journal.open_journal(str(tmp_path / "runs.db"), synchronous="NORMAL")
    for backend in backends(workflow):
        prog = program(workflow, backend)
        ref = reference(rel, inputs, extra, backend)
        total = len(ref["calls"]) + len(ref["sleeps_ms"])
        for k in sorted({0, 1, total // 2, max(total - 1, 0), total}):
            host = ScriptedHost(script_for(workflow, extra))
            out = _stop_and_resume(store, prog, inputs, host, k)
            assert same(out.record, ref), (rel, backend, k)
            # replay made no host call: the host saw each call once
            assert len(host.calls) == len(ref["calls"])
            assert out.repeated == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runnable=strategies.runnable_workflows("ir", max_steps=5), data=st.data())
def test_generated_workflows_resume_after_any_k_answers(runnable, data, tmp_path_factory):
    workflow = runnable.workflow()
    prog = program(workflow, "python")
    ref = prog.run(dict(runnable.inputs), runnable.host())
    total = len(ref["calls"]) + len(ref["sleeps_ms"])
    k = data.draw(st.integers(0, total), label="k")
    store = journal.open_journal(str(tmp_path_factory.mktemp("j") / "runs.db"), synchronous="NORMAL")
    host = runnable.host()  # one host: its answer lists go on where the stopped run left them
    out = _stop_and_resume(store, prog, runnable.inputs, host, k)
    assert same(out.record, ref)


def test_the_asyncio_driver_resumes_concurrent_runs(tmp_path):
    store = journal.open_journal(str(tmp_path / "runs.db"), synchronous="NORMAL")
    resumed = 0
    for rel, inputs, extra in CASES[:3]:  # parallel, race, a sleep; aevatar's concurrent workers
        workflow = compiled(rel)
        for backend in ("python", "vm"):
            prog = program(workflow, backend)

            def new_run(p=prog, inputs=inputs):
                return p.new_run(dict(inputs), concurrent=True)

            whole = asyncio.run(prog.run_async(dict(inputs), ScriptedHost(script_for(workflow, extra))))
            total = len(whole["calls"]) + len(whole["sleeps_ms"])
            for k in sorted({0, total // 2, total - 1}):
                run_id = journal.begin(store, workflow=rel, workflow_hash="h", inputs=inputs)
                host = ScriptedHost(script_for(workflow, extra))
                first = asyncio.run(journal.drive_async(store, run_id, new_run, host, max_answers=k))
                if first.finished:  # cancelled requests (a race's losers) need no answer
                    assert same(first.record, whole)
                    continue
                out = asyncio.run(journal.resume_async(store, run_id, new_run, host, workflow_hash="h"))
                assert same(out.record, whole), (rel, backend, k)
                resumed += 1
    assert resumed >= 8


# ------------------------------------------------------------------ sleeps and in-flight requests
class _Crash(BaseException):
    """Stands for the process dying: no driver turns it into an answer."""


class _SleepyHost(ScriptedHost):
    def __init__(self, crash_in_sleep: bool) -> None:
        super().__init__({})
        self.crash_in_sleep = crash_in_sleep

    def sleep(self, ms):
        super().sleep(ms)
        if self.crash_in_sleep:
            raise _Crash()


def test_a_sleep_in_progress_resumes_with_the_time_it_has_left(tmp_path, monkeypatch):
    rel, inputs, extra = CASES[1]  # sleeps 30 s
    prog = program(compiled(rel), "python")
    ref = reference(rel, inputs, extra)
    store = journal.open_journal(str(tmp_path / "runs.db"))
    run_id = journal.begin(store, workflow=rel, workflow_hash="h", inputs=inputs)
    real_time = store_mod.time.time
    monkeypatch.setattr(store_mod.time, "time", lambda: real_time() - 12.0)  # the sleep began 12 s ago
    with pytest.raises(_Crash):
        journal.drive(store, run_id, lambda: prog.new_run({}), _SleepyHost(True))
    monkeypatch.setattr(store_mod.time, "time", real_time)
    host = _SleepyHost(False)
    out = journal.resume(store, run_id, lambda: prog.new_run({}), host, workflow_hash="h")
    assert len(host.sleeps) == 1 and 17_000 <= host.sleeps[0] <= 18_000, host.sleeps
    assert same(out.record, ref) and out.record["sleeps_ms"] == [30000]  # the run's own sleep is unchanged


class _KeyedHost:
    """A host that takes idempotency keys; it crashes (once) after performing call number ``crash_at``."""

    def __init__(self, script: dict, crash_at: int | None = None) -> None:
        self.inner = ScriptedHost(script)
        self.crash_at = crash_at
        self.keys: list[str] = []

    def call(self, capability, name, args, idempotency_key=None):
        self.keys.append(idempotency_key)
        value = self.inner.call(capability, name, args)
        if len(self.keys) == self.crash_at:
            raise _Crash()
        return value

    def sleep(self, ms):
        pass


def _deploy(tmp_path):
    rel, inputs, extra = CASES[0]
    workflow = compiled(rel)
    return rel, inputs, script_for(workflow, extra), program(workflow, "python"), reference(rel, inputs, extra)


def test_in_flight_calls_are_sent_again_with_the_same_key_and_reported(tmp_path):
    rel, inputs, script, prog, ref = _deploy(tmp_path)
    store = journal.open_journal(str(tmp_path / "runs.db"))
    run_id = journal.begin(store, workflow=rel, workflow_hash="h", inputs=inputs)
    crashing = _KeyedHost(script, crash_at=3)
    with pytest.raises(_Crash):
        journal.drive(store, run_id, lambda: prog.new_run(dict(inputs)), crashing)
    assert crashing.keys == [f"{run_id}:1", f"{run_id}:2", f"{run_id}:3"]
    host = _KeyedHost(script)
    out = journal.resume(store, run_id, lambda: prog.new_run(dict(inputs)), host, workflow_hash="h")
    assert same(out.record, ref)
    assert host.keys[0] == f"{run_id}:3"  # the call in flight, with the key it had
    assert out.repeated == [{"request": 3, "capability": ref["calls"][2]["capability"],
                             "name": ref["calls"][2]["name"]}]
    assert len(host.keys) == len(ref["calls"]) - 2  # calls 1 and 2 were replayed, not sent


def test_in_flight_fail_stops_and_a_later_resume_can_still_go_on(tmp_path):
    rel, inputs, script, prog, ref = _deploy(tmp_path)
    store = journal.open_journal(str(tmp_path / "runs.db"))
    run_id = journal.begin(store, workflow=rel, workflow_hash="h", inputs=inputs)
    with pytest.raises(_Crash):
        journal.drive(store, run_id, lambda: prog.new_run(dict(inputs)), _KeyedHost(script, crash_at=2))
    host = _KeyedHost(script)
    with pytest.raises(journal.InFlight, match="request 2 .* never answered"):
        journal.resume(store, run_id, lambda: prog.new_run(dict(inputs)), host, workflow_hash="h",
                       in_flight="fail")
    assert host.keys == [] and store.run_info(run_id)["status"] == "stopped"
    out = journal.resume(store, run_id, lambda: prog.new_run(dict(inputs)), host, workflow_hash="h")
    assert same(out.record, ref) and [r["request"] for r in out.repeated] == [2]


def test_hosts_without_the_keyword_are_called_as_before(tmp_path):
    rel, inputs, script, prog, ref = _deploy(tmp_path)
    store = journal.open_journal(str(tmp_path / "runs.db"))
    run_id = journal.begin(store, workflow=rel, workflow_hash="h", inputs=inputs)
    assert not journal.takes_key(ScriptedHost(script)) and journal.takes_key(_KeyedHost(script))
    out = journal.drive(store, run_id, lambda: prog.new_run(dict(inputs)), ScriptedHost(script))
    assert same(out.record, ref)


# ------------------------------------------------------------------ refusals and damage
def _stopped_run(tmp_path, k=3):
    rel, inputs, script, prog, ref = _deploy(tmp_path)
    path = tmp_path / "runs.db"
    store = journal.open_journal(str(path))
    run_id = journal.begin(store, workflow=rel, workflow_hash="h", inputs=inputs)
    journal.drive(store, run_id, lambda: prog.new_run(dict(inputs)), ScriptedHost(script), max_answers=k)
    store.close()
    return path, run_id, inputs, script, prog, ref


def test_a_different_workflow_is_refused(tmp_path):
    path, run_id, inputs, script, prog, _ref = _stopped_run(tmp_path)
    store = journal.open_journal(str(path))
    with pytest.raises(journal.JournalError, match="another version .* refused"):
        journal.resume(store, run_id, lambda: prog.new_run(dict(inputs)), ScriptedHost(script),
                       workflow_hash="other")


def test_a_run_that_does_not_follow_its_journal_is_refused(tmp_path):
    path, run_id, _inputs, script, _prog, _ref = _stopped_run(tmp_path)
    other = program(compiled(CASES[2][0]), "python")  # an aevatar workflow under the same hash
    store = journal.open_journal(str(path))
    with pytest.raises(journal.JournalError, match="does not follow its journal at request 1"):
        journal.resume(store, run_id, lambda: other.new_run({"input": "x"}), ScriptedHost(script),
                       workflow_hash="h")


def _damage(path: Path, run_id: str, seq: int) -> None:
    db = sqlite3.connect(str(path))
    body = db.execute("SELECT body FROM entries WHERE run_id = ? AND seq = ?", (run_id, seq)).fetchone()[0]
    db.execute("UPDATE entries SET body = ? WHERE run_id = ? AND seq = ?", (body[: len(body) // 2], run_id, seq))
    db.commit()
    db.close()


def test_a_half_written_last_entry_is_dropped_and_the_run_resumes_from_the_one_before(tmp_path):
    path, run_id, inputs, script, prog, ref = _stopped_run(tmp_path, k=3)
    # entries: request 1, answer 1, ..., request 3, answer 3: damage answer 3
    _damage(path, run_id, 6)
    shown = _flowc("runs", "show", run_id, "--journal", str(path), "--json", cwd=tmp_path)
    assert json.loads(shown.stdout)["notes"] == [
        "entry 6 does not match its checksum (half written or damaged): a resume drops it and goes on from entry 5"]
    store = journal.open_journal(str(path))
    out = journal.resume(store, run_id, lambda: prog.new_run(dict(inputs)), ScriptedHost(script),
                         workflow_hash="h")
    assert same(out.record, ref)
    assert out.notes == [("entry 6 does not match its checksum (half written or damaged): it was dropped; "
                          "the run resumes from entry 5")]
    assert [r["request"] for r in out.repeated] == [3]  # its call was in flight again: sent and reported


def test_a_damaged_entry_before_good_ones_is_refused(tmp_path):
    path, run_id, inputs, script, prog, _ref = _stopped_run(tmp_path, k=3)
    _damage(path, run_id, 2)
    store = journal.open_journal(str(path))
    with pytest.raises(journal.JournalError, match="entry 2 does not match its checksum.*4 entries follow it; "
                                                   "refusing to resume"):
        journal.resume(store, run_id, lambda: prog.new_run(dict(inputs)), ScriptedHost(script),
                       workflow_hash="h")


def test_a_truncated_journal_file_is_refused_with_a_clear_error(tmp_path, capsys):
    path, run_id, *_rest = _stopped_run(tmp_path)
    data = path.read_bytes()
    assert len(data) > 8192
    path.write_bytes(data[: len(data) // 2 + 100])
    code = cli.main(["resume", run_id, "--journal", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "flowc: error: the journal" in err and ("damaged" in err or "malformed" in err), err


CHILD = Path(__file__).resolve().parent / "journal_child.py"


def test_a_torn_last_page_of_the_log_is_dropped_and_the_run_resumes(tmp_path):
    """A process killed with its log not checkpointed; the log's last page
    is cut in half (a torn write). SQLite drops that frame (its checksum
    fails); the run resumes from the last complete entry."""
    rel, inputs, extra = CASES[2]
    workflow = compiled(rel)
    spec = {"db": str(tmp_path / "runs.db"), "run_id": "torn", "workflow": str(DATA / rel), "backend": "python",
            "inputs": inputs, "script": script_for(workflow, extra), "effects": str(tmp_path / "effects.txt"),
            "kill": [7, "before"], "call_ms": 0}
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    env = {"PYTHONPATH": str(Path(flowc.__file__).resolve().parent.parent)}
    proc = subprocess.run([sys.executable, str(CHILD), str(tmp_path / "spec.json"), "start"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == -9
    wal = tmp_path / "runs.db-wal"
    frames_before = wal.stat().st_size
    with open(wal, "r+b") as fh:
        fh.truncate(frames_before - 2048)
    shutil.copy(wal, tmp_path / "kept-wal")
    spec["kill"] = None
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(CHILD), str(tmp_path / "spec.json"), "resume"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert same(out["record"], reference(rel, inputs, extra))
    # the request of call 7 was the last entry, lost with the torn page: call 7
    # had not been sent (killed before it), so it is sent now, once
    lines = [json.loads(line)[0] for line in (tmp_path / "effects.txt").read_text().splitlines()]
    assert len(lines) == len(set(lines)) == len(out["record"]["calls"])


# ------------------------------------------------------------------ the command line
def _flowc(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(Path(flowc.__file__).resolve().parent.parent)}
    return subprocess.run([sys.executable, "-m", "flowc", *argv], env=env, capture_output=True, text=True,
                          cwd=cwd, timeout=120, check=False)


def test_the_command_line_runs_lists_shows_and_resumes(tmp_path):
    rel, inputs, extra = CASES[0]
    wf = tmp_path / "deploy.md"
    shutil.copy(DATA / rel, wf)
    (tmp_path / "in.json").write_text(json.dumps(inputs))
    (tmp_path / "host.json").write_text(json.dumps(script_for(compiled(rel), extra)))
    plain = _flowc("run", str(wf), "--inputs", "in.json", "--host", "host.json", "--json", cwd=tmp_path)
    # a run stopped after 3 answers, written through the API, stands for a crash
    store = journal.open_journal(str(tmp_path / "runs.db"))
    prog = program(compiled(rel), "python")
    whash = journal.workflow_hash(wf.read_bytes(), "", "")
    run_id = journal.begin(store, workflow=str(wf), workflow_hash=whash, inputs=inputs,
                           options={"backend": "python", "dialect": None, "workflow_name": None, "budgets": {}})
    journal.drive(store, run_id, lambda: prog.new_run(dict(inputs)), ScriptedHost(script_for(compiled(rel), extra)),
                  max_answers=3)
    listed = json.loads(_flowc("runs", "list", "--journal", "runs.db", "--json", cwd=tmp_path).stdout)
    assert [(r["run_id"], r["status"], r["workflow"]) for r in listed] == [(run_id, "running", str(wf))]
    assert isinstance(listed[0]["started"], float)
    resumed = _flowc("resume", run_id, "--journal", "runs.db", "--host", "host.json", "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed run {run_id}: 3 answers replayed" in resumed.stderr
    assert json.loads(resumed.stdout) == json.loads(plain.stdout)
    shown = _flowc("runs", "show", run_id, "--journal", "runs.db", cwd=tmp_path).stdout
    assert f"run {run_id}  completed" in shown and "record status: completed" in shown
    # a new journaled run prints its id first, then the record
    fresh = _flowc("run", str(wf), "--inputs", "in.json", "--host", "host.json", "--json", "--journal", "runs.db",
                   cwd=tmp_path)
    assert fresh.returncode == 0 and fresh.stderr.startswith("flowc: run ")
    new_id = fresh.stderr.split()[2]
    assert json.loads(fresh.stdout) == json.loads(plain.stdout)
    assert {r["run_id"] for r in json.loads(_flowc("runs", "list", "--journal", "runs.db", "--json",
                                                   cwd=tmp_path).stdout)} == {run_id, new_id}


def test_resuming_after_the_workflow_changed_is_refused_on_the_command_line(tmp_path):
    rel, inputs, extra = CASES[0]
    wf = tmp_path / "deploy.md"
    shutil.copy(DATA / rel, wf)
    (tmp_path / "in.json").write_text(json.dumps(inputs))
    (tmp_path / "host.json").write_text(json.dumps(script_for(compiled(rel), extra)))
    first = _flowc("run", str(wf), "--inputs", "in.json", "--host", "host.json", "--journal", "runs.db",
                   cwd=tmp_path)
    run_id = first.stderr.split()[2]
    wf.write_text(wf.read_text() + "\n<!-- changed -->\n")
    again = _flowc("resume", run_id, "--journal", "runs.db", "--host", "host.json", cwd=tmp_path)
    assert again.returncode == 2
    assert "was started with another version" in again.stderr and "refused" in again.stderr


def test_a_durable_workflow_run_without_a_journal_is_warned_about(tmp_path, capsys):
    wf = tmp_path / "durable.yaml"
    wf.write_text("name: d\ndurable: true\nsteps:\n  go: { kind: manual }\n"
                  "  done: { kind: finish, depends_on: go, output: ok }\n")
    assert cli.main(["run", str(wf)]) == 0
    assert "warning[INS402]" in capsys.readouterr().err
    assert cli.main(["run", str(wf), "--journal", str(tmp_path / "runs.db")]) == 0
    assert "INS402" not in capsys.readouterr().err


# ------------------------------------------------------------------ the dialect's own limits
LIMITED = """\
name: limited
limits: {{ steps: {steps}, deadline: {deadline} }}
steps:
  go: {{ kind: manual }}
  a: {{ kind: tool, depends_on: go, name: a }}
  b: {{ kind: tool, depends_on: a, name: b }}
  c: {{ kind: tool, depends_on: b, name: c }}
  done: {{ kind: finish, depends_on: c, output: "{{{{ steps.c.output }}}}" }}
"""


def _limited(steps: int, deadline: str):
    from flowc.pipeline import driver

    result = driver.compile_text(LIMITED.format(steps=steps, deadline=deadline), "limited.yaml")
    assert result.ok, result.diagnostics
    return result.workflow


@pytest.mark.parametrize("backend", ["python", "vm"])
def test_limits_steps_is_enforced_and_survives_a_resume(backend, tmp_path):
    prog = program(_limited(3, "1h"), backend)
    plain = prog.run({}, ScriptedHost({"*": "x"}))
    assert plain["status"] == "failed" and [c["name"] for c in plain["calls"]] == ["a", "b"]
    assert plain["error"] == {"message": "limits.steps: the run may start at most 3 steps", "step": "c"}
    assert program(_limited(5, "1h"), backend).run({}, ScriptedHost({"*": "x"}))["status"] == "completed"
    store = journal.open_journal(str(tmp_path / "runs.db"))
    out = _stop_and_resume(store, prog, {}, ScriptedHost({"*": "x"}), 1)  # the count is rebuilt by replay
    assert same(out.record, plain)


class _SlowHost(ScriptedHost):
    def __init__(self, seconds: float) -> None:
        super().__init__({"*": "x"})
        self.seconds = seconds

    def call(self, capability, name, args):
        import time

        time.sleep(self.seconds)
        return super().call(capability, name, args)


def test_limits_deadline_is_wall_clock_from_the_recorded_start_and_survives_a_resume(tmp_path, monkeypatch):
    prog = program(_limited(10, "1s"), "python")
    store = journal.open_journal(str(tmp_path / "runs.db"))
    run_id = journal.begin(store, workflow="limited", workflow_hash="h", inputs={})
    first = journal.drive(store, run_id, lambda: prog.new_run({}), ScriptedHost({"*": "x"}), max_answers=1)
    assert not first.finished
    # the process comes back 1.5 s after the run started: the deadline has passed
    real_time = store_mod.time.time
    from flowc.journal import driver as driver_mod

    monkeypatch.setattr(driver_mod.time, "time", lambda: real_time() + 1.5)
    host = ScriptedHost({"*": "x"})
    out = journal.resume(store, run_id, lambda: prog.new_run({}), host, workflow_hash="h")
    assert host.calls == []  # nothing was sent past the deadline
    assert out.record["status"] == "failed"
    assert out.record["error"]["message"] == "limits.deadline: the run's deadline of 1000 ms has passed"
    # the TimedOut answer is journaled: a later replay gives the same record whatever the clock says
    monkeypatch.setattr(driver_mod.time, "time", real_time)
    store.set_status(run_id, "running")  # pretend the run had not finished, to replay it once more
    db = sqlite3.connect(str(tmp_path / "runs.db"))
    db.execute("UPDATE runs SET record = NULL WHERE run_id = ?", (run_id,))
    db.commit()
    again = journal.resume(store, run_id, lambda: prog.new_run({}), ScriptedHost({"*": "x"}), workflow_hash="h")
    assert same(again.record, out.record)


def test_limits_deadline_resumed_under_the_asyncio_driver_is_the_kernels_timer(tmp_path, monkeypatch):
    """The kernel keeps the deadline: a resumed run is told the time gone
    since the journal's start, its timer is due at once, the kernel answers
    the next call itself (journaled as asked and answered, never sent), the
    timer is never journaled (ids as without a deadline), and the journal
    replays to the same record whatever the clock says then."""
    from flowc.journal import driver as driver_mod

    prog = program(_limited(10, "1s"), "python")
    store = journal.open_journal(str(tmp_path / "runs.db"))
    run_id = journal.begin(store, workflow="limited", workflow_hash="h", inputs={})
    first = asyncio.run(journal.drive_async(store, run_id, lambda: prog.new_run({}, concurrent=True),
                                            ScriptedHost({"*": "x"}), max_answers=1))
    assert not first.finished
    real_time = store_mod.time.time
    monkeypatch.setattr(driver_mod.time, "time", lambda: real_time() + 1.5)
    host = ScriptedHost({"*": "x"})
    out = asyncio.run(journal.resume_async(store, run_id, lambda: prog.new_run({}, concurrent=True), host,
                                           workflow_hash="h"))
    assert host.calls == []
    assert out.record["error"] == {"message": "limits.deadline: the run's deadline of 1000 ms has passed", "step": "b"}
    entries, _notes = store.entries(run_id)
    # a's call (1) and its step's deadline timer (2) before the stop; then b's call (3), answered by the
    # kernel, which ends b: b's step timer (4), cancelled before anyone sent it, needs no entry
    assert [(e.kind, e.request_id) for e in entries if e.kind != "resume"] == [
        ("request", 1), ("request", 2), ("answer", 1), ("request", 3), ("answer", 3)]
    monkeypatch.setattr(driver_mod.time, "time", real_time)
    store.set_status(run_id, "running")  # pretend the run had not finished, to replay it once more
    db = sqlite3.connect(str(tmp_path / "runs.db"))
    db.execute("UPDATE runs SET record = NULL WHERE run_id = ?", (run_id,))
    db.commit()
    again = asyncio.run(journal.resume_async(store, run_id, lambda: prog.new_run({}, concurrent=True),
                                             ScriptedHost({"*": "x"}), workflow_hash="h"))
    assert same(again.record, out.record)


def test_limits_deadline_stops_calls_in_flight_under_the_asyncio_driver(tmp_path):
    class AsyncSlow:
        def __init__(self):
            self.calls = 0

        async def call(self, capability, name, args):
            self.calls += 1
            await asyncio.sleep(5)
            return "x"

        def sleep(self, ms):
            return asyncio.sleep(0)

    prog = program(_limited(10, "300ms"), "python")
    store = journal.open_journal(str(tmp_path / "runs.db"))
    run_id = journal.begin(store, workflow="limited", workflow_hash="h", inputs={})
    host = AsyncSlow()
    out = asyncio.run(journal.drive_async(store, run_id, lambda: prog.new_run({}, concurrent=True), host))
    assert host.calls == 1 and out.record["status"] == "failed"
    assert "limits.deadline" in out.record["error"]["message"]


def test_a_step_deadline_in_flight_resumes_with_the_time_it_had_left(tmp_path):
    """The kernel's deadline timer of a step (its `timeout`) is a request
    too: journaled when it starts, so after a crash it fires at the same
    wall-clock instant, not a full timeout later."""
    from flowc.pipeline import driver

    text = ("name: t\nsteps:\n  go: { kind: manual }\n"
            "  slow: { kind: tool, depends_on: go, name: slow, timeout: 300ms }\n"
            "  done: { kind: finish, depends_on: slow, output: ok }\n")
    prog = program(driver.compile_text(text, "t.yaml").workflow, "python")

    class Slow:
        def __init__(self, crash=False):
            self.crash = crash
            self.calls = 0

        async def call(self, capability, name, args):
            self.calls += 1
            if self.crash:
                raise _Crash()
            await asyncio.sleep(5)
            return "late"

        def sleep(self, ms):
            return asyncio.sleep(0)

    whole = asyncio.run(prog.run_async({}, Slow()))
    assert whole["status"] == "failed" and whole["steps"][1] == {"id": "slow", "status": "failed",
                                                                 "error": "timeout"}
    store = journal.open_journal(str(tmp_path / "runs.db"))
    run_id = journal.begin(store, workflow="t", workflow_hash="h", inputs={})
    with pytest.raises(_Crash):
        asyncio.run(journal.drive_async(store, run_id, lambda: prog.new_run({}, concurrent=True), Slow(True)))
    import time

    time.sleep(0.35)  # the step's 300 ms have passed while the process was down
    t0 = time.perf_counter()
    host = Slow()
    out = asyncio.run(journal.resume_async(store, run_id, lambda: prog.new_run({}, concurrent=True), host,
                                           workflow_hash="h"))
    assert time.perf_counter() - t0 < 0.25  # the timer had nothing left: it fired at once
    assert same(out.record, whole)
    assert [r["request"] for r in out.repeated] == [1] and host.calls == 1  # the call, sent again, then cut


def test_a_host_config_that_names_a_journal_journals_durable_workflows(tmp_path):
    (tmp_path / "cfg.toml").write_text('journal = "runs.db"\n')
    (tmp_path / "empty.toml").write_text("")
    durable = ("name: d\ndurable: true\nsteps:\n  go: { kind: manual }\n"
               "  pause: { kind: sleep, depends_on: go, duration: 10ms }\n"
               "  done: { kind: finish, depends_on: pause, output: ok }\n")
    (tmp_path / "d.yaml").write_text(durable)
    (tmp_path / "nd.yaml").write_text(durable.replace("durable: true", "durable: false"))
    ran = _flowc("run", "d.yaml", "--config", "cfg.toml", "--json", "--trace", "t.jsonl", cwd=tmp_path)
    assert ran.returncode == 0 and ran.stderr.startswith("flowc: run "), ran.stderr
    run_id = ran.stderr.split()[2]
    listed = json.loads(_flowc("runs", "list", "--journal", "runs.db", "--json", cwd=tmp_path).stdout)
    assert [(r["run_id"], r["status"]) for r in listed] == [(run_id, "completed")]
    info = journal.open_journal(str(tmp_path / "runs.db")).run_info(run_id)
    assert info["options"]["driver"] == "async"  # a configured host's calls are coroutines
    from test_hosts_trace import assert_well_formed

    trace = _trace(tmp_path / "t.jsonl")  # the asyncio journaling driver tells the trace too
    assert_well_formed(trace)
    assert [e["step"] for e in trace if e["event"] == "step_end"] == ["go", "pause", "done"]
    # the same sleeps (the step's own and its deadline timer, cancelled) as a plain traced run
    assert _flowc("run", "nd.yaml", "--config", "cfg.toml", "--trace", "p.jsonl", cwd=tmp_path).returncode == 0
    sleeps = [(e["event"], e["request"], e["step"], e.get("ms"), e.get("status")) for e in trace
              if e["event"].startswith("sleep_")]
    assert sleeps and sleeps == [(e["event"], e["request"], e["step"], e.get("ms"), e.get("status"))
                                 for e in _trace(tmp_path / "p.jsonl") if e["event"].startswith("sleep_")]
    again = _flowc("resume", run_id, "--journal", "runs.db", "--config", "cfg.toml", "--json", cwd=tmp_path)
    assert again.returncode == 0 and json.loads(again.stdout) == json.loads(ran.stdout)
    # a workflow that is not durable is not journaled by the config
    plain = _flowc("run", "nd.yaml", "--config", "cfg.toml", cwd=tmp_path)
    assert plain.returncode == 0 and "flowc: run " not in plain.stderr
    # flowc check --config: a durable workflow under a config without a journal is warned about
    warned = _flowc("check", "d.yaml", "--config", "empty.toml", cwd=tmp_path)
    assert "warning[INS402]" in warned.stdout + warned.stderr
    clean = _flowc("check", "d.yaml", "--config", "cfg.toml", cwd=tmp_path)
    assert "INS402" not in clean.stdout + clean.stderr


def _trace(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _calls(trace: list[dict]) -> list[tuple]:
    return [(e["event"], e["request"], e["step"], e["capability"], e["name"], e.get("status"))
            for e in trace if e["event"] in ("call_start", "call_end")]


def test_a_journaled_run_with_trace_writes_the_trace_of_a_plain_run(tmp_path, capsys):
    from test_hosts_trace import assert_well_formed

    triage = Path(__file__).resolve().parent.parent / "examples" / "triage"
    base = ["run", str(triage / "SKILL.md"), "--inputs", str(triage / "inputs.json"),
            "--host", str(triage / "host.json"), "--json"]
    assert cli.main([*base, "--trace", str(tmp_path / "plain.jsonl")]) == 0
    plain_record = json.loads(capsys.readouterr().out)
    assert cli.main([*base, "--journal", str(tmp_path / "runs.db"), "--trace", str(tmp_path / "j.jsonl"),
                     "--progress"]) == 0  # --progress off a terminal: accepted, shows nothing
    assert same(json.loads(capsys.readouterr().out), plain_record)
    plain, journaled = _trace(tmp_path / "plain.jsonl"), _trace(tmp_path / "j.jsonl")
    assert_well_formed(journaled)
    assert _calls(journaled) and _calls(journaled) == _calls(plain)
    steps = [(e["event"], e["step"]) for e in journaled if e["event"].startswith("step_")]
    assert steps == [(e["event"], e["step"]) for e in plain if e["event"].startswith("step_")]
    assert journaled[-1]["status"] == plain[-1]["status"] == "success"


def test_a_resume_with_trace_traces_what_the_resume_does(tmp_path):
    """The trace of a resume starts where the resume starts: replayed calls
    are not in it; the call in flight at the crash is, sent again with its key."""
    from flowc.hosts.trace import ObservedHost, Tracer
    from test_hosts_trace import assert_well_formed

    rel, inputs, script, prog, ref = _deploy(tmp_path)
    full = tmp_path / "full.jsonl"
    with full.open("w") as sink:
        whole = journal.open_journal(str(tmp_path / "whole.db"))
        rid = journal.begin(whole, workflow=rel, workflow_hash="h", inputs=inputs)
        journal.drive(whole, rid, lambda: prog.new_run(dict(inputs)), ObservedHost(_KeyedHost(script), Tracer(sink)))
    store = journal.open_journal(str(tmp_path / "runs.db"))
    run_id = journal.begin(store, workflow=rel, workflow_hash="h", inputs=inputs)
    with pytest.raises(_Crash):
        journal.drive(store, run_id, lambda: prog.new_run(dict(inputs)), _KeyedHost(script, crash_at=3))
    host = _KeyedHost(script)
    part = tmp_path / "part.jsonl"
    with part.open("w") as sink:
        out = journal.resume(store, run_id, lambda: prog.new_run(dict(inputs)), ObservedHost(host, Tracer(sink)),
                             workflow_hash="h")
    assert same(out.record, ref)
    assert host.keys[0] == f"{run_id}:3"  # the key went through the traced host
    whole_trace, resumed = _trace(full), _trace(part)
    assert_well_formed(whole_trace)
    assert_well_formed(resumed)
    assert resumed[-1]["status"] == ref["status"]
    # calls 1 and 2 were replayed: the resume's calls are the uninterrupted run's from call 3 on
    assert _calls(resumed) == [c for c in _calls(whole_trace) if c[1] >= 3]
    assert _calls(resumed)[0][2] is not None  # the call in flight names its step


def test_the_resumed_record_names_the_calls_sent_again(tmp_path):
    from flowc.pipeline import driver

    text = ("name: t\nsteps:\n  go: { kind: manual }\n"
            "  ask: { kind: tool, depends_on: go, name: ask }\n"
            "  done: { kind: finish, depends_on: ask, output: ok }\n")
    wf = tmp_path / "t.yaml"
    wf.write_text(text)
    (tmp_path / "host.json").write_text(json.dumps({"ask": "fine"}))
    prog = program(driver.compile_text(text, str(wf)).workflow, "python")

    class Dies:
        def call(self, capability, name, args):
            raise _Crash()   # the request is journaled, its answer never is

    store = journal.open_journal(str(tmp_path / "runs.db"))
    run_id = journal.begin(store, workflow=str(wf), workflow_hash=journal.workflow_hash(wf.read_bytes(), "", ""),
                           inputs={}, options={"backend": "python", "dialect": None, "workflow_name": None,
                                               "budgets": {}})
    with pytest.raises(_Crash):
        journal.drive(store, run_id, lambda: prog.new_run({}), Dies())
    resumed = _flowc("resume", run_id, "--journal", "runs.db", "--host", "host.json", "--json",
                     "--trace", "t.jsonl", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    record = json.loads(resumed.stdout)
    assert record["status"] == "completed"
    assert record["repeated"] == [{"request": 1, "capability": "tool", "name": "ask"}]
    trace = _trace(tmp_path / "t.jsonl")  # the resume's trace: the call sent again, in its step
    assert _calls(trace) == [("call_start", 1, "ask", "tool", "ask", None), ("call_end", 1, "ask", "tool", "ask", "ok")]
    assert trace[0]["workflow"] == "t.yaml" and trace[-1]["status"] == "completed"
    assert "sent again (in flight when the run stopped): request 1" in resumed.stderr
