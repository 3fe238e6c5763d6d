"""How long flowc takes on the aevatar corpus: check and compile, per file.

    python benchmarks/bench_aevatar.py            # the table
    python benchmarks/bench_aevatar.py --files    # plus the ten slowest files
    python benchmarks/bench_aevatar.py --quick    # fewer repetitions, for a smoke run

- **check** is what `flowc check` does per file: the aevatar front end (YAML,
  the engine's parser and validator rules, lowering to the IR, the engine-rule
  checks) and analyze, through flowc.pipeline.driver.compile_text on text in memory.
- **compile** is what `flowc compile` does: check, then the Python module
  (backends/python/plan_codegen.py) for every workflow without errors.
- **IR** is check plus the IR in its serialised form (flowc.ir.serialize,
  then JSON), the artefact translators and other backends start from.
- **expressions** is one lowering + Python compilation + evaluation of each
  of the evaluator's test vectors.

Each file is run REPS times; a file's time is the median of its runs, and the
rows give the median, 90th percentile, maximum and sum of those per-file
medians over the 177 workflows of tests/data/aevatar (MANIFEST.tsv).
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import statistics
import sys
import time
from pathlib import Path

from flowc.backends.python import compile_workflow
from flowc.ir.serialize import to_data
from flowc.pipeline import driver

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "aevatar"


def corpus() -> list[tuple[str, str]]:
    out = []
    with open(DATA / "MANIFEST.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            folder = "aevatarAI__aevatar__index-only" if row["variant"] == "index-only" else "aevatarAI__aevatar"
            path = DATA / folder / row["path"]
            out.append((str(path), path.read_text(encoding="utf-8-sig")))
    return out


def check(path: str, text: str):
    return driver.compile_text(text, path)


def compile_module(path: str, text: str):
    result = driver.compile_text(text, path)
    if result.ok:
        compile_workflow(result.workflow)
    return result


def compile_ir(path: str, text: str):
    result = driver.compile_text(text, path)
    if result.workflow is not None:
        json.dumps(to_data(result.workflow), sort_keys=True)
    return result


def per_file(fn, files, reps: int) -> list[tuple[float, str]]:
    times = []
    for path, text in files:
        runs = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn(path, text)
            runs.append(time.perf_counter() - t0)
        times.append((statistics.median(runs), path))
    return times


def row(name: str, times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    p90 = ms[int(0.9 * (len(ms) - 1))]
    return (f"| {name} | {len(ms)} | {statistics.median(ms):.2f} | {p90:.2f} | {ms[-1]:.2f} | "
            f"{sum(ms):.1f} |")


def expressions(reps: int) -> list[float]:
    from flowc.backends.python import aevatar_expr
    from flowc.compiler.aevatar.expressions import Locator, Lowering
    from flowc.ir.span import Span
    from flowc.runtime import aevatar_text

    vectors = [v for v in json.loads((DATA / "expressions" / "aevatar.json").read_text())["vectors"]
               if v["template"] is not None]
    times = []
    for v in vectors:
        runs = []
        for _ in range(reps):
            t0 = time.perf_counter()
            low = Lowering(None, Locator(Span("v", 1, 1, 1, 2)))
            expr = low.template(v["template"]) if v["entry"] == "Evaluate" else low.expression(v["template"])
            try:
                aevatar_expr.evaluate(expr, v["variables"], v.get("variables_comparer") == "OrdinalIgnoreCase")
            except aevatar_text.AevatarError:
                pass
            runs.append(time.perf_counter() - t0)
        times.append(statistics.median(runs))
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repetitions instead of 21")
    parser.add_argument("--files", action="store_true", help="list the ten slowest files")
    args = parser.parse_args(argv)
    reps = 3 if args.quick else 21
    files = corpus()
    for path, text in files:  # warm up: grammar tables, imports; and the corpus must compile
        result = check(path, text)
        assert result.workflow is not None, path
    t0 = time.perf_counter()
    checked = per_file(check, files, reps)
    compiled = per_file(compile_module, files, reps)
    ir = per_file(compile_ir, files, reps)
    expr_times = expressions(reps)
    wall = time.perf_counter() - t0
    print(f"flowc aevatar benchmark: {len(files)} workflows, {reps} runs each, Python "
          f"{platform.python_version()} on {platform.machine()} ({wall:.1f} s)\n")
    print("| what | files | median ms | p90 ms | max ms | sum of medians ms |")
    print("|---|---|---|---|---|---|")
    print(row("check (front end + analyze)", [t for t, _ in checked]))
    print(row("compile (check + Python module)", [t for t, _ in compiled]))
    print(row("IR (check + IR as JSON)", [t for t, _ in ir]))
    print(row("expression vector (lower + compile + eval)", expr_times).replace(f"| {len(expr_times)} |",
                                                                                 f"| {len(expr_times)} vectors |"))
    if args.files:
        print("\nslowest files (check, median ms):")
        for t, path in sorted(checked, reverse=True)[:10]:
            print(f"  {t * 1000:8.2f}  {Path(path).relative_to(DATA)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
