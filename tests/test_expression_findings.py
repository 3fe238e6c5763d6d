"""Expression errors are reported with the shape errors around them (not
after those are fixed), in flowc's words rather than the parser's, in every
dialect."""

from __future__ import annotations

import pytest
from flowc.pipeline import driver

WFS = """\
inputs:
  rows: {type: array}
outputs:
  n: {type: int, value: $steps.keep.output.items.length}
steps:
  - id: keep
    type: STEP_TYPE
    operation: OPERATION
    where: WHERE
    inputs:
      items: {type: array, value: $inputs.rows}
    outputs:
      items: {type: array}
"""


def _findings(text: str, dialect: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in driver.compile_text(text, "workflow.yaml", dialect).diagnostics]


def _wfs(step_type="transform", operation="filter", where="$item.score >=") -> list[tuple[str, str]]:
    text = WFS.replace("STEP_TYPE", step_type).replace("OPERATION", operation).replace("WHERE", where)
    return _findings(text, "workflowskill")


def test_a_misspelled_operation_does_not_hide_the_where_error():
    found = _wfs(operation="filtr")
    codes = [code for code, _ in found]
    assert "WFS106" in codes and "WFS201" in codes
    assert ("WFS201", ("invalid expression in `where`: the expression ends where a value was expected "
                       "(after `>=`)")) in found


def test_an_unknown_step_type_does_not_hide_the_where_error():
    codes = [code for code, _ in _wfs(step_type="transfrom")]
    assert "WFS106" in codes and "WFS201" in codes


@pytest.mark.parametrize("where, words", [
    ("$item.score >=", "the expression ends where a value was expected"),
    ("$item.score == 1 2", "the expression is complete before the number 2"),
    ("($item.score", "expected `)` to close the `(`, found the end of the expression"),
    ("$item.", "expected a property name after `.`, found the end of the expression"),
    ("$item.a == done", "expected a value, found the bare word 'done'"),
    ("$item.a == 'x", "the string that starts here has no closing '"),
    ("$item.a == $", "`$` must be followed by a name"),
    ("$item.a # 1", "'#' cannot appear in an expression"),
])
def test_workflowskill_expression_errors_speak_flowc(where, words):
    messages = [m for code, m in _wfs(where=f'"{where}"') if code == "WFS201"]
    assert len(messages) == 1 and words in messages[0], messages
    assert "Unexpected token" not in messages[0] and "EOF" not in messages[0]


INSTRUCTION = """\
version: 3
name: t
steps:
  go:
    kind: manual
  a:
    kind: KIND
    depends_on: [go]
    when: "WHEN"
  b:
    kind: finish
    depends_on: [a]
"""


@pytest.mark.parametrize("when, words", [
    ("inputs.x == ", "the expression ends where a value was expected"),
    ("size(inputs.x) > (1", "the expression ends before the `(` is closed with `)`"),
    ("inputs.", "the expression ends where a field name was expected (after `.`)"),
    ("[1, 2", "the expression ends before the `[` is closed with `]`"),
])
def test_cel_errors_with_an_unknown_kind_and_in_flowc_words(when, words):
    for kind, shape_code in (("tool.call", "INS106"), ("tool", None)):
        found = _findings(INSTRUCTION.replace("KIND", kind).replace("WHEN", when), "instruction")
        cel = [m for code, m in found if code == "CEL201"]
        assert cel == [f"CEL syntax error: {words}"], found
        if shape_code:
            assert shape_code in [code for code, _ in found]


AEVATAR = """\
name: t
roles:
  - id: r
    name: r
steps:
  - id: s2
    type: STEP_TYPE
    target_role: r
    parameters:
      prompt_prefix: "${if(x == 1, 'a')}"
"""


def test_aevatar_template_findings_come_with_an_unknown_step_type():
    found = _findings(AEVATAR.replace("STEP_TYPE", "llm_cal"), "aevatar")
    codes = [code for code, _ in found]
    assert "AEV151" in codes and "AEV203" in codes
    assert all("Unexpected" not in m for _, m in found)
