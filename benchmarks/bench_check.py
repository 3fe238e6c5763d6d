"""How long `flowc check` takes: per corpus file, and for generated workflows
of 1,000 and 10,000 steps (is it linear?), with peak memory.

    python benchmarks/bench_check.py            # the table (about a minute)
    python benchmarks/bench_check.py --files    # plus one row per corpus file
    python benchmarks/bench_check.py --profile  # plus a cProfile of the 10k-step check
    python benchmarks/bench_check.py --quick    # fewer repetitions, for a smoke run

"Check" is what `flowc check` does per file: the front end (YAML, the
WorkflowSkill checks, lowering to the IR) and analyze, through
flowc.pipeline.driver.compile_text on text already in memory. Times are wall-clock
medians over the repetitions; peak memory is measured in a separate run
under tracemalloc (which slows Python down, so it is never timed).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import io
import pstats
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

from flowc.compiler.analyze import analyze
from flowc.compiler.workflowskill.frontend import compile_workflowskill
from flowc.pipeline import driver

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "workflowskill"


# ------------------------------------------------------------------ generated workflows
def generate(n_steps: int) -> str:
    """A WorkflowSkill SKILL.md with ``n_steps`` steps in a realistic mix:
    tool steps wired to earlier steps, filter/map/sort transforms, guards,
    `each` loops, a conditional with two branch steps every 50 steps and a
    guarded exit every 100. It checks without errors."""
    out = [
        "---", f"name: generated-{n_steps}", f"description: A generated workflow of {n_steps} steps.",
        "---", "", f"# Generated ({n_steps} steps)", "", "```workflow",
        "inputs:",
        "  query: {type: string, default: news}",
        "  limit: {type: int, default: 5}",
        "  urls: {type: array}",
        "outputs:",
        "  count: {type: int}",
        "  items: {type: array}",
        "steps:",
    ]
    tools: list[str] = []     # plain tool steps: output {text, items, ok}
    arrays: list[str] = []    # transforms: output {items}
    i = 0

    def sid() -> str:
        return f"s{i}"

    def tool(step_id: str, guard: str | None = None, retry: bool = False, ignore: bool = False) -> None:
        src = tools[-1] if tools else None
        far = tools[len(tools) // 2] if tools else None
        query = f"$steps.{src}.output.text" if src else "$inputs.query"
        out.extend([
            f"  - id: {step_id}",
            "    type: tool",
            f"    tool: svc.call_{i % 7}",
            f"    description: Step {i}",
        ])
        if guard:
            out.append(f"    condition: {guard}")
        out.extend([
            "    inputs:",
            f"      query: {{type: string, value: {query}}}",
            "      limit: {type: int, value: $inputs.limit}",
            f"      label: {{type: string, value: \"step {i} for ${{inputs.query}}\"}}",
        ])
        if far:
            out.append(f"      seen: {{type: boolean, value: $steps.{far}.output.ok}}")
        out.extend([
            "    outputs:",
            "      text: {type: string, value: $result.text}",
            "      items: {type: array, value: $result.items}",
            "      ok: {type: boolean}",
        ])
        if retry:
            out.append("    retry: {max: 3, delay: 200ms, backoff: 2.0}")
        if ignore:
            out.append("    on_error: ignore")
        tools.append(step_id)

    while i < n_steps:
        kind = i % 10
        if i % 100 == 99 and tools:
            out.extend([
                f"  - id: {sid()}",
                "    type: exit",
                f"    condition: $steps.{tools[-1]}.output.items.length == 0",
                "    status: success",
                "    output:",
                "      count: 0",
                "      items: []",
            ])
        elif i % 50 == 47 and tools and i + 2 < n_steps:
            then_id, else_id = f"s{i + 1}", f"s{i + 2}"
            out.extend([
                f"  - id: {sid()}",
                "    type: conditional",
                f"    condition: $steps.{tools[-1]}.output.ok == true && $inputs.limit > 0",
                f"    then: [{then_id}]",
                f"    else: [{else_id}]",
                "    inputs: {}",
                "    outputs: {}",
            ])
            i += 1
            tool(sid())
            i += 1
            tool(sid(), ignore=True)
        elif kind in (1, 4) and tools:
            src = tools[-1]
            out.extend([
                f"  - id: {sid()}",
                "    type: transform",
                "    operation: filter",
                "    where: $item.score >= $inputs.limit && $item.title contains $inputs.query",
                "    inputs:",
                f"      items: {{type: array, value: $steps.{src}.output.items}}",
                "    outputs:",
                "      items: {type: array}",
            ])
            arrays.append(sid())
        elif kind == 2 and arrays:
            out.extend([
                f"  - id: {sid()}",
                "    type: transform",
                "    operation: map",
                "    expression:",
                "      title: $item.title",
                "      score: $item.score",
                "      source: {name: $item.source.name, rank: $index}",
                "    inputs:",
                f"      items: {{type: array, value: $steps.{arrays[-1]}.output.items}}",
                "    outputs:",
                "      items: {type: array}",
            ])
            arrays.append(sid())
        elif kind == 5 and arrays:
            out.extend([
                f"  - id: {sid()}",
                "    type: transform",
                "    operation: sort",
                "    field: score",
                "    direction: desc",
                "    inputs:",
                f"      items: {{type: array, value: $steps.{arrays[-1]}.output.items}}",
                "    outputs:",
                "      items: {type: array}",
            ])
            arrays.append(sid())
        elif kind == 7 and arrays:
            out.extend([
                f"  - id: {sid()}",
                "    type: tool",
                "    tool: svc.fetch_each",
                f"    each: $steps.{arrays[-1]}.output.items",
                "    delay: 50ms",
                "    inputs:",
                "      url: {type: string, value: \"https://example.test/${item.id}\"}",
                "      position: {type: int, value: $index}",
                "    outputs:",
                "      body: {type: string, value: $result.body}",
            ])
        elif kind == 8 and tools:
            tool(sid(), guard=f"$steps.{tools[-1]}.output.ok == true", retry=True)
        else:
            tool(sid(), ignore=(kind == 9))
        i += 1
    last = arrays[-1] if arrays else None
    if last:
        out[out.index("  count: {type: int}")] = f"  count: {{type: int, value: $steps.{last}.output.items.length}}"
        out[out.index("  items: {type: array}")] = f"  items: {{type: array, value: $steps.{last}.output.items}}"
    out.extend(["```", ""])
    return "\n".join(out)


# ------------------------------------------------------------------ measuring
def check(text: str, path: str) -> driver.CompileResult:
    return driver.compile_text(text, path)


def timed(fn, reps: int) -> list[float]:
    times = []
    for _ in range(reps):
        gc.collect()
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return times


def timed_without_gc(fn, reps: int) -> list[float]:
    gc.collect()
    gc.disable()
    try:
        return timed(fn, reps)
    finally:
        gc.enable()


def peak_mib(fn) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def phases(text: str, path: str) -> tuple[float, float, list, int]:
    """One check split in two: seconds in the front end and in analyze, the
    errors found and the number of IR nodes."""
    gc.collect()
    gc.disable()  # as driver.compile_text does
    try:
        t0 = time.perf_counter()
        workflow, diags = compile_workflowskill(text, path)
        t1 = time.perf_counter()
        findings = analyze(workflow) if workflow is not None else []
        t2 = time.perf_counter()
    finally:
        gc.enable()
    errors = [d for d in [*diags, *findings] if d.is_error]
    return t1 - t0, t2 - t1, errors, len(workflow.nodes) if workflow is not None else 0


def row(cells, widths) -> str:
    return "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", action="store_true", help="one row per corpus file")
    ap.add_argument("--profile", action="store_true", help="cProfile the 10k-step check")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args(argv)
    corpus_reps, gen_reps = (5, 2) if args.quick else (30, 3)

    # Corpus: every fixture and example, as `flowc check` reads them.
    files = sorted(CORPUS.glob("*/*.md"))
    per_file = {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        check(text, str(path))  # warm-up: parser tables, caches
        per_file[path] = statistics.median(timed(functools.partial(check, text, str(path)), corpus_reps))
    corpus_peak = max(peak_mib(functools.partial(check, p.read_text(encoding="utf-8"), str(p))) for p in files)

    widths = (26, 7, 5, 10, 10, 11, 10, 9, 9)
    print(row(("workload", "steps", "reps", "median ms", "max ms", "us/step", "peak MiB", "front %",
               "analyze %"), widths))
    meds = sorted(per_file.values())
    print(row((f"corpus ({len(files)} files), per file", "-", corpus_reps,
               f"{statistics.median(meds) * 1e3:.2f}", f"{max(meds) * 1e3:.2f}", "-",
               f"{corpus_peak:.1f}", "-", "-"), widths))

    results = {}
    for n in (1_000, 10_000):
        text = generate(n)
        path = f"generated-{n}.md"
        run = functools.partial(check, text, path)
        # The first run splits the time into front end and analyze and
        # makes sure the workload checks clean.
        front, ana, errors, n_nodes = phases(text, path)
        if errors or n_nodes != n + 1:
            print(f"generated {n}: {len(errors)} errors, e.g. {errors[:3]}", file=sys.stderr)
            return 1
        reps = gen_reps if n < 10_000 else max(2, gen_reps - 1)
        times = timed(run, reps)
        no_gc = timed_without_gc(run, reps)
        peak = peak_mib(run)
        med = statistics.median(times)
        results[n] = (med, statistics.median(no_gc))
        print(row((f"generated {n:,} steps", n, len(times), f"{med * 1e3:.0f}", f"{max(times) * 1e3:.0f}",
                   f"{med / n * 1e6:.0f}", f"{peak:.1f}", f"{front / (front + ana) * 100:.0f}",
                   f"{ana / (front + ana) * 100:.0f}"), widths))
    ratio = results[10_000][0] / results[1_000][0]
    print(f"\n10k/1k time ratio: {ratio:.1f} (10 = linear)")
    # The cyclic garbage collector's full passes re-walk every live object
    # the front end has built; the same checks with it paused show its share.
    print(f"with the garbage collector paused: 1k {results[1_000][1] * 1e3:.0f} ms, "
          f"10k {results[10_000][1] * 1e3:.0f} ms, ratio {results[10_000][1] / results[1_000][1]:.1f}")

    if args.files:
        print()
        for path, med in per_file.items():
            print(f"  {path.relative_to(CORPUS)!s:48} {med * 1e3:8.2f} ms")

    if args.profile:
        text = generate(10_000)
        prof = cProfile.Profile()
        prof.enable()
        check(text, "generated-10000.md")
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(15)
        print("\n" + buf.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
