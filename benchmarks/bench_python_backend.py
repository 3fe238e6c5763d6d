"""Benchmarks of the Python module backend.

    python benchmarks/bench_python_backend.py [--records N] [--repeat K]

1. A transform-heavy workflow (12 steps: fetch N records from a scripted
   tool, four filters, two maps, two sorts, a guarded exit, a slice and a
   report call), run as the generated module and as a hand-written Python
   function doing the same work, side by side in one process, with the same
   host. The host hands out its records without copying them, so both sides
   time the workflow's own work. The two alternate K times; reported: the
   median and the minimum of each (CPU time of the process, which load on
   the machine disturbs far less than wall-clock time), and their ratios. Two more rows run the
   generated module with the default ``ScriptedHost(script)`` (what ``flowc
   run`` uses) and with ``copy_outputs=True`` (a fresh copy of every
   answer), against ``copy_outputs=False``.
2. A triage workflow (fetch, filter on a number, filter with ``contains``
   on an array ``||`` a nested field's equality, sort descending, map four
   fields), the same way, with the default host (``--profile`` prints a
   cProfile of one run of the generated module).
3. Compile time per corpus workflow (tests/data/workflowskill and
   examples/): front end + analyze, code generation, and the total; the
   median and the maximum over the files of each file's median of K runs.

Runs in well under two minutes with the defaults.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.pipeline import driver

# The runs of workflows are timed in CPU time of this process: on a shared
# machine, wall-clock time mostly measures the other processes.
CLOCK = time.process_time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORKFLOW = """\
---
name: leaderboard
description: Rank the active, high-scoring customers of one region.
---

```workflow
inputs:
  min_score: {type: int, default: 50}
  region: {type: string, default: "eu"}
  limit: {type: int, default: 100}

outputs:
  count: {type: int, value: $steps.top.output.items.length}
  top: {type: array, value: $steps.top.output.items}

steps:
  - id: fetch
    type: tool
    tool: records.list
    inputs:
      region: {type: string, value: $inputs.region}
    outputs:
      records: {type: array}

  - id: active
    type: transform
    operation: filter
    where: $item.active
    inputs:
      items: {type: array, value: $steps.fetch.output.records}
    outputs:
      items: {type: array}

  - id: scored
    type: transform
    operation: filter
    where: $item.score >= $inputs.min_score
    inputs:
      items: {type: array, value: $steps.active.output.items}
    outputs:
      items: {type: array}

  - id: regional
    type: transform
    operation: filter
    where: $item.region == $inputs.region
    inputs:
      items: {type: array, value: $steps.scored.output.items}
    outputs:
      items: {type: array}

  - id: shape
    type: transform
    operation: map
    expression:
      id: $item.id
      name: $item.name
      score: $item.score
      city: $item.address.city
    inputs:
      items: {type: array, value: $steps.regional.output.items}
    outputs:
      items: {type: array}

  - id: by_score
    type: transform
    operation: sort
    field: score
    direction: desc
    inputs:
      items: {type: array, value: $steps.shape.output.items}
    outputs:
      items: {type: array}

  - id: named
    type: transform
    operation: filter
    where: $item.name contains "a"
    inputs:
      items: {type: array, value: $steps.by_score.output.items}
    outputs:
      items: {type: array}

  - id: nothing
    type: exit
    condition: $steps.named.output.items.length == 0
    status: success
    output:
      count: 0
      top: []

  - id: by_city
    type: transform
    operation: sort
    field: city
    inputs:
      items: {type: array, value: $steps.named.output.items}
    outputs:
      items: {type: array}

  - id: slim
    type: transform
    operation: map
    expression:
      id: $item.id
      city: $item.city
      score: $item.score
    inputs:
      items: {type: array, value: $steps.by_city.output.items}
    outputs:
      items: {type: array}

  - id: top
    type: transform
    operation: filter
    where: $index < $inputs.limit
    inputs:
      items: {type: array, value: $steps.slim.output.items}
    outputs:
      items: {type: array}

  - id: report
    type: tool
    tool: report.post
    inputs:
      count: {type: int, value: $steps.top.output.items.length}
      items: {type: array, value: $steps.top.output.items}
```
"""


def hand_written(inputs: dict, host) -> dict:
    """The same work as WORKFLOW, as a Python programmer would write it."""
    min_score = inputs.get("min_score", 50)
    region = inputs.get("region", "eu")
    limit = inputs.get("limit", 100)
    records = host.call("tool", "records.list", {"region": region})["records"]
    active = [r for r in records if r["active"]]
    scored = [r for r in active if r["score"] >= min_score]
    regional = [r for r in scored if r["region"] == region]
    shaped = [{"id": r["id"], "name": r["name"], "score": r["score"], "city": r["address"]["city"]}
              for r in regional]
    by_score = sorted(shaped, key=lambda r: r["score"], reverse=True)
    named = [r for r in by_score if "a" in r["name"].lower()]
    if not named:
        return {"count": 0, "top": []}
    by_city = sorted(named, key=lambda r: r["city"])
    slim = [{"id": r["id"], "city": r["city"], "score": r["score"]} for r in by_city]
    top = slim[:limit]
    host.call("tool", "report.post", {"count": len(top), "items": top})
    return {"count": len(top), "top": top}


TRIAGE = """\
---
name: triage
description: The urgent or Parisian customers above a score, best first.
---

```workflow
inputs:
  min_score: {type: int, default: 30}

outputs:
  count: {type: int, value: $steps.shaped.output.items.length}
  items: {type: array, value: $steps.shaped.output.items}

steps:
  - id: fetch
    type: tool
    tool: records.list
    outputs:
      records: {type: array}

  - id: scored
    type: transform
    operation: filter
    where: $item.score >= $inputs.min_score
    inputs:
      items: {type: array, value: $steps.fetch.output.records}
    outputs:
      items: {type: array}

  - id: flagged
    type: transform
    operation: filter
    where: $item.tags contains "urgent" || $item.address.city == "Paris"
    inputs:
      items: {type: array, value: $steps.scored.output.items}
    outputs:
      items: {type: array}

  - id: ranked
    type: transform
    operation: sort
    field: score
    direction: desc
    inputs:
      items: {type: array, value: $steps.flagged.output.items}
    outputs:
      items: {type: array}

  - id: shaped
    type: transform
    operation: map
    expression:
      id: $item.id
      name: $item.name
      score: $item.score
      city: $item.address.city
    inputs:
      items: {type: array, value: $steps.ranked.output.items}
    outputs:
      items: {type: array}
```
"""


def triage_by_hand(inputs: dict, host) -> dict:
    """The same work as TRIAGE, as a Python programmer would write it."""
    min_score = inputs.get("min_score", 30)
    records = host.call("tool", "records.list", {})["records"]
    scored = [r for r in records if r["score"] >= min_score]
    flagged = [r for r in scored if "urgent" in r["tags"] or r["address"]["city"] == "Paris"]
    ranked = sorted(flagged, key=lambda r: r["score"], reverse=True)
    shaped = [{"id": r["id"], "name": r["name"], "score": r["score"], "city": r["address"]["city"]}
              for r in ranked]
    return {"count": len(shaped), "items": shaped}


def make_records(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    regions = ["eu", "us", "apac"]
    cities = ["Amsterdam", "Berlin", "Lisbon", "Oslo", "Paris", "Rome", "Vienna", "Zagreb"]
    syllables = ["ka", "lo", "mi", "ne", "ru", "sho", "ti", "vy", "zu", "be"]
    tags = ["billing", "new", "urgent", "vip", "churn"]
    tag_rng = random.Random(seed + 1)  # apart, so the other fields stay as they were
    return [
        {
            "id": i,
            "name": "".join(rng.choice(syllables) for _ in range(3)).capitalize(),
            "active": rng.random() < 0.8,
            "score": rng.randint(0, 100),
            "region": rng.choice(regions),
            "address": {"city": rng.choice(cities), "zip": f"{rng.randint(1000, 9999)}"},
            "tags": tag_rng.sample(tags, tag_rng.randint(0, 3)),
        }
        for i in range(n)
    ]


def timed(fn, repeat: int, clock=time.perf_counter) -> tuple[float, object]:
    times = []
    result = None
    for _ in range(repeat):
        start = clock()
        result = fn()
        times.append(clock() - start)
    return statistics.median(times), result


def bench_transforms(n: int, repeat: int) -> list[tuple[str, str]]:
    result = driver.compile_text(WORKFLOW, "leaderboard.md")
    assert result.ok, [d.message for d in result.diagnostics]
    module = load_module(compile_workflow(result.workflow))
    script = {"records.list": {"output": {"records": make_records(n)}}, "report.post": {"output": {"ok": True}}}

    def generated():
        return module.run({}, ScriptedHost(script, copy_outputs=False))

    def by_hand():
        return hand_written({}, ScriptedHost(script, copy_outputs=False))

    def default_host():
        return module.run({}, ScriptedHost(script))

    def copying_host():
        return module.run({}, ScriptedHost(script, copy_outputs=True))

    record = generated()  # warm up both
    assert record["status"] == "success", record["error"]
    assert record["outputs"] == by_hand(), "the generated module and the hand-written function disagree"
    # Interleaved, so that load on the machine hits both sides alike.
    gen_times, hand_times, default_times, copy_times = [], [], [], []
    for _ in range(repeat):
        gen_times.append(timed(generated, 1, CLOCK)[0])
        hand_times.append(timed(by_hand, 1, CLOCK)[0])
        default_times.append(timed(default_host, 1, CLOCK)[0])
        copy_times.append(timed(copying_host, 1, CLOCK)[0])
    t_gen, t_hand = statistics.median(gen_times), statistics.median(hand_times)
    m_gen, m_hand = min(gen_times), min(hand_times)
    t_def, m_def = statistics.median(default_times), min(default_times)
    t_copy, m_copy = statistics.median(copy_times), min(copy_times)
    return [
        ("generated module", f"median {t_gen * 1000:7.1f} ms   min {m_gen * 1000:7.1f} ms"),
        ("hand-written Python", f"median {t_hand * 1000:7.1f} ms   min {m_hand * 1000:7.1f} ms"),
        ("ratio (generated / hand-written)", f"median {t_gen / t_hand:7.2f} x    min {m_gen / m_hand:7.2f} x"),
        ("default host / copy_outputs=False", f"median {t_def / t_gen:7.2f} x    min {m_def / m_gen:7.2f} x"),
        ("copy_outputs=True / copy_outputs=False", f"median {t_copy / t_gen:7.2f} x    min {m_copy / m_gen:7.2f} x"),
    ]


def bench_triage(n: int, repeat: int, profile: bool = False) -> list[tuple[str, str]]:
    """TRIAGE as the generated module and as triage_by_hand, interleaved."""
    result = driver.compile_text(TRIAGE, "triage.md")
    assert result.ok, [d.message for d in result.diagnostics]
    module = load_module(compile_workflow(result.workflow))
    script = {"records.list": {"output": {"records": make_records(n)}}}

    def generated():
        return module.run({}, ScriptedHost(script))

    def by_hand():
        return triage_by_hand({}, ScriptedHost(script))

    record = generated()
    assert record["status"] == "success", record["error"]
    assert record["outputs"] == by_hand(), "the generated module and the hand-written function disagree"
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(generated)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)
    gen_times, hand_times = [], []
    for _ in range(repeat):
        gen_times.append(timed(generated, 1, CLOCK)[0])
        hand_times.append(timed(by_hand, 1, CLOCK)[0])
    t_gen, t_hand = statistics.median(gen_times), statistics.median(hand_times)
    m_gen, m_hand = min(gen_times), min(hand_times)
    return [
        ("generated module", f"median {t_gen * 1000:7.1f} ms   min {m_gen * 1000:7.1f} ms"),
        ("hand-written Python", f"median {t_hand * 1000:7.1f} ms   min {m_hand * 1000:7.1f} ms"),
        ("ratio (generated / hand-written)", f"median {t_gen / t_hand:7.2f} x    min {m_gen / m_hand:7.2f} x"),
    ]


def corpus_files() -> list[str]:
    paths = driver.expand_paths([os.path.join(ROOT, "tests", "data", "workflowskill"),
                                 os.path.join(ROOT, "examples")])
    out = []
    for path in paths:
        if driver.compile_file(path).ok:
            out.append(path)
    return out


def bench_compile(repeat: int) -> tuple[int, list[tuple[str, str]]]:
    files = corpus_files()
    front, back, total = [], [], []
    for path in files:
        text, _ = driver.read_source(path)
        workflow = driver.compile_text(text, path).workflow
        compile_workflow(workflow)  # warm up (parsers, caches)
        t_front, _ = timed(lambda text=text, path=path: driver.compile_text(text, path), repeat)
        t_back, _ = timed(lambda workflow=workflow: compile_workflow(workflow), repeat)
        t_total, _ = timed(lambda text=text, path=path: compile_workflow(driver.compile_text(text, path).workflow),
                           repeat)
        front.append(t_front)
        back.append(t_back)
        total.append(t_total)

    def ms(values: list[float]) -> str:
        return f"median {statistics.median(values) * 1000:6.2f} ms   max {max(values) * 1000:6.2f} ms"

    return len(files), [
        ("parse + analyze", ms(front)),
        ("code generation", ms(back)),
        ("total", ms(total)),
    ]


def table(title: str, rows: list[tuple[str, str]]) -> str:
    width = max(len(r[0]) for r in rows)
    lines = [title, "-" * len(title)]
    lines += [f"  {name:<{width}}  {value}" for name, value in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one triage run")
    parser.add_argument("--no-compile", action="store_true", help="skip the compile-time table")
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]} on {sys.platform}\n")
    rows = bench_transforms(args.records, args.repeat)
    print(table(f"Transform-heavy workflow, {args.records:,} records, 12 steps ({args.repeat} runs each)", rows))
    print()
    rows = bench_triage(args.records, args.repeat, args.profile)
    print(table(f"Triage workflow, {args.records:,} records, 5 steps ({args.repeat} runs each)", rows))
    print()
    if args.no_compile:
        return 0
    count, rows = bench_compile(max(args.repeat, 5))
    print(table(f"Compile time per corpus workflow ({count} files, median of {max(args.repeat, 5)} each)", rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
