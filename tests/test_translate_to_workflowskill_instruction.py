"""dialect 3 -> WorkflowSkill: finishes, switch joins and switch labels.

A finish without an output is a workflow without outputs; a finish that
joins every arm of a switch (its cases and its default) always runs, so
the run cannot stall; a switch label that is not numeric text, `true`,
`false`, `null` or JSON of a list or object is compared by `==` exactly,
whatever the type of the value. Each translates without a finding and runs
the same (flowc.testing.translation.cross_dialect); the cases that differ
stay findings.
"""

from __future__ import annotations

import pytest
from flowc.pipeline import driver, translate
from flowc.testing.translation import cross_dialect

SWITCH = """
name: route
inputs:
  schema:
    type: object
    properties:
      mode: {}
steps:
  start: {kind: manual}
  pick:
    kind: switch
    depends_on: [start]
    'on': '{{ inputs.mode }}'
    cases:
      fast: a
      slow: b
    default: c
  a: {kind: tool, depends_on: [pick], name: ta, args: {x: 1}}
  b: {kind: tool, depends_on: [pick], name: tb, args: {x: 2}}
  c: {kind: tool, depends_on: [pick], name: tc, args: {x: 3}}
  done:
    kind: finish
    depends_on: [a, b, c]
"""

VALUES = ("fast", "slow", "other", 1, True, None, ["fast"], {"k": "fast"}, "1", "")


def _compile(text: str):
    result = driver.compile_text(text, "flow.yaml", "instruction")
    assert result.ok, [d for d in result.diagnostics if d.is_error]
    return result.workflow


def _messages(emission) -> list[str]:
    return [d.message for d in emission.diagnostics]


def test_a_finish_joining_every_arm_runs_the_same_without_findings():
    source = _compile(SWITCH)
    emission = translate.emit(source, "workflowskill")
    assert emission.verdict == "lowered", _messages(emission)
    assert "condition" not in emission.text.split("id: done")[1]   # the join always runs
    script = {"*": {"output": "ok"}, "tb": {"error": "down"}}
    for value in VALUES:
        assert cross_dialect(source, "workflowskill", {"mode": value}, script), emission.text


def test_a_finish_that_misses_an_arm_may_stall():
    source = _compile(SWITCH.replace("depends_on: [a, b, c]", "depends_on: [a, b]"))
    assert any("stalled" in m for m in _messages(translate.emit(source, "workflowskill")))


@pytest.mark.parametrize("label", ["1", "true", "null", "[]", " 2 ", "0x1f", "Infinity"])
def test_labels_a_number_boolean_null_or_list_can_equal_stay_findings(label):
    source = _compile(SWITCH.replace("fast: a", f"'{label}': a"))
    assert any("switch compares" in m for m in _messages(translate.emit(source, "workflowskill")))


def test_a_typed_text_value_compares_any_label_exactly():
    text = SWITCH.replace("mode: {}", "mode: {type: string}").replace("fast: a", "'1': a")
    source = _compile(text)
    emission = translate.emit(source, "workflowskill")
    assert emission.verdict == "lowered", _messages(emission)
    for value in ("1", "01", "fast", ""):
        assert cross_dialect(source, "workflowskill", {"mode": value}, {"*": {"output": "ok"}})


def test_a_finish_without_an_output_is_a_workflow_without_outputs():
    source = _compile(SWITCH)
    emission = translate.emit(source, "workflowskill")
    assert "outputs:\n  " not in emission.text.split("steps:")[0]
    assert any(lo.construct == "finish without an output" for lo in emission.lowerings)


def test_finishes_with_and_without_outputs_stay_a_finding():
    text = SWITCH.replace("  done:\n    kind: finish\n    depends_on: [a, b, c]\n",
                          "  done:\n    kind: finish\n    depends_on: [a, b]\n"
                          "  other:\n    kind: finish\n    depends_on: [c]\n    output: {r: '{{ inputs.mode }}'}\n")
    emission = translate.emit(_compile(text), "workflowskill")
    assert any("different output keys" in m for m in _messages(emission))
    # between them, the two finishes take every choice of the switch: the run cannot stall
    assert not any("stalled" in m for m in _messages(emission))


def test_steps_without_a_form_can_still_be_read():
    """A foreach with another body and a noop have no WorkflowSkill form; what
    reads them is still a workflow that checks (found by generated workflows)."""
    text = """
name: reads
steps:
  start: {kind: manual}
  quiet: {kind: noop, depends_on: [start]}
  loop:
    kind: foreach
    depends_on: [quiet]
    over: 'CEL: [1, 2]'
    body:
      steps:
        work: {kind: template, text: 'item {{ item }}'}
  done:
    kind: finish
    depends_on: [loop]
    output: {a: '{{ steps.quiet.output }}', b: '{{ steps.loop.output }}'}
"""
    emission = translate.emit(_compile(text), "workflowskill")
    assert emission.verdict == "approximate"
    back = driver.compile_text(emission.text, "flow.md", "workflowskill")
    assert back.ok, ([d for d in back.diagnostics if d.is_error], emission.text)


CONSTANTS = """
name: constants
steps:
  start: {kind: manual}
  word: {kind: assign, depends_on: [start], value: hello}
  number: {kind: assign, depends_on: [word], value: 3}
  record: {kind: assign, depends_on: [number], value: {a: x, b: [1, "$y"]}}
  done:
    kind: finish
    depends_on: [record]
    output: {w: '{{ steps.word.output }}', n: '{{ steps.number.output }}', r: '{{ steps.record.output }}'}
"""


def test_assigned_constants_run_the_same():
    source = _compile(CONSTANTS)
    emission = translate.emit(source, "workflowskill")
    assert emission.verdict == "lowered", _messages(emission)
    assert cross_dialect(source, "workflowskill", {}, {"*": {"output": "ok"}}), emission.text


def test_an_assigned_constant_starting_with_a_dollar_stays_a_finding():
    source = _compile(CONSTANTS.replace("value: hello", "value: $hello"))
    assert any("map expression value" in m for m in _messages(translate.emit(source, "workflowskill")))


def test_a_list_constant_is_a_transforms_items():
    text = """
name: lists
steps:
  start: {kind: manual}
  big: {kind: map, depends_on: [start], over: 'CEL: [1, "a", [2]]', expr: '{"v": item}'}
  done:
    kind: finish
    depends_on: [big]
    output: {r: '{{ steps.big.output }}'}
"""
    source = _compile(text)
    emission = translate.emit(source, "workflowskill")
    assert emission.verdict == "lowered", _messages(emission)
    assert "          - a\n" in emission.text   # the list, written as it is
    assert cross_dialect(source, "workflowskill", {}, {"*": {"output": "ok"}}), emission.text


def test_inputs_dialect_3_refuses_are_not_compared():
    # dialect 3 refuses a run whose typed input is null; WorkflowSkill takes null for any type.
    # Such inputs are not values the source allows, so the runs are not compared.
    source = _compile(SWITCH.replace("mode: {}", "mode: {type: string}"))
    assert cross_dialect(source, "workflowskill", {"mode": None}, {"*": {"output": "ok"}}) is False
    assert cross_dialect(source, "workflowskill", {"mode": "fast"}, {"*": {"output": "ok"}}) is True
