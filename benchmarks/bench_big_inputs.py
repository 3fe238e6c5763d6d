"""`flowc check` on hostile-sized inputs: wall time and peak memory.

Generates, in a temporary directory, files far beyond flowc's limits
(ir/limits.py) and just under them, runs ``python -m flowc check`` on each
in a fresh process and prints its wall time, peak RSS, exit status and the
first finding. Every row must finish in seconds with a clear answer (a
limit's finding or a result), whatever the size::

    python benchmarks/bench_big_inputs.py            # every row
    python benchmarks/bench_big_inputs.py --only aevatar-100k

The generators are imported by tests/test_limits_linear.py.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def workflowskill(n: int) -> str:
    """A WorkflowSkill file of ``n`` chained tool steps."""
    out = ["inputs:", "  q: {type: string, default: x}", "outputs:", "  r: {type: string}", "steps:"]
    prev = "$inputs.q"
    for i in range(n):
        out += [f"  - id: s{i}", "    type: tool", "    tool: t", "    inputs:",
                f"      q: {{type: string, value: {prev}}}", "    outputs:", "      text: {type: string}"]
        prev = f"$steps.s{i}.output.text"
    out[out.index("  r: {type: string}")] = f"  r: {{type: string, value: {prev}}}"
    return "\n".join(out) + "\n"


def aevatar(n: int) -> str:
    """An aevatar workflow of ``n`` llm_call steps, one after the other."""
    out = ["name: big", "roles:", "  - id: writer", "    system_prompt: You write.", "steps:"]
    for i in range(n):
        out += [f"  - id: s{i}", "    type: llm_call", "    target_role: writer", "    parameters:",
                f'      prompt_prefix: "Step {i}:"']
        if i + 1 < n:
            out.append(f"    next: s{i + 1}")
    return "\n".join(out) + "\n"


def instruction(n: int) -> str:
    """An instruction (dialect 3) workflow: a trigger and a chain of ``n - 1`` tool steps."""
    out = ["name: big", "steps:", "  start: { kind: manual }"]
    prev = "start"
    for i in range(1, n):
        out.append(f"  s{i}: {{ kind: tool, depends_on: {prev}, name: t, args: {{ x: \"{{{{ steps.{prev}.output }}}}\" }} }}")
        prev = f"s{i}"
    return "\n".join(out) + "\n"


def instruction_nested(n: int) -> str:
    """An instruction workflow whose steps are nested in ``parallel``
    branches (few top-level steps, ``n`` in all)."""
    per = 400
    out = ["name: big", "steps:", "  start: { kind: manual }", "  fan:", "    kind: parallel",
           "    depends_on: start", "    branches:"]
    made = 0
    b = 0
    while made < n:
        out += [f"      b{b}:", "        steps:"]
        for i in range(min(per, n - made)):
            out.append(f"          s{b}_{i}: {{ kind: tool, name: t }}")
        made += min(per, n - made)
        b += 1
    return "\n".join(out) + "\n"


def compact(dialect: str, n: int) -> str:
    """``n`` steps of ``dialect`` written tersely (a short line or three
    each), so that far more than MAX_STEPS steps fit under MAX_SOURCE_BYTES."""
    if dialect == "workflowskill":
        head = "inputs:\n  q: {type: string}\noutputs:\n  r: {type: string}\nsteps:\n"
        return head + "".join(f"- id: s{i}\n  type: tool\n  tool: t\n" for i in range(n))
    if dialect == "aevatar":
        head = "name: big\nroles:\n  - id: w\nsteps:\n"
        return head + "".join(f"- {{id: s{i}, type: assign}}\n" for i in range(n))
    head = "name: big\nsteps:\n  start: { kind: manual }\n"
    return head + "".join(f"  s{i}: {{kind: tool, name: t}}\n" for i in range(n))


def comments(lines: int) -> str:
    """A WorkflowSkill file preceded by ``lines`` one-character comment lines."""
    return "#\n" * lines + workflowskill(2)


def block_scalar(lines: int) -> str:
    """An aevatar file whose description is a ``lines``-line block scalar."""
    return "description: |\n" + " x\n" * lines + aevatar(2)


def long_list(lines: int) -> str:
    """An aevatar file whose `roles` list has ``lines`` one-line items (each
    a string where a role mapping belongs: one finding per line)."""
    return "name: big\nroles:\n" + "- r\n" * lines + "steps:\n  - id: s\n    type: assign\n"


def blank_lines(n: int) -> str:
    return "\n" * n


def alias_bomb(target_nodes: int) -> str:
    """A small WorkflowSkill file whose input default expands, through
    aliases, to about ``target_nodes`` YAML nodes (under or over the cap)."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    size, level = 11, 0
    while size * 10 < target_nodes:
        level += 1
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]")
        size = size * 10 + 1
    reps = max(1, target_nodes // size - 1)
    bomb = "{" + ", ".join(lines).replace(": &", ": &") + ", top: [" + ", ".join([f"*a{level}"] * reps) + "]}"
    return ("inputs:\n  q: {type: string}\n  xs:\n    type: object\n    default: " + bomb + "\n"
            "outputs:\n  r: {type: string}\nsteps:\n"
            "  - id: s\n    type: tool\n    tool: t\n    outputs:\n      text: {type: string}\n")


def aevatar_bytes(size: int) -> str:
    """An aevatar workflow of about ``size`` bytes."""
    return aevatar(max(1, size // 110))


CASES: dict[str, tuple[str, Callable[[], str]]] = {
    "workflowskill-100k": ("big.yaml", lambda: workflowskill(100_000)),
    "workflowskill-100k-compact": ("big.yaml", lambda: compact("workflowskill", 100_000)),
    "workflowskill-10k": ("big.yaml", lambda: workflowskill(10_000)),
    "aevatar-100k": ("big.yaml", lambda: aevatar(100_000)),
    "aevatar-100k-compact": ("big.yaml", lambda: compact("aevatar", 100_000)),
    "aevatar-10k": ("big.yaml", lambda: aevatar(10_000)),
    "instruction-100k": ("big.yaml", lambda: instruction(100_000)),
    "instruction-100k-compact": ("big.yaml", lambda: compact("instruction", 100_000)),
    "instruction-512": ("big.yaml", lambda: instruction(512)),
    "instruction-10.5k-nested": ("big.yaml", lambda: instruction_nested(10_500)),
    "yaml-1M-comment-lines": ("big.yaml", lambda: comments(1_000_000)),
    "yaml-1M-line-block-scalar": ("big.yaml", lambda: block_scalar(1_000_000)),
    "yaml-1M-line-list": ("big.yaml", lambda: long_list(1_000_000)),
    "yaml-alias-just-under-cap": ("big.yaml", lambda: alias_bomb(900_000)),
    "yaml-alias-over-cap": ("big.yaml", lambda: alias_bomb(50_000_000)),
    "blank-lines-1MB": ("big.yaml", lambda: blank_lines(1_000_000)),
    "aevatar-10MB": ("big.yaml", lambda: aevatar_bytes(10_000_000)),
}


# Runs `flowc check` in this process and reports its own peak RSS at exit.
_PROBE = ("import atexit, resource, runpy, sys\n"
          "atexit.register(lambda: print('PEAK_KIB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
          " file=sys.stderr))\n"
          "sys.argv = ['flowc', 'check', sys.argv[1]]\n"
          "runpy.run_module('flowc', run_name='__main__')\n")


def run_check(path: Path, timeout: float = 120.0) -> tuple[float, float, int, str]:
    """(wall seconds, peak RSS MiB, exit status, first output line) of
    ``flowc check path`` in a fresh process."""
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(ROOT.parent))
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(path)], capture_output=True,
                          text=True, timeout=timeout, env=env, check=False)
    wall = time.perf_counter() - started
    peak = 0.0
    other = []
    for line in proc.stderr.splitlines():
        if line.startswith("PEAK_KIB "):
            peak = int(line.split()[1]) / 1024
        else:
            other.append(line)
    first = (proc.stdout.strip().splitlines() or [o for o in other if o.strip()] or [""])[0]
    return wall, peak, proc.returncode, first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="run only this case (repeatable)")
    args = parser.parse_args(argv)
    names = args.only or list(CASES)
    print(f"{'case':28} {'MB':>6} {'wall s':>7} {'peak MiB':>9} {'exit':>4}  first finding")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            filename, make = CASES[name]
            path = Path(tmp) / name / filename
            path.parent.mkdir()
            path.write_text(make(), encoding="utf-8")
            size = path.stat().st_size / 1e6
            wall, peak, code, first = run_check(path)
            shown = first.replace(str(path), "FILE")[:90]
            print(f"{name:28} {size:6.1f} {wall:7.2f} {peak:9.0f} {code:4}  {shown}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
