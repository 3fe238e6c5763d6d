"""rt_aevatar.py runs unmodified on MicroPython and gives the engine's strings.

Every evaluator vector is compiled by flowc (CPython) to a Python expression
over rt_aevatar, then evaluated inside the official MicroPython WebAssembly
port under node (tests/micropython, as for the VM). MicroPython's own float
formatting and case mapping are not exact, so rt_aevatar carries exact
fallbacks (integer G17 formatting, simple case tables); this checks them
where they are used. Missing node or a missing ``npm ci`` is a failure.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from flowc.backends.python import aevatar_expr, rt_aevatar
from flowc.compiler.aevatar.expressions import Locator, Lowering
from flowc.ir.span import Span

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
    out = subprocess.run([node, str(MP_DIR / "run_aevatar.mjs"), rt_aevatar.__file__, str(path)],
                         cwd=MP_DIR, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    results = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(results) == len(jobs) == 228
    for r in results:
        if expected[r["id"]] is None:
            assert "error" in r, r
        else:
            assert r.get("value") == expected[r["id"]], r
