"""Batch runs, checks and fuzz campaigns on Dask distributed (flowc.cluster).

One local cluster of two worker processes serves the whole module (starting
one costs seconds). The batches run the transform workflow of
benchmarks/bench_python_backend.py (tests/data/batch/) with a scripted host.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import distributed  # the test extra installs it (pyproject.toml)
import pytest
from flowc.cli import main
from flowc.cli.run_batch import compiled
from flowc.cluster import job as batch_job
from flowc.cluster import runner
from flowc.pipeline.driver import compile_file
from flowc.testing.campaign import KINDS, Result, campaign_tasks, run_kind

from tests.campaigns import campaign_size

BATCH_DIR = Path(__file__).parent / "data" / "batch"
WORKFLOW = BATCH_DIR / "leaderboard.md"
HOST = BATCH_DIR / "leaderboard.host.json"


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        c.wait_for_workers(2)
        yield c


def batch_lines(n: int) -> list[str]:
    """n inputs that give different runs; every 97th line is no JSON object."""
    lines = []
    for i in range(n):
        if i % 97 == 50:
            lines.append("[1, 2]" if i % 2 else "{not json")
        else:
            lines.append(json.dumps({"min_score": i % 60, "region": ("eu", "us", "apac")[i % 3],
                                     "limit": 1 + i % 7}))
    return lines


def make_job(backend: str = "python") -> batch_job.BatchJob:
    result = compile_file(str(WORKFLOW))
    assert result.ok
    kind, program = compiled(result.workflow, backend == "vm")
    return batch_job.BatchJob(kind, program, batch_job.HostSpec("script", json.loads(HOST.read_text())))


def run(job, lines, client=None, size=None, write=None) -> list[str]:
    out: list[str] = []

    def collect(text: str) -> None:
        out.append(text)
        if write is not None:
            write(len(out))

    runner.run_batch(job, runner.read_lines(line + "\n" for line in lines), collect, client, size)
    return out


def test_a_batch_of_1000_on_two_workers_gives_the_in_process_records(client):
    lines = batch_lines(1000)
    job = make_job()
    here = run(job, lines)
    with distributed.get_task_stream(client) as stream:
        there = run(job, lines, client)
    assert there == here
    records = [json.loads(text) for text in here]
    assert [r["line"] for r in records] == list(range(1, 1001))
    assert {r["status"] for r in records} == {"success", "error"}
    assert len({json.dumps(r["outputs"], sort_keys=True) for r in records if r["status"] == "success"}) > 20
    # both workers ran chunks of it (63 runs each, 16 tasks)
    batch_tasks = [t for t in stream.data if t["key"].startswith("flowc-batch-")]
    assert len(batch_tasks) == 16 and len({t["worker"] for t in batch_tasks}) == 2


def test_the_vm_backend_gives_the_same_records_on_the_cluster(client):
    lines = batch_lines(200)
    assert run(make_job("vm"), lines, client, size=7) == run(make_job("python"), lines)


def test_the_program_goes_to_each_worker_once_not_with_every_task(client):
    job = make_job()
    key = batch_job.digest(job)
    run(job, batch_lines(300), client, size=5)   # 60 tasks
    # tasks carry the digest and their lines only: a task's arguments are
    # far smaller than the module source they run
    task_args = (key, runner.chunks(runner.read_lines(batch_lines(5)), 5)[0])
    assert len(pickle.dumps(task_args)) < len(job.program) / 4
    # and the plugin that carried it is gone after the batch, its program unloaded
    assert not any(name.startswith("flowc-batch-") for name in
                   client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.worker_plugins)))
    assert all(key not in keys for keys in client.run(lambda: list(batch_job._LOADED)).values())


def test_a_worker_killed_mid_batch_loses_no_run(client):
    lines = batch_lines(2000)
    job = make_job()
    expected = run(job, lines)
    pids = client.run(os.getpid)
    victim = min(pids.values())
    killed_at: list[int] = []

    def kill_once(written: int) -> None:
        if written == 100 and not killed_at:
            os.kill(victim, signal.SIGKILL)
            killed_at.append(written)

    got = run(job, lines, client, size=10, write=kill_once)
    assert killed_at == [100]          # killed with 1,900 runs to go
    assert got == expected             # each input exactly once, in order, the same records
    client.wait_for_workers(2, timeout=60)   # the nanny restarted it
    assert victim not in client.run(os.getpid).values()


def test_run_batch_command_on_a_scheduler_writes_one_record_per_line(client, tmp_path, capsys):
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("\n".join(batch_lines(120)) + "\n\n", encoding="utf-8")   # a blank line is no input
    local, remote = tmp_path / "local.jsonl", tmp_path / "remote.jsonl"
    argv = ["run", str(WORKFLOW), "--host", str(HOST), "--batch", str(inputs)]
    assert main([*argv, "--out", str(local)]) == 1          # line 51 is no JSON object
    assert main([*argv, "--out", str(remote), "--scheduler", client.scheduler.address, "--progress"]) == 1
    assert remote.read_bytes() == local.read_bytes()
    assert len(local.read_text().splitlines()) == 120
    assert "batch: 120/120 runs, 1 not successful" in capsys.readouterr().err


def test_check_on_a_scheduler_reports_as_check_does(client, capsys, wfs_dir):
    assert main(["check", str(wfs_dir), "--format", "json"]) == 1
    here = capsys.readouterr().out
    assert main(["check", str(wfs_dir), "--format", "json", "--scheduler", client.scheduler.address]) == 1
    there = capsys.readouterr().out
    assert there == here and json.loads(here)


def local_campaign(tasks: list[tuple], out_dir: str) -> Result:
    """What ``flowc fuzz --jobs J`` merges: each share run here, in order."""
    total = Result(tasks[0][0])
    for task in tasks:
        dialect, kind, n, seed, _, max_steps, timeout = task
        total.merge(run_kind(dialect, kind, n, seed, out_dir, max_steps, timeout))
    return total


def test_fuzz_on_the_cluster_equals_the_local_campaign(client, tmp_path):
    from flowc.cluster.fuzzrun import run_tasks

    local_out, remote_out = str(tmp_path / "local"), str(tmp_path / "remote")
    tasks = campaign_tasks("workflowskill", 12, 31337, 2, local_out, 3, None, KINDS)
    here = local_campaign(tasks, local_out)
    remote_tasks = campaign_tasks("workflowskill", 12, 31337, 2, remote_out, 3, None, KINDS)
    there = run_tasks(client, remote_tasks, "workflowskill", remote_out)
    assert there.examples == here.examples and sum(here.examples.values()) == 12
    assert there.checked == here.checked and there.mutants == here.mutants
    assert there.mutation_score() == here.mutation_score() and there.mutation_score()[1] > 0
    assert [f.as_json() for f in there.failures] == [
        {**f.as_json(), "reproducer": f.reproducer.replace(local_out, remote_out) if f.reproducer else None}
        for f in here.failures]


@pytest.mark.slow
def test_a_bigger_campaign_with_workers_equals_the_one_without(client, tmp_path):
    """The command line end to end, 300 examples (40 unless FLOWC_SLOW_TESTS=1):
    --scheduler against --jobs 2."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    common = [sys.executable, "-m", "flowc", "fuzz", "--dialect", "workflowskill", "--examples", str(campaign_size(300, 40)),
              "--seed", "4242", "--jobs", "2", "--json", "--no-progress"]
    outs = []
    for extra, out in (([], "a"), (["--scheduler", client.scheduler.address], "b")):
        proc = subprocess.run([*common, "--out", str(tmp_path / out), *extra], check=False, capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=900)
        summary = json.loads(proc.stdout)
        summary.pop("elapsed_s")
        outs.append((proc.returncode, json.dumps(summary, sort_keys=True).replace(str(tmp_path / out), "OUT")))
    assert outs[0] == outs[1]
    files_a = sorted(p.name for p in (tmp_path / "a").glob("*")) if (tmp_path / "a").exists() else []
    files_b = sorted(p.name for p in (tmp_path / "b").glob("*")) if (tmp_path / "b").exists() else []
    assert files_a == files_b


def test_without_distributed_the_message_says_how_to_install_it(tmp_path):
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text('{"limit": 3}\n', encoding="utf-8")
    code = ("import sys; sys.modules['distributed'] = None\n"   # what a missing install looks like
            "from flowc.cli import main\n"
            f"sys.exit(main(['run', {str(WORKFLOW)!r}, '--host', {str(HOST)!r}, '--batch', {str(inputs)!r}, "
            "'--workers', '2']))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert "pip install 'flowc[distributed]'" in proc.stderr and "Traceback" not in proc.stderr
    # without --workers or --scheduler the batch runs in-process, distributed or not
    code = code.replace(", '--workers', '2'", "")
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and json.loads(proc.stdout)["line"] == 1


def test_batch_usage_errors(tmp_path, capsys):
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("{}\n", encoding="utf-8")
    assert main(["run", str(WORKFLOW), "--workers", "2"]) == 2
    assert "go with --batch" in capsys.readouterr().err
    assert main(["run", str(WORKFLOW), "--batch", str(inputs), "--inputs", str(inputs)]) == 2
    assert "leave out --inputs, --json and --trace" in capsys.readouterr().err
    assert main(["run", str(WORKFLOW), "--batch", str(inputs), "--config", str(inputs)]) == 2
    assert "is not valid TOML" in capsys.readouterr().err
    config = tmp_path / "host.toml"
    config.write_text("")
    assert main(["run", str(WORKFLOW), "--batch", str(inputs), "--config", str(config),
                 "--batch-concurrency", "0"]) == 2
    assert "--batch-concurrency takes a positive number" in capsys.readouterr().err
    assert main(["run", str(WORKFLOW), "--batch", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read the batch file" in capsys.readouterr().err
    assert main(["run", str(WORKFLOW), "--batch", str(inputs), "--chunk-size", "0"]) == 2
    assert main(["run", str(WORKFLOW), "--batch", str(inputs), "--workers", "0"]) == 2
    assert "--workers takes a positive number" in capsys.readouterr().err


def test_a_run_that_raises_is_a_record_not_a_lost_line():
    class Exploding:
        def run(self, inputs, host):
            if inputs.get("boom"):
                raise RuntimeError("kaput\nsecond line")
            return {"status": "success", "outputs": inputs}

    job = batch_job.BatchJob("python", "", batch_job.HostSpec())
    records = [batch_job.run_line(job, Exploding(), n, text) for n, text in
               ((1, '{"a": 1}'), (2, '{"boom": true}'), (3, "7"))]
    assert records[0] == {"line": 1, "status": "success", "outputs": {"a": 1}}
    assert records[1] == {"line": 2, "status": "error",
                          "error": {"message": "the run stopped: RuntimeError: kaput second line"}}
    assert records[2]["status"] == "error" and records[2]["line"] == 3


def test_chunk_size_keeps_several_tasks_per_worker():
    assert runner.chunk_size(1000, 2) == 63
    assert runner.chunk_size(10, 2) == 1
    assert runner.chunk_size(10**6, 4) == runner.MAX_CHUNK


# ------------------------------------------------------------------ a host config (real MCP servers)
ECHO = str(Path(__file__).resolve().parent / "mcp_servers" / "echo_server.py")
SECRET_VAR = "FLOWC_BATCH_TEST_SECRET"
ECHO_WORKFLOW = """\
inputs:
  text: { type: string }
  a: { type: int }
  b: { type: int }
  wait_ms: { type: int, default: 0 }
outputs:
  text: { type: string, value: $steps.say.output.text }
  sum: { type: object, value: $steps.sum.output }
  token: { type: object, value: $steps.token.output }
steps:
  - id: say
    type: tool
    tool: echo
    inputs:
      text: { type: string, value: $inputs.text }
    outputs:
      text: { type: string, value: $result.result }
  - id: sum
    type: tool
    tool: add
    inputs:
      a: { type: int, value: $inputs.a }
      b: { type: int, value: $inputs.b }
  - id: token
    type: tool
    tool: env
    inputs:
      name: { type: string, value: "API_TOKEN" }
  - id: wait
    type: tool
    tool: slow
    inputs:
      ms: { type: int, value: $inputs.wait_ms }
"""


def echo_setup(tmp_path: Path, **env: str) -> tuple[Path, Path, Path]:
    """(workflow, host.toml, start log): the echo server over stdio, its
    API_TOKEN read from SECRET_VAR when it starts, each start a line of the log."""
    workflow, config, starts = tmp_path / "echo.yaml", tmp_path / "host.toml", tmp_path / "starts.log"
    workflow.write_text(ECHO_WORKFLOW)
    extra = "".join(f", {key} = {value!r}" for key, value in env.items())
    config.write_text(f'[mcp.servers.echo]\ncommand = {sys.executable!r}\nargs = [{ECHO!r}]\n'
                      f'env = {{ API_TOKEN = "${{{SECRET_VAR}}}", ECHO_STARTLOG = {str(starts)!r}{extra} }}\n')
    return workflow, config, starts


def started_pids(starts: Path) -> list[int]:
    return [int(line) for line in starts.read_text().split()] if starts.exists() else []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as fh:   # a zombie has exited
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_config_batch_starts_the_server_once_per_process_and_keeps_the_secret_home(
        client, tmp_path, monkeypatch, capsys):
    secret = "sk-batch-7f3a9c1e55d2"
    monkeypatch.setenv(SECRET_VAR, secret)
    workflow, config, starts = echo_setup(tmp_path)
    inputs = tmp_path / "inputs.jsonl"
    lines = [json.dumps({"text": f"hello {i}", "a": i, "b": i * i}) for i in range(50)]
    lines[20] = "[1, 2]"   # no JSON object: an error record, in its place
    inputs.write_text("\n".join(lines) + "\n")
    local, remote = tmp_path / "local.jsonl", tmp_path / "remote.jsonl"
    argv = ["run", str(workflow), "--config", str(config), "--batch", str(inputs)]

    assert main([*argv, "--out", str(local), "--batch-concurrency", "5"]) == 1
    assert len(started_pids(starts)) == 1                     # one server for the 50 runs
    records = [json.loads(text) for text in local.read_text().splitlines()]
    assert [r["line"] for r in records] == list(range(1, 51))
    assert records[20]["status"] == "error"
    assert records[7]["outputs"] == {"text": "hello 7", "sum": {"sum": 56}, "token": {"set": True, "length": len(secret)}}

    # each run alone (`flowc run --config --json`, its own server) gives the batch's record
    capsys.readouterr()
    for n in (1, 2, 30, 50):
        one = tmp_path / f"in{n}.json"
        one.write_text(lines[n - 1])
        assert main(["run", str(workflow), "--config", str(config), "--inputs", str(one), "--json"]) == 0
        assert {"line": n, **json.loads(capsys.readouterr().out)} == records[n - 1]

    # on the cluster: the secret is in the workers' environment only
    workers = client.run(os.getpid)
    client.run(lambda: os.environ.update({SECRET_VAR: secret}))
    monkeypatch.delenv(SECRET_VAR)
    starts.unlink()
    try:
        assert main([*argv, "--out", str(remote), "--scheduler", client.scheduler.address]) == 1
    finally:
        client.run(lambda: os.environ.pop(SECRET_VAR, None))
    assert remote.read_bytes() == local.read_bytes()
    servers = started_pids(starts)
    assert len(servers) == len(workers) == len(set(servers))   # one per worker, started in its plugin's setup
    assert not any(_alive(pid) for pid in servers)             # and stopped in its teardown
    assert secret not in local.read_text()

    # what travels: the config's text, the variable's name, never its value
    from flowc.cli.run_batch import host_spec
    from flowc.cluster import remote as remote_side

    args = type("Args", (), {"config": str(config), "mcp_config": None, "host": None})()
    job = batch_job.BatchJob("python", "", host_spec(args), concurrency=8)
    payload = pickle.dumps(remote_side.InstallJob(job))
    assert f"${{{SECRET_VAR}}}".encode() in payload and secret.encode() not in payload


MEET_WORKFLOW = """\
inputs:
  parties: { type: int }
outputs:
  met: { type: string, value: $steps.meet.output.result }
steps:
  - id: meet
    type: tool
    tool: meet
    inputs:
      parties: { type: int, value: $inputs.parties }
"""


def test_config_batch_runs_up_to_batch_concurrency_at_once(tmp_path, capsys):
    """`meet` answers only when 4 calls wait at once: 8 runs pass only 4 at a
    time. The server comes from an `mcpServers` file (--mcp-config) here."""
    starts, servers = tmp_path / "starts.log", tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO],
                                                           "env": {"ECHO_STARTLOG": str(starts)}}}}))
    workflow, inputs = tmp_path / "meet.yaml", tmp_path / "inputs.jsonl"
    workflow.write_text(MEET_WORKFLOW)
    inputs.write_text('{"parties": 4}\n' * 8)
    assert main(["run", str(workflow), "--mcp-config", str(servers), "--batch", str(inputs),
                 "--batch-concurrency", "4"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["line"], r["outputs"]) for r in records] == [(n, {"met": "met"}) for n in range(1, 9)]
    assert len(started_pids(starts)) == 1


def test_a_server_that_does_not_start_on_the_workers_gives_an_error_record_per_line(client, tmp_path):
    workflow, config, _ = echo_setup(tmp_path)   # SECRET_VAR is set on no worker
    job = batch_job.BatchJob("python", compiled(compile_file(str(workflow)).workflow, False)[1],
                             batch_job.HostSpec("config", config=((str(config), config.read_text()), None)))
    records = [json.loads(text) for text in run(job, ['{"text": "a", "a": 1, "b": 2}'] * 3, client)]
    assert [r["line"] for r in records] == [1, 2, 3]
    assert all(r["status"] == "error" and SECRET_VAR in r["error"]["message"] for r in records)


def test_ctrl_c_stops_the_servers_and_leaves_whole_records(tmp_path):
    calllog = tmp_path / "calls.log"
    workflow, config, starts = echo_setup(tmp_path, ECHO_CALLLOG=str(calllog))
    inputs, out = tmp_path / "inputs.jsonl", tmp_path / "out.jsonl"
    waits = [0, 0, 0, 60000, 0, 0]   # line 4 holds the rest back
    inputs.write_text("".join(json.dumps({"text": "t", "a": 1, "b": 2, "wait_ms": ms}) + "\n" for ms in waits))
    env = {**os.environ, SECRET_VAR: "x", "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen([sys.executable, "-m", "flowc", "run", str(workflow), "--config", str(config),
                             "--batch", str(inputs), "--out", str(out), "--batch-concurrency", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and out.read_text().count("\n") == 3 and calllog.read_text().count("slow") >= 5):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "3 of 6 records written" in err
    text = out.read_text()
    assert text.endswith("\n") and [json.loads(line)["line"] for line in text.splitlines()] == [1, 2, 3]
    (server,) = started_pids(starts)
    stop = time.monotonic() + 10
    while _alive(server) and time.monotonic() < stop:
        time.sleep(0.05)
    assert not _alive(server), "the MCP server outlived the batch"
