"""The VM runs on MicroPython and gives the same run records.

The device bundle (``flowc bundle DIR``: one file) is copied
into the official MicroPython WebAssembly port (npm package pinned in
tests/micropython/package.json; CI runs ``npm ci`` there) and run under
node on every corpus scenario plus a few VM-specific ones (fuel, rejected
bytecode, a virtual clock). Missing node or a missing ``npm ci`` is a failure, not a skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import msgpack
import pytest
from flowc.backends.vm import (
    compile_workflow,
    container,
    device,
    errors,
    expr_vm,
    expr_wfs,
    load,
    plan_loops,
    plan_steps,
)
from flowc.backends.vm.bundle import write_bundle
from flowc.host import ScriptedHost
from flowc.pipeline import driver
from flowc.runtime import drivers, edges, fuel, kernel, sequence_run, wfs

from tests.test_vm_equivalence import corpus_programs

MP_DIR = Path(__file__).resolve().parent / "micropython"
PACKAGE = MP_DIR / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"


TYPED = """
inputs:
  n: {type: int}
  xs: {type: array, default: [1, 2]}
steps:
  - id: t
    type: tool
    tool: t
    each: $inputs.xs
    on_error: ignore
    outputs:
      x: {type: float}
"""

# an each with a delay between items, each item's call retried
PACED = """
inputs:
  xs: {type: array, default: [1, 2, 3]}
steps:
  - id: loop
    type: tool
    tool: t
    each: $inputs.xs
    delay: "2s"
    retry: {max: 2, delay: "100ms", backoff: 2}
    inputs:
      x: {type: int, value: $item}
"""


def _jobs():
    jobs = []
    for name, data, inputs, script in corpus_programs():
        jobs.append([name, data, inputs, script, [None, None]])
    # fuel: the same program with too little fuel fails the same way
    name, data, inputs, script = corpus_programs()[0]
    jobs.append(["fuel/instructions", data, inputs, script, [5, None]])
    each = next(p for p in corpus_programs() if p[0] == "each-loop")
    jobs.append(["fuel/iterations", each[1], each[2], each[3], [None, 1]])
    # filter/map loops (compiled to closures) and sorts over odd records, also under fuel limits
    jobs += _loop_jobs()
    # declared types: a wrong input type fails the run, a wrong output type the step
    typed = compile_workflow(driver.compile_text(TYPED, "typed.yaml").workflow)
    jobs.append(["types/input", typed, {"n": "3"}, {"t": {"x": 1}}, [None, None]])
    jobs.append(["types/output", typed, {"n": 3.0}, {"t": [{"x": 1.5}, {"x": True}]}, [None, None]])
    jobs.append(["types/ok", typed, {"n": 3}, {"t": {"x": 2.0}}, [None, None]])
    # rejected bytecode: a flipped bit, a truncated file
    bad = bytearray(data)
    bad[len(bad) // 2] ^= 0x10
    jobs.append(["reject/bit-flip", bytes(bad), {}, {}, [None, None]])
    jobs.append(["reject/truncated", data[: len(data) // 2], {}, {}, [None, None]])
    # a virtual clock (drivers.drive_virtual): latencies, retry backoff, an each's delay
    retry = next(p for p in corpus_programs() if p[0].startswith("retry-backoff"))
    flaky = [{"error": "busy", "latency_ms": 7}, {"output": {"data": {"ok": True}}, "latency_ms": 5}]
    jobs.append(["virtual/retry", retry[1], retry[2], {"flaky_api": flaky}, [None, None], "virtual"])
    paced = compile_workflow(driver.compile_text(PACED, "paced.yaml").workflow)
    script = {"t": [{"error": "busy", "latency_ms": 5}, {"output": "a", "latency_ms": 5},
                    {"output": "b", "latency_ms": 7}, {"throw": "boom", "latency_ms": 1}]}
    jobs.append(["virtual/each-delay", paced, {}, script, [None, None], "virtual"])
    return jobs


def _loop_jobs():
    import random
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import bench_python_backend as bench

    data = compile_workflow(driver.compile_text(bench.WORKFLOW, "leaderboard.md").workflow)
    odd = [None, True, False, 0, -1, 2**60, 1.5, "", "a", "50", " 7 ", "eu", "\u00c4", "\U0001f600a", [1], {}]
    rng = random.Random(5)
    records = bench.make_records(60, seed=5)
    for r in records:
        if rng.random() < 0.4:
            r[rng.choice(["name", "active", "score", "region", "address"])] = rng.choice(odd)
    script = {"records.list": {"output": {"records": records}}, "report.post": {"output": {"ok": True}}}
    inputs = {"min_score": 40, "region": "eu", "limit": 5}
    return [["loops/" + str(limits), data, inputs, script, limits]
            for limits in ([None, None], [700, None], [None, 150], [1234, None])]


def _cpython(job):
    name, data, inputs, script, limits = job[:5]
    try:
        if job[5:] == ["virtual"]:
            return {"name": name, "record": load(data).run_virtual(inputs, script, limits[0], limits[1])}
        return {"name": name, "record": load(data).run(inputs, ScriptedHost(script), limits[0], limits[1])}
    except errors.VMError as exc:
        return {"name": name, "error": type(exc).__name__}


@pytest.mark.parametrize("small", [False, True], ids=["bundle", "small-bundle"])
def test_vm_runs_on_micropython(tmp_path, small):
    node = shutil.which("node")
    assert node, "node is not installed: the MicroPython test needs node (v18+)"
    assert PACKAGE.is_dir(), (f"{PACKAGE} is missing: run `npm ci` in {MP_DIR} "
                              "(the MicroPython WebAssembly port, pinned in package.json)")
    jobs = _jobs()
    jobs_file = tmp_path / "jobs.bin"
    jobs_file.write_bytes(msgpack.packb(jobs, use_bin_type=True))
    bundle, _ = write_bundle(tmp_path, small=small)   # small: no compiled loops, the interpreter runs them
    proc = subprocess.run(
        [node, str(MP_DIR / "run_vm.mjs"), str(bundle), str(MP_DIR / "mp_host.py"), str(jobs_file)],
        check=False, capture_output=True, text=True, timeout=600, cwd=MP_DIR)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert [x["name"] for x in lines] == [j[0] for j in jobs], proc.stdout[-2000:]
    for job, got in zip(jobs, lines):
        want = json.loads(json.dumps(_cpython(job)))
        if "error" in want:
            assert "error" in got and got["error"].split(":")[0] == want["error"], (job[0], got)
            continue
        assert got == want, job[0]
        # the same key order everywhere (MicroPython's dicts are unordered; the VM keeps order)
        assert json.dumps(got) == json.dumps(want), job[0]


def _flowc_imports(module):
    source = Path(module.__file__).read_text(encoding="utf-8")
    return [line.strip() for line in source.splitlines()
            if line.strip().startswith(("import ", "from ")) and "flowc" in line]


def test_the_workflowskill_steps_need_only_the_runtime():
    """plan_steps.py imports nothing of flowc but the fast loops and the
    sequence run, the loops only the expression machine with
    WorkflowSkill's builtins, the container reader and WorkflowSkill's
    values, the sequence run only the kernel's standard-library modules,
    edges and WorkflowSkill's values (all device-safe: the bundle flattens
    them into one file), and those import only each other: not cel, not
    aevatar_text."""
    assert _flowc_imports(plan_steps) == [
        "from flowc.backends.vm import plan_loops as _loops",
        "from flowc.runtime import sequence_run as _s",
        "from flowc.runtime.wfs import MISSING, js_boolean, transform_items, wfs_sort",
    ]
    assert _flowc_imports(plan_loops) == [
        "from flowc.backends.vm import expr_vm as _x",
        "from flowc.backends.vm import expr_wfs as _xw",
        "from flowc.backends.vm.container import _Obj, copy_json",
        "from flowc.runtime.wfs import (",
        "from flowc.runtime.wfs import js_to_string as to_string",
        "from flowc.runtime.wfs import to_number as _to_number",
        "from flowc.runtime.wfs import wfs_get_field as get_field",
        "from flowc.runtime.wfs import wfs_get_index as get_index",
        "from flowc.runtime.wfs import wfs_stringify as stringify",
    ]
    assert [line for line in _flowc_imports(sequence_run) if "aio" not in line] == [
        "from flowc.runtime import drivers as _drivers",
        "from flowc.runtime.edges import Edges",
        "from flowc.runtime.fuel import DEFAULT_MAX_HOST_CALLS, DEFAULT_MAX_ITERATIONS, Fuel, OutOfFuel",
        "from flowc.runtime.kernel import Call, Kernel, Sleep",
        "from flowc.runtime.wfs import *  # the values generated code reaches as _rt.<name>",
        "from flowc.runtime.wfs import (",
    ]
    assert _flowc_imports(edges) == []
    assert _flowc_imports(kernel) == ["from flowc.runtime.fuel import Fuel, OutOfFuel"]
    assert _flowc_imports(fuel) == []
    assert _flowc_imports(wfs) == [] and _flowc_imports(errors) == []
    assert _flowc_imports(container) == ["from flowc.backends.vm.errors import VerifyError, VMError"]
    assert _flowc_imports(expr_vm) == ["from flowc.backends.vm.errors import VerifyError",
                                       "from flowc.runtime.fuel import DEFAULT_MAX_INSTRUCTIONS, OutOfFuel, exhausted"]
    assert _flowc_imports(expr_wfs) == ["from flowc.backends.vm import expr_vm as _x",
                                        "from flowc.runtime import wfs as _w"]
    assert _flowc_imports(drivers) == [
        "from flowc.runtime.kernel import Error, KernelError, Result, Thrown, TimedOut, heappop, heappush"]


def test_loading_on_micropython_leaves_the_collector_on(monkeypatch):
    """On CPython load() pauses the cyclic collector (a third of the time);
    MicroPython has one collector, the one that frees memory: paused there,
    a load on a small heap fails with earlier runs' garbage still in it (the
    smallest heap for six WorkflowSkill runs was twice that of one)."""
    calls = []

    class Collector:
        def isenabled(self):
            return True

        def disable(self):
            calls.append("disable")

        def enable(self):
            calls.append("enable")

    data = corpus_programs()[0][1]
    monkeypatch.setattr(container, "_gc", Collector())
    device.load(data)
    assert calls == ["disable", "enable"]
    calls.clear()
    monkeypatch.setattr(container, "_MICRO", True)
    device.load(data)
    assert calls == []
