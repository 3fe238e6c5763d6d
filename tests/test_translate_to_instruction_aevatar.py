"""aevatar -> dialect 3: constructs the translation writes exactly.

Each case runs the aevatar source and its translation with the same
scripted host (flowc.testing.translation.cross_dialect: the same outcome,
outputs and host calls, an ``llm_call`` and its ``agent`` step compared as
one request) and checks that the translation claims to be exact.
"""

from __future__ import annotations

import textwrap

import pytest
from flowc.backends.python import compile_workflow, load_module
from flowc.pipeline import driver, translate
from flowc.testing.translation import cross_dialect

PROMPTS = ("", "urgent: the server is down", "  BUG  ")
# An LLM may answer text, JSON data, nothing, or fail.
ANSWERS = ("fine", {"k": [1, 2.5, "é"]}, [1, True], None, 7, True)


def _workflow(text: str):
    result = driver.compile_text(textwrap.dedent(text), "flow.yaml", "aevatar")
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics if d.is_error]
    return result.workflow


def _exact_and_same(text: str, scripts: list[dict]) -> str:
    wf = _workflow(text)
    emission = translate.emit(wf, "instruction")
    assert emission.verdict != "approximate", [d.message for d in emission.diagnostics]
    for script in scripts:
        for prompt in PROMPTS:
            assert cross_dialect(wf, "instruction", {"input": prompt}, script)
    return emission.text


def test_an_llm_answer_of_any_shape_becomes_text():
    """aevatar makes every answer text (data as compact JSON, null as '');
    the translation passes the agent's answer through a template's text."""
    text = _exact_and_same("""\
        name: chain
        steps:
          - id: first
            type: llm_call
          - id: second
            type: llm_call
        """, [{"llm:assistant": [{"output": a}, {"output": "done"}]} for a in ANSWERS]
        + [{"llm:assistant": {"echo": True}}, {"llm:assistant": {"error": "down"}}])
    assert "text: \"{{ steps.first_answer.output }}\"" in text


def test_a_tool_result_becomes_text():
    """A tool_call's output is its result as text; so is the translation's."""
    _exact_and_same("""\
        name: tools
        steps:
          - id: fetch
            type: tool_call
            parameters:
              tool: search
              arguments: '{"q": "x", "n": 2}'
          - id: answer
            type: llm_call
        """, [{"tool:search": {"output": a}, "llm:assistant": {"echo": True}} for a in ANSWERS]
        + [{"tool:search": {"error": "down"}, "llm:assistant": {"output": "x"}}])


@pytest.mark.parametrize("op", ["identity", " Identity ", "rot13", ""])
def test_a_transform_that_keeps_its_input(op):
    text = _exact_and_same(f"""\
        name: passthrough
        steps:
          - id: shape
            type: transform
            parameters:
              op: "{op}"
          - id: answer
            type: llm_call
        """, [{"llm:assistant": {"echo": True}}])
    assert "kind: noop" not in text


def test_a_transform_that_changes_its_input_stays_a_finding():
    emission = translate.emit(_workflow("""\
        name: upper
        steps:
          - id: shape
            type: transform
            parameters:
              op: uppercase
        """), "instruction")
    assert "TRN101" in {d.code for d in emission.diagnostics}


@pytest.mark.parametrize(("parameters", "fails_on"), [
    ({"check": "not_empty"}, {"", "  "}),
    ({"check": "not_empty", "on_fail": "fail"}, {"", "  "}),
    ({"check": "contains", "keyword": "BUG"}, {"", "urgent: the server is down"}),
    ({"check": "contains", "keyword": "ß@"}, None),
    ({"check": "json_valid", "on_fail": "skip"}, set()),
])
def test_a_guard(parameters, fails_on):
    """A guard that fails the run is an assert before the pass-through;
    with on_fail: skip it never fails."""
    lines = "\n".join(f"              {k}: \"{v}\"" for k, v in parameters.items())
    text = f"""\
        name: guarded
        steps:
          - id: check
            type: guard
            parameters:
{lines}
          - id: answer
            type: llm_call
        """
    _exact_and_same(text, [{"llm:assistant": {"echo": True}}])
    if fails_on is None:
        return
    wf = _workflow(text)
    for prompt in PROMPTS:
        record = load_module(compile_workflow(wf)).run({"input": prompt}, _Host())
        assert (record["status"] == "failed") == (prompt in fails_on), (prompt, record["status"])


class _Host:
    def call(self, capability, name, args):
        return "ok"

    def sleep(self, ms) -> None:
        pass


RECOVERY = """\
    name: recover
    steps:
      - id: ask
        type: llm_call
        on_error: {strategy: fallback, fallback_step: sorry}
      - id: polish
        type: tool_call
        parameters: {tool: polish, arguments: '{"style": "short"}'}
        on_error: {strategy: skip%s}
      - id: done
        type: assign
        parameters: {value: "$input"}
        next: end_
      - id: sorry
        type: llm_call
        parameters: {prompt_prefix: "apologise for"}
      - id: end_
        type: llm_call
    """
FAILURES = ({"error": "down"}, {"error": "TIMEOUT"}, {"error": "request timed out after 30 s"},
            {"error": "timeouts are rare"}, {"throw": "adapter exploded"})


@pytest.mark.parametrize("default", ["", ", default_output: n/a"])
def test_on_error_skip_and_fallback(default):
    """skip goes on to the next step with default_output (else ''), fallback
    to its target with the error message; a timeout fails the run."""
    outcomes = [{"output": "fine"}, {"output": {"k": 1}}, *FAILURES]
    scripts = [{"llm:assistant": [first, {"output": "second"}, {"echo": True}], "tool:polish": tool}
               for first in outcomes for tool in outcomes]
    text = _exact_and_same(RECOVERY % default, scripts)
    assert "on_error: continue" in text


def test_on_error_of_a_guard_stays_a_finding():
    emission = translate.emit(_workflow("""\
        name: lost
        steps:
          - id: ask
            type: llm_call
            on_error: {strategy: skip}
          - id: check
            type: guard
            on_error: {strategy: skip}
        """), "instruction")
    assert any("on_error skip" in d.message for d in emission.diagnostics)


def test_a_computed_prompt_prefix_ending_in_text():
    """aevatar trims the end of the evaluated prefix; when it ends in text
    that is not white space, that is the template with its text trimmed."""
    text = _exact_and_same("""\
        name: prefixed
        steps:
          - id: topic
            type: assign
            parameters: {target: topic, value: "  birds  "}
          - id: nothing
            type: assign
            parameters: {target: empty, value: ""}
          - id: ask
            type: llm_call
            parameters:
              prompt_prefix: |
                Write about ${topic} for ${input}${empty}.
                Be brief.   \t
        """, [{"llm:assistant": {"echo": True}}])
    assert "Be brief.\\n\\n" in text or "Be brief.\n\n" in text


def test_a_computed_prompt_prefix_ending_in_a_value_stays_a_finding():
    emission = translate.emit(_workflow("""\
        name: prefixed
        steps:
          - id: ask
            type: llm_call
            parameters:
              prompt_prefix: "About: ${topic}"
        """), "instruction")
    assert any("prompt_prefix" in d.message for d in emission.diagnostics)


@pytest.mark.parametrize("session", [None, "", "  ", "s-1"])
def test_if_on_isblank(session):
    """``if(isBlank(x), a, b)``: a ternary on a white-space-only test."""
    text = """\
        name: profile
        steps:
          - id: derive
            type: assign
            parameters:
              target: profile
              value: "${if(isBlank(input), 'openclaw', concat('openclaw-', input))}"
          - id: flag
            type: assign
            parameters:
              target: flag
              value: "${not(isBlank(session_id))}"
          - id: ask
            type: llm_call
            parameters:
              prompt_prefix: "Profile ${profile}, session given: ${flag}."
        """
    wf = _workflow(text)
    emission = translate.emit(wf, "instruction")
    assert emission.verdict != "approximate", [d.message for d in emission.diagnostics]
    inputs = {"input": "go"} if session is None else {"input": session, "session_id": session}
    assert cross_dialect(wf, "instruction", inputs, {"llm:assistant": {"echo": True}})


def test_a_run_parameter_is_read_exactly_only_by_isblank():
    """aevatar trims a run parameter and drops it when blank; isBlank() of
    it reads the same as given, anything else is a finding."""
    emission = translate.emit(_workflow("""\
        name: params
        steps:
          - id: a
            type: assign
            parameters: {value: "${concat('id-', session_id)}"}
        """), "instruction")
    assert any("run parameter 'session_id'" in d.message for d in emission.diagnostics)


@pytest.mark.parametrize("condition", ["${eq(input, 'fast')}", "${isBlank(mode)}", "${not(eq(input, 'BUG'))}"])
def test_a_conditional_on_a_computed_flag(condition):
    """A condition that evaluates to 'true'/'false' decides the branch as that flag."""
    text = f"""\
        name: routed
        steps:
          - id: pick
            type: conditional
            parameters:
              condition: "{condition}"
            branches:
              "true": quick
              "false": slow
          - id: quick
            type: llm_call
            parameters: {{prompt_prefix: quick}}
            next: end_
          - id: slow
            type: llm_call
            parameters: {{prompt_prefix: slow}}
          - id: end_
            type: assign
            parameters: {{value: "$input"}}
        """
    wf = _workflow(text)
    emission = translate.emit(wf, "instruction")
    assert emission.verdict != "approximate", [d.message for d in emission.diagnostics]
    for mode in (None, "fast", "slow", " "):
        for prompt in PROMPTS + ("BUG", "fast"):
            inputs = {"input": prompt} if mode is None else {"input": prompt, "mode": mode}
            assert cross_dialect(wf, "instruction", inputs, {"llm:assistant": {"echo": True}})
