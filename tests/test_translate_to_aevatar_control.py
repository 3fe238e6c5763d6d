"""WorkflowSkill and dialect 3 -> aevatar: control flow on the kernel's path.

Guards, conditionals and exits (WorkflowSkill) and `when`, `switch` and
`finish` (dialect 3) become aevatar `conditional` steps, `next` and
fall-through. For hand-written workflows and generated ones, a translation
without findings runs like its source with the same scripted host: the same
outcome, the same output and the same host calls in the same order
(flowc.testing.translation.cross_dialect). Each condition rule is checked
over the values its declared types allow; conditions aevatar may judge
differently are TRN102 findings at the condition's line.
"""

from __future__ import annotations

import itertools
import re

import pytest
from flowc.pipeline import driver, translate
from flowc.testing import gen_instruction, gen_workflowskill
from flowc.testing.translation import cross_dialect
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _compile(text: str, name: str = "workflow.yaml", dialect: str = "workflowskill"):
    result = driver.compile_text(text, name, dialect)
    assert result.ok, [d for d in result.diagnostics if d.is_error]
    return result.workflow


def _emit(wf):
    return translate.emit(wf, "aevatar")


def _all_compared(wf, cases) -> None:
    emission = _emit(wf)
    assert emission.verdict == "lowered", [d.message for d in emission.diagnostics]
    for inputs, script in cases:
        assert cross_dialect(wf, "aevatar", inputs, script), (inputs, script)


# ------------------------------------------------------------------ WorkflowSkill
TRIAGE = """\
inputs:
  flag: { type: boolean }
  n: { type: int }
outputs:
  output: { type: string, value: "done: ${steps.fetch.output.kind}" }
steps:
  - id: fetch
    type: tool
    tool: fetch
    condition: $inputs.flag
    outputs:
      kind: { type: string }
  - id: route
    type: conditional
    condition: $inputs.n > 3 && $steps.fetch.output.kind == "urgent"
    then: [page, inner]
    else: [log]
  - id: page
    type: tool
    tool: page
  - id: inner
    type: conditional
    condition: "!$inputs.flag"
    then: [stop]
  - id: stop
    type: exit
    status: success
    output: { output: "stopped at ${steps.fetch.output.kind}" }
  - id: log
    type: tool
    tool: log
    inputs:
      level: { type: string, value: "info" }
  - id: last
    type: tool
    tool: last
"""

FETCH_ANSWERS = [{"output": {"kind": "urgent"}}, {"output": {"kind": "calm"}}, {"output": {"kind": None}},
                 {"output": {}}, {"output": "not an object"}, {"error": "down"}]


def _triage_cases():
    for flag, n, fetch in itertools.product((True, False), (-1, 3, 4, 9), FETCH_ANSWERS):
        yield {"flag": flag, "n": n}, {"fetch": fetch, "*": {"output": {"ok": True}}}


def test_guards_conditionals_and_exits_run_the_same():
    wf = _compile(TRIAGE)
    _all_compared(wf, _triage_cases())


def test_the_lowered_triage_reads_as_the_kernel_runs_it():
    text = _emit(_compile(TRIAGE)).text
    # the guard before its step, the conditional with both branches, the
    # arm going on to the step after the conditional, the exit to the end
    assert "- id: fetch_if\n    type: conditional" in text
    assert "condition: \"${if(flag, 'true', 'false')}\"" in text
    assert "condition: \"${and(gt(if(isblank(n), '0', n), '3'), eq(steps.fetch.json.kind, 'urgent'))}\"" in text
    assert re.search(r"- id: log\n(?:.*\n)*?    next: last\n", text)
    assert re.search(r"- id: stop\n    type: assign\n(?:.*\n)*?    next: end\n", text)
    assert text.rstrip().endswith("op: identity")
    assert driver.compile_text(text, "flow.yaml", "aevatar").ok


def test_an_exit_with_status_failed_fails_the_run():
    wf = _compile(TRIAGE.replace("    status: success\n", "    status: failed\n"))
    _all_compared(wf, _triage_cases())
    assert "type: guard" in _emit(wf).text


SHARED = """\
inputs:
  flag: { type: boolean }
outputs:
  output: { type: string, value: "end" }
steps:
  - id: c
    type: conditional
    condition: $inputs.flag
    then: [a, b, a]
    else: [b]
  - id: a
    type: tool
    tool: a
  - id: b
    type: tool
    tool: b
"""


def test_a_step_listed_in_several_arms_runs_in_each_place():
    wf = _compile(SHARED)
    script = {"a": [{"output": 1}, {"output": 2}], "b": {"output": 3}}
    _all_compared(wf, [({"flag": f}, script) for f in (True, False)])
    assert "id: a_2" in _emit(wf).text


def test_a_step_whose_output_is_read_is_not_copied():
    wf = _compile(SHARED.replace('value: "end"', 'value: "end ${steps.a.output.x}"'))
    assert any(d.code == "TRN101" and "listed in conditional arms" in d.message for d in _emit(wf).diagnostics)


IGNORED = """\
outputs:
  output: { type: string, value: "k=${steps.a.output.k}" }
steps:
  - id: a
    type: tool
    tool: t0
    on_error: ignore
    outputs:
      k: { type: string }
  - id: b
    type: tool
    tool: t1
    condition: $steps.a.output.k
    on_error: ignore
  - id: c
    type: tool
    tool: t2
"""


def test_an_ignored_failure_is_skipped():
    wf = _compile(IGNORED)
    answers = ({"output": {"k": "x"}}, {"output": {"k": ""}}, {"error": "e"}, {"throw": "t"})
    _all_compared(wf, [({}, {"t0": a, "t1": b, "t2": {"output": 2}}) for a in answers for b in answers])
    assert _emit(wf).text.count("strategy: skip") == 2


# One condition on typed values: (declared inputs, the tool's declared output
# type, the condition, the aevatar condition or None for a finding).
CONDITIONS = [
    ({"flag": "boolean"}, None, "$inputs.flag", "if(flag, 'true', 'false')"),
    ({"n": "int"}, None, "$inputs.n", "if(n, 'true', 'false')"),
    ({"n": "int"}, None, "$inputs.n == 2", "eq(n, '2')"),
    ({"n": "int"}, None, "$inputs.n != 0", "not(eq(n, '0'))"),
    ({"n": "int"}, None, "$inputs.n <= \"5\"", "lte(if(isblank(n), '0', n), '5')"),
    ({"x": "float"}, None, "$inputs.x > 0.5", "gt(if(isblank(x), '0', x), '0.5')"),
    ({"flag": "boolean"}, None, "$inputs.flag == false", "eq(flag, 'false')"),
    ({"flag": "boolean", "n": "int"}, None, "!$inputs.flag || $inputs.n < 1",
     "or(not(if(flag, 'true', 'false')), lt(if(isblank(n), '0', n), '1'))"),
    ({}, "string", "$steps.s0.output.v", "not(eq(steps.s0.json.v, ''))"),
    ({}, "string", "$steps.s0.output.v == \"yes\"", "eq(steps.s0.json.v, 'yes')"),
    ({}, "boolean", "$steps.s0.output.v", "if(steps.s0.json.v, 'true', 'false')"),
    ({}, "int", "$steps.s0.output.v >= 2", "gte(if(isblank(steps.s0.json.v), '0', steps.s0.json.v), '2')"),
    ({}, None, "0", "false"),
    ({}, None, "2 == 2.0", "true"),
    ({}, None, "1 > 2", "gt('1', '2')"),
    # findings: what aevatar may judge differently
    ({"word": "string"}, None, "$inputs.word == \"x\"", None),        # run parameters are trimmed
    ({}, "string", "$steps.s0.output.v == \"12\"", None),           # eq() compares numbers numerically
    ({}, "string", "$steps.s0.output.v == \"\"", None),             # null is blank text too
    ({"x": "float"}, None, "$inputs.x", None),                         # |x| < 1e-9 is false in aevatar
    ({}, "string", "$steps.s0.output.v contains \"a\"", None),
    ({}, None, "$steps.s0.output.v", None),                           # no declared type
]
VALUES = {"boolean": [True, False], "int": [-3, 0, 1, 2, 5, 9], "float": [-1.5, 0.0, 0.5, 2.0, 1e-10],
          "string": ["", "yes", "Yes", "12", "12.0", " yes", "x"]}
OUTPUT_VALUES = {"string": VALUES["string"] + [None], "boolean": [True, False, None], "int": [-1, 0, 2, 3, None]}


def _condition_workflow(inputs: dict, output_type: str | None, condition: str) -> str:
    decl = "".join(f"  {k}: {{ type: {t} }}\n" for k, t in inputs.items())
    outs = f"    outputs:\n      v: {{ type: {output_type} }}\n" if output_type else ""
    return (f"inputs:\n{decl}" if decl else "") + (
        'outputs:\n  output: { type: string, value: "end" }\n'
        "steps:\n  - id: s0\n    type: tool\n    tool: get\n" + outs +
        f"  - id: s1\n    type: tool\n    tool: guarded\n    condition: '{condition}'\n")


@pytest.mark.parametrize(("inputs", "output_type", "condition", "expected"), CONDITIONS,
                         ids=[c[2] for c in CONDITIONS])
def test_a_condition_is_lowered_only_where_aevatar_takes_the_same_branch(inputs, output_type, condition,
                                                                          expected):
    wf = _compile(_condition_workflow(inputs, output_type, condition))
    emission = _emit(wf)
    if expected is None:
        found = [d for d in emission.diagnostics if d.code == "TRN102" and "condition" in d.message]
        assert found and found[0].span.line == (len(inputs) + 1 if inputs else 0) + 10 + (2 if output_type else 0)
        return
    assert emission.verdict == "lowered", [d.message for d in emission.diagnostics]
    spelled = f'"{expected}"' if "(" not in expected else f'"${{{expected}}}"'
    assert f"condition: {spelled}" in emission.text
    names = list(inputs)
    for values in itertools.product(*(VALUES[inputs[k]] for k in names)):
        for answer in OUTPUT_VALUES.get(output_type, ["-"]):
            result = {"output": {"v": answer} if answer is not None else {}}
            script = {"get": result, "guarded": {"output": "ran"}}
            assert cross_dialect(wf, "aevatar", dict(zip(names, values, strict=True)), script)


def test_outputs_other_than_one_text_output_are_findings():
    for outputs in ("outputs:\n  a: { type: string, value: \"x\" }\n  b: { type: string, value: \"y\" }\n",
                    "outputs:\n  output: { type: string, value: \"$steps.s0.output.x\" }\n", ""):
        wf = _compile("inputs:\n  n: { type: int }\n" + outputs + "steps:\n  - id: s0\n    type: tool\n    tool: t\n")
        assert any(d.code == "TRN102" and "output" in d.message for d in _emit(wf).diagnostics), outputs


def test_one_output_of_any_name_is_the_run_output():
    wf = _compile(TRIAGE.replace("outputs:\n  output:", "outputs:\n  summary:")
                  .replace("output: { output: ", "output: { summary: "))
    emission = _emit(wf)
    assert not emission.diagnostics and any("aevatar's run output" in lo.how for lo in emission.lowerings)
    _all_compared(wf, _triage_cases())


# ------------------------------------------------------------------ dialect 3
ROUTED = """\
name: routed
inputs:
  schema:
    type: object
    required: [flag, n]
    properties:
      flag: { type: boolean }
      n: { type: integer }
steps:
  start: { kind: manual }
  a: { kind: tool, name: t0, depends_on: start, when: "inputs.flag && inputs.n > 2", args: { q: 1 } }
  b: { kind: tool, name: t1, depends_on: a }
  c: { kind: tool, name: t2, depends_on: [b, start], when: "!inputs.flag || inputs.n == 7" }
  pick: { kind: switch, depends_on: c, "on": "{{ inputs.flag }}", cases: { "true": d, "false": e } }
  d: { kind: tool, name: t3, depends_on: pick }
  e: { kind: noop, depends_on: pick }
  f: { kind: tool, name: t4, depends_on: e }
  zz: { kind: finish, depends_on: [start, d, f], output: { output: "finished" } }
"""


def test_when_switch_and_finish_run_the_same():
    wf = _compile(ROUTED, dialect="instruction")
    cases = [({"flag": flag, "n": n}, {"tool:t0": answer, "*": {"output": "ok"}})
             for flag, n, answer in itertools.product((True, False), (0, 3, 7), ({"output": 1}, {"error": "x"}))]
    _all_compared(wf, cases)
    text = _emit(wf).text
    # b is live when a ran; the noop arm e is spelled out in f's condition
    assert "condition: \"${eq(steps.a.success, 'true')}\"" in text
    assert "condition: \"${and(eq(steps.c.success, 'true'), eq(flag, 'false'))}\"" in text
    assert "id: zz" in text and "pick" not in text  # the switch is conditions on its arms


def test_a_finish_output_of_any_one_name_is_the_run_output():
    wf = _compile(ROUTED.replace('output: { output: "finished" }', 'output: { verdict: "finished" }'),
                  dialect="instruction")
    emission = _emit(wf)
    assert not emission.diagnostics and any("aevatar's run output" in lo.how for lo in emission.lowerings)
    _all_compared(wf, [({"flag": flag, "n": 7}, {"*": {"output": "ok"}}) for flag in (True, False)])
    two = ROUTED.replace('output: { output: "finished" }', 'output: { verdict: "finished" }').replace(
        "  zz: {", '  yy: { kind: finish, depends_on: d, output: { other: "x" } }\n  zz: {')
    assert any(d.code == "TRN102" and "same name" in d.message
               for d in _emit(_compile(two, dialect="instruction")).diagnostics)


def test_a_constant_switch_leaves_out_the_arms_it_never_takes():
    wf = _compile(ROUTED.replace('"on": "{{ inputs.flag }}"', '"on": "false"'), dialect="instruction")
    _all_compared(wf, [({"flag": True, "n": 3}, {"*": {"output": "ok"}})])
    assert "id: d\n" not in _emit(wf).text


def test_a_run_that_may_reach_no_finish_is_a_finding():
    wf = _compile(ROUTED.replace("depends_on: [start, d, f]", "depends_on: [d, f]"), dialect="instruction")
    assert any(d.code == "TRN102" and "no finish" in d.message for d in _emit(wf).diagnostics)


def test_an_optional_input_in_when_is_a_finding():
    wf = _compile(ROUTED.replace("required: [flag, n]", "required: [flag]"), dialect="instruction")
    assert any(d.code == "TRN102" and "may be absent" in d.message for d in _emit(wf).diagnostics)


TEXTS = """\
name: texts
inputs:
  schema: { type: object, required: [flag], properties: { flag: { type: boolean } } }
steps:
  start: { kind: manual }
  a: { kind: template, depends_on: start, text: "plain text" }
  b: { kind: tool, name: t0, depends_on: a, when: inputs.flag }
  c: { kind: template, depends_on: b, text: "got {{ steps.a.output }}" }
  d: { kind: assign, depends_on: [c, start], value: "after {{ steps.a.output }} and {{ inputs.flag }}" }
  done: { kind: finish, depends_on: d, output: { output: "end: {{ steps.d.output }}" } }
"""


def test_templates_of_text_are_assigns():
    wf = _compile(TEXTS, dialect="instruction")
    _all_compared(wf, [({"flag": f}, {"*": {"output": "ok"}}) for f in (True, False)])
    whole = _compile(TEXTS.replace("end: {{ steps.d.output }}", "{{ steps.d.output }}"), dialect="instruction")
    _all_compared(whole, [({"flag": f}, {"*": {"output": "ok"}}) for f in (True, False)])
    # c may not run, so its output is not text for sure: reading it is a finding
    pruned = TEXTS.replace("end: {{ steps.d.output }}", "end: {{ steps.c.output }}")
    assert _emit(_compile(pruned, dialect="instruction")).verdict == "approximate"


def test_reading_a_step_that_is_not_written_is_a_finding_and_still_checks():
    wf = _compile(ROUTED.replace('output: { output: "finished" }', 'output: { output: "on {{ steps.pick.output }}" }'),
                  dialect="instruction")
    emission = _emit(wf)
    assert any(d.code == "TRN101" and "'pick' has no aevatar step" in d.message for d in emission.diagnostics)
    assert driver.compile_text(emission.text, "flow.yaml", "aevatar").ok


OVERTAKING = """\
name: overtaking
inputs:
  schema: { type: object, required: [flag], properties: { flag: { type: boolean } } }
steps:
  start: { kind: manual }
  s: { kind: switch, depends_on: start, "on": "{{ inputs.flag }}", cases: { "true": a, "false": zz } }
  a: { kind: tool, name: t0, depends_on: s }
  zz: { kind: tool, name: t1, depends_on: s }
  b: { kind: tool, name: t2, depends_on: [zz, start] }
  y: { kind: tool, name: t3, depends_on: start }
  fin: { kind: finish, depends_on: [a, b, y], output: { output: "done" } }
"""


def test_an_order_that_depends_on_pruning_is_a_finding():
    # flag true: the switch prunes zz at once, so b is ready before y and
    # runs first; flag false: zz runs after y, then b
    wf = _compile(OVERTAKING, dialect="instruction")
    assert any(d.code == "TRN102" and "order" in d.message for d in _emit(wf).diagnostics)
    fixed = OVERTAKING.replace("depends_on: [zz, start]", "depends_on: [zz, y]")
    _all_compared(_compile(fixed, dialect="instruction"),
                  [({"flag": f}, {"*": {"output": "ok"}}) for f in (True, False)])


# ------------------------------------------------------------------ generated
def _wfs_with_text_output(doc: dict) -> dict:
    """A generated document whose outputs and exits aevatar can express:
    one text output named `output`."""
    doc["outputs"] = {"output": {"type": "string", "value": "the end"}}
    for step in doc["steps"]:
        if step.get("type") == "exit":
            step["output"] = {"output": "exit " + step["id"]}
    return doc


def _instruction_with_text_output(doc: dict) -> dict:
    props = ((doc.get("inputs") or {}).get("schema") or {}).get("properties") or {}
    if props:
        doc["inputs"]["schema"]["required"] = sorted(props)
        for p in props.values():
            p.pop("default", None)
    for step in doc["steps"].values():
        if step.get("kind") == "finish":
            step["output"] = {"output": "done"}
    return doc


def _typed_inputs(data, wf) -> dict:
    names = {"bool": "boolean"}
    return {p.name: data.draw(gen_workflowskill.input_values(names.get(p.type.kind, p.type.kind)))
            for p in wf.inputs if not p.has_default or data.draw(st.booleans())}


INSTRUCTION_VALUES = {"integer": st.integers(-2, 9), "string": st.sampled_from(["a", "abc", "xyz", ""]),
                      "array": st.lists(st.integers(0, 5), max_size=4)}


def _generated(dialect: str, n: int) -> dict:
    seen = {"compared": 0, "branching": 0}

    @settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
              database=None)
    @given(st.data())
    def check(data):
        if dialect == "workflowskill":
            doc = _wfs_with_text_output(data.draw(gen_workflowskill.documents(
                6, frozenset({"tool", "conditional", "exit", "guard", "nested"}))))
            wf = _compile(gen_workflowskill.to_text(doc))
            inputs, script = _typed_inputs(data, wf), data.draw(gen_workflowskill.host_scripts(doc))
        else:
            kinds = {"tool", "switch", "when", "inputs", "noop", "sleep"}
            doc = _instruction_with_text_output(data.draw(gen_instruction.documents(6, frozenset(kinds))))
            wf = _compile(gen_instruction.to_text(doc), dialect="instruction")
            props = doc.get("inputs", {}).get("schema", {}).get("properties", {})
            inputs = {k: data.draw(INSTRUCTION_VALUES[p["type"]]) for k, p in props.items()}
            script = data.draw(gen_instruction.host_scripts(doc))
        if cross_dialect(wf, "aevatar", inputs, script):
            seen["compared"] += 1
            seen["branching"] += "type: conditional" in _emit(wf).text

    check()
    return seen


@pytest.mark.parametrize("dialect", ["workflowskill", "instruction"])
def test_generated_workflows_translated_without_findings_run_the_same(dialect):
    seen = _generated(dialect, 120)
    # Generated dialect-3 conditions mostly read untyped tool results or text
    # inputs (findings), so fewer of them branch.
    assert seen["compared"] >= 15 and seen["branching"] >= (5 if dialect == "workflowskill" else 2), seen
