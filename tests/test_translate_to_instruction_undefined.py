"""WorkflowSkill -> instruction where WorkflowSkill reads *undefined*.

A path that does not resolve in WorkflowSkill (a field of a number, an
absent key, an index past the end) is undefined; in CEL it is an error.
The translation tests whether the path resolves and reads null otherwise,
leaves an undefined argument or object key out, and checks declared output
types, so these translations claim to be exact and run the same: the same
outcome, outputs and host calls, for every host answer below.
"""

from __future__ import annotations

import textwrap

import pytest
from flowc.pipeline import driver, translate
from flowc.testing.translation import cross_dialect

ANSWERS = [
    {"output": {"rows": [{"id": 1, "name": "a"}, {"id": 2}], "total": 2}},
    {"output": {"rows": [1, 2], "total": 2.0}},
    {"output": {"rows": "text", "total": 3.25}},
    {"output": {"total": None}},
    {"output": 5},
    {"output": None},
    {"output": [1, {"k": 2}]},
    {"error": "down"},
]


def _workflow(text: str):
    result = driver.compile_text(textwrap.dedent(text), "w.yaml", "workflowskill")
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics if d.is_error]
    return result.workflow


def _exact_and_same(text: str, inputs: dict, answers=ANSWERS) -> str:
    """The translation has no finding and runs as the source for every answer."""
    wf = _workflow(text)
    emission = translate.emit(wf, "instruction")
    assert emission.verdict != "approximate", [d.message for d in emission.diagnostics]
    for answer in answers:
        assert cross_dialect(wf, "instruction", inputs, {"t0": answer, "t1": {"output": "ok"}})
    return emission.text


def test_fields_of_a_tool_result_of_any_shape():
    _exact_and_same("""\
        steps:
          - id: s0
            type: tool
            tool: t0
          - id: s1
            type: tool
            tool: t1
            inputs:
              rows: {type: array, value: $steps.s0.output.rows}
              first: {type: object, value: "$steps.s0.output.rows[0]"}
              n: {type: int, value: $steps.s0.output.rows.length}
        """, {})


def test_an_undefined_argument_is_left_out():
    text = _exact_and_same("""\
        steps:
          - id: s0
            type: tool
            tool: t0
          - id: s1
            type: tool
            tool: t1
            inputs:
              total: {type: int, value: $steps.s0.output.total}
        """, {})
    assert '"total" in steps.s0.output' in text


def test_a_filter_over_a_field_of_an_item_that_may_not_be_an_object():
    _exact_and_same("""\
        inputs:
          rows: {type: array}
        steps:
          - id: s0
            type: transform
            operation: map
            expression: {name: $item.name, id: $item.id, i: $index}
            inputs:
              items: {type: array, value: $inputs.rows}
          - id: s1
            type: transform
            operation: filter
            where: $item.name == "a"
            inputs:
              items: {type: array, value: $steps.s0.output.items}
        outputs:
          kept: {type: array, value: $steps.s1.output.items}
        """, {"rows": [1, {"name": "a"}, {"id": 2, "name": ""}, None, [3]]}, answers=[{"output": 1}])


@pytest.mark.parametrize("source", ["[1, 2]", "$inputs.cfg.k", '"$steps.s0.output.items[0]"', "$inputs.cfg.rows"])
def test_transform_input_that_is_not_an_array(source):
    """A transform wraps a single value in a list and reads null or
    undefined as no items (runtime.transform_items)."""
    _exact_and_same(f"""\
        inputs:
          cfg: {{type: object}}
        steps:
          - id: s0
            type: transform
            operation: filter
            where: "1"
            inputs:
              items: {{type: array, value: [1, 2]}}
          - id: s1
            type: transform
            operation: filter
            where: "1"
            inputs:
              items: {{type: array, value: {source}}}
        outputs:
          items: {{type: array, value: $steps.s1.output.items}}
        """, {"cfg": {"k": 3}}, answers=[{"output": 1}])
    _exact_and_same(f"""\
        inputs:
          cfg: {{type: object}}
        steps:
          - id: s0
            type: transform
            operation: filter
            where: "1"
            inputs:
              items: {{type: array, value: [1, 2]}}
          - id: s1
            type: transform
            operation: filter
            where: "1"
            inputs:
              items: {{type: array, value: {source}}}
        """, {"cfg": {}}, answers=[{"output": 1}])


def test_declared_output_types_are_checked():
    """WorkflowSkill fails a step whose output has another type than
    declared (a whole double is an int); so does the translation."""
    text = _exact_and_same("""\
        steps:
          - id: s0
            type: tool
            tool: t0
            outputs:
              rows: {type: string, value: $result.rows}
              total: {type: int}
          - id: s1
            type: tool
            tool: t1
        """, {})
    assert "kind: assert" in text


def test_declared_output_types_under_on_error_ignore_and_each():
    _exact_and_same("""\
        inputs:
          rows: {type: array}
        steps:
          - id: s0
            type: tool
            tool: t0
            on_error: ignore
            outputs:
              total: {type: int}
          - id: s1
            type: tool
            tool: t0
            each: $inputs.rows
            outputs:
              total: {type: int}
        """, {"rows": [1, 2]})


@pytest.mark.parametrize("output", ["", "output: $steps.s0.output.rows", "output: $steps.s0.output",
                                    "output: {result: $steps.s0.output.total}"])
def test_exit_outputs(output):
    """An exit without an output object gives the first output only; an
    undefined one gives none (runtime.exit_outputs)."""
    _exact_and_same(f"""\
        outputs:
          result: {{type: string}}
          total: {{type: string}}
        steps:
          - id: s0
            type: tool
            tool: t0
          - id: s1
            type: exit
            status: success
            {output}
        """, {})


def test_a_null_input_compares_as_zero():
    """WorkflowSkill's `<` reads null as 0 (CEL would fail on it)."""
    text = """\
        inputs:
          limit: {type: int}
        steps:
          - id: s0
            type: tool
            tool: t0
            condition: $inputs.limit >= 0
        """
    for limit in (None, -1, 0, 2):
        _exact_and_same(text, {"limit": limit}, answers=[{"output": 1}])


def test_an_input_given_as_null_is_accepted():
    """WorkflowSkill lets null stand for every declared type; the schema says so too."""
    _exact_and_same("""\
        inputs:
          ratio: {type: float}
          n: {type: int, default: 1}
        steps:
          - id: s0
            type: tool
            tool: t0
            inputs:
              n: {type: int, value: $inputs.n}
              ratio: {type: float, value: $inputs.ratio}
        """, {"ratio": None, "n": None})


@pytest.mark.parametrize(("condition", "approximate"), [
    ('$steps.s0.output.total == "a"', False),
    ('$steps.s0.output.rows contains "a"', False),
    ('$steps.s0.output.rows[0] == "a"', False),
    ("$steps.s0.output.total == null", True),
    ("$steps.s0.output.total == $steps.s0.output.rows", True),
    ("$steps.s0.output.total > 1", False),
    ("$steps.s0.output.total <= $steps.s0.output.rows.length", False),
    ("$steps.s0.output.rows > 1", True),
])
def test_comparisons_with_an_undefined_side(condition, approximate):
    """Undefined reads as null where that keeps the meaning (against a
    non-null constant); elsewhere the translation says it may differ."""
    text = f"""\
        steps:
          - id: s0
            type: tool
            tool: t0
            outputs:
              rows: {{type: array, value: $result.rows}}
              total: {{type: int, value: $result.total}}
          - id: s1
            type: tool
            tool: t1
            condition: {condition}
        """
    if approximate:
        emission = translate.emit(_workflow(text), "instruction")
        assert "TRN102" in {d.code for d in emission.diagnostics}
    else:
        _exact_and_same(text, {})


def test_outputs_of_steps_that_did_not_run():
    """A step of the arm a conditional did not take is undefined where it
    is read; a skipped step's output is null."""
    text = """\
        inputs:
          go: {type: boolean}
        steps:
          - id: s0
            type: tool
            tool: t0
          - id: pick
            type: conditional
            condition: $inputs.go
            then: [yes]
            else: [no]
          - id: yes
            type: tool
            tool: t1
          - id: no
            type: tool
            tool: t1
            condition: $inputs.go
            inputs:
              other: {type: object, value: $steps.yes.output}
          - id: after
            type: tool
            tool: t1
            inputs:
              yes: {type: object, value: $steps.yes.output}
              no: {type: object, value: $steps.no.output}
              rows: {type: array, value: $steps.yes.output.rows}
              picked: {type: object, value: $steps.pick.output}
        """
    for go in (True, False):
        _exact_and_same(text, {"go": go}, answers=ANSWERS[:3])


def test_the_length_of_an_array_in_text():
    """An array's length is an integer, which WorkflowSkill and dialect 3
    write alike; an absent or null array gives '' in both."""
    _exact_and_same("""\
        steps:
          - id: s0
            type: tool
            tool: t0
            outputs:
              rows: {type: array}
          - id: s1
            type: tool
            tool: t1
            inputs:
              text: {type: string, value: "${steps.s0.output.rows.length} rows"}
          - id: s2
            type: transform
            operation: filter
            where: "1"
            inputs:
              items: {type: array, value: $steps.s0.output.rows}
          - id: s3
            type: tool
            tool: t1
            inputs:
              text: {type: string, value: "kept ${steps.s2.output.items.length}"}
        outputs:
          said: {type: string, value: "${steps.s2.output.items.length} of ${steps.s0.output.rows.length}"}
        """, {}, answers=ANSWERS + [{"output": {"rows": []}}, {"output": {"rows": None}}])
