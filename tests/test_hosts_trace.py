"""Run traces: the kernel's step events and the drivers' request events,
written by hosts/trace.py, from `flowc run --trace` and from the asyncio
driver (concurrent steps, a race's cancelled loser)."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path

import pytest
from flowc import cli
from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost, ToolError
from flowc.hosts.trace import REDACTED, Tracer, redacted
from flowc.pipeline import driver
from flowc.runtime import dataflow_run

ROOT = Path(__file__).resolve().parent.parent
TRIAGE = ROOT / "examples" / "triage"


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def assert_well_formed(trace: list[dict]) -> None:
    """One run; starts and ends pair up; time never goes back."""
    assert trace[0]["event"] == "run_start" and trace[-1]["event"] == "run_end"
    assert len({e["run"] for e in trace}) == 1 and trace[0]["run"]
    times = [e["t_ms"] for e in trace]
    assert times == sorted(times)
    for kind, key in (("call", "request"), ("sleep", "request"), ("step", "step")):
        starts = [e[key] for e in trace if e["event"] == kind + "_start"]
        ends = [e[key] for e in trace if e["event"] == kind + "_end"]
        assert sorted(starts, key=str) == sorted([k for k in ends if k in starts], key=str)
        if kind != "step":
            assert sorted(starts) == sorted(ends)


def test_flowc_run_trace_of_a_workflowskill_run(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    status = cli.main(["run", str(TRIAGE / "SKILL.md"), "--inputs", str(TRIAGE / "inputs.json"),
                       "--host", str(TRIAGE / "host.json"), "--json", "--trace", str(out)])
    record = json.loads(capsys.readouterr().out)
    assert status == 0
    trace = events(out)
    assert_well_formed(trace)
    assert trace[0]["workflow"] == "SKILL.md" and trace[-1]["status"] == "success"
    steps = [e["step"] for e in trace if e["event"] == "step_end"]
    assert steps == [s["id"] for s in record["steps"]]
    calls = [e for e in trace if e["event"] == "call_end"]
    assert [(c["capability"], c["name"]) for c in calls] == [(c["capability"], c["name"]) for c in record["calls"]]
    assert {c["step"] for c in calls} == {"fetch", "score", "post"}
    assert all(c["status"] in ("ok", "error") and c["duration_ms"] >= 0 for c in calls)
    assert [e["ms"] for e in trace if e["event"] == "sleep_start"] == record["sleeps_ms"]
    assert "args" not in calls[0] and "result" not in calls[0]  # values only with --trace-values


def test_the_vm_backend_traces_host_calls(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    assert cli.main(["run", str(TRIAGE / "SKILL.md"), "--inputs", str(TRIAGE / "inputs.json"),
                     "--host", str(TRIAGE / "host.json"), "--backend", "vm", "--trace", str(out)]) == 0
    capsys.readouterr()
    trace = events(out)
    assert_well_formed(trace)
    python_out = tmp_path / "python.jsonl"
    assert cli.main(["run", str(TRIAGE / "SKILL.md"), "--inputs", str(TRIAGE / "inputs.json"),
                     "--host", str(TRIAGE / "host.json"), "--trace", str(python_out)]) == 0
    capsys.readouterr()
    python_trace = events(python_out)
    calls = [e["request"] for e in trace if e["event"] == "call_end"]
    assert len(calls) == 5
    # the VM runs on the same kernel: the same requests and step events as the Python backend
    assert calls == [e["request"] for e in python_trace if e["event"] == "call_end"]
    steps = [(e["event"], e.get("step")) for e in trace if e["event"].startswith("step_")]
    assert steps and steps == [(e["event"], e.get("step")) for e in python_trace if e["event"].startswith("step_")]
    assert trace[-1]["status"] == "success"


def test_trace_values_redact_credentials(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FLOWC_TEST_SERVICE_TOKEN", "tok-0123456789abcdef")
    wf = tmp_path / "w.yaml"
    wf.write_text(textwrap.dedent("""\
        name: probe
        version: 3
        steps:
          start: {kind: once}
          get:
            kind: http
            depends_on: start
            url: "https://api.example.com/x?api_key=k-123&page=2"
            headers: {Authorization: "Bearer s3cret-bearer", X-Plain: visible}
          done: {kind: finish, depends_on: get}
        """), encoding="utf-8")
    host = tmp_path / "host.json"
    host.write_text(json.dumps({"http:request": {"output": {"echo": "tok-0123456789abcdef"}}}), encoding="utf-8")
    out = tmp_path / "run.jsonl"
    assert cli.main(["run", str(wf), "--host", str(host), "--trace", str(out), "--trace-values"]) == 0
    capsys.readouterr()
    text = out.read_text(encoding="utf-8")
    start = next(e for e in events(out) if e["event"] == "call_start")
    assert start["args"]["headers"] == {"Authorization": REDACTED, "X-Plain": "visible"}
    assert start["args"]["url"] == f"https://api.example.com/x?api_key={REDACTED}&page=2"
    for secret in ("s3cret-bearer", "k-123", "tok-0123456789abcdef"):
        assert secret not in text
    end = next(e for e in events(out) if e["event"] == "call_end")
    assert end["result"] == {"echo": REDACTED}


def test_trace_usage_errors(tmp_path, capsys):
    args = ["run", str(TRIAGE / "SKILL.md"), "--inputs", str(TRIAGE / "inputs.json"),
            "--host", str(TRIAGE / "host.json")]
    assert cli.main([*args, "--trace", str(tmp_path / "no" / "such" / "dir.jsonl")]) == 2
    assert "cannot write the trace file" in capsys.readouterr().err
    assert cli.main([*args, "--trace-values"]) == 2
    assert "--trace-values needs --trace" in capsys.readouterr().err


def test_redacted_cuts_long_and_deep_values():
    value = {"text": "x" * 500, "deep": [[[[[[[[1]]]]]]]], "many": list(range(30)), "Cookie": "c"}
    out = redacted(value, 50)
    assert out["text"] == "x" * 50 + "..." and out["Cookie"] == REDACTED
    assert out["many"][-1] == "... 10 more" and "..." in json.dumps(out["deep"])


# ------------------------------------------------------------------ the asyncio driver
RACE = """\
name: racer
version: 3
steps:
  start: {kind: once}
  fetch_a:
    kind: tool
    name: slow
    depends_on: start
  fetch_b:
    kind: tool
    name: slow
    depends_on: start
  pick:
    kind: race
    depends_on: [fetch_a, fetch_b]
    branches:
      quick: {steps: {q: {kind: tool, name: quick}}}
      lazy: {steps: {l: {kind: tool, name: lazy}}}
  done: {kind: finish, depends_on: pick}
"""


DELAYS = {"slow": 0.05, "quick": 0.01, "lazy": 2.0}


class AsyncHost:
    """Answers after a delay per tool name (real asyncio sleeps)."""

    async def call(self, capability, name, args):
        await asyncio.sleep(DELAYS[name])
        if name == "slow" and args.get("fail"):
            raise ToolError("nope")
        return {"name": name}

    def sleep(self, ms):
        return asyncio.sleep(ms / 1000)


def test_async_trace_of_concurrent_steps_and_a_cancelled_race_loser(tmp_path):
    result = driver.compile_text(RACE, "race.yaml", "instruction")
    assert result.ok, result.diagnostics
    module = load_module(compile_workflow(result.workflow))
    path = tmp_path / "run.jsonl"
    with path.open("w", encoding="utf-8") as sink:
        tracer = Tracer(sink, workflow="race.yaml")
        record = asyncio.run(module.run_async({}, tracer.wrap(AsyncHost())))
    assert record["status"] == "completed"
    trace = events(path)
    assert_well_formed(trace)
    starts = {e["step"]: e["t_ms"] for e in trace if e["event"] == "step_start"}
    ends = {e["step"]: e for e in trace if e["event"] == "step_end"}
    # fetch_a and fetch_b ran at once: each started before the other ended
    assert starts["fetch_b"] < ends["fetch_a"]["t_ms"] and starts["fetch_a"] < ends["fetch_b"]["t_ms"]
    lazy = next(e for e in trace if e["event"] == "call_end" and e["name"] == "lazy")
    assert lazy["status"] == "cancelled" and lazy["duration_ms"] < 1000
    assert ends["pick"]["status"] == "done" and trace[-1]["status"] == "completed"


def test_an_unobserved_kernel_keeps_no_events():
    result = driver.compile_text(RACE, "race.yaml", "instruction")
    module = load_module(compile_workflow(result.workflow))
    run = dataflow_run.new_run(module.PLAN, {})
    run.start()
    assert run.events is None and run.drain_events() == []
    run.close()


@pytest.mark.parametrize("backend", ["python", "vm"])
def test_a_traced_run_gives_the_same_record(backend, tmp_path, capsys):
    args = ["run", str(TRIAGE / "SKILL.md"), "--inputs", str(TRIAGE / "inputs.json"),
            "--host", str(TRIAGE / "host.json"), "--json", "--backend", backend]
    assert cli.main(args) == 0
    plain = capsys.readouterr().out
    assert cli.main([*args, "--trace", str(tmp_path / "t.jsonl")]) == 0
    assert capsys.readouterr().out == plain


def test_scripted_host_log_is_reachable_through_the_wrapper(tmp_path):
    host = ScriptedHost({"x": 1})
    with (tmp_path / "t.jsonl").open("w") as sink:
        traced = Tracer(sink).wrap(host)
        assert traced.call("tool", "x", {}) == 1
        assert traced.calls == host.calls


# ------------------------------------------------------------------ OpenTelemetry
def test_otel_spans_per_run_step_and_call(tmp_path, monkeypatch):
    from flowc.hosts.otel import OtelObserver
    from flowc.hosts.trace import ObservedHost
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    monkeypatch.setenv("FLOWC_TEST_OTEL_TOKEN", "otel-secret-0123456789")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    result = driver.compile_text(RACE, "race.yaml", "instruction")
    module = load_module(compile_workflow(result.workflow))

    class Failing(AsyncHost):
        async def call(self, capability, name, args):
            if name == "quick":
                raise ToolError("quick failed: otel-secret-0123456789")
            if name == "lazy":
                return {"name": name}
            return await super().call(capability, name, args)

    observer = OtelObserver(provider.get_tracer("test"), workflow="race.yaml")
    with (tmp_path / "t.jsonl").open("w") as sink:
        host = ObservedHost(Failing(), observer, Tracer(sink))
        record = asyncio.run(module.run_async({}, host))
    assert record["status"] == "completed"  # the race's other branch won
    spans = {s.name: s for s in exporter.get_finished_spans()}
    run = spans["flowc.run"]
    assert run.attributes["flowc.workflow"] == "race.yaml" and run.parent is None
    for step in ("start", "fetch_a", "fetch_b", "pick", "done"):
        assert spans[f"flowc.step {step}"].parent.span_id == run.context.span_id
    fetch = [s for s in exporter.get_finished_spans() if s.name == "flowc.call tool:slow"]
    assert len(fetch) == 2 and {s.parent.span_id for s in fetch} == {
        spans["flowc.step fetch_a"].context.span_id, spans["flowc.step fetch_b"].context.span_id}
    quick = spans["flowc.call tool:quick"]
    assert quick.status.status_code.name == "ERROR" and quick.attributes["flowc.status"] == "error"
    assert "otel-secret" not in quick.status.description and "[redacted]" in quick.status.description
    lazy = spans["flowc.call tool:lazy"]
    assert lazy.attributes["flowc.status"] == "ok" and lazy.end_time >= lazy.start_time
    # the same run's trace file, written by the second observer
    assert_well_formed(events(tmp_path / "t.jsonl"))


# ------------------------------------------------------------------ the live display
def test_progress_draws_steps_and_escapes_workflow_text():
    import io

    from flowc.hosts.progress import ProgressObserver
    from flowc.hosts.trace import ObservedHost
    from rich.console import Console

    screen = io.StringIO()
    progress = ProgressObserver(Console(file=screen, force_terminal=True, width=100, color_system=None), "triage")
    result = driver.compile_file(str(TRIAGE / "SKILL.md"))
    module = load_module(compile_workflow(result.workflow))
    host = json.loads((TRIAGE / "host.json").read_text(encoding="utf-8"))
    inputs = json.loads((TRIAGE / "inputs.json").read_text(encoding="utf-8"))
    record = module.run(inputs, ObservedHost(ScriptedHost(host), progress))
    out = screen.getvalue()
    assert "triage: success" in out and f"{len(record['calls'])} host calls" in out
    for step in record["steps"]:
        assert step["id"] in out
    # workflow text is shown as written, never obeyed as markup or escapes
    screen = io.StringIO()
    progress = ProgressObserver(Console(file=screen, force_terminal=True, width=100, color_system=None), "w")
    for event in (("run_start", None), ("step_start", "[red]x\x1b[2J"), ("run_end", {"status": "failed"})):
        progress(event)
    out = screen.getvalue()
    assert "[red]x\\x1b[2J" in out and "\x1b[2J" not in out and "cancelled" in out


def test_progress_on_a_real_terminal_and_not_on_a_pipe():
    import os
    import pty
    import select
    import subprocess
    import sys

    args = [sys.executable, "-m", "flowc", "run", str(TRIAGE / "SKILL.md"), "--inputs",
            str(TRIAGE / "inputs.json"), "--host", str(TRIAGE / "host.json"), "--progress"]
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    screen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 20)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: the process ended
            break
        if not chunk:
            break
        screen += chunk
    out, _ = proc.communicate(timeout=60)
    os.close(leader)
    assert proc.returncode == 0 and b"status: success" in out
    shown = screen.decode("utf-8", "replace")
    assert "SKILL.md: success" in shown and "nothing_important" in shown and "skipped" in shown
    piped = subprocess.run(args, check=False, capture_output=True, env=env, timeout=60)
    assert piped.returncode == 0 and piped.stderr == b""  # no terminal: no display


def test_an_observed_host_starts_and_stops_the_host_it_wraps(tmp_path):
    from flowc.hosts.trace import ObservedHost

    class Managed(AsyncHost):
        state = "new"

        async def __aenter__(self):
            self.state = "started"
            return self

        async def __aexit__(self, *exc):
            self.state = "stopped"

    async def go(host):
        async with host as entered:
            assert entered is host and host.state == "started"
            assert await host.call("tool", "quick", {}) == {"name": "quick"}

    inner = Managed()
    with (tmp_path / "t.jsonl").open("w") as sink:
        asyncio.run(go(ObservedHost(inner, Tracer(sink))))
    assert inner.state == "stopped"
    assert [e["event"] for e in events(tmp_path / "t.jsonl")] == ["run_start", "call_start", "call_end"]
