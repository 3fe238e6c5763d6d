"""Conformance: every scenario of the reference runtime's recorded cases.

tests/data/workflowskill/cases.json holds, per scenario, a workflow file, the
inputs, a scripted host and the result the WorkflowSkill reference runtime
0.5.0 recorded. flowc compiles the workflow to a Python module, runs it with
the same script and must give the same status, outputs, step records (ids,
statuses, reasons), tool calls with their arguments, and sleeps.

Scenarios the reference rejects before running (an ``error`` of phase
``parse`` or ``validate``) must be refused by flowc at compile time, with an
error diagnostic.
"""

from __future__ import annotations

import json

import pytest
from conftest import WFS_CASES, WFS_DIR
from flowc.backends import vm
from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.pipeline import driver

CASES = json.loads(WFS_CASES.read_text(encoding="utf-8"))
RUNNABLE = [c for c in CASES if c["expected"].get("error", {}).get("phase") not in ("parse", "validate")]
REFUSED = [c for c in CASES if c not in RUNNABLE]

_modules: dict[str, object] = {}


def _module(file: str):
    if file not in _modules:
        result = driver.compile_file(str(WFS_DIR / file))
        assert result.ok, [d.message for d in result.diagnostics if d.is_error]
        _modules[file] = load_module(compile_workflow(result.workflow))
    return _modules[file]


def _comparable(record: dict) -> dict:
    """The record in the recorded cases' shape (JSON round trip, as the
    reference's log was serialized)."""
    assert all(call["capability"] == "tool" for call in record["calls"])
    return json.loads(json.dumps({
        "status": record["status"],
        "outputs": record["outputs"],
        "steps": record["steps"],
        "tool_calls": [{"tool": c["name"], "args": c["args"]} for c in record["calls"]],
        "sleeps_ms": record["sleeps_ms"],
    }))


def test_the_cases_are_all_here():
    assert len(CASES) == 25
    assert len(REFUSED) == 3


@pytest.mark.parametrize("case", RUNNABLE, ids=[c["case"] for c in RUNNABLE])
def test_python_backend_matches_the_reference(case):
    record = _module(case["file"]).run(case["inputs"], ScriptedHost(case["host"]))
    expected = {k: case["expected"][k] for k in ("status", "outputs", "steps", "tool_calls", "sleeps_ms")}
    assert _comparable(record) == expected


@pytest.mark.parametrize("case", RUNNABLE, ids=[c["case"] for c in RUNNABLE])
def test_the_record_is_complete(case):
    record = _module(case["file"]).run(case["inputs"], ScriptedHost(case["host"]))
    assert sorted(record) == ["calls", "error", "outputs", "sleeps_ms", "status", "steps"]
    # A run that failed says why, unless an exit chose to fail.
    if record["status"] == "success":
        assert record["error"] is None
    elif record["error"] is not None:
        failed = [s["id"] for s in record["steps"] if s["status"] == "failed"]
        assert record["error"]["step"] in failed
    json.dumps(record, allow_nan=False)


@pytest.mark.parametrize("case", REFUSED, ids=[c["case"] for c in REFUSED])
def test_what_the_reference_rejects_does_not_compile(case):
    result = driver.compile_file(str(WFS_DIR / case["file"]))
    assert not result.ok
    assert any(d.is_error for d in result.diagnostics)


@pytest.mark.parametrize("case", RUNNABLE, ids=[c["case"] for c in RUNNABLE])
def test_both_backends_give_the_same_record(case):
    workflow = driver.compile_file(str(WFS_DIR / case["file"])).workflow
    python_record = _module(case["file"]).run(case["inputs"], ScriptedHost(case["host"]))
    vm_record = vm.load(vm.compile_workflow(workflow)).run(case["inputs"], ScriptedHost(case["host"]))
    assert json.loads(json.dumps(vm_record)) == json.loads(json.dumps(python_record))


TYPED = """
inputs:
  n: {type: int}
steps:
  - id: t
    type: tool
    tool: t
    outputs:
      x: {type: int}
"""


@pytest.mark.parametrize("inputs, script", [({"n": "3"}, {"t": 1}), ({"n": 3}, {"t": {"x": "s"}})],
                         ids=["input-type", "output-type"])
def test_both_backends_check_declared_types(inputs, script):
    workflow = driver.compile_text(TYPED, "typed.yaml").workflow
    python_record = load_module(compile_workflow(workflow)).run(inputs, ScriptedHost(script))
    assert python_record["status"] == "failed"
    vm_record = vm.load(vm.compile_workflow(workflow)).run(inputs, ScriptedHost(script))
    assert json.loads(json.dumps(vm_record)) == json.loads(json.dumps(python_record))
