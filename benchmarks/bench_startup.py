"""How long ``flowc check FILE`` takes as a whole process.

    python benchmarks/bench_startup.py [--runs N] [FILE ...]

Runs ``python -m flowc check FILE`` N times per file (default: the triage
example and one aevatar seed example) and, for comparison, ``python -c
pass``: the interpreter's own start-up. Reported per command: the minimum and
median wall-clock time, and the minimum and median CPU time (user + system,
of the child process). On a shared machine the wall-clock time mostly
measures the other processes; the CPU time is what flowc costs.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FILES = [os.path.join(ROOT, "examples", "triage", "SKILL.md"),
                 os.path.join(ROOT, "tests", "data", "aevatar", "seed_examples", "A_summarize_then_title.yaml")]


def timed_process(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(argv: list[str], runs: int) -> str:
    walls, cpus = zip(*(timed_process(argv) for _ in range(runs)))
    return (f"wall min {min(walls):5.2f} s  median {statistics.median(walls):5.2f} s   "
            f"CPU min {min(cpus):5.2f} s  median {statistics.median(cpus):5.2f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", default=DEFAULT_FILES)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]} on {sys.platform}, {args.runs} runs each\n")
    rows = [("python -c pass", [sys.executable, "-c", "pass"])]
    rows += [(f"flowc check {os.path.relpath(f, ROOT)}", [sys.executable, "-m", "flowc", "check", f])
             for f in args.files]
    width = max(len(name) for name, _ in rows)
    for name, command in rows:
        print(f"  {name:<{width}}  {measure(command, args.runs)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
