"""What a journal costs: per host call, on a 100-call run, and to resume a long run.

    python benchmarks/bench_journal.py [--calls N] [--resume-calls M] [--repeat R]

A dialect-3 workflow whose `foreach` calls a tool once per item runs with
an in-memory host that answers at once (so the figures are the journal's
own cost, not a host's):

- a run of N calls (default 100) without a journal, and journaled in a
  SQLite file (WAL) with synchronous=FULL (every entry fsync'd: the
  default) and with synchronous=NORMAL; reported: the time of each (the
  best of R runs), the overhead per host call and the ratio journaled /
  not journaled;
- a run of M calls (default 10,000) journaled (NORMAL, to write it
  quickly), stopped before its last answer, then resumed: the resume
  replays M - 1 answers through a fresh kernel run and makes the last call.
  Reported: the resume's time.

The journal lives in a temporary directory on the machine's disk.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from flowc import journal
from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.pipeline import driver

CALLS = """\
name: calls
steps:
  start: { kind: manual }
  each:
    kind: foreach
    depends_on: start
    over: "{{ inputs.items }}"
    body: { steps: { work: { kind: tool, name: work, args: { i: "{{ item }}" } } } }
  done: { kind: finish, depends_on: each, output: done }
"""


def inputs(n: int) -> dict:
    return {"items": list(range(n))}


def module_for():
    result = driver.compile_text(CALLS, "calls.yaml")
    if not result.ok:
        raise SystemExit("; ".join(d.message for d in result.diagnostics if d.is_error))
    return load_module(compile_workflow(result.workflow))


def host() -> ScriptedHost:
    return ScriptedHost({"*": {"output": "ok"}})


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def journaled(module, n: int, where: str, synchronous: str):
    """One journaled run in an open journal (opening the file is not timed)."""
    store = journal.open_journal(os.path.join(where, f"runs-{synchronous}.db"), synchronous)

    def go() -> None:
        run_id = journal.begin(store, workflow="calls", workflow_hash="h", inputs={})
        out = journal.drive(store, run_id, lambda: module.new_run(inputs(n)), host())
        assert out.record["status"] == "completed", out.record["error"]
    return go


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--resume-calls", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    module = module_for()
    record = module.run(inputs(args.calls), host())
    assert record["status"] == "completed" and len(record["calls"]) == args.calls, record["error"]
    with tempfile.TemporaryDirectory() as where:
        plain = best(lambda: module.run(inputs(args.calls), host()), args.repeat)
        full = best(journaled(module, args.calls, where, "FULL"), args.repeat)
        normal = best(journaled(module, args.calls, where, "NORMAL"), args.repeat)
        print(f"{args.calls}-call run, no journal:          {plain * 1000:9.2f} ms")
        for name, t in (("FULL", full), ("NORMAL", normal)):
            print(f"{args.calls}-call run, journal WAL {name:<6}: {t * 1000:9.2f} ms   "
                  f"overhead {(t - plain) / args.calls * 1e6:8.1f} us/call   ratio {t / plain:6.1f}x")
        m = args.resume_calls
        store = journal.open_journal(os.path.join(where, "big.db"), "NORMAL")
        run_id = journal.begin(store, workflow="calls", workflow_hash="h", inputs={})
        t0 = time.perf_counter()
        journal.drive(store, run_id, lambda: module.new_run(inputs(m)), host(), max_answers=m - 1)
        wrote = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = journal.resume(store, run_id, lambda: module.new_run(inputs(m)), host(), workflow_hash="h")
        resumed = time.perf_counter() - t0
        assert out.record["status"] == "completed" and out.replayed == args.resume_calls - 1
        print(f"{args.resume_calls}-call run: journaled (NORMAL) up to its last call in {wrote:6.2f} s; "
              f"resume (replay {args.resume_calls - 1} answers, 1 call): {resumed * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
