"""Semantic equivalence of translations.

For every WorkflowSkill and instruction corpus scenario whose translation
has no finding, and for hypothesis-generated WorkflowSkill workflows,
running the original and the translation with the same scripted host gives
the same outcome, outputs and host calls (see translate_harness for the
two calling conventions compared as one). Translations with findings say
themselves that the meaning may differ; they are counted, not compared.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flowc.compiler.instruction.frontend import compile_instruction_all
from flowc.pipeline import driver, translate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from translate_harness import run, same_runs, translated

DATA = Path(__file__).resolve().parent / "data"
CASES = json.loads((DATA / "workflowskill" / "cases.json").read_text(encoding="utf-8"))
TARGETS = ("instruction", "workflowskill")


def _case_params():
    for case in CASES:
        for target in TARGETS:
            yield pytest.param(case, target, id=f"{case['case']}->{target}")


@pytest.mark.parametrize(("case", "target"), list(_case_params()))
def test_workflowskill_cases_run_the_same_after_translation(case, target):
    source = driver.compile_file(str(DATA / "workflowskill" / case["file"]))
    if not source.ok:
        # The three malformed fixtures, which the reference refuses too.
        assert "error" in case["expected"]
        return
    emission, back = translated(source.workflow, target)
    assert back.ok, [d for d in back.diagnostics if d.is_error]
    if emission.verdict == "approximate":
        # Not claimed exact, so not compared: the findings must say why.
        assert any(d.code.startswith("TRN") for d in emission.diagnostics)
        return
    a = run(source.workflow, case["inputs"], case["host"])
    b = run(back.workflow, case["inputs"], case["host"])
    assert same_runs(a, b) == [], emission.text


def test_some_cases_translate_without_findings():
    """The comparison above is not vacuous."""
    exact = 0
    for case in CASES:
        source = driver.compile_file(str(DATA / "workflowskill" / case["file"]))
        if source.ok and translate.emit(source.workflow, "instruction").verdict != "approximate":
            exact += 1
    assert exact >= 8


def _instruction_workflows():
    for path in sorted(p for p in (DATA / "instruction").iterdir() if p.suffix in (".yaml", ".md")):
        workflows, _diags = compile_instruction_all(path.read_text(encoding="utf-8"), str(path))
        for wf in workflows:
            yield pytest.param(wf, id=f"{path.name}/{wf.name}")


@pytest.mark.parametrize("workflow", list(_instruction_workflows()))
def test_instruction_corpus_runs_the_same_when_translated_without_findings(workflow):
    emission, back = translated(workflow, "workflowskill")
    assert back.ok, [d for d in back.diagnostics if d.is_error]
    if emission.verdict == "approximate":
        assert any(d.code.startswith("TRN") for d in emission.diagnostics)
        return
    script = {"*": {"output": {"ok": True}}}
    assert same_runs(run(workflow, {}, script), run(back.workflow, {}, script)) == []


# ------------------------------------------------------------------ generated workflows
_TOOL_OUT = {"n": 3, "label": "Alpha", "flag": True, "rows": [{"score": 2, "name": "b"}, {"score": 5, "name": "a"}]}


@st.composite
def workflows(draw):
    """A small WorkflowSkill document whose types are all declared, with the
    host script and inputs to run it."""
    inputs = {"limit": {"type": "int", "default": draw(st.integers(0, 6))},
              "word": {"type": "string", "default": draw(st.sampled_from(["alpha", "Beta", "", "7"]))},
              "on": {"type": "boolean", "default": draw(st.booleans())}}
    steps: list[dict] = []
    tools: list[str] = []
    n = draw(st.integers(1, 5))
    for i in range(n):
        sid = f"s{i}"
        kind = draw(st.sampled_from(["tool", "tool", "filter", "map", "conditional"]) if tools
                    else st.just("tool"))
        if kind == "tool":
            arg = draw(st.sampled_from(["$inputs.limit", "$inputs.word", "${inputs.word}!", "fixed", "$inputs.on"]
                                       + [f"$steps.{t}.output.n" for t in tools]))
            step = {"id": sid, "type": "tool", "tool": f"t{i % 2}",
                    "inputs": {"x": {"type": "string" if "word" in arg or arg == "fixed" else
                                     ("boolean" if arg == "$inputs.on" else "int"), "value": arg}},
                    "outputs": {name: {"type": t} for name, t in
                                (("n", "int"), ("label", "string"), ("flag", "boolean"), ("rows", "array"))}}
            if draw(st.booleans()):
                step["condition"] = draw(st.sampled_from([
                    "$inputs.limit > 2", "$inputs.on", "$inputs.word == \"alpha\"", "!$inputs.on",
                    "$inputs.limit >= 1 && $inputs.on"] + [f"$steps.{t}.output.flag" for t in tools]))
            steps.append(step)
            tools.append(sid)
        elif kind in ("filter", "map"):
            src = draw(st.sampled_from(tools))
            step = {"id": sid, "type": "transform", "operation": kind,
                    "inputs": {"items": {"type": "array", "value": f"$steps.{src}.output.rows"}},
                    "outputs": {"items": {"type": "array"}}}
            if kind == "filter":
                step["where"] = draw(st.sampled_from(["$item.score > $inputs.limit", "$index == 0",
                                                      "$item.name == \"a\"", "$item.score >= 3 || $index > 0"]))
            else:
                step["expression"] = {"who": "$item.name", "at": "$index", "s": "$item.score"}
            steps.append(step)
        else:
            targets = [f"s{n + j}" for j in range(2)]
            steps.append({"id": sid, "type": "conditional", "condition": draw(st.sampled_from(
                ["$inputs.on", "$inputs.limit < 3", f"$steps.{tools[-1]}.output.n == 3"])),
                "then": [targets[0]], "else": [targets[1]], "inputs": {}, "outputs": {}})
            break
    last_tool = tools[-1]
    for j, sid in enumerate(f"s{n + j}" for j in range(2)):
        if any(s["type"] == "conditional" for s in steps):
            steps.append({"id": sid, "type": "tool", "tool": f"arm{j}",
                          "inputs": {"x": {"type": "int", "value": f"$steps.{last_tool}.output.n"}},
                          "outputs": {"n": {"type": "int"}}})
    if draw(st.booleans()):
        steps.append({"id": "stop", "type": "exit", "condition": "$inputs.limit == 0", "status": "success",
                      "output": {"result": "$inputs.word"}, "inputs": {}, "outputs": {}})
    outputs = {"result": {"type": "string", "value": draw(st.sampled_from(
        ["$inputs.word", f"$steps.{last_tool}.output.label", "got ${inputs.word}"]))}}
    doc = {"inputs": inputs, "outputs": outputs, "steps": steps}
    script = {"*": {"output": _TOOL_OUT}}
    run_inputs = draw(st.fixed_dictionaries({}, optional={"limit": st.integers(0, 6), "on": st.booleans(),
                                                          "word": st.sampled_from(["alpha", "x", "12"])}))
    return doc, script, run_inputs


def _text(doc: dict) -> str:
    from flowc.translation import yamlout

    return "---\nname: generated\ndescription: generated\n---\n\n```workflow\n" + yamlout.dump(doc) + "```\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workflows())
def test_generated_workflows_run_the_same_in_instruction(example):
    doc, script, inputs = example
    source = driver.compile_text(_text(doc), "generated.md", "workflowskill")
    assert source.ok, [d for d in source.diagnostics if d.is_error]
    emission, back = translated(source.workflow, "instruction")
    assert back.ok, ([d for d in back.diagnostics if d.is_error], emission.text)
    if emission.verdict == "approximate":
        return
    a = run(source.workflow, inputs, script)
    b = run(back.workflow, inputs, script)
    assert same_runs(a, b) == [], emission.text


@st.composite
def instruction_workflows(draw):
    """A small dialect-3 workflow (a trigger, tool calls with guards, a
    switch and its arms, a filter, a finish), its host script and inputs."""
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"]), min_size=3, max_size=3,
                          unique=True))
    steps: dict = {"go": {"kind": "manual"}}
    prev = "go"
    tools = []
    for i, name in enumerate(names):
        sid = f"{name}{i}"
        step = {"kind": "tool", "depends_on": [prev], "name": f"t{i % 2}",
                "args": {"x": draw(st.sampled_from(["{{ inputs.word }}", "fixed", "{{ inputs.flag }}"]
                                                   + [f"{{{{ steps.{t}.output.label }}}}" for t in tools]))}}
        if draw(st.booleans()):
            step["when"] = draw(st.sampled_from(["inputs.flag", "!inputs.flag", 'inputs.word == "alpha"',
                                                 'inputs.word != "beta" && inputs.flag']))
        steps[sid] = step
        tools.append(sid)
        prev = sid
    if draw(st.booleans()):
        steps["sw"] = {"kind": "switch", "depends_on": [prev], "on": "{{ inputs.word }}",
                       "cases": {"alpha": "arm_a", "beta": "arm_b"}, "default": "arm_c"}
        for arm in ("arm_a", "arm_b", "arm_c"):
            steps[arm] = {"kind": "tool", "depends_on": ["sw"], "name": arm, "args": {"from": arm}}
        ends = ["arm_a", "arm_b", "arm_c"]
    else:
        ends = [prev]
    if draw(st.booleans()):
        steps["keep"] = {"kind": "filter", "depends_on": [tools[0]],
                         "over": f"{{{{ steps.{tools[0]}.output.rows }}}}",
                         "expr": draw(st.sampled_from(['item.name == "a"', "item.ok", "!item.ok"]))}
        ends.append("keep")
    steps["zz_done"] = {"kind": "finish", "depends_on": ["go", *ends],
                        "output": {"label": f"{{{{ steps.{tools[0]}.output.label }}}}", "word": "{{ inputs.word }}"}}
    doc = {"name": "gen", "inputs": {"schema": {"type": "object", "properties": {
        "flag": {"type": "boolean", "default": draw(st.booleans())},
        "word": {"type": "string", "default": draw(st.sampled_from(["alpha", "beta", "gamma"]))}}}},
        "steps": steps}
    script = {"*": {"output": {"label": "L", "rows": [{"name": "a", "ok": True}, {"name": "b", "ok": False}]}}}
    inputs = draw(st.fixed_dictionaries({}, optional={"flag": st.booleans(),
                                                      "word": st.sampled_from(["alpha", "beta", "x"])}))
    return doc, script, inputs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instruction_workflows())
def test_generated_instruction_workflows_run_the_same_in_workflowskill(example):
    from flowc.translation import yamlout

    doc, script, inputs = example
    source = driver.compile_text(yamlout.dump(doc), "generated.yaml", "instruction")
    assert source.ok, [d for d in source.diagnostics if d.is_error]
    emission, back = translated(source.workflow, "workflowskill")
    assert back.ok, ([d for d in back.diagnostics if d.is_error], emission.text)
    if emission.verdict == "approximate":
        return
    a = run(source.workflow, inputs, script)
    b = run(back.workflow, inputs, script)
    assert same_runs(a, b) == [], emission.text
