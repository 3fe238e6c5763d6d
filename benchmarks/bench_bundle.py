"""The embeddable VM: its bundle, the heap it needs, the kernel's cost per step.

    python benchmarks/bench_bundle.py [--micropython PATH] [--mpy-cross PATH] [--frozen PATH] [--steps N]

1. Size: ``flowc bundle``'s one file against the raw source
   of the modules it came from, module by module (goal: <= 64 KB); each
   dialect's bundle, without and with the bundler's short names, and
   precompiled (``--mpy-cross``); the small bundles (``--small``: without
   the compiled filter/map loops) of every dialect and of WorkflowSkill.
2. MicroPython heap, on the corpus sample of tests/test_bundle.py (a
   handful of workflows of each dialect):
   - the WebAssembly port (tests/micropython, node): the heap the loaded
     bundle keeps (after a collection) and what the whole sample allocates
     in one call (this port collects only between top-level calls, so that
     is an upper bound, not a minimum);
   - with ``--micropython PATH`` (a unix-port binary, e.g. built from
     MicroPython's ports/unix, ideally with MICROPY_FORCE_32BIT=1 for a
     microcontroller's object sizes): by bisection, the smallest
     ``-X heapsize`` that imports the bundle and the smallest that runs the
     sample and prints the records CPython gives, for the bundle of every
     dialect and for each dialect's own (and the small bundles); with ``--mpy-cross PATH`` also for
     the bundle precompiled to .mpy (no parsing on the device);
   - with ``--frozen PATH``: the same for a unix-port binary with the
     every-dialect bundle frozen into it, as firmware for a device embeds
     it (a manifest line ``module("flowc_vm.py")``): its bytecode and
     constants then live in the firmware image, not in the heap. The
     benchmark first checks that the binary's frozen module has the
     current bundle's top-level names.
3. Kernel overhead per step: a generated chain of N trivial steps per
   dialect (WorkflowSkill tool calls answered by a host that returns {},
   aevatar `assign` steps, instruction `assign` steps: that dialect allows
   512 top-level steps, so it gets min(N, 500)), run as the generated
   Python module and on the VM, one run each after a warm-up, against a
   hand-written loop doing the same work (the call or the assignment, and a
   step record). CPU time of the fastest of 7 runs after a warm-up (the
   machine is shared). The same at N/4 steps
   shows whether the cost of a step grows with the workflow's length.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgpack

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))
sys.path.insert(0, str(ROOT))

from flowc.backends.python import compile_workflow as python_compile
from flowc.backends.python import load_module
from flowc.backends.vm import compile_workflow, load
from flowc.backends.vm.bundle import build_bundle, models_of, write_bundle
from flowc.pipeline import driver

MP_DIR = ROOT / "tests" / "micropython"
# (dialect or None for every dialect, small): the bundles measured
BUNDLES = ((None, False), ("workflowskill", False), ("aevatar", False), ("instruction", False), (None, True),
           ("workflowskill", True))
# What each module of the every-dialect bundle is for: the floor a one-file
# VM of every dialect cannot go under is the dialects' value rules (what a
# record's values are made of), whatever runs them.
PARTS = (
    ("the dialects' value rules", ("runtime.cel", "runtime.nfa", "runtime.aevatar_text", "runtime.wfs",
                                   "runtime.json_text", "backends.vm.expr_cel", "backends.vm.expr_aevatar",
                                   "backends.vm.expr_wfs")),
    ("loader, verifier, expression machine", ("backends.vm.errors", "backends.vm.container", "backends.vm.expr_vm",
                                              "backends.vm.device")),
    ("kernel, drivers, fuel, plan edges", ("runtime.kernel", "runtime.drivers", "runtime.fuel", "runtime.edges")),
    ("schedulers and plan loaders", ("runtime.routing_run", "runtime.dataflow_run", "runtime.sequence_run",
                                     "backends.vm.plan_vm", "backends.vm.plan_steps", "backends.vm.plan_loops")),
)


def _label(dialect: str | None, small: bool) -> str:
    return (dialect or "all dialects") + (" small" if small else "")


# ------------------------------------------------------------------ size


def bench_size(out_dir: Path, mpy_cross: str | None = None) -> tuple[Path, list[str]]:
    path, bundle = write_bundle(out_dir)
    lines = [(f"bundle {bundle.size:,} bytes from {len(bundle.modules)} modules of {bundle.source_bytes:,} bytes "
              f"of source ({100 * bundle.size / bundle.source_bytes:.0f}%); goal <= 64 KB"),
             "  module                                   source    bundled"]
    for name, raw, bundled in sorted(bundle.parts, key=lambda p: -p[2]):
        lines.append(f"  {name.removeprefix('flowc.'):<38} {raw:>9,} {bundled:>10,}")
    lines.extend(_by_part(bundle.parts))
    lines.append("  bundle                  modules  dropped defs  unminified    minified" +
                 ("   .mpy" if mpy_cross else ""))
    for dialect, without_extras in BUNDLES:
        models = models_of(dialect) if dialect else None
        small = build_bundle(None, models, small=without_extras)
        plain = build_bundle(None, models, minify=False, small=without_extras)
        row = (f"  {_label(dialect, without_extras):<23} {len(small.modules):>7} "
               f"{sum(map(len, small.dropped.values())):>13} {plain.size:>11,} {small.size:>11,}")
        if mpy_cross:
            where = Path(tempfile.mkdtemp())
            (where / "flowc_vm.py").write_text(small.text, encoding="utf-8")
            subprocess.run([mpy_cross, "-o", str(where / "flowc_vm.mpy"), str(where / "flowc_vm.py")], check=True)
            row += f" {(where / 'flowc_vm.mpy').stat().st_size:>8,}"
        lines.append(row)
    return path, lines


def _by_part(parts: list[tuple[str, int, int]]) -> list[str]:
    """The every-dialect bundle's bytes by what the code is for (PARTS)."""
    size = {name.removeprefix("flowc."): bundled for name, _, bundled in parts}
    lines = ["  what it is for                                       bundled"]
    for label, names in PARTS:
        lines.append(f"  {label:<50} {sum(size.pop(n, 0) for n in names):>9,}")
    if size:
        lines.append(f"  {'other (' + ', '.join(sorted(size)) + ')':<50} {sum(size.values()):>9,}")
    return lines


# ------------------------------------------------------------------ heap


def _sample() -> tuple[Path, list[list], list[dict]]:
    from tests.test_bundle import expected, sample_jobs

    jobs = sample_jobs()
    jobs_file = Path(tempfile.mkdtemp()) / "jobs.bin"
    jobs_file.write_bytes(msgpack.packb(jobs, use_bin_type=True))
    return jobs_file, jobs, [expected(j) for j in jobs]


def _records_ok(stdout: str, want: list[dict]) -> bool:
    lines = [json.loads(x) for x in stdout.split("\n") if x.strip().startswith("{")]
    got = [x for x in lines if "name" in x]
    return got == want


def bench_wasm_heap(bundle: Path, jobs_file: Path, want: list[dict]) -> list[str]:
    node = shutil.which("node")
    if node is None or not (MP_DIR / "node_modules").is_dir():
        return ["WebAssembly port: not installed (npm ci in tests/micropython)"]
    proc = subprocess.run([node, str(MP_DIR / "run_bundle.mjs"), str(256 * 1024), str(bundle),
                           str(MP_DIR / "mp_bundle.py"), str(jobs_file), str(MP_DIR / "mp_host.py")],
                          capture_output=True, text=True, timeout=600, check=False, cwd=MP_DIR)
    if proc.returncode != 0:
        return ["WebAssembly port: failed: " + proc.stderr[-300:]]
    heap = json.loads(proc.stdout.strip().split("\n")[-1])["heap"]
    ok = "same records as CPython" if _records_ok(proc.stdout, want) else "RECORDS DIFFER"
    return [(f"WebAssembly port (32-bit), heapsize 256 KiB: bundle resident after import {heap['resident']:,} B; "
             f"whole sample in one call (no collection inside a call) {heap['final']:,} B of heap; {ok}")]


def _unix_run(binary: str, heap_kib: int, workdir: Path, jobs_file: Path | None) -> subprocess.CompletedProcess:
    code = f"import sys\nsys.path.insert(0, {str(workdir)!r})\n"
    code += "import flowc_vm\n" if jobs_file is None else f"import mp_bundle\nmp_bundle.main({str(jobs_file)!r})\n"
    return subprocess.run([binary, "-X", f"heapsize={heap_kib}K", "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)


def _smallest(fits, low: int = 16, high: int = 4096) -> int | None:
    """The smallest heap in KiB (to 4 KiB) for which ``fits`` holds."""
    if not fits(high):
        return None
    while high - low > 4:
        mid = (low + high) // 2
        low, high = (low, mid) if fits(mid) else (mid, high)
    return high


def bench_unix_heap(binary: str, mpy_cross: str | None, jobs: list[list], want: list[dict]) -> list[str]:
    bits = subprocess.run([binary, "-c", "import sys; print(64 if sys.maxsize > 2**32 else 32)"], capture_output=True,
                          text=True, check=True).stdout.strip()
    lines = [(f"unix port ({bits}-bit), smallest -X heapsize in KiB: to import the bundle / to run its sample "
              "with CPython's records"),
             "  bundle                jobs   source .py   precompiled .mpy"]
    for dialect, small in BUNDLES:
        picked = [i for i, j in enumerate(jobs) if dialect is None or j[0].startswith(dialect)]
        workdir = Path(tempfile.mkdtemp())
        jobs_file = workdir / "jobs.bin"
        jobs_file.write_bytes(msgpack.packb([jobs[i] for i in picked], use_bin_type=True))
        wanted = [want[i] for i in picked]
        write_bundle(workdir, dialect, small=small)
        for f in (MP_DIR / "mp_bundle.py", MP_DIR / "mp_host.py"):
            shutil.copy(f, workdir)
        cells = []
        for form in ("py", "mpy"):
            if form == "mpy":
                if not mpy_cross:
                    cells.append("(no --mpy-cross)")
                    continue
                subprocess.run([mpy_cross, "-o", str(workdir / "flowc_vm.mpy"), str(workdir / "flowc_vm.py")],
                               check=True)
                (workdir / "flowc_vm.py").unlink()

            def runs(kib: int, d=workdir, f=jobs_file, w=wanted) -> bool:
                proc = _unix_run(binary, kib, d, f)
                return proc.returncode == 0 and _records_ok(proc.stdout, w)

            imported = _smallest(lambda kib, d=workdir: _unix_run(binary, kib, d, None).returncode == 0)
            cells.append(f"{imported} / {_smallest(runs)}")
        lines.append(f"  {_label(dialect, small):<21} {len(picked):>4}   {cells[0]:<12} {cells[1]}")
    return lines


def _top_level_names(text: str) -> list[str]:
    """The names a module of ``text`` defines, as CPython runs it."""
    namespace: dict = {"__name__": "flowc_vm"}
    exec(compile(text, "flowc_vm.py", "exec"), namespace)  # noqa: S102 - flowc's own bundle
    return sorted(n for n in namespace if not n.startswith("__"))


def bench_frozen_heap(binary: str, jobs_file: Path, jobs: list[list], want: list[dict]) -> list[str]:
    """The smallest heaps of a binary with the every-dialect bundle frozen
    into it (no flowc_vm file beside the sample: the import finds the
    frozen module)."""
    probe = "import flowc_vm\nprint(sorted(n for n in dir(flowc_vm) if not n.startswith('__')))"
    frozen = subprocess.run([binary, "-c", probe], capture_output=True, text=True, check=False)
    current = _top_level_names(build_bundle().text)
    if frozen.returncode != 0 or frozen.stdout.strip() != str(current):
        return [f"frozen: {binary} does not hold the current bundle (rebuild it with `flowc bundle`'s file frozen)"]
    workdir = Path(tempfile.mkdtemp())
    for f in (MP_DIR / "mp_bundle.py", MP_DIR / "mp_host.py"):
        shutil.copy(f, workdir)

    def runs(kib: int) -> bool:
        proc = _unix_run(binary, kib, workdir, jobs_file)
        return proc.returncode == 0 and _records_ok(proc.stdout, want)

    imported = _smallest(lambda kib: _unix_run(binary, kib, workdir, None).returncode == 0)
    return [(f"the every-dialect bundle frozen into the binary, smallest -X heapsize in KiB: to import / to run "
             f"the {len(jobs)} jobs with CPython's records: {imported} / {_smallest(runs)}")]


# ------------------------------------------------------------------ kernel overhead


class NullHost:
    """Answers every call with {} at once."""

    def call(self, capability, name, args):
        return {}

    def sleep(self, ms):
        pass


def workflowskill_chain(n: int) -> str:
    steps = "".join(f"  - id: s{i}\n    type: tool\n    tool: noop\n" for i in range(n))
    return ("---\nname: chain\ndescription: A chain of trivial tool steps.\n---\n\n```workflow\nsteps:\n"
            + steps + "```\n")


def aevatar_chain(n: int) -> str:
    return "name: chain\nsteps:\n" + "".join(
        f"  - id: s{i}\n    type: assign\n    parameters: {{target: v{i}, value: x}}\n" for i in range(n))


def instruction_chain(n: int) -> str:
    steps = "".join(f"  s{i}: {{ kind: assign, depends_on: {'start' if i == 0 else f's{i - 1}'}, value: {i} }}\n"
                    for i in range(n))
    return f"name: chain\nsteps:\n  start: {{ kind: manual }}\n{steps}  done: {{ kind: finish, depends_on: s{n - 1} }}\n"


def hand_tool_calls(host, n):
    steps, outputs = [], {}
    for i in range(n):
        sid = f"s{i}"
        result = host.call("tool", "noop", {})
        outputs[sid] = result
        steps.append({"id": sid, "status": "success", "output": result})
    return {"status": "success", "steps": steps}


def hand_assigns(host, n):
    steps, variables = [], {}
    for i in range(n):
        sid = f"s{i}"
        variables[f"v{i}"] = "x"
        steps.append({"id": sid, "status": "success", "output": "x"})
    return {"status": "success", "steps": steps, "variables": variables}


def _once(fn, runs: int = 7) -> float:
    """CPU seconds of the fastest of ``runs`` calls after a warm-up call (CPU
    time: the machine is shared, and wall time counts the other processes
    too; the fastest: what the code costs, not what the neighbours did)."""
    fn()
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _chains(n: int) -> list[tuple[str, str, str, str | None, int, object]]:
    """(label, text, file name, dialect, steps in the record, hand-written loop)."""
    k = min(n, 500)   # the instruction dialect allows 512 top-level steps
    return [("workflowskill (tool calls)", workflowskill_chain(n), "chain.md", None, n, hand_tool_calls),
            ("aevatar (assign)", aevatar_chain(n), "chain.yaml", "aevatar", n, hand_assigns),
            ("instruction (assign)", instruction_chain(k), "chain.yaml", "instruction", k + 2, hand_assigns)]


def _per_step(text: str, name: str, lang: str | None, steps: int, hand) -> tuple[float, float, float]:
    """Microseconds per step: generated module, VM, hand-written loop."""
    result = driver.compile_text(text, name, lang) if lang else driver.compile_text(text, name)
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    module = load_module(python_compile(result.workflow))
    program = load(compile_workflow(result.workflow))
    a, b = module.run({}, NullHost()), program.run({}, NullHost())
    assert a["status"] == b["status"] and len(a["steps"]) == len(b["steps"]) == steps, (a["status"], b["status"])
    t_mod = _once(lambda: module.run({}, NullHost()))
    t_vm = _once(lambda: program.run({}, NullHost()))
    t_hand = _once(lambda: hand(NullHost(), steps))
    return t_mod * 1e6 / steps, t_vm * 1e6 / steps, t_hand * 1e6 / steps


def bench_overhead(n: int) -> list[str]:
    """Per step at n steps, and at n/4 (a per-step cost that grows with n
    is a scan over all steps at every step)."""
    lines = [("  dialect                    steps  module us/step  VM us/step  hand us/step  module/hand  VM/hand"
              "   at 1/4 the steps: module, VM us/step")]
    quarter = {label: _per_step(*rest) for label, *rest in _chains(max(n // 4, 1))}
    for label, text, name, lang, steps, hand in _chains(n):
        mod, vm, hand_us = _per_step(text, name, lang, steps, hand)
        q = quarter[label]
        lines.append(f"  {label:<26}{steps:>6} {mod:>12.1f} {vm:>11.1f} {hand_us:>13.2f} {mod / hand_us:>11.0f}x "
                     f"{vm / hand_us:>7.0f}x   {q[0]:>7.1f}, {q[1]:.1f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--micropython", default=os.environ.get("FLOWC_MICROPYTHON"),
                        help="a unix-port MicroPython binary for the smallest-heap bisection")
    parser.add_argument("--mpy-cross", default=os.environ.get("FLOWC_MPY_CROSS"),
                        help="MicroPython's mpy-cross (the firmware's version) to measure the precompiled bundle too")
    parser.add_argument("--frozen", default=os.environ.get("FLOWC_MICROPYTHON_FROZEN"),
                        help="a unix-port MicroPython binary with the every-dialect bundle frozen into it")
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args(argv)
    out_dir = Path(tempfile.mkdtemp())
    bundle, lines = bench_size(out_dir, args.mpy_cross)
    print("\n".join(lines))
    jobs_file, jobs, want = _sample()
    print(f"\nMicroPython heap, corpus sample of {len(jobs)} workflows (3 dialects)")
    for line in bench_wasm_heap(bundle, jobs_file, want):
        print("  " + line)
    if args.micropython:
        for line in bench_unix_heap(args.micropython, args.mpy_cross, jobs, want):
            print("  " + line)
    if args.frozen:
        for line in bench_frozen_heap(args.frozen, jobs_file, jobs, want):
            print("  " + line)
    print(f"\nKernel overhead per step, generated chains of {args.steps} trivial steps "
          "(CPU time, the fastest of 7 runs after a warm-up)")
    print("\n".join(bench_overhead(args.steps)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
