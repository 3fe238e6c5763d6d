"""Hostile inputs against passes that the per-limit tests did not reach.

Every limit is a finding, never a crash or a hang, in every pass: the
translation emitters, the graph writers, the run record, the eval command.
Each case here once took minutes, ran out of memory or ended in a
traceback; the sizes are chosen so that the linear answer takes a fraction
of a second and the old quadratic one took far longer than the bound.
"""

from __future__ import annotations

import json
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from flowc import driver, translate
from flowc.backends import vm
from flowc.backends.python import compile_workflow, load_module, runtime
from flowc.backends.vm import vm as standalone_vm
from flowc.host import ScriptedHost
from flowc.ir.limits import MAX_DURATION_MS, MAX_RETRIES

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_big_inputs as gen


def _timed(fn, *args):
    started = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - started


def _workflow(text: str, dialect: str):
    result = driver.compile_text(text, f"big.{dialect}.yaml", dialect)
    assert result.ok, [d.code for d in result.diagnostics if d.is_error][:5]
    return result.workflow


def _emit_scales_linearly(make, dialect: str, target: str, small: int) -> None:
    """Emitting 4x the steps takes about 4x the time, never 16x."""
    little, big = _workflow(make(small), dialect), _workflow(make(4 * small), dialect)
    _, t_little = _timed(translate.emit, little, target)
    emission, t_big = _timed(translate.emit, big, target)
    assert emission.text, emission.diagnostics[:3]
    assert t_big < 0.5 + 8 * t_little, (t_little, t_big)


# ------------------------------------------------------------------ translation emitters

def test_translating_a_long_workflowskill_chain_to_instruction_is_linear():
    # Each step scanned every edge of the workflow for its depends_on:
    # 10,000 steps took minutes.
    _emit_scales_linearly(gen.workflowskill, "workflowskill", "instruction", 600)


def _peak_memory(fn, *args) -> int:
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_translating_a_long_aevatar_chain_to_workflowskill_is_linear():
    # Each step's join was found from whole sets of post-dominators:
    # memory quadratic in the steps (10,000 steps: MemoryError at 2 GB).
    _emit_scales_linearly(gen.aevatar, "aevatar", "workflowskill", 600)
    little, big = _workflow(gen.aevatar(500), "aevatar"), _workflow(gen.aevatar(2000), "aevatar")
    m_little = _peak_memory(translate.emit, little, "workflowskill")
    m_big = _peak_memory(translate.emit, big, "workflowskill")
    assert m_big < 8 * m_little, (m_little, m_big)


# ------------------------------------------------------------------ runs

def _both(workflow, inputs, script, **budgets) -> list[dict]:
    """The run record of each backend, after a round trip through strict JSON
    (no NaN or Infinity: what `flowc run --json` prints must parse)."""
    py = load_module(compile_workflow(workflow)).run(inputs, ScriptedHost(script), **budgets)
    on_vm = vm.load(vm.compile_workflow(workflow)).run(inputs, ScriptedHost(script), **budgets)
    return [json.loads(json.dumps(r, allow_nan=False)) for r in (py, on_vm)]


RETRY_AT_THE_LIMITS = f"""\
inputs: {{}}
outputs:
  r: {{type: object, value: $steps.flaky.output.data}}
steps:
  - id: flaky
    type: tool
    tool: flaky_api
    retry:
      max: {MAX_RETRIES}
      delay: "{MAX_DURATION_MS // 1000}s"
      backoff: 1000000
    outputs:
      data: {{type: object}}
"""


@pytest.mark.parametrize("delay", [f"{MAX_DURATION_MS // 1000}s", "0ms"])
def test_retry_sleeps_at_the_limits_stay_finite(delay):
    # delay x backoff^(k-1) overflowed: sleeps of 1e300 ms, then Infinity in
    # the record (invalid JSON), then the run failed after 52 attempts with
    # "(34, 'Numerical result out of range')". Each sleep is now at most
    # MAX_DURATION_MS, and every retry the policy asks for is made.
    text = RETRY_AT_THE_LIMITS.replace(f"{MAX_DURATION_MS // 1000}s", delay)
    workflow = _workflow(text, "workflowskill")
    py, on_vm = _both(workflow, {}, {"flaky_api": {"error": "down"}})
    assert py == on_vm
    assert py["error"] == {"message": 'Tool "flaky_api": down', "step": "flaky"}
    assert len(py["calls"]) == MAX_RETRIES + 1 and len(py["sleeps_ms"]) == MAX_RETRIES
    if delay == "0ms":
        assert set(py["sleeps_ms"]) == {0}
    else:
        assert py["sleeps_ms"][0] == (MAX_DURATION_MS // 1000) * 1000
        assert set(py["sleeps_ms"][1:]) == {MAX_DURATION_MS}


def test_the_standalone_vm_caps_sleeps_as_ir_limits_says():
    assert standalone_vm.MAX_SLEEP_MS == runtime.MAX_SLEEP_MS == MAX_DURATION_MS
