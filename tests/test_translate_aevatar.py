"""aevatar -> dialect 3: the translation runs the same path.

For every aevatar corpus workflow that translates without a finding, for
hand-written branching workflows (switch, conditional, `next` joins) and
for hypothesis-generated aevatar workflows, running the original and the
translation with the same scripted host gives the same outcome, outputs and
host calls (an `llm_call` and its `agent` step compared as one request, see
translate_harness.RoleHost). Loops and fallbacks stay findings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from flowc.pipeline import driver, translate
from flowc.testing import strategies
from hypothesis import HealthCheck, given, settings
from translate_harness import run, same_runs, translated

DATA = Path(__file__).resolve().parent / "data" / "aevatar"
PROMPTS = ("", "urgent: the server is down", "a normal question", "  BUG  ")


def _corpus():
    for p in sorted(p for p in DATA.rglob("*.yaml") if "negative" not in p.parts):
        result = driver.compile_file(str(p), "aevatar")
        if result.ok and translate.emit(result.workflow, "instruction").verdict != "approximate":
            yield pytest.param(result.workflow, id=str(p.relative_to(DATA)))


def _script():
    # An LLM answers text; each role its own, so a wrong role or prompt shows in the outputs.
    return {"*": {"output": "fine"}, "llm:assistant": ["urgent reply", "second"], "llm:analyst": ["normal", "x"]}


def _compare(source, inputs: dict, script: dict):
    emission, back = translated(source, "instruction")
    assert back.ok, ([d for d in back.diagnostics if d.is_error], emission.text)
    a = run(source, inputs, script)
    b = run(back.workflow, inputs, script, source=source)
    assert same_runs(a, b) == [], emission.text
    return a


CORPUS = list(_corpus())


def test_some_corpus_workflows_translate_without_findings():
    assert len(CORPUS) >= 15


@pytest.mark.parametrize("workflow", CORPUS)
def test_corpus_runs_the_same(workflow):
    for prompt in PROMPTS[:2]:
        _compare(workflow, {"input": prompt}, _script())


def _compile(text: str):
    result = driver.compile_text(text, "flow.yaml", "aevatar")
    assert result.ok, [d for d in result.diagnostics if d.is_error]
    return result.workflow


SWITCH = """\
name: route
roles:
  - id: analyst
    system_prompt: "Classify."
steps:
  - id: classify
    type: llm_call
    target_role: analyst
    parameters: { prompt_prefix: "One word:  " }
  - id: route
    type: switch
    parameters:
      branch.urgent: hot
      branch.bug: hot
      branch.normal: cold
    branches: { urgent: hot, bug: hot, normal: cold, _default: other }
  - id: hot
    type: llm_call
    parameters: { prompt_prefix: "Hot:" }
    next: done
  - id: cold
    type: assign
    parameters: { target: note, value: "cold" }
    next: done
  - id: other
    type: llm_call
    parameters: { prompt_prefix: "Other:" }
  - id: done
    type: assign
    parameters: { target: result, value: "${concat(input, ' / ', classify)}" }
"""

CONDITIONAL = """\
name: cond
steps:
  - id: check
    type: conditional
    parameters: { condition: "Urgent" }
    branches: { "true": yes_arm, "false": no_arm }
  - id: yes_arm
    type: llm_call
    parameters: { prompt_prefix: "Escalate" }
    next: fin
  - id: no_arm
    type: assign
    parameters: { target: x, value: "$input" }
  - id: fin
    type: assign
    parameters: { target: y, value: "[${input}]" }
"""

SWITCH_ON = """\
name: switch_on
steps:
  - id: first
    type: llm_call
  - id: pick
    type: switch
    parameters:
      "on": "${first}"
      branch.urgent: a
    branches: { urgent: a, _default: b }
  - id: a
    type: assign
    parameters: { target: r, value: "A" }
    next: b
  - id: b
    type: assign
    parameters: { target: s, value: "${concat(input, '!')}" }
"""


@pytest.mark.parametrize("text", [SWITCH, CONDITIONAL, SWITCH_ON], ids=["switch", "conditional", "switch_on"])
@pytest.mark.parametrize("answer", ["URGENT now", "normal", "Bug", "  bug ", "nothing", "", "ſtrange", "urgENT"])
def test_branching_runs_the_same(text, answer):
    wf = _compile(text)
    emission = translate.emit(wf, "instruction")
    assert emission.verdict == "lowered", [d.message for d in emission.diagnostics]
    for prompt in PROMPTS:
        script = {"llm:analyst": {"output": answer}, "llm:assistant": {"output": answer + " (assistant)"}}
        _compare(wf, {"input": prompt + answer}, script)


def test_a_loop_is_a_finding():
    wf = _compile("""\
name: loop
steps:
  - id: a
    type: assign
    parameters: { target: n, value: "1" }
  - id: test
    type: conditional
    parameters: { condition: "${n}" }
    branches: { "true": a, "false": end }
  - id: end
    type: assign
    parameters: { target: r, value: "done" }
""")
    emission = translate.emit(wf, "instruction")
    assert emission.verdict == "approximate"
    assert any("loops back" in d.message for d in emission.diagnostics)
    assert not translate.emit(wf, "instruction", strict=True).ok


def test_roles_an_agent_step_cannot_tell_apart_are_a_finding():
    wf = _compile("""\
name: twins
roles:
  - id: a
    system_prompt: same
  - id: b
    system_prompt: same
steps:
  - id: x
    type: llm_call
    target_role: a
  - id: y
    type: llm_call
    target_role: b
""")
    emission = translate.emit(wf, "instruction")
    assert emission.verdict == "approximate"
    assert any(d.code == "TRN104" for d in emission.diagnostics)


_FEATURES = {"llm_call", "roles", "switch", "conditional", "assign", "templates", "functions", "delay"}


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(strategies.runnable_workflows("aevatar", max_steps=6, features=_FEATURES))
def test_generated_aevatar_workflows_run_the_same(case):
    wf = case.workflow()
    if translate.emit(wf, "instruction").verdict == "approximate":
        return
    _compare(wf, dict(case.inputs), _text_answers(case.host_script))


def _text_answers(script: dict) -> dict:
    """The script with every answer an LLM call can get made text, as a
    model's is (an aevatar step makes any answer text, an agent step keeps
    it: docs/host.md)."""
    import json

    def text(spec):
        if isinstance(spec, list):
            return [text(s) for s in spec]
        if isinstance(spec, dict) and spec.get("echo"):
            return {"output": "echo"}
        if isinstance(spec, dict) and "output" in spec and not isinstance(spec["output"], str):
            return {**spec, "output": json.dumps(spec["output"])}
        if not isinstance(spec, (dict, str)):
            return {"output": json.dumps(spec)}
        return spec

    return {k: text(v) if k == "*" or k.startswith("llm:") else v for k, v in script.items()}
