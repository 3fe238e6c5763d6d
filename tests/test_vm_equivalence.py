"""The VM and the Python backend give identical run records.

On every corpus scenario (tests/data/workflowskill/cases.json) and on
generated workflows (hypothesis), with the same scripted host.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from flowc.backends.python import compile_workflow as python_compile
from flowc.backends.python import load_module
from flowc.backends.vm import compile_workflow, load
from flowc.host import ScriptedHost
from flowc.pipeline import driver

DATA = Path(__file__).resolve().parent / "data" / "workflowskill"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "workflowskill"
CASES_DIR = DATA if (DATA / "cases.json").exists() else SHARED


@functools.cache
def _cases():
    return json.loads((CASES_DIR / "cases.json").read_text(encoding="utf-8"))


@functools.cache
def _workflow(file: str):
    result = driver.compile_file(str(CASES_DIR / file))
    return result.workflow if result.ok else None


@functools.cache
def corpus_programs():
    """(case name, bytecode, inputs, host script) for every runnable corpus case."""
    out = []
    for case in _cases():
        wf = _workflow(case["file"])
        if wf is not None:
            out.append((case["case"], compile_workflow(wf), case["inputs"], case["host"]))
    return out


def _python_record(wf, inputs, script):
    return load_module(python_compile(wf)).run(inputs, ScriptedHost(script))


def _vm_record(wf, inputs, script, strip=False):
    return load(compile_workflow(wf, strip=strip)).run(inputs, ScriptedHost(script))


@pytest.mark.parametrize("case", _cases(), ids=[c["case"] for c in _cases()])
def test_corpus_case_same_record(case):
    wf = _workflow(case["file"])
    if wf is None:
        assert case["expected"].get("error", {}).get("phase") == "parse"
        return
    want = _python_record(wf, case["inputs"], case["host"])
    for strip in (False, True):
        got = _vm_record(wf, case["inputs"], case["host"], strip)
        assert got == want
        assert json.dumps(got) == json.dumps(want)  # key order too


@pytest.mark.parametrize("case", _cases(), ids=[c["case"] for c in _cases()])
def test_corpus_case_matches_reference(case):
    """The VM's record against the reference runtime's recorded one."""
    wf = _workflow(case["file"])
    if wf is None:
        return
    expected = case["expected"]
    got = _vm_record(wf, case["inputs"], case["host"])
    assert got["status"] == expected["status"]
    assert got["outputs"] == expected["outputs"]
    assert got["steps"] == expected["steps"]
    assert [{"tool": c["name"], "args": c["args"]} for c in got["calls"]] == expected["tool_calls"]
    assert got["sleeps_ms"] == expected["sleeps_ms"]
