"""How long `flowc translate` takes: YAML -> IR -> YAML.

    python benchmarks/bench_translate.py           # the tables (about half a minute)
    python benchmarks/bench_translate.py --quick   # fewer repetitions, for a smoke run

Two tables:

- **20-step workflow, per translation**: for each source dialect, a 20-step
  workflow (bench_check's generated WorkflowSkill workflow, and the aevatar
  and dialect-3 workflows generated below), translated to each target. "read" is the front end and analyze
  (flowc.pipeline.driver.compile_text on text in memory), "write" is the emitter
  (lowering and printing), "total" both; wall-clock medians in
  milliseconds.
- **whole corpus**: every corpus workflow (tests/data) of every dialect
  translated to each target, once per repetition; the median total time and
  the time per workflow.
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import sys
import time
from pathlib import Path

from flowc.pipeline import driver, translate

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_check import generate

DIALECTS = ("workflowskill", "aevatar", "instruction")
SUFFIX = {"workflowskill": ".md", "aevatar": ".yaml", "instruction": ".yaml"}


def aevatar_20() -> str:
    """A 20-step aevatar workflow: llm calls, tool calls, assigns, transforms and a delay."""
    lines = ["name: generated_20", "description: A generated workflow of 20 steps.", "roles:",
             "  - id: writer", "    system_prompt: You write.", "steps:"]
    for i in range(20):
        kind = ("llm_call", "tool_call", "assign", "transform", "llm_call")[i % 5] if i != 10 else "delay"
        lines += [f"  - id: s{i}", f"    type: {kind}"]
        if kind == "llm_call":
            lines += ["    target_role: writer", "    parameters:", f'      prompt_prefix: "Step {i}: ${{input}}"']
        elif kind == "tool_call":
            lines += ["    parameters:", f"      tool: svc.call_{i % 3}",
                      f"      arguments: '{{\"n\": {i}, \"q\": \"x\"}}'"]
        elif kind == "assign":
            lines += ["    parameters:", f"      target: v{i}", f'      value: "${{concat(s{i - 1}, \'-\', input)}}"']
        elif kind == "transform":
            lines += ["    parameters:", "      op: trim"]
        else:
            lines += ["    parameters:", '      duration_ms: "100"']
    return "\n".join(lines) + "\n"


def instruction_20() -> str:
    """A 20-step dialect-3 workflow: a trigger, tool and agent calls, filters,
    maps, templates, a switch with two arms and a finish."""
    lines = ["name: generated_20", "inputs:", "  schema:", "    type: object", "    properties:",
             "      limit: {type: integer, default: 3}", "steps:", "  s00: {kind: manual}"]
    prev = "s00"
    for i in range(1, 19):
        sid = f"s{i:02d}"
        kind = ("tool", "filter", "map", "template", "agent", "tool")[i % 6]
        lines.append(f"  {sid}:")
        lines.append(f"    kind: {kind}")
        lines.append(f"    depends_on: [{prev}]")
        if kind == "tool":
            lines += [f"    name: svc.call_{i % 3}", "    args: {n: '{{ inputs.limit }}', label: step}"]
        elif kind == "filter":
            lines += [f"    over: '{{{{ steps.{prev}.output.rows }}}}'", "    expr: item.score > inputs.limit"]
        elif kind == "map":
            lines += [f"    over: '{{{{ steps.{prev}.output }}}}'", '    expr: \'{"name": item.name, "at": index}\'']
        elif kind == "template":
            lines += [f"    text: 'step {i}: {{{{ steps.{prev}.output }}}}'"]
        else:
            lines += [f"    instruction: 'Summarise {{{{ steps.{prev}.output }}}}'"]
        prev = sid
    lines += ["  s19:", "    kind: finish", f"    depends_on: [{prev}]",
              f"    output: {{result: '{{{{ steps.{prev}.output }}}}'}}"]
    return "\n".join(lines) + "\n"


def sources_of_20_steps() -> dict[str, str]:
    out = {"workflowskill": generate(20), "aevatar": aevatar_20(), "instruction": instruction_20()}
    for dialect, text in out.items():
        compiled = driver.compile_text(text, "generated" + SUFFIX[dialect], dialect)
        assert compiled.ok, (dialect, [d for d in compiled.diagnostics if d.is_error])
    return out


def median_ms(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        gc.collect()
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def per_translation(reps: int) -> list[str]:
    rows = ["| source | steps | target | read ms | write ms | total ms |", "|---|---|---|---|---|---|"]
    for source, text in sources_of_20_steps().items():
        path = "generated" + SUFFIX[source]
        wf = driver.compile_text(text, path, source).workflow
        steps = sum(1 for n in wf.nodes if n.op != "end")
        read = median_ms(functools.partial(driver.compile_text, text, path, source), reps)
        for target in DIALECTS:
            write = median_ms(functools.partial(translate.emit, wf, target), reps)
            total = median_ms(functools.partial(_read_and_write, text, path, source, target), reps)
            rows.append(f"| {source} | {steps} | {target} | {read:.2f} | {write:.2f} | {total:.2f} |")
    return rows


def _read_and_write(text: str, path: str, source: str, target: str) -> None:
    translate.emit(driver.compile_text(text, path, source).workflow, target)


def corpus() -> list[tuple[str, str, str]]:
    files = [("workflowskill", p) for p in sorted((DATA / "workflowskill").rglob("*.md"))]
    files += [("aevatar", p) for p in sorted((DATA / "aevatar").rglob("*.yaml")) if "negative" not in p.parts]
    files += [("instruction", p) for p in sorted((DATA / "instruction").iterdir()) if p.suffix in (".yaml", ".md")]
    out = []
    for dialect, path in files:
        text = path.read_text(encoding="utf-8")
        if driver.compile_text(text, str(path), dialect).ok:
            out.append((dialect, str(path), text))
    return out


def _translate_all(items, target: str) -> None:
    for dialect, path, text in items:
        translate.translate_text(text, path, target, dialect=dialect)


def whole_corpus(reps: int) -> list[str]:
    items = corpus()
    rows = ["| target | workflows | median s | ms per workflow |", "|---|---|---|---|"]
    for target in DIALECTS:
        seconds = median_ms(functools.partial(_translate_all, items, target), reps) / 1000
        rows.append(f"| {target} | {len(items)} | {seconds:.2f} | {seconds * 1000 / len(items):.2f} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    reps = 5 if args.quick else 30
    print("20-step workflow, per translation (YAML -> IR -> YAML)\n")
    print("\n".join(per_translation(reps)))
    print("\nwhole corpus, every workflow to each target\n")
    print("\n".join(whole_corpus(2 if args.quick else 5)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
