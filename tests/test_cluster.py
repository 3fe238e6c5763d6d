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
from pathlib import Path

import distributed  # the test extra installs it (pyproject.toml)
import pytest
from flowc.cli import main
from flowc.cluster import job as batch_job
from flowc.cluster import runner
from flowc.cluster.batchcmd import compiled
from flowc.driver import compile_file
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
    assert main(["run", str(WORKFLOW), "--batch", str(inputs), "--config", str(inputs)]) == 2
    assert "leave out --inputs, --json, --trace, --config" in capsys.readouterr().err
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
