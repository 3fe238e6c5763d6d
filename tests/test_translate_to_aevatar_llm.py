"""Dialect-3 `agent` steps -> aevatar `llm_call` steps on generated roles.

An agent step becomes an `assign` of its instruction text, then an
`llm_call` without `prompt_prefix` (the engine's prompt is then the step
input, the assigned text) on a role carrying the agent's `system` and
`model`. docs/host.md makes the two the same LLM request; these tests run
the source and its translation with the same answers
(flowc.testing.translation.cross_dialect: outcome, output, calls by prompt
text) and also compare each request's system prompt and model. The answer
is text in aevatar, so reading it other than inside text is a finding.
"""

from __future__ import annotations

import itertools

import pytest
from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.pipeline import driver, translate
from flowc.testing import gen_instruction
from flowc.testing.translation import cross_dialect
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _compile(text: str, dialect: str = "instruction"):
    result = driver.compile_text(text, "workflow.yaml", dialect)
    assert result.ok, [d for d in result.diagnostics if d.is_error]
    return result.workflow


def _emit(wf):
    return translate.emit(wf, "aevatar")


def _codes(wf) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in _emit(wf).diagnostics]


# Host answers of every JSON shape, failures included: aevatar makes each text.
ANSWERS = ["Sunny.", "", "  padded\n", "$not a variable", None, 3, 2.5, True, [1, "a"], {"k": "v\n", "n": 1},
           {"error": "rate limited"}, {"throw": "adapter down"}, {"echo": True}]


def _spec(answer) -> dict:
    if isinstance(answer, dict) and set(answer) <= {"error", "throw", "echo"}:
        return answer
    return {"output": answer}


def _requests(wf, inputs: dict, script: dict) -> list[tuple]:
    """The LLM requests a run makes, as docs/host.md equates them: (prompt,
    system prompt, model, other role settings) for an aevatar llm_call,
    (instruction, system, model, other fields) for an agent step."""
    record = load_module(compile_workflow(wf)).run(inputs, ScriptedHost(script))
    out = []
    for call in record["calls"]:
        if call["capability"] != "llm":
            continue
        args = call["args"]
        if "prompt" in args:
            role = dict(args.get("role") or {})
            role.pop("id", None)
            implicit = role.pop("implicit", None) == "true"
            out.append((args["prompt"], role.pop("system_prompt", None), role.pop("model", None),
                        sorted(role), sorted(k for k in args if k not in ("prompt", "role")), implicit or None))
        else:
            out.append((args["instruction"], args.get("system"), args.get("model"), [],
                        sorted(k for k in args if k not in ("instruction", "system", "model")), None))
    return out


def _same_requests(wf, inputs: dict, script: dict) -> None:
    """The translation asks the host the same LLM requests (prompt, system
    prompt and model), in the same order."""
    aevatar = _compile(_emit(wf).text, "aevatar")
    want = [r[:5] for r in _requests(wf, inputs, script)]
    got = [r[:5] for r in _requests(aevatar, inputs, script)]
    assert want and got == want, (want, got)


def _host(script: dict) -> dict:
    """One script answering both dialects' LLM calls (`llm:agent` and every
    role's `llm:<role>`) the same."""
    out = dict(script)
    answer = script.get("llm:agent")
    if answer is not None:
        for role in ("assistant", "role_1", "role_2", "role_3"):
            out[f"llm:{role}"] = answer
    return out


def _all_compared(wf, cases) -> int:
    emission = _emit(wf)
    assert emission.verdict == "lowered", [d.message for d in emission.diagnostics]
    n = 0
    for inputs, script in cases:
        assert cross_dialect(wf, "aevatar", inputs, script), (inputs, script)
        n += 1
    return n


# ------------------------------------------------------------------ a constant instruction
CONSTANT = """\
name: greet
steps:
  start: { kind: manual }
  ask: { kind: agent, depends_on: start, instruction: "Say hello.\\n\\nBriefly.", system: "  You are terse.\\n",
         model: claude-x }
  done: { kind: finish, depends_on: ask, output: { reply: "Reply: {{ steps.ask.output }}" } }
"""


def test_a_constant_instruction_is_an_llm_call_on_a_role():
    wf = _compile(CONSTANT)
    n = _all_compared(wf, [({}, {"llm:agent": _spec(a)}) for a in ANSWERS])
    assert n == len(ANSWERS)
    text = _emit(wf).text
    assert "roles:\n  - id: role_1\n    system_prompt: |2\n        You are terse.\n    model: claude-x\n" in text
    assert "  - id: ask_prompt\n    type: assign\n    parameters:\n      value: |-\n        Say hello.\n\n        Briefly.\n" in text
    assert "  - id: ask\n    type: llm_call\n    target_role: role_1\n" in text
    assert "prompt_prefix" not in text and "flowc TRN" not in text
    assert any(lo.construct == "agent" for lo in _emit(wf).lowerings)
    _same_requests(wf, {}, _host({"llm:agent": {"output": "hi"}}))


def test_the_prompt_is_the_instruction_byte_for_byte():
    # aevatar trims a prompt_prefix and adds a blank line; the assign form
    # sends the instruction as it is, white space and all
    wf = _compile(CONSTANT)
    requests = _requests(_compile(_emit(wf).text, "aevatar"), {}, {"llm:role_1": {"output": "hi"}})
    assert requests == [("Say hello.\n\nBriefly.", "  You are terse.\n", "claude-x", [], [], None)]


def test_an_agent_without_system_or_model_runs_on_the_implicit_role():
    wf = _compile(CONSTANT.replace(', system: "  You are terse.\\n",\n         model: claude-x', ""))
    text = _emit(wf).text
    assert "roles:" not in text and "target_role" not in text
    requests = _requests(_compile(text, "aevatar"), {}, {"llm:assistant": {"output": "hi"}})
    assert requests == [("Say hello.\n\nBriefly.", None, None, [], [], True)]
    _all_compared(wf, [({}, {"llm:agent": _spec(a)}) for a in ANSWERS])


# ------------------------------------------------------------------ a templated instruction
TEMPLATED = """\
name: weather
inputs:
  schema: { type: object, required: [days, go], properties: { days: { type: integer }, go: { type: boolean } } }
steps:
  start: { kind: manual }
  fetch: { kind: tool, name: forecast, depends_on: start, args: { q: weather } }
  ask: { kind: agent, depends_on: fetch, when: inputs.go,
         instruction: "Summarize {{ steps.fetch.output }} for {{ inputs.days }} days ({{ inputs.go }}).",
         system: Be brief., model: m1 }
  done: { kind: finish, depends_on: [ask, start], output: { output: "done" } }
"""

TOOL_ANSWERS = ["rain", "", None, 7, -1.5, False, ["a", {"b": None}], {"t": "x\ty", "u": "\u00e9"}, {"error": "down"}]


def test_a_templated_instruction_over_a_tool_result_sends_the_same_prompt():
    wf = _compile(TEMPLATED)
    cases = [({"days": days, "go": go}, {"tool:forecast": _spec(tool), "llm:agent": _spec(answer)})
             for days, go, tool, answer in itertools.product((0, 3), (True, False), TOOL_ANSWERS,
                                                            ("ok", {"k": 1}, {"error": "x"}))]
    assert _all_compared(wf, cases) == len(cases)
    text = _emit(wf).text
    # the when is a conditional before the prompt's assign, which the llm_call follows
    assert "  - id: ask_if\n    type: conditional\n" in text
    assert '      "true": ask_prompt\n' in text
    assert "value: Summarize ${steps.fetch.output} for ${days} days (${go}).\n" in text
    for tool in TOOL_ANSWERS[:-1]:
        _same_requests(wf, {"days": 2, "go": True}, _host({"tool:forecast": _spec(tool),
                                                           "llm:agent": {"output": "ok"}}))


def test_an_instruction_that_may_start_with_a_dollar_is_a_finding():
    # aevatar's assign hands on its input instead of a value starting with `$`
    starts = TEMPLATED.replace('"Summarize {{ steps.fetch.output }}', '"{{ steps.fetch.output }}')
    assert any(c == "TRN102" and "prompt" in m for c, m in _codes(_compile(starts)))
    dollar = _compile(CONSTANT.replace('"Say hello.', '"$Say hello.'))
    assert any(c == "TRN102" and "prompt" in m for c, m in _codes(dollar))
    # and it would differ: the prompt is the assign's input
    aevatar = _compile(_emit(dollar).text, "aevatar")
    assert _requests(aevatar, {}, {"llm:role_1": "x"})[0][0] != "$Say hello.\n\nBriefly."


# ------------------------------------------------------------------ roles
ROLES = """\
name: review
steps:
  start: { kind: manual }
  draft: { kind: agent, depends_on: start, instruction: "Draft a note.", system: You write., model: m1 }
  other: { kind: agent, depends_on: draft, instruction: "Critique: {{ steps.draft.output }}", system: You judge.,
           model: m1 }
  final: { kind: agent, depends_on: other, instruction: "Rewrite {{ steps.draft.output }} per {{ steps.other.output }}",
           system: You write., model: m1 }
  done: { kind: finish, depends_on: final, output: { output: "Final: {{ steps.final.output }}" } }
"""


def test_agents_with_the_same_system_prompt_and_model_share_a_role():
    wf = _compile(ROLES)
    text = _emit(wf).text
    assert text.count("  - id: role_") == 2
    assert "  - id: role_1\n    system_prompt: You write.\n    model: m1\n" in text
    assert "  - id: role_2\n    system_prompt: You judge.\n    model: m1\n" in text
    assert [line for line in text.splitlines() if "target_role" in line] == [
        "    target_role: role_1", "    target_role: role_2", "    target_role: role_1"]
    answers = [[{"output": a}, {"output": b}, {"output": c}]
               for a, b, c in itertools.product(("x", {"d": 1}), ("y", None, [2]), ("z", 5))]
    _all_compared(wf, [({}, {"llm:agent": seq}) for seq in answers])
    aevatar = _compile(text, "aevatar")
    script = {"llm:role_1": {"output": "w"}, "llm:role_2": {"output": "j"}}
    assert [r[:3] for r in _requests(aevatar, {}, script)] == [
        ("Draft a note.", "You write.", "m1"), ("Critique: w", "You judge.", "m1"),
        ("Rewrite w per j", "You write.", "m1")]
    _same_requests(wf, {}, _host({"llm:agent": {"output": "w"}}))


def test_role_ids_are_stable():
    assert _emit(_compile(ROLES)).text == _emit(_compile(ROLES)).text
    # a step named like the prompt's assign: the assign takes another id
    clash = ROLES.replace("  done:", "  draft_prompt: { kind: template, depends_on: final, text: \"t\" }\n  done:")
    clash = clash.replace("done: { kind: finish, depends_on: final", "done: { kind: finish, depends_on: draft_prompt")
    text = _emit(_compile(clash)).text
    assert "  - id: draft_prompt_2\n    type: assign\n" in text
    assert driver.compile_text(text, "flow.yaml", "aevatar").ok


# ------------------------------------------------------------------ findings
def test_an_answer_read_as_data_is_a_finding():
    # dialect 3 keeps the host's value, aevatar its text: a whole placeholder
    # or a field of the answer does not read text
    whole = _compile(CONSTANT.replace('"Reply: {{ steps.ask.output }}"', '"{{ steps.ask.output }}"'))
    assert any(c == "TRN102" and "whole output is its JSON text" in m for c, m in _codes(whole))
    field = _compile(CONSTANT.replace("{{ steps.ask.output }}", "{{ steps.ask.output.k }}"))
    assert any(c == "TRN102" and "not declared" in m for c, m in _codes(field))
    # and the runs would differ for a structured answer
    source = load_module(compile_workflow(whole)).run({}, ScriptedHost({"llm:agent": {"output": {"k": 1}}}))
    aevatar = _compile(_emit(whole).text, "aevatar")
    run = load_module(compile_workflow(aevatar)).run({}, ScriptedHost({"llm:role_1": {"output": {"k": 1}}}))
    assert source["outputs"] == {"reply": {"k": 1}} and run["outputs"] == {"output": '{"k":1}'}


@pytest.mark.parametrize("field, code", [("tools: [search]", "TRN104"),
                                         ("output_schema: { type: object }", "TRN104"),
                                         ("effort: high", "TRN104"),
                                         ("skills: [s]", "TRN101")])
def test_other_agent_fields_are_findings(field, code):
    wf = _compile(CONSTANT.replace("model: claude-x }", f"model: claude-x, {field} }}"))
    name = field.split(":")[0]
    assert any(c == code and name in m for c, m in _codes(wf))
    assert "type: llm_call" in _emit(wf).text


def test_a_computed_system_prompt_is_a_finding():
    wf = _compile(CONSTANT.replace('system: "  You are terse.\\n"', 'system: "{{ steps.start.output }}"'))
    assert any(c == "TRN104" and "system" in m for c, m in _codes(wf))


def test_think_is_an_llm_call_with_a_finding():
    wf = _compile(CONSTANT.replace("kind: agent", "kind: think").replace("instruction:", "prompt:"))
    assert any(c == "TRN104" and "llm:think" in m for c, m in _codes(wf))
    assert "type: llm_call" in _emit(wf).text
    judge = CONSTANT.replace("kind: agent", "kind: judge").replace('instruction: "Say hello.\\n\\nBriefly.", '
                                                                     'system: "  You are terse.\\n",\n         '
                                                                     "model: claude-x", "input: x, rubric: r")
    assert any(c == "TRN101" for c, _m in _codes(_compile(judge)))


# ------------------------------------------------------------------ generated workflows
def test_generated_workflows_with_agents_run_the_same():
    seen = {"compared": 0, "llm": 0}

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
              database=None)
    @given(st.data())
    def check(data):
        doc = data.draw(gen_instruction.documents(6, frozenset({"agent", "tool", "template", "when", "templates"})))
        props = ((doc.get("inputs") or {}).get("schema") or {}).get("properties") or {}
        if props:
            doc["inputs"]["schema"]["required"] = sorted(props)
            for p in props.values():
                p.pop("default", None)  # aevatar run parameters have no defaults
        for step in doc["steps"].values():
            if step.get("kind") == "finish":
                step["output"] = {"output": "done"}
            elif step.get("kind") == "agent":
                # constant text first: a prompt that may start with `$` is a finding (tested above)
                step["instruction"] = "Q: " + step["instruction"]
        wf = _compile(gen_instruction.to_text(doc))
        inputs = {k: data.draw({"integer": st.integers(-2, 9), "string": st.sampled_from(["a", ""]),
                                "array": st.lists(st.integers(0, 5), max_size=3)}[p["type"]])
                  for k, p in props.items()}
        if cross_dialect(wf, "aevatar", inputs, data.draw(gen_instruction.host_scripts(doc))):
            seen["compared"] += 1
            seen["llm"] += "type: llm_call" in _emit(wf).text

    check()
    assert seen["compared"] >= 20 and seen["llm"] >= 10, seen
