"""The scripted host hands out its scripted values without copying them,
which is sound only because a run never mutates a value its host gives it.
These tests check that rule for every dialect on both backends."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import WFS_CASES, WFS_DIR
from flowc.backends import vm
from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.pipeline import driver
from flowc.testing import strategies as wst
from hypothesis import HealthCheck, given, settings

CASES = [c for c in json.loads(WFS_CASES.read_text(encoding="utf-8"))
         if c["expected"].get("error", {}).get("phase") not in ("parse", "validate")]


@pytest.mark.parametrize("backend", ["python", "vm"])
def test_reference_cases_leave_their_host_scripts_unchanged(backend):
    for case in CASES:
        workflow = driver.compile_file(str(WFS_DIR / case["file"])).workflow
        script = copy.deepcopy(case["host"])
        before = copy.deepcopy(script)
        if backend == "vm":
            record = vm.load(vm.compile_workflow(workflow)).run(case["inputs"], ScriptedHost(script))
        else:
            record = load_module(compile_workflow(workflow)).run(case["inputs"], ScriptedHost(script))
        assert record["status"] in ("success", "failed")
        assert script == before, case["case"]


@pytest.mark.parametrize("dialect", wst.dialects())
@pytest.mark.parametrize("backend", ["python", "vm"])
def test_generated_runs_leave_their_host_scripts_unchanged(dialect, backend):
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None,
              derandomize=True)
    @given(wst.runnable_workflows(dialect))
    def check(case):
        before = copy.deepcopy(case.host_script)
        case.run(backend)
        assert case.host_script == before

    check()


def test_copy_outputs_gives_independent_answers_and_the_default_shares():
    records = [{"id": 1, "tags": ["a"]}]
    copying = ScriptedHost({"t": {"output": records}}, copy_outputs=True)
    first = copying.call("tool", "t", {})
    first[0]["tags"].append("changed")
    assert copying.call("tool", "t", {}) == [{"id": 1, "tags": ["a"]}]
    assert records == [{"id": 1, "tags": ["a"]}]
    assert ScriptedHost({"t": {"output": records}}).call("tool", "t", {}) is records
