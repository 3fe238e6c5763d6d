"""Batch runs and fuzz campaigns on Dask distributed (flowc.cluster).

    python benchmarks/bench_batch.py [--runs N] [--records R] [--examples E]

1. Batch throughput (runs/s, wall clock, cluster start-up excluded, the
   program's installation on the workers included) of the transform
   workflow of bench_python_backend.py on small inputs (a scripted host
   handing out R records per run): in-process, then a LocalCluster of 1 and
   of 2 worker processes (one thread each). The 1 -> 2 workers ratio is the
   scaling; the machine's load average is printed with it, since the
   workers share the cores with whatever else runs.
2. Chunk size: the same batch on 2 workers with 1, 4, 16, 64 and 256 runs
   per task, and the per-task overhead: the wall time of M tasks that do
   nothing, per task.
3. Fuzz: examples/s of one campaign (E examples, WorkflowSkill) with 1 and
   2 workers (as many shares as workers).

Needs flowc[distributed]. Takes two to four minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import distributed
from bench_python_backend import WORKFLOW, make_records
from flowc.cli.run_batch import compiled
from flowc.cluster import job as batch_job
from flowc.cluster import runner
from flowc.cluster.fuzzrun import run_tasks
from flowc.pipeline import driver
from flowc.testing.campaign import KINDS, campaign_tasks

REPEAT = 3


def make_job(records: int) -> batch_job.BatchJob:
    result = driver.compile_text(WORKFLOW, "leaderboard.md")
    assert result.ok, [d.message for d in result.diagnostics]
    backend, program = compiled(result.workflow, use_vm=False)
    script = {"records.list": {"output": {"records": make_records(records)}}, "report.post": {"output": {"ok": True}}}
    return batch_job.BatchJob(backend, program, batch_job.HostSpec("script", script))


def make_lines(n: int) -> list[tuple[int, str]]:
    return [(i + 1, json.dumps({"min_score": i % 60, "region": ("eu", "us", "apac")[i % 3], "limit": 1 + i % 7}))
            for i in range(n)]


def timed_batch(job, lines, client=None, size=None) -> tuple[float, list[str]]:
    out: list[str] = []
    started = time.perf_counter()
    runner.run_batch(job, lines, out.append, client, size)
    return time.perf_counter() - started, out


def cpu_seconds(client) -> float:
    """CPU time of this process and of every worker process so far."""
    workers = client.run(time.process_time).values() if client is not None else ()
    return time.process_time() + sum(workers)


def measure(job, lines, client=None, size=None, repeat=REPEAT) -> tuple[float, float, list[str]]:
    """The best of ``repeat`` rates (runs/s, wall clock) and the CPU
    milliseconds per run (client and workers together) of that batch."""
    best, cpu_ms, records = 0.0, 0.0, []
    for _ in range(repeat):
        cpu = cpu_seconds(client)
        elapsed, records = timed_batch(job, lines, client, size)
        rate = len(lines) / elapsed
        if rate > best:
            best, cpu_ms = rate, (cpu_seconds(client) - cpu) * 1e3 / len(lines)
    return best, cpu_ms, records


def cluster(workers: int):
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                    dashboard_address=None, silence_logs=40)


def noop(x):
    return x


def task_overhead(client, tasks: int) -> float:
    started = time.perf_counter()
    client.gather(client.map(noop, range(tasks), pure=False))
    return (time.perf_counter() - started) / tasks


def fuzz_rate(client, workers: int, examples: int) -> float:
    with tempfile.TemporaryDirectory() as out:
        tasks = campaign_tasks("workflowskill", examples, 2024, workers, out, 6, None, KINDS)
        started = time.perf_counter()
        result = run_tasks(client, tasks, "workflowskill", out)
        elapsed = time.perf_counter() - started
    assert result.total == examples
    return examples / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6000)
    parser.add_argument("--records", type=int, default=40)
    parser.add_argument("--examples", type=int, default=120)
    args = parser.parse_args()
    job, lines = make_job(args.records), make_lines(args.runs)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    timed_batch(job, lines[:200])  # warm up
    rate, cpu_ms, reference = measure(job, lines)
    print(f"{'batch in-process':<34} {rate:9.1f} runs/s  {cpu_ms:6.3f} CPU ms/run")
    rates = {}
    for workers in (1, 2):
        with cluster(workers) as c, distributed.Client(c) as client:
            client.wait_for_workers(workers)
            timed_batch(job, lines[:200], client)   # warm the workers' imports
            rate, cpu_ms, records = measure(job, lines, client)
            assert records == reference, "the cluster's records differ from the in-process batch"
            rates[workers] = rate
            label = f"batch on {workers} worker" + ("s" if workers > 1 else "")
            print(f"{label:<34} {rate:9.1f} runs/s  {cpu_ms:6.3f} CPU ms/run   "
                  f"(load average {os.getloadavg()[0]:.2f})")
            if workers == 2:
                for size in (1, 4, 16, 64, 256):
                    rate, cpu_ms, _ = measure(job, lines[:3000], client, size, repeat=1)
                    print(f"{f'  chunk of {size} runs':<34} {rate:9.1f} runs/s  {cpu_ms:6.3f} CPU ms/run")
                print(f"{'  per-task overhead (no-op tasks)':<34} {task_overhead(client, 2000) * 1e3:9.2f} ms/task")
            fuzz = fuzz_rate(client, workers, args.examples)
            print(f"{f'fuzz on {workers} worker' + ('s' if workers > 1 else ''):<34} {fuzz:9.1f} examples/s")
            rates[f"fuzz{workers}"] = fuzz
    print(f"{'scaling 1 -> 2 workers (batch)':<34} {rates[2] / rates[1]:9.2f}x")
    print(f"{'scaling 1 -> 2 workers (fuzz)':<34} {rates['fuzz2'] / rates['fuzz1']:9.2f}x")
    print(f"# finished {time.strftime('%H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
