"""aevatar_text.py runs unmodified on MicroPython and gives the engine's strings.

Every evaluator vector is compiled by flowc (CPython) to a Python expression
over aevatar_text, then evaluated inside the official MicroPython WebAssembly
port under node (tests/micropython, as for the VM). MicroPython's own float
formatting and case mapping are not exact, so aevatar_text carries exact
fallbacks (integer G17 formatting, simple case tables); this checks them
where they are used. Missing node or a missing ``npm ci`` is a failure.

The VM's aevatar programs run there too (test_aevatar_programs_run_on_micropython):
the VM bundle (flowc bundle) copied in, the records
compared with CPython's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from flowc.backends.python import aevatar_expr
from flowc.compiler.aevatar.expressions import Locator, Lowering
from flowc.ir.span import Span
from flowc.runtime import aevatar_text

TESTS = Path(__file__).resolve().parent
MP_DIR = TESTS / "micropython"
VECTORS = json.loads((TESTS / "data" / "aevatar" / "expressions" / "aevatar.json").read_text())["vectors"]


def test_vectors_on_micropython(tmp_path):
    node = shutil.which("node")
    assert node, "node is needed to run MicroPython (tests/micropython)"
    assert (MP_DIR / "node_modules" / "@micropython" / "micropython-webassembly-pyscript").is_dir(), \
        "run npm ci in tests/micropython"
    jobs, expected = [], {}
    for v in VECTORS:
        if v["template"] is None:
            continue
        low = Lowering(None, Locator(Span("v", 1, 1, 1, 2)))
        expr = low.template(v["template"]) if v["entry"] == "Evaluate" else low.expression(v["template"])
        ci = v.get("variables_comparer") == "OrdinalIgnoreCase"
        jobs.append({"id": v["id"], "src": aevatar_expr.compile_expr(expr, ci), "vars": v["variables"]})
        expected[v["id"]] = None if v.get("expected_exception") else v["expected"]
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps(jobs, ensure_ascii=False), encoding="utf-8")
    out = subprocess.run([node, str(MP_DIR / "run_aevatar.mjs"), aevatar_text.__file__, str(path)],
                         cwd=MP_DIR, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    results = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(results) == len(jobs) == 228
    for r in results:
        if expected[r["id"]] is None:
            assert "error" in r, r
        else:
            assert r.get("value") == expected[r["id"]], r


# ---------------------------------------------------------------- aevatar programs on the VM
def _vm_jobs():
    """[name, program, inputs, host script, [max_instructions, max_iterations]]: the guide's
    examples A-F, every clean corpus workflow with generic hosts, every primitive, generated
    workflows, fuel, and refused programs."""
    from flowc.backends import vm
    from flowc.pipeline import driver

    from tests.test_aevatar_corpus import BROKEN, CORPUS
    from tests.test_aevatar_run import DATA, SCRIPTS
    from tests.test_aevatar_vm import (
        KITCHEN,
        KITCHEN_INPUTS,
        KITCHEN_SCRIPT,
        LOOP,
        compile_text,
        corpus_hosts,
    )

    jobs = []
    for letter in sorted(SCRIPTS):
        inputs, script, _ = SCRIPTS[letter]
        wf = driver.compile_file(str(next((DATA / "seed_examples").glob(f"{letter}_*.yaml")))).workflow
        jobs.append([f"example {letter}", vm.compile_workflow(wf), inputs, script, [None, None]])
    inputs = {"input": "hello\n---\nworld", "topic": "flowc"}
    for rel, path in CORPUS:
        if rel in BROKEN:
            continue
        wf = driver.compile_file(str(path)).workflow
        data = vm.compile_workflow(wf)
        for i, script in enumerate(corpus_hosts(wf)):
            jobs.append([f"{rel} host {i}", data, inputs, script, [None, None]])
    jobs.append(["every primitive", vm.compile_workflow(compile_text(KITCHEN)), KITCHEN_INPUTS, KITCHEN_SCRIPT,
                 [None, None]])
    for i, case in enumerate(_generated(40)):
        jobs.append([f"generated {i}", vm.compile_workflow(case.workflow()), case.inputs, case.host_script,
                     [None, None]])
    loop = vm.compile_workflow(compile_text(LOOP))
    jobs.append(["fuel/instructions", loop, {}, {}, [100, None]])
    jobs.append(["fuel/iterations", loop, {}, {}, [None, 7]])
    data = jobs[0][1]
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0x10
    jobs.append(["reject/bit-flip", bytes(flipped), {}, {}, [None, None]])
    jobs.append(["reject/truncated", data[: len(data) // 2], {}, {}, [None, None]])
    return jobs


def _generated(n):
    """``n`` runnable aevatar workflows of flowc.testing.strategies (the same ones every time)."""
    from flowc.testing import strategies as wst
    from hypothesis import HealthCheck, given, settings

    cases = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(wst.runnable_workflows("aevatar"))
    def collect(case):
        cases.append(case)

    collect()
    return cases


def test_aevatar_programs_run_on_micropython(tmp_path):
    """The VM bundle (the aevatar loader, aevatar_text, routing_run, the
    VM and the kernel in one file) on MicroPython gives CPython's records: A-F, the corpus with generic hosts, every primitive,
    generated workflows, fuel, refusals.
    Host arguments keep their key order (they are what an echoing host
    returns as JSON text)."""
    import shutil

    import msgpack
    from flowc.backends import vm
    from flowc.backends.vm.bundle import write_bundle
    from flowc.host import ScriptedHost

    node = shutil.which("node")
    assert node, "node is needed to run MicroPython (tests/micropython)"
    assert (MP_DIR / "node_modules" / "@micropython" / "micropython-webassembly-pyscript").is_dir(), \
        "run npm ci in tests/micropython"
    jobs = _vm_jobs()
    jobs_file = tmp_path / "jobs.bin"
    jobs_file.write_bytes(msgpack.packb(jobs, use_bin_type=True))
    # mp_host.py and mp_aevatar.py import the bundle as flowc_vm
    bundle, _ = write_bundle(tmp_path)
    modules = [str(MP_DIR / "mp_host.py"), str(bundle)]
    proc = subprocess.run([node, str(MP_DIR / "run_dataflow.mjs"), str(MP_DIR / "mp_aevatar.py"), str(jobs_file),
                           *modules], check=False, capture_output=True, text=True, timeout=900, cwd=MP_DIR)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # one line per job ("\n" only: the records hold U+2028, which str.splitlines() splits at)
    lines = [json.loads(line) for line in proc.stdout.split("\n") if line.strip()]
    assert [x["name"] for x in lines] == [j[0] for j in jobs], proc.stdout[-2000:]
    for (name, data, inputs, script, limits), got in zip(jobs, lines, strict=True):
        try:
            want = json.loads(json.dumps(vm.load(data).run(inputs, ScriptedHost(script), *limits)))
        except vm.VerifyError:
            assert got.get("error", "").startswith("VerifyError"), (name, got)
            continue
        assert got.get("record") == want, name
        for a, b in zip(got["record"]["calls"], want["calls"], strict=True):
            assert json.dumps(a["args"]) == json.dumps(b["args"]), name
    assert sum(1 for name, *_ in jobs if name.startswith("example ")) == 6
