"""aevatar -> WorkflowSkill: branches, assigns and pass-through transforms.

A switch or conditional becomes conditional steps that test the keys with
`contains`; an assign and a transform that returns its input become no
step, their text written where it is read. For hand-written and generated
workflows that translate without a finding, running the original and the
translation with the same scripted host gives the same outcome, outputs
and host calls (flowc.testing.translation.cross_dialect). What WorkflowSkill
cannot say stays a finding.
"""

from __future__ import annotations

import itertools

import pytest
from flowc.pipeline import driver, translate
from flowc.runtime import aevatar_text as rta
from flowc.runtime.sequence_run import wfs_contains
from flowc.testing import gen_aevatar
from flowc.testing.translation import cross_dialect
from flowc.translation.workflowskill.lowerings import NEEDLE_CHARS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROMPTS = ("", "urgent", "URGENT: the server is down", "a normal question", "  later  ", "normal later",
           "Ɐ ſ K", "\u017furgent", "yes", "YEſ", "_DEFAULT")


def _compile(text: str):
    result = driver.compile_text(text, "flow.yaml", "aevatar")
    assert result.ok, [d for d in result.diagnostics if d.is_error]
    return result.workflow


def _same_everywhere(text: str, variables: dict | None = None) -> str:
    """Translate, require no finding, and compare runs on every prompt."""
    source = _compile(text)
    emission = translate.emit(source, "workflowskill")
    assert emission.verdict == "lowered", [d.message for d in emission.diagnostics]
    for prompt in PROMPTS:
        assert cross_dialect(source, "workflowskill", {"input": prompt, **(variables or {})},
                             {"*": {"output": "ok"}}), emission.text
    return emission.text


SWITCH_ASSIGNS = """
name: routes
steps:
  - id: route
    type: switch
    parameters: {on: "${input}"}
    branches: {urgent: hot, normal: calm, _default: other}
  - id: hot
    type: assign
    parameters: {target: level, value: "high"}
    next: done
  - id: calm
    type: assign
    parameters: {target: level, value: "low"}
    next: done
  - id: other
    type: assign
    parameters: {target: level, value: "unknown"}
    next: done
  - id: done
    type: assign
    parameters: {target: summary, value: "level ${level} for ${input}"}
"""

CONDITIONAL_PASS_THROUGH = """
name: check
steps:
  - id: first
    type: assign
    parameters: {target: topic, value: "$input"}
  - id: test
    type: conditional
    parameters: {condition: "yes"}
    branches: {"true": same, "false": end}
  - id: same
    type: transform
    parameters: {op: identity}
    next: end
  - id: end
    type: assign
    parameters: {target: out, value: "Topic: ${topic} / ${concat(steps.first.output, '.')}"}
"""

CONSTANT_KEYS = """
name: constant
steps:
  - id: pick
    type: switch
    parameters: {on: "normal"}
    branches: {urgent: a, normal: b, _default: b}
  - id: a
    type: assign
    parameters: {target: x, value: "A"}
    next: b
  - id: b
    type: conditional
    parameters: {condition: "false"}
    branches: {"true": c, "false": d}
  - id: c
    type: assign
    parameters: {target: x, value: "C"}
    next: d
  - id: d
    type: assign
    parameters: {target: y, value: "D ${input}"}
"""


GUARDS = """
name: guards
steps:
  - id: must
    type: guard
    parameters: {check: contains, keyword: urgent}
  - id: may
    type: guard
    parameters: {check: contains, keyword: normal, on_fail: skip}
  - id: out
    type: assign
    parameters: {target: x, value: "checked: ${input}"}
"""


@pytest.mark.parametrize("text", [SWITCH_ASSIGNS, CONDITIONAL_PASS_THROUGH, CONSTANT_KEYS, GUARDS],
                         ids=["switch", "conditional", "constant", "guard"])
def test_branches_and_assigns_run_the_same(text):
    _same_everywhere(text)
    _same_everywhere(text, {"level": "preset", "topic": " t "})   # variables the workflow assigns


def test_a_switch_is_a_chain_of_conditionals_seeking_every_spelling():
    out = _same_everywhere(SWITCH_ASSIGNS.replace("normal", "yes"))
    assert "condition: '$inputs.input contains \"urgent\"'" in out
    assert '$inputs.input contains "yes" || $inputs.input contains "yeſ"' in out
    assert "exit" in out   # the arms hand on different text: each ends the run with its own output


def test_arms_that_hand_on_the_same_text_rejoin():
    text = SWITCH_ASSIGNS
    for level in ("high", "low", "unknown"):
        text = text.replace(f'value: "{level}"', 'value: "$input"')
    out = _same_everywhere(text.replace("level ${level} for ", ""))
    # no conditional is left, and the one exit (a workflow needs a step) carries the input
    assert "conditional" not in out and out.count("type: exit") == 1 and 'output: "$inputs.input"' in out


def test_a_join_reads_the_conditionals_output_when_every_arm_ends_with_a_step():
    text = """
name: join
steps:
  - id: route
    type: conditional
    parameters: {condition: urgent}
    branches: {"true": a, "false": b}
  - id: a
    type: tool_call
    parameters: {tool: t1, arguments: '{"q": "a"}'}
    next: c
  - id: b
    type: tool_call
    parameters: {tool: t2, arguments: '{"q": "b"}'}
  - id: c
    type: llm_call
"""
    emission = translate.emit(_compile(text), "workflowskill")
    assert any(lo.construct == "a join after a branch" for lo in emission.lowerings)
    assert 'prompt: { type: string, value: "$steps.route.output" }' in emission.text
    back = driver.compile_text(emission.text, "flow.md", "workflowskill")
    assert back.ok, [d for d in back.diagnostics if d.is_error]


@pytest.mark.parametrize("text, finding", [
    (SWITCH_ASSIGNS.replace("normal", "ticket"), "TRN102"),            # k: the Kelvin sign lower-cases to k
    (SWITCH_ASSIGNS.replace("normal", "urgent now"), "TRN102"),        # a key inside another key
    (SWITCH_ASSIGNS.replace('on: "${input}"', 'on: "${upper(input)}"'), "TRN101"),
    (CONDITIONAL_PASS_THROUGH.replace('condition: "yes"', 'condition: "${input}"'), "TRN101"),
    (SWITCH_ASSIGNS.replace('value: "high"', 'value: "${level}"'), "TRN102"),   # may start with `$`
    (SWITCH_ASSIGNS.replace("    next: done\n", "    next: route\n", 1), "TRN101"),   # a loop
    (GUARDS.replace("check: contains, keyword: urgent", "check: not_empty"), "TRN101"),   # white space
    (CONDITIONAL_PASS_THROUGH.replace("${topic}", "${subject}"), "TRN102"),   # a run parameter: trimmed
], ids=["kelvin", "nested-key", "computed-on", "computed-condition", "dollar", "loop", "blank-guard",
        "run-parameter"])
def test_what_workflowskill_cannot_say_stays_a_finding(text, finding):
    emission = translate.emit(_compile(text), "workflowskill")
    assert finding in {d.code for d in emission.diagnostics}
    back = driver.compile_text(emission.text, "flow.md", "workflowskill")
    assert back.ok, [d for d in back.diagnostics if d.is_error]


def test_an_llm_call_is_still_another_host_request():
    # WorkflowSkill asks the host for a tool; the host protocol compares the
    # capability too, so no documented lowering makes this the same request.
    text = "name: x\nsteps:\n  - id: a\n    type: llm_call\n"
    emission = translate.emit(_compile(text), "workflowskill")
    assert [d.code for d in emission.diagnostics] == ["TRN104"]


def test_a_workflow_that_only_computes_ends_with_an_exit():
    text = "name: x\nsteps:\n  - id: a\n    type: assign\n    parameters: {target: v, value: '$input'}\n"
    out = _same_everywhere(text)
    assert "type: exit" in out


# ------------------------------------------------------------------ the key table
def _case_classes():
    upper: dict[str, set[str]] = {}
    lower: dict[str, set[str]] = {}
    multi: set[str] = set()
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        y = chr(cp)
        upper.setdefault(rta.upper(y), set()).add(y)
        low = y.lower()
        if len(low) == 1:
            lower.setdefault(low, set()).add(y)
        else:
            multi.update(low)
    return upper, lower, multi


def test_the_key_table_finds_what_aevatar_finds_for_every_character():
    """For each key character: the characters aevatar's upper-casing takes
    for it are exactly those WorkflowSkill's lower-casing takes for one of
    its spellings, and no spelling is part of a longer lower-casing (İ) or
    of a Greek sigma (lower-cased by context)."""
    upper, lower, multi = _case_classes()
    for c, spellings in NEEDLE_CHARS.items():
        found = set().union(*(lower[d.lower()] for d in spellings))
        assert upper[rta.upper(c)] == found, c
        for d in spellings:
            assert len(d.lower()) == 1 and d.lower() not in multi, d
            assert "\u03a3" not in upper[rta.upper(d)] | lower[d.lower()], d
    for c in "ikIK":
        assert c not in NEEDLE_CHARS


TRICKY = "aAsSſkKKiIıİ \t-_ueURGENT\u0307"


@settings(max_examples=300, deadline=None)
@given(st.text(TRICKY, max_size=8), st.text("asSuegnrt _-", min_size=1, max_size=4))
def test_the_spellings_agree_with_aevatar_on_tricky_text(text, key):
    spellings = ["".join(p) for p in itertools.product(*(NEEDLE_CHARS[c] for c in key))]
    # aevatar: the key in the text, both upper-cased one character each
    assert (rta.upper(key) in rta.upper(text)) == any(wfs_contains(text, s) for s in spellings)


# ------------------------------------------------------------------ generated workflows
COMPUTING = frozenset({"assign", "transform", "conditional", "switch", "guard", "templates", "functions"})


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_generated_workflows_that_only_compute_run_the_same(data):
    doc = data.draw(gen_aevatar.documents(8, COMPUTING))
    result = driver.compile_text(gen_aevatar.to_text(doc), "workflow.yaml", "aevatar")
    if not result.ok:
        return
    emission = translate.emit(result.workflow, "workflowskill")
    back = driver.compile_text(emission.text, "workflow.md", "workflowskill")
    assert back.ok, ([d for d in back.diagnostics if d.is_error], emission.text)
    inputs = data.draw(gen_aevatar.run_inputs(doc))
    cross_dialect(result.workflow, "workflowskill", inputs, data.draw(gen_aevatar.host_scripts(doc)))


def test_step_ids_a_reference_cannot_hold_are_renamed():
    text = """
name: ids
steps:
  - id: fetch-data
    type: tool_call
    parameters: {tool: t1}
  - id: route-it
    type: conditional
    parameters: {condition: urgent}
    branches: {"true": say-yes, "false": say-no}
  - id: say-yes
    type: llm_call
    parameters: {prompt_prefix: "Yes: ${steps.fetch-data.output}"}
    next: end-step
  - id: say-no
    type: llm_call
  - id: end-step
    type: assign
    parameters: {target: x, value: "done ${input}"}
"""
    emission = translate.emit(_compile(text), "workflowskill")
    back = driver.compile_text(emission.text, "flow.md", "workflowskill")
    assert back.ok, ([d for d in back.diagnostics if d.is_error], emission.text)
    assert "${steps.fetch_data.output}" in emission.text and "then: [say_yes]" in emission.text


def test_an_assign_of_known_text_is_not_taken_for_the_input():
    text = """
name: known
steps:
  - id: a
    type: assign
    parameters: {target: x, value: "plain"}
  - id: b
    type: assign
    parameters: {target: y, value: "${x} and ${input}"}
"""
    out = _same_everywhere(text)
    assert 'output: plain and plain' in out   # b's input is a's output


def test_arms_handing_different_text_to_a_host_call_fall_back_to_the_straight_path():
    text = """
name: fallback
steps:
  - id: route
    type: conditional
    parameters: {condition: urgent}
    branches: {"true": mark, "false": ask}
  - id: mark
    type: assign
    parameters: {target: x, value: "URGENT"}
    next: ask
  - id: ask
    type: llm_call
"""
    emission = translate.emit(_compile(text), "workflowskill")
    assert any("no nested WorkflowSkill form" in d.message for d in emission.diagnostics)
    back = driver.compile_text(emission.text, "flow.md", "workflowskill")
    assert back.ok, ([d for d in back.diagnostics if d.is_error], emission.text)


def test_a_key_leading_where_the_default_leads_still_stops_the_later_keys():
    text = """
name: first
steps:
  - id: route
    type: switch
    branches: {alpha: plain, beta: other, _default: plain}
  - id: other
    type: assign
    parameters: {target: x, value: "B"}
    next: plain
  - id: plain
    type: assign
    parameters: {target: y, value: "got ${input}"}
"""
    source = _compile(text)
    for prompt in ("alpha beta", "beta", "Alpha", "none"):
        assert cross_dialect(source, "workflowskill", {"input": prompt}, {}), prompt


@st.composite
def _switches(draw):
    """A switch with keys that may lead to the same step, to the join or to the default's step."""
    keys = draw(st.lists(st.sampled_from(["ab", "cd", "ef", "x y", "ba", "dC"]), min_size=1, max_size=4, unique=True))
    targets = ["t0", "t1", "join"]
    routes = {k: draw(st.sampled_from(targets)) for k in keys + ["_default"]}
    lines = ["name: generated", "steps:", "  - id: route", "    type: switch",
             "    branches: {" + ", ".join(f'"{k}": {t}' for k, t in routes.items()) + "}"]
    for t in targets[:2]:
        lines += [f"  - id: {t}", "    type: assign", f"    parameters: {{target: v, value: \"{t.upper()}\"}}",
                  "    next: join"]
    lines += ["  - id: join", "    type: assign", "    parameters: {target: w, value: \"got ${input}\"}"]
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(_switches(), st.lists(st.sampled_from(["ab", "cd", "EF", "x y", "ba", "dc", "ſ", " ", "q"]),
                             max_size=4).map("".join))
def test_generated_switches_take_the_branch_aevatar_takes(text, prompt):
    source = _compile(text)
    cross_dialect(source, "workflowskill", {"input": prompt}, {})


def test_functions_of_text_known_on_the_path_are_computed():
    text = """
name: fold
steps:
  - id: a
    type: assign
    parameters: {target: x, value: "hello world"}
  - id: b
    type: assign
    parameters: {target: y, value: "n=${length(input)} ${upper(x)} ${if(eq(x, 'hello world'), 'same', 'other')}"}
"""
    out = _same_everywhere(text)
    assert "n=11 HELLO WORLD same" in out


@pytest.mark.parametrize("op", ["uppercase", "count", "take", "trim", "split", "distinct", "reverse_lines"])
def test_a_transform_of_text_known_on_the_path_is_computed(op):
    text = f"""
name: fold
steps:
  - id: a
    type: assign
    parameters: {{target: x, value: " Hello  World\\nb,c\\nb,c "}}
  - id: b
    type: transform
    parameters: {{op: {op}, n: "1", separator: ","}}
"""
    assert "type: transform" not in _same_everywhere(text)


def test_a_transform_the_kernel_reads_otherwise_stays_a_finding():
    # flowc's kernel reads `op` only, and approximates json_extract's pretty-printing
    for params in ("{operation: uppercase}", "{op: json_extract, path: a}"):
        text = ("name: x\nsteps:\n  - id: a\n    type: assign\n    parameters: {target: v, value: '{\"a\": 1}'}\n"
                f"  - id: b\n    type: transform\n    parameters: {params}\n")
        emission = translate.emit(_compile(text), "workflowskill")
        assert emission.verdict == "approximate", params
