"""Negative tests: one small workflow per check of the WorkflowSkill front end
and of analyze, asserting code, severity, line and column of every finding.

Each case lists *all* the findings its workflow must produce, so a check
that fires twice, cascades, or goes missing fails the test. Positions are
given as a needle (the text the finding must point at) and found in the
dedented source, so the expected line and column are those of the text
itself, not numbers copied from flowc's output.
"""

from __future__ import annotations

import textwrap

import attrs
import pytest
from flowc.compiler.codes import CODES
from flowc.ir.diagnostics import Severity
from flowc.pipeline import driver


@attrs.frozen
class Want:
    code: str
    needle: str          # the text the finding's span starts at
    nth: int = 1         # which occurrence of the needle
    severity: str = "error"
    note: str | None = None   # a substring one of the notes must contain
    after: str | None = None  # find the needle after this text (disambiguation)


@attrs.frozen
class Case:
    name: str
    text: str
    wants: tuple[Want, ...]


def position(text: str, needle: str, nth: int = 1, after: str | None = None) -> tuple[int, int]:
    """1-based (line, col) of the nth occurrence of needle in text."""
    start = text.index(after) if after else 0
    at = start - 1
    for _ in range(nth):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return line, col


def compile_yaml(text: str, path: str = "workflow.yaml"):
    return driver.compile_text(text, path, dialect="workflowskill")


def found(result) -> list[tuple[str, str, int, int]]:
    return sorted((d.code, d.severity.value, d.span.line, d.span.col) for d in result.diagnostics)


def expected(case: Case) -> list[tuple[str, str, int, int]]:
    text = textwrap.dedent(case.text)
    return sorted((w.code, w.severity, *position(text, w.needle, w.nth, w.after)) for w in case.wants)


W = Want
CASES: list[Case] = [
    # ------------------------------------------------------------ WFS105 unknown keys
    Case("unknown step key, did you mean", """\
        steps:
          - id: a
            type: tool
            tool: t
            on_eror: ignore
        """, (W("WFS105", "on_eror", note='did you mean "on_error"?'),)),
    Case("unknown top-level key", """\
        ouputs:
          x: {type: string}
        steps:
          - {id: a, type: tool, tool: t}
        """, (W("WFS105", "ouputs", note='did you mean "outputs"?'),)),
    Case("unknown key in a workflow input", """\
        inputs:
          n:
            type: int
            defualt: 3
        steps:
          - {id: a, type: tool, tool: t}
        """, (W("WFS105", "defualt", note='did you mean "default"?'),)),
    Case("unknown key in retry", """\
        steps:
          - id: a
            type: tool
            tool: t
            retry: {max: 1, delay: 1s, backoff: 2, jitter: 1}
        """, (W("WFS105", "jitter"),)),
    Case("unknown key in a step output", """\
        steps:
          - id: a
            type: tool
            tool: t
            outputs:
              x: {type: string, vaule: $result}
        """, (W("WFS105", "vaule", note='did you mean "value"?'),)),
    Case("key of another step type", """\
        steps:
          - id: a
            type: tool
            tool: t
            status: success
        """, (W("WFS105", "status"),)),
    Case("key of another transform operation", """\
        steps:
          - id: a
            type: transform
            operation: map
            expression: {x: $item}
            where: $item
            inputs:
              items: {type: array, value: []}
        """, (W("WFS105", "where"),)),
    # ------------------------------------------------------------ WFS103 shapes
    Case("steps is a mapping", """\
        steps:
          a: {type: tool}
        """, (W("WFS103", "a: {type"),)),
    Case("workflow is a list", """\
        - steps: []
        """, (W("WFS103", "- steps"),)),
    Case("inputs is a list", """\
        inputs: [a, b]
        steps:
          - {id: a, type: tool, tool: t}
        """, (W("WFS103", "[a, b]"),)),
    Case("a step is a string", """\
        steps:
          - {id: a, type: tool, tool: t}
          - just a string
        """, (W("WFS103", "just a string"),)),
    Case("step id is not a string", """\
        steps:
          - {id: 5, type: tool, tool: t}
        """, (W("WFS103", "5"),)),
    Case("condition is a boolean", """\
        steps:
          - id: a
            type: tool
            tool: t
            condition: true
        """, (W("WFS103", "true"),)),
    Case("tool is a number", """\
        steps:
          - id: a
            type: tool
            tool: 5
        """, (W("WFS103", "5"),)),
    Case("then is a number", """\
        steps:
          - id: c
            type: conditional
            condition: "true"
            then: 5
        """, (W("WFS103", "5"),)),
    Case("exit output is a list", """\
        steps:
          - id: e
            type: exit
            status: success
            output: [1, 2]
        """, (W("WFS103", "[1, 2]"),)),
    Case("map expression is a string", """\
        steps:
          - id: m
            type: transform
            operation: map
            expression: $item
            inputs:
              items: {type: array, value: []}
        """, (W("WFS103", "$item"),)),
    Case("workflow input is a string", """\
        inputs:
          n: int
        steps:
          - {id: a, type: tool, tool: t}
        """, (W("WFS103", "int"),)),
    Case("step inputs is a list", """\
        steps:
          - id: a
            type: tool
            tool: t
            inputs: [x]
        """, (W("WFS103", "[x]"),)),
    # ------------------------------------------------------------ WFS104 missing fields
    Case("step without id", """\
        steps:
          - type: tool
            tool: t
        """, (W("WFS104", "type: tool"),)),
    Case("step without type", """\
        steps:
          - id: a
            tool: t
        """, (W("WFS104", "id: a"),)),
    Case("tool step without tool", """\
        steps:
          - id: a
            type: tool
        """, (W("WFS104", "id: a"),)),
    Case("conditional without then", """\
        steps:
          - id: c
            type: conditional
            condition: "true"
        """, (W("WFS104", "id: c"),)),
    Case("filter without where", """\
        steps:
          - id: f
            type: transform
            operation: filter
            inputs:
              items: {type: array, value: []}
        """, (W("WFS104", "id: f"),)),
    Case("exit without status", """\
        steps:
          - id: e
            type: exit
        """, (W("WFS104", "id: e"),)),
    Case("workflow input without type", """\
        inputs:
          n: {default: 3}
        steps:
          - {id: a, type: tool, tool: t}
        """, (W("WFS104", "{default"),)),
    Case("step output without type", """\
        steps:
          - id: a
            type: tool
            tool: t
            outputs:
              x: {value: $result}
        """, (W("WFS104", "{value"),)),
    # ------------------------------------------------------------ WFS106 invalid values
    Case("unknown step type, did you mean", """\
        steps:
          - id: a
            type: tol
            tool: t
        """, (W("WFS106", "tol", after="type:", note='did you mean "tool"?'),)),
    Case("unknown input type, did you mean", """\
        inputs:
          n: {type: strng}
        steps:
          - {id: a, type: tool, tool: t}
        """, (W("WFS106", "strng", note='did you mean "string"?'),)),
    Case("invalid on_error", """\
        steps:
          - id: a
            type: tool
            tool: t
            on_error: skip
        """, (W("WFS106", "skip"),)),
    Case("invalid exit status", """\
        steps:
          - id: e
            type: exit
            status: ok
        """, (W("WFS106", "ok"),)),
    Case("invalid sort direction", """\
        steps:
          - id: s
            type: transform
            operation: sort
            field: n
            direction: up
            inputs:
              items: {type: array, value: []}
        """, (W("WFS106", "up"),)),
    Case("invalid transform operation", """\
        steps:
          - id: s
            type: transform
            operation: reduce
            inputs:
              items: {type: array, value: []}
        """, (W("WFS106", "reduce"),)),
    Case("step id with a hyphen cannot be referenced", """\
        steps:
          - {id: my-step, type: tool, tool: t}
        """, (W("WFS106", "my-step", severity="warning"),)),
    # ------------------------------------------------------------ WFS107/108 step inputs
    Case("default on a step input", """\
        steps:
          - id: a
            type: tool
            tool: t
            inputs:
              q: {type: string, default: hi}
        """, (W("WFS107", "default"),)),
    Case("bare step input", """\
        inputs:
          q: {type: string}
        steps:
          - id: a
            type: tool
            tool: t
            inputs:
              q: $inputs.q
        """, (W("WFS108", "$inputs.q"),)),
    # ------------------------------------------------------------ WFS102/109 empty
    Case("no steps key", """\
        inputs:
          q: {type: string}
        """, (W("WFS109", "inputs"),)),
    Case("empty steps", """\
        steps: []
        """, (W("WFS109", "[]"),)),
    # ------------------------------------------------------------ WFS111/112 durations, retry
    Case("bad delay duration", """\
        steps:
          - id: a
            type: tool
            tool: t
            each: $inputs.xs
            delay: 2m
        inputs:
          xs: {type: array}
        """, (W("WFS111", "2m"),)),
    Case("fractional retry delay", """\
        steps:
          - id: a
            type: tool
            tool: t
            retry: {max: 2, delay: 1.5s, backoff: 2}
        """, (W("WFS111", "1.5s"),)),
    Case("retry missing fields", """\
        steps:
          - id: a
            type: tool
            tool: t
            retry:
              max: 2
        """, (W("WFS112", "max: 2"), W("WFS112", "max: 2"))),
    Case("retry bad max and backoff", """\
        steps:
          - id: a
            type: tool
            tool: t
            retry: {max: 0, delay: 1s, backoff: -1}
        """, (W("WFS112", "0,"), W("WFS112", "-1"))),
    Case("retry is a number", """\
        steps:
          - id: a
            type: tool
            tool: t
            retry: 3
        """, (W("WFS112", "3"),)),
    # ------------------------------------------------------------ WFS113 each/delay
    Case("each on an exit", """\
        inputs:
          xs: {type: array}
        steps:
          - id: e
            type: exit
            status: success
            each: $inputs.xs
        """, (W("WFS113", "$inputs.xs", after="each:"),)),
    Case("each on a conditional", """\
        inputs:
          xs: {type: array}
        steps:
          - id: c
            type: conditional
            condition: "true"
            then: [a]
            each: $inputs.xs
          - {id: a, type: tool, tool: t}
        """, (W("WFS113", "$inputs.xs", after="each:"),)),
    Case("delay without each", """\
        steps:
          - id: a
            type: tool
            tool: t
            delay: 1s
        """, (W("WFS113", "1s"),)),
    # ------------------------------------------------------------ WFS201 expression syntax
    Case("single = in a condition", """\
        inputs:
          x: {type: int}
        steps:
          - id: a
            type: tool
            tool: t
            condition: $inputs.x = 1
        """, (W("WFS201", "= 1"),)),
    Case("syntax error inside a quoted value", """\
        inputs:
          x: {type: int}
        steps:
          - id: a
            type: tool
            tool: t
            inputs:
              q: {type: boolean, value: "$inputs.x == == 2"}
        """, (W("WFS201", "== 2"),)),
    Case("bare word in a where", """\
        steps:
          - id: f
            type: transform
            operation: filter
            where: $item.ok == done
            inputs:
              items: {type: array, value: []}
        """, (W("WFS201", "done"),)),
    Case("syntax error inside a template", """\
        inputs:
          x: {type: string}
        steps:
          - id: a
            type: tool
            tool: t
            inputs:
              q: {type: string, value: "x is ${inputs.x &} now"}
        """, (W("WFS201", "&"),)),
    Case("syntax error in an exit output object", """\
        outputs:
          n: {type: int}
        steps:
          - id: e
            type: exit
            status: success
            output:
              n: $steps{{.a
        """, (W("WFS201", "{{"),)),
    Case("$ followed by a digit", """\
        steps:
          - id: a
            type: tool
            tool: t
            inputs:
              q: {type: string, value: $5}
        """, (W("WFS201", "$5"),)),
    # ------------------------------------------------------------ WFS202-206 references
    Case("unknown reference root, did you mean", """\
        inputs:
          x: {type: string}
        steps:
          - id: a
            type: tool
            tool: t
            inputs:
              q: {type: string, value: $input.x}
        """, (W("WFS202", "$input.x", note='did you mean "inputs"?'),)),
    Case("$result in a step input", """\
        steps:
          - id: a
            type: tool
            tool: t
            inputs:
              q: {type: string, value: $result.x}
        """, (W("WFS203", "$result"),)),
    Case("$result in a workflow output", """\
        outputs:
          o: {type: string, value: $result}
        steps:
          - {id: a, type: tool, tool: t}
        """, (W("WFS203", "$result"),)),
    Case("reference to an undeclared step", """\
        steps:
          - id: fetch
            type: tool
            tool: t
          - id: use
            type: tool
            tool: t
            inputs:
              q: {type: string, value: $steps.fecth.output}
        """, (W("WFS204", "$steps.fecth", note='did you mean "fetch"?'),)),
    Case("workflow output reads an undeclared step", """\
        outputs:
          o: {type: string, value: $steps.nope.output}
        steps:
          - {id: a, type: tool, tool: t}
        """, (W("WFS204", "$steps.nope"),)),
    Case("reference to a later step", """\
        steps:
          - id: first
            type: tool
            tool: t
            inputs:
              q: {type: string, value: $steps.second.output}
          - id: second
            type: tool
            tool: t
        """, (W("WFS205", "$steps.second", note="line 7"),)),
    Case("self reference", """\
        steps:
          - id: a
            type: tool
            tool: t
            condition: $steps.a.output
        """, (W("WFS205", "$steps.a"), W("ANA403", "$steps.a"))),
    Case("$steps in a step output", """\
        steps:
          - id: a
            type: tool
            tool: t
          - id: b
            type: tool
            tool: t
            outputs:
              x: {type: string, value: $steps.a.output}
        """, (W("WFS206", "$steps.a"),)),
    Case("undeclared input is a warning", """\
        inputs:
          query: {type: string}
        steps:
          - id: a
            type: tool
            tool: t
            inputs:
              q: {type: string, value: $inputs.qeury}
        """, (W("WFS208", "$inputs.qeury", severity="warning", note='did you mean "query"?'),)),
    Case("$item outside an iteration", """\
        steps:
          - id: a
            type: tool
            tool: t
            inputs:
              q: {type: string, value: $item.name}
        """, (W("WFS212", "$item"),)),
    Case("$index in a guard", """\
        inputs:
          xs: {type: array}
        steps:
          - id: a
            type: tool
            tool: t
            each: $inputs.xs
            condition: $index == 0
        """, (W("WFS212", "$index"),)),
    # ------------------------------------------------------------ WFS209-211 branches, exits
    Case("unknown branch target", """\
        steps:
          - id: c
            type: conditional
            condition: "true"
            then: [yes_path]
            else: [no_pth]
          - {id: yes_path, type: tool, tool: t}
          - {id: no_path, type: tool, tool: t}
        """, (W("WFS209", "no_pth", note='did you mean "no_path"?'),
              # no_path is now a top-level step that runs after c.
              )),
    Case("branch target before its conditional", """\
        steps:
          - {id: early, type: tool, tool: t}
          - id: c
            type: conditional
            condition: "true"
            then: [early]
        """, (W("WFS210", "early", nth=2),)),
    Case("exit output key not a workflow output", """\
        outputs:
          count: {type: int}
        steps:
          - id: e
            type: exit
            status: success
            output:
              cuont: 0
        """, (W("WFS211", "cuont", note='did you mean "count"?'),)),
    # ------------------------------------------------------------ ANA4xx structure
    Case("duplicate step ids", """\
        steps:
          - {id: a, type: tool, tool: t}
          - {id: a, type: tool, tool: u}
        """, (W("ANA401", "{id: a", nth=2, note="line 2"),)),
    Case("step after an unguarded exit is unreachable", """\
        steps:
          - {id: stop, type: exit, status: success}
          - {id: never, type: tool, tool: t}
        """, (W("ANA402", "{id: never", severity="warning"),)),
    Case("branch steps read each other in a cycle", """\
        steps:
          - id: c
            type: conditional
            condition: "true"
            then: [x, y]
          - id: x
            type: tool
            tool: t
            inputs:
              v: {type: string, value: $steps.y.output}
          - id: y
            type: tool
            tool: t
            inputs:
              v: {type: string, value: $steps.x.output}
        """, (W("WFS205", "$steps.y"), W("ANA403", "$steps.y"))),
    Case("step id too long", f"""\
        steps:
          - {{id: {"a" * 300}, type: tool, tool: t}}
        """, (W("ANA406", "{id: a"),)),
    # ------------------------------------------------------------ ANA5xx types
    Case("type mismatch: string into int", """\
        inputs:
          name: {type: string}
        steps:
          - id: a
            type: tool
            tool: t
            inputs:
              n: {type: int, value: $inputs.name}
        """, (W("ANA501", "$inputs.name"),)),
    Case("type mismatch: workflow output", """\
        steps:
          - id: a
            type: tool
            tool: t
            outputs:
              ok: {type: boolean}
        outputs:
          o: {type: array, value: $steps.a.output.ok}
        """, (W("ANA501", "$steps.a.output.ok"),)),
    Case("type mismatch: input default", """\
        inputs:
          n: {type: int, default: many}
        steps:
          - {id: a, type: tool, tool: t}
        """, (W("ANA501", "many"),)),
    # The reference wraps a non-array input in a one-element array: legal,
    # but rarely meant.
    Case("transform items is not an array", """\
        inputs:
          s: {type: string}
        steps:
          - id: f
            type: transform
            operation: filter
            where: $item
            inputs:
              items: {type: string, value: $inputs.s}
        """, (W("ANA502", "{type: string, value", severity="warning"),)),
    Case("transform items declared array, fed a string", """\
        inputs:
          s: {type: string}
        steps:
          - id: f
            type: transform
            operation: filter
            where: $item
            inputs:
              items: {type: array, value: $inputs.s}
        """, (W("ANA501", "$inputs.s", after="items:"),)),
    Case("each over a non-array", """\
        inputs:
          s: {type: string}
        steps:
          - id: a
            type: tool
            tool: t
            each: $inputs.s
        """, (W("ANA502", "$inputs.s", after="each:"),)),
    Case("undeclared output field", """\
        steps:
          - id: fetch
            type: tool
            tool: t
            outputs:
              body: {type: string}
          - id: use
            type: tool
            tool: t
            inputs:
              q: {type: string, value: $steps.fetch.output.bdy}
        """, (W("ANA503", "bdy"),)),
    Case("field of an each step's array output", """\
        inputs:
          xs: {type: array}
        steps:
          - id: each_step
            type: tool
            tool: t
            each: $inputs.xs
            outputs:
              summary: {type: string}
          - id: use
            type: tool
            tool: t
            inputs:
              q: {type: string, value: $steps.each_step.output.summary}
        """, (W("ANA504", "summary", nth=2),)),
    # ------------------------------------------------------------ YAML inside a workflow
    Case("duplicate key in a step", """\
        steps:
          - id: a
            type: tool
            tool: t
            tool: u
        """, (W("YAML002", "tool: u", note="line 4"),)),
    Case("unsupported YAML tag in a step", """\
        steps:
          - id: a
            type: tool
            tool: !custom t
            inputs:
              cmd: {type: array, value: !!python/object/apply:os.system [echo hi]}
        """, (W("YAML006", "!custom t"), W("YAML006", "!!python/object/apply"))),
]


def test_case_names_are_unique():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check(case: Case):
    text = textwrap.dedent(case.text)
    result = compile_yaml(text)
    assert found(result) == expected(case), "\n".join(
        f"{d.code} {d.severity.value} {d.span.line}:{d.span.col} {d.message}" for d in result.diagnostics)
    for want in case.wants:
        line, col = position(text, want.needle, want.nth, want.after)
        matching = [d for d in result.diagnostics
                    if d.code == want.code and (d.span.line, d.span.col) == (line, col)]
        assert matching
        if want.note:
            assert any(want.note in n for d in matching for n in d.notes), [d.notes for d in matching]
    for d in result.diagnostics:
        assert d.code in CODES
        assert d.message and d.span.file == "workflow.yaml"
        assert (d.span.end_line, d.span.end_col) > (d.span.line, d.span.col)
    assert result.ok is not any(w.severity == "error" for w in case.wants)


# Codes the WorkflowSkill pipeline cannot produce: other dialects' and the
# driver's (tested in test_check_corpus / test_cli_check), and analyses that
# the WorkflowSkill lowering makes impossible (every edge it emits names a
# declared step).
NOT_FROM_WORKFLOWSKILL = {"FLC001", "FLC002", "FLC003", "ANA405"}


def test_every_workflowskill_and_analyze_code_has_a_case():
    covered = {w.code for c in CASES for w in c.wants}
    # Tested below.
    covered |= {"WFS101", "WFS102", "WFS110", "YAML001", "YAML003", "YAML004", "YAML005", "ANA404"}
    ours = {c for c in CODES if c.startswith(("FLC", "YAML", "WFS", "ANA"))}
    missing = ours - covered - NOT_FROM_WORKFLOWSKILL
    assert missing == set()


def test_conditionals_selecting_each_other():
    """Two conditionals that select each other form a control loop that
    never reaches the end. The root cause (WFS210) and the cycle are
    reported; the unreachable end that follows from them is not repeated."""
    text = textwrap.dedent("""\
        steps:
          - id: c
            type: conditional
            condition: "true"
            then: [d]
          - id: d
            type: conditional
            condition: "true"
            then: [c]
        """)
    result = compile_yaml(text)
    got = {(d.code, d.span.line, d.span.col) for d in result.diagnostics if d.is_error}
    assert ("WFS210", *position(text, "c]")) in got
    assert ("ANA403", 2, 5) in got
    assert not {code for code, *_ in got} & {"ANA402", "ANA404", "ANA405"}


def test_no_file_without_a_workflow_block():
    result = driver.compile_text("---\nname: x\ndescription: y\n---\n# Just prose\n", "x.md")
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("WFS101", 1)]
    assert result.workflow is None


# ------------------------------------------------------------------ markdown
SKILL = """\
---
name: demo
description: A demo.
---

# Demo

Some prose.

```workflow
inputs:
  x: {type: int}
steps:
  - id: a
    type: tool
    tool: t
    condition: $inputs.x >= = 2
```
"""


def test_markdown_positions_count_from_the_top_of_the_file():
    result = driver.compile_text(SKILL, "demo.md")
    assert [(d.code, d.span.line, d.span.col) for d in result.diagnostics] == [
        ("WFS201", 17, *position(SKILL, "= 2")[1:])]
    assert position(SKILL, "= 2")[0] == 17


def test_empty_workflow_block():
    text = "---\nname: e\ndescription: d\n---\n```workflow\n# nothing\n```\n"
    result = driver.compile_text(text, "empty.md")
    assert [(d.code, d.severity, d.span.line) for d in result.diagnostics] == [
        ("WFS102", Severity.ERROR, 5)]


def test_frontmatter_without_description_is_a_warning():
    text = "---\nname: e\n---\n```workflow\nsteps:\n  - {id: a, type: tool, tool: t}\n```\n"
    result = driver.compile_text(text, "e.md")
    assert result.ok
    assert [(d.code, d.severity) for d in result.diagnostics] == [("WFS110", Severity.WARNING)]
    assert "description" in result.diagnostics[0].message
    assert result.workflow.name == "e"


@pytest.mark.parametrize("text, code", [
    ("steps:\n  - {id: a, type: tool, tool: [t\n", "YAML001"),
    ("steps:\n  - {id: a, type: tool, tool: t}\n? [x]\n: 1\n", "YAML003"),
    ("base: &b {type: tool, tool: t}\nsteps:\n  - {<<: *b, id: a}\n", "YAML004"),
    ("steps: &s\n  - *s\n", "YAML005"),
])
def test_yaml_problems_are_findings(text, code):
    result = compile_yaml(text)
    assert code in {d.code for d in result.diagnostics}
    assert not result.ok


# ------------------------------------------------------------------ all at once
def test_all_errors_are_reported_at_once():
    text = textwrap.dedent("""\
        inputs:
          n: {type: integer}
        steps:
          - id: a
            type: tool
            tool: t
            on_error: sometimes
          - id: b
            type: tool
            tool: t
            inputs:
              q: {type: string, value: $steps.zzz.output}
        """)
    result = compile_yaml(text)
    assert found(result) == sorted([
        ("WFS106", "error", *position(text, "integer")),
        ("WFS106", "error", *position(text, "sometimes")),
        ("WFS204", "error", *position(text, "$steps.zzz")),
    ])


def test_errors_in_different_layers_are_reported_together():
    """A front-end error does not hide an analyze finding, and vice versa."""
    text = textwrap.dedent("""\
        steps:
          - {id: a, type: tool, tool: t, on_eror: x}
          - {id: a, type: tool, tool: t}
          - id: c
            type: tool
            tool: t
            inputs:
              n: {type: int, value: "hello"}
        """)
    result = compile_yaml(text)
    assert {d.code for d in result.diagnostics} == {"WFS105", "ANA401", "ANA501"}
    assert len(result.diagnostics) == 3


def test_findings_are_sorted_by_position():
    text = textwrap.dedent("""\
        steps:
          - {id: a, type: tol}
          - {id: b, type: tool}
          - {id: c, type: tool, tool: t, on_error: x}
        """)
    result = compile_yaml(text)
    lines = [d.span.line for d in result.diagnostics]
    assert lines == sorted(lines) and len(lines) == 3


def test_valid_workflow_has_no_findings():
    text = textwrap.dedent("""\
        inputs:
          xs: {type: array}
          threshold: {type: int, default: 3}
        outputs:
          kept: {type: array, value: $steps.keep.output.items}
        steps:
          - id: fetch
            type: tool
            tool: t
            each: $inputs.xs
            delay: 10ms
            retry: {max: 2, delay: 1s, backoff: 2.0}
            inputs:
              x: {type: object, value: $item}
              label: {type: string, value: "item ${index}"}
            outputs:
              score: {type: int, value: $result.score}
          - id: keep
            type: transform
            operation: filter
            where: $item.score >= $inputs.threshold
            inputs:
              items: {type: array, value: $steps.fetch.output}
            outputs:
              items: {type: array}
          - id: none
            type: exit
            condition: $steps.keep.output.items.length == 0
            status: success
            output: {kept: []}
        """)
    result = compile_yaml(text)
    assert result.diagnostics == ()
    assert result.ok
