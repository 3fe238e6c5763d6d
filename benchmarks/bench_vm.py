"""Benchmarks of the bytecode backend and the VM.

    python benchmarks/bench_vm.py [--records N] [--repeat K] [--steps S]

1. The transform-heavy workflow of bench_python_backend.py (100,000 records,
   12 steps: four filters, two maps, two sorts, a guarded exit ...) run on
   the VM and as the generated Python module, side by side in one process
   with the same host (records handed out without copying). Reported: the
   median of K runs each and the ratio; the same for the triage workflow
   of bench_python_backend.py (filters on a number and on `contains` an
   array `||` a nested field, a sort, a map). Target: VM / module <= 2.
2. Size over the corpus (tests/data/workflowskill, examples/): the source
   bytes, the msgpack'd IR (ir/serialize.py to_data) and the bytecode with
   the source map stripped. Target: bytecode <= 40% of the source bytes.
3. Load + verify throughput on a large generated workflow (S steps of tool
   calls, guards, each loops, transforms and conditionals). Target: at
   least 20 MB/s.
"""

from __future__ import annotations

import argparse
import os
import sys

import msgpack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_python_backend import TRIAGE, WORKFLOW, make_records, table, timed
from flowc.backends.python import compile_workflow as python_compile
from flowc.backends.python import load_module
from flowc.backends.vm import compile_workflow, load
from flowc.host import ScriptedHost
from flowc.ir.serialize import to_data
from flowc.pipeline import driver

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bench_transforms(n: int, repeat: int, text: str = WORKFLOW) -> list[tuple[str, str]]:
    result = driver.compile_text(text, "leaderboard.md")
    assert result.ok, [d.message for d in result.diagnostics]
    module = load_module(python_compile(result.workflow))
    program = load(compile_workflow(result.workflow, strip=True))
    script = {"records.list": {"output": {"records": make_records(n)}}, "report.post": {"output": {"ok": True}}}

    def on_vm():
        return program.run({}, ScriptedHost(script, copy_outputs=False))

    def as_module():
        return module.run({}, ScriptedHost(script, copy_outputs=False))

    on_vm()  # warm up both
    as_module()
    t_vm, a = timed(on_vm, repeat)
    t_mod, b = timed(as_module, repeat)
    assert a == b, "the VM and the generated module disagree"
    assert a["status"] == "success", a["error"]
    return [
        ("VM", f"{t_vm * 1000:9.1f} ms"),
        ("generated module", f"{t_mod * 1000:9.1f} ms"),
        ("ratio (VM / generated module)", f"{t_vm / t_mod:9.2f} x   (target <= 2)"),
    ]


def corpus_files() -> list[str]:
    paths = driver.expand_paths([os.path.join(ROOT, "tests", "data", "workflowskill"),
                                 os.path.join(ROOT, "examples")])
    return [p for p in paths if driver.compile_file(p).ok]


def bench_size() -> tuple[int, list[tuple[str, str]]]:
    files = corpus_files()
    source = ir = code = full = 0
    for path in files:
        with open(path, "rb") as fh:
            source += len(fh.read())
        wf = driver.compile_file(path).workflow
        ir += len(msgpack.packb(to_data(wf), use_bin_type=True))
        code += len(compile_workflow(wf, strip=True))
        full += len(compile_workflow(wf))
    return len(files), [
        ("source", f"{source:9,d} bytes"),
        ("msgpack'd IR", f"{ir:9,d} bytes   ({ir / source:6.1%} of source)"),
        ("bytecode, with source map", f"{full:9,d} bytes   ({full / source:6.1%} of source)"),
        ("bytecode, stripped", (f"{code:9,d} bytes   ({code / source:6.1%} of source; "
                               f"{code / ir:6.1%} of the IR; target <= 40% of source)")),
    ]


def big_workflow(steps: int) -> str:
    """A large valid workflow: tool calls with templates and retries, guarded
    steps, each loops, filters/maps/sorts and conditionals with branches."""
    lines = ["inputs:", "  region: {type: string, default: eu}", "  limit: {type: int, default: 10}",
             "  items: {type: array, default: [1, 2, 3]}",
             "outputs:", "  last: {type: object, value: $steps.s0.output}", "steps:"]
    i = 0
    while i < steps:
        k = i % 5
        prior = [f"      prior: {{type: object, value: $steps.s{i - 1}.output}}"] if i else []
        if k == 0:
            lines += [f"  - id: s{i}", "    type: tool", f"    tool: crm.lookup_{i % 17}",
                      "    retry: {max: 2, delay: 100ms, backoff: 2}",
                      "    inputs:",
                      "      query: {type: string, value: \"region ${inputs.region} item "
                      + str(i) + " of ${inputs.limit}\"}",
                      *prior,
                      "      mode: {type: string, value: detailed}",
                      "    outputs:",
                      "      rows: {type: array, value: $result.rows}",
                      "      total: {type: int, value: $result.total}"]
        elif k == 1:
            lines += [f"  - id: s{i}", "    type: transform", "    operation: filter",
                      "    where: $item.score >= $inputs.limit && $item.region == $inputs.region",
                      "    inputs:", f"      items: {{type: array, value: $steps.s{i - 1}.output.rows}}",
                      "    outputs:", "      rows: {type: array}"]
        elif k == 2:
            lines += [f"  - id: s{i}", "    type: transform", "    operation: map",
                      "    expression:", "      id: $item.id", "      label: $item.name",
                      "      where: {city: $item.address.city, zip: $item.address.zip}",
                      "    inputs:", f"      items: {{type: array, value: $steps.s{i - 1}.output.rows}}",
                      "    outputs:", "      rows: {type: array}"]
        elif k == 3:
            lines += [f"  - id: s{i}", "    type: tool", f"    tool: notify_{i % 7}",
                      f"    condition: $steps.s{i - 1}.output.rows.length > 0",
                      f"    each: $steps.s{i - 1}.output.rows",
                      "    delay: 50ms", "    on_error: ignore",
                      "    inputs:", "      to: {type: string, value: \"${item.label}@example.com\"}",
                      "      body: {type: string, value: \"Hello ${item.label}, row ${index}\"}",
                      "    outputs:", "      rows: {type: array, value: $result.rows}"]
        else:
            lines += [f"  - id: s{i}", "    type: conditional",
                      f"    condition: $steps.s{i - 2}.output.rows.length == 0",
                      f"    then: [s{i + 1}]", f"    else: [s{i + 2}]",
                      f"  - id: s{i + 1}", "    type: tool", "    tool: alert", "    inputs:",
                      "      text: {type: string, value: \"nothing for ${inputs.region}\"}",
                      f"  - id: s{i + 2}", "    type: transform", "    operation: sort",
                      "    field: address.city", "    direction: desc",
                      "    inputs:", f"      items: {{type: array, value: $steps.s{i - 2}.output.rows}}",
                      "    outputs:", "      rows: {type: array}"]
            i += 2
        i += 1
    return "\n".join(lines) + "\n"


def bench_load(steps: int, repeat: int) -> list[tuple[str, str]]:
    text = big_workflow(steps)
    result = driver.compile_text(text, "big.yaml", "workflowskill")
    errors = [d.message for d in result.diagnostics if d.is_error]
    assert result.ok, errors[:5]
    rows = []
    for strip in (True, False):
        data = compile_workflow(result.workflow, strip=strip)
        load(data)  # warm up
        t, program = timed(lambda data=data: load(data), repeat)
        rows.append((f"load + verify ({'stripped' if strip else 'with source map'})",
                     (f"{len(data) / 1e6:6.2f} MB in {t * 1000:7.1f} ms = {len(data) / 1e6 / t:6.1f} MB/s"
                     f"   ({len(program.plan['nodes']):,d} step rows, {len(program.machine.code):,d} blocks; "
                     "target >= 20 MB/s)")))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5000)
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]} on {sys.platform}\n")
    rows = bench_transforms(args.records, args.repeat)
    print(table(f"Transform-heavy workflow, {args.records:,} records, 12 steps (median of {args.repeat})", rows))
    print()
    rows = bench_transforms(args.records, args.repeat, TRIAGE)
    print(table(f"Triage workflow, {args.records:,} records (median of {args.repeat})", rows))
    print()
    count, rows = bench_size()
    print(table(f"Size over the corpus ({count} workflows)", rows))
    print()
    print(table(f"Load + verify, generated workflow of {args.steps:,} steps (median of {args.repeat})",
                bench_load(args.steps, args.repeat)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
