"""`flowc run --config` / `--mcp-config` and `flowc check --config` as
processes: the examples of examples/mcp against the real time server, the
HST findings, usage errors, and Ctrl-C (a real SIGINT) stopping the servers
and printing the record so far."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "mcp"
ECHO = str(Path(__file__).resolve().parent / "mcp_servers" / "echo_server.py")
ENV = {**os.environ, "PYTHONPATH": str(ROOT.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def flowc(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flowc", *argv], capture_output=True, text=True, env=ENV,
                          timeout=timeout, check=False)


def example_config(tmp_path: Path) -> str:
    """examples/mcp/host.toml, with this interpreter in place of `python3`."""
    text = (EXAMPLES / "host.toml").read_text().replace('command = "python3"', f"command = {sys.executable!r}")
    path = tmp_path / "host.toml"
    path.write_text(text)
    return str(path)


# ------------------------------------------------------------------ the examples
# every program runs with run_async: the VM's WorkflowSkill bytecode too
@pytest.mark.parametrize(("example", "status", "backend"), [
    ("SKILL.md", "success", "python"), ("SKILL.md", "success", "vm"),
    ("clocks.aevatar.yaml", "success", "python"), ("clocks.instruction.yaml", "completed", "vm")])
def test_each_example_runs_against_the_time_server(tmp_path, example, status, backend):
    proc = flowc("run", str(EXAMPLES / example), "--config", example_config(tmp_path), "--backend", backend,
                 "--json")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] == status
    outputs = record["outputs"]
    if example == "clocks.aevatar.yaml":
        paris, tokyo, difference = outputs["output"].split(", ")
        assert paris.startswith("Paris 20") and paris.endswith("+01:00")
        assert tokyo.startswith("Tokyo 20") and tokyo.endswith("+09:00")
        assert difference == "+8.0h"
    else:
        times = (outputs["here"], outputs["there"]) if example == "SKILL.md" else (outputs["paris"], outputs["tokyo"])
        assert times[0].endswith("+01:00") and times[1].endswith("+09:00")
        assert outputs["difference"] == "+8.0h" and isinstance(outputs["same_day"], bool)
    assert len(record["calls"]) == 3


def test_the_examples_check_clean_with_the_config(tmp_path):
    proc = flowc("check", *(str(EXAMPLES / e) for e in ("SKILL.md", "clocks.aevatar.yaml",
                                                         "clocks.instruction.yaml")),
                 "--config", example_config(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 errors, 0 warnings" in proc.stderr


# ------------------------------------------------------------------ check --config
UNGRANTED = """\
name: ungranted
steps:
  start: { kind: manual }
  now: { kind: mcp.tool, depends_on: start, server: time, tool: get_current_time, args: { timezone: UTC } }
  moon: { kind: mcp.tool, depends_on: start, server: time, tool: moon_phase }
  page: { kind: http, depends_on: start, url: "https://example.com/" }
  same: { kind: tool, depends_on: start, name: echo }
  done: { kind: finish, depends_on: [now, moon, page, same] }
"""


def test_check_reports_every_call_the_config_does_not_grant_with_its_span(tmp_path):
    workflow = tmp_path / "ungranted.yaml"
    workflow.write_text(UNGRANTED)
    servers = tmp_path / "servers.json"
    # two started echo servers (no `tools` lists) and the time server's tools from the TOML
    servers.write_text(json.dumps({"mcpServers": {
        "echo_a": {"command": sys.executable, "args": [ECHO]},
        "echo_b": {"command": sys.executable, "args": [ECHO]}}}))
    proc = flowc("check", str(workflow), "--config", example_config(tmp_path), "--mcp-config", str(servers),
                 "--format", "json")
    assert proc.returncode == 1, proc.stderr
    found = {(d["code"], d["line"], d["col"]) for d in json.loads(proc.stdout)}
    assert found == {("HST001", 5, 3), ("HST001", 6, 3), ("HST002", 7, 3)}
    text = flowc("check", str(workflow), "--config", example_config(tmp_path), "--mcp-config", str(servers))
    assert "error[HST002]: step 'same' (tool 'echo'): the tool 'echo' is on several MCP servers " \
           "(echo_a, echo_b); name one: echo_a.echo or echo_b.echo" in text.stdout
    assert "MCP server 'time' has no tool 'moon_phase' (it has: convert_time, get_current_time)" in text.stdout


MODEL_STEPS = {
    "w.md": "---\nname: w\ndescription: d\n---\n\n```workflow\nsteps:\n  - id: ask\n    type: tool\n"
            "    tool: llm\n    inputs:\n      prompt: { type: string, value: hi }\n```\n",
    "a.yaml": "name: a\nroles:\n  - id: writer\nsteps:\n  - id: ask\n    type: llm_call\n"
              "    target_role: writer\n",
    "i.yaml": "name: i\nsteps:\n  start: { kind: manual }\n"
              "  ask: { kind: agent, depends_on: start, instruction: hi }\n"
              "  done: { kind: finish, depends_on: ask }\n",
}


def test_check_grants_each_dialects_model_step_to_the_default_profile(tmp_path):
    paths = []
    for name, text in MODEL_STEPS.items():
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    granted = tmp_path / "llm.toml"
    granted.write_text('[llm.default]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    proc = flowc("check", *paths, "--config", str(granted))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    other = tmp_path / "other.toml"
    other.write_text('[llm.gpt]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    proc = flowc("check", *paths, "--config", str(other), "--format", "json")
    assert proc.returncode == 1
    assert sorted(d["code"] for d in json.loads(proc.stdout)) == ["HST001"] * 3


def test_check_and_run_refuse_a_bad_config_in_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[mcp.servers.a]\nargs = ["x"]\n')
    for argv in (("check", str(EXAMPLES / "SKILL.md")), ("run", str(EXAMPLES / "SKILL.md"))):
        proc = flowc(*argv, "--config", str(bad))
        assert proc.returncode == 2
        assert proc.stderr.strip().count("\n") == 0 and "needs either `command`" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_run_takes_a_scripted_host_or_a_config_not_both(tmp_path):
    proc = flowc("run", str(EXAMPLES / "SKILL.md"), "--config", example_config(tmp_path),
                 "--host", str(ROOT / "examples" / "triage" / "host.json"))
    assert proc.returncode == 2 and "exclude each other" in proc.stderr


def test_a_server_that_does_not_start_fails_the_run_in_one_line(tmp_path):
    config = tmp_path / "host.toml"
    config.write_text(f'[mcp.servers.time]\ncommand = {str(tmp_path / "missing")!r}\n')
    proc = flowc("run", str(EXAMPLES / "SKILL.md"), "--config", str(config))
    assert proc.returncode == 1
    assert proc.stderr.startswith("flowc: error: MCP server 'time' did not start:") and "Traceback" not in proc.stderr


def test_mcp_config_alone_runs_a_workflow(tmp_path):
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"time": {
        "command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}}}))
    proc = flowc("run", str(EXAMPLES / "SKILL.md"), "--mcp-config", str(servers), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["outputs"]["difference"] == "+8.0h"


# ------------------------------------------------------------------ Ctrl-C
SLOW = """\
steps:
  - id: hello
    type: tool
    tool: echo
    inputs:
      text: { type: string, value: "hi" }
  - id: wait
    type: tool
    tool: slow
    inputs:
      ms: { type: int, value: 60000 }
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:   # a zombie (exited, not yet reaped by its parent) is not running
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize(("as_json", "backend"), [(True, "python"), (False, "python"), (True, "vm")])
def test_ctrl_c_stops_the_servers_and_prints_the_record_so_far(tmp_path, as_json, backend):
    workflow = tmp_path / "slow.yaml"
    workflow.write_text(SLOW)
    pidfile, calllog = tmp_path / "server.pid", tmp_path / "calls.log"
    config = tmp_path / "host.toml"
    config.write_text(f'[mcp.servers.echo]\ncommand = {sys.executable!r}\nargs = [{ECHO!r}]\n'
                      f'env = {{ ECHO_PIDFILE = {str(pidfile)!r}, ECHO_CALLLOG = {str(calllog)!r} }}\n')
    argv = [sys.executable, "-m", "flowc", "run", str(workflow), "--config", str(config), "--backend", backend]
    proc = subprocess.Popen(argv + (["--json"] if as_json else []), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        deadline = time.monotonic() + 60
        while not (calllog.exists() and "slow" in calllog.read_text()):   # the slow call is in flight
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        server = int(pidfile.read_text())
        assert _alive(server)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    if as_json:
        record = json.loads(out)
        assert record["status"] == "interrupted"
        assert [c["name"] for c in record["calls"]] == ["echo", "slow"]
        assert record["in_flight"] == [{"capability": "tool", "name": "slow"}]
    else:
        assert out.startswith("status: interrupted\n")
        assert "in flight when interrupted: tool slow" in out
    stop = time.monotonic() + 10
    while _alive(server) and time.monotonic() < stop:
        time.sleep(0.05)
    assert not _alive(server), "the MCP server outlived the run"


# ------------------------------------------------------------------ a compiled module's command line
@pytest.mark.parametrize(("example", "status"), [("clocks.instruction.yaml", "completed"),
                                                 ("SKILL.md", "success")])
def test_a_compiled_module_runs_with_the_config_too(tmp_path, example, status):
    module = tmp_path / "clocks.py"
    assert flowc("compile", str(EXAMPLES / example), "-o", str(module)).returncode == 0
    config = example_config(tmp_path)
    proc = subprocess.run([sys.executable, str(module), "--config", config], capture_output=True, text=True,
                          env=ENV, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] == status and record["outputs"]["difference"] == "+8.0h"
    both = subprocess.run([sys.executable, str(module), "--config", config, "--host", "x.json"],
                          capture_output=True, text=True, env=ENV, timeout=120, check=False)
    assert both.returncode == 2 and "exclude each other" in both.stderr


def test_ctrl_c_while_a_server_starts_stops_it_too(tmp_path):
    """A server that never answers its handshake: Ctrl-C during the start still stops it."""
    pidfile = tmp_path / "server.pid"
    hang = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(120)"
    config = tmp_path / "host.toml"
    config.write_text(f'[mcp.servers.time]\ncommand = {sys.executable!r}\nargs = ["-c", {hang!r}]\n')
    proc = subprocess.Popen([sys.executable, "-m", "flowc", "run", str(EXAMPLES / "SKILL.md"), "--config",
                             str(config), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ENV)
    try:
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and pidfile.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        server = int(pidfile.read_text())
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    record = json.loads(out)
    assert record["status"] == "interrupted" and record["calls"] == [] and record["in_flight"] == []
    stop = time.monotonic() + 10
    while _alive(server) and time.monotonic() < stop:
        time.sleep(0.05)
    assert not _alive(server), "the half-started MCP server outlived the run"
