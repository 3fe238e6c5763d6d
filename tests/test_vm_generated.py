"""Property: on generated valid WorkflowSkill workflows, the VM and the
Python backend give identical run records with the same scripted host.

The workflows declare input and output types, and the inputs and host
results are sometimes of other types, so the run-time type checks (a
failed run before any step; a failed step or iteration) are compared too."""

from __future__ import annotations

import json

from flowc import driver
from flowc.backends.python import compile_workflow as python_compile
from flowc.backends.python import load_module
from flowc.backends.vm import compile_workflow, load
from flowc.host import ScriptedHost
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 9), st.sampled_from(["", "a", "B", "7", "x y"]),
                    st.sampled_from([0.5, 2.0, -1.5]))
ROWS = st.lists(st.fixed_dictionaries({"id": st.integers(0, 5), "score": SCALARS, "name": SCALARS,
                                       "tags": st.lists(SCALARS, max_size=2)}), max_size=4)
TYPES = st.sampled_from(["string", "int", "float", "boolean", "array", "object"])
TOOL_RESULT = st.one_of(
    st.builds(lambda rows: {"output": {"rows": rows, "total": len(rows)}}, ROWS),
    # fields of any type, for the declared output types to check
    st.builds(lambda rows, total: {"output": {"rows": rows, "total": total}}, ROWS,
              st.one_of(SCALARS, st.just([1]), st.just({"k": 1}), st.just(3.25))),
    st.builds(lambda msg: {"error": msg}, st.sampled_from(["down", "busy"])),
    st.just({"throw": "adapter exploded"}),
    SCALARS.map(lambda v: {"output": v}),
)


def _q(text: str) -> str:
    return json.dumps(text)


@st.composite
def workflows(draw):
    n = draw(st.integers(1, 6))
    steps: list[list[str]] = []
    branch_targets: set[int] = set()
    refs = ["$inputs.n", "$inputs.word", "$inputs.rows.length", "$inputs.missing"]
    for i in range(n):
        sid = f"s{i}"
        earlier = [f"$steps.s{j}.output" for j in range(i) if j not in branch_targets]
        pool = refs + earlier + [e + ".rows" for e in earlier] + [e + ".total" for e in earlier]
        atom = st.one_of(st.sampled_from(pool), st.sampled_from(["1", "0", "true", "null", '"a"', '"7"']))
        op = st.sampled_from(["==", "!=", ">", "<", ">=", "contains", "&&", "||"])
        expr = st.one_of(atom, st.builds(lambda a, o, b: f"{a} {o} {b}", atom, op, atom),
                         atom.map(lambda a: f"!{a}"))
        kind = draw(st.sampled_from(["tool", "tool", "filter", "map", "sort", "exit", "conditional"]))
        lines = [f"  - id: {sid}"]
        if draw(st.booleans()) and kind not in ("conditional",):
            lines.append(f"    condition: {_q(draw(expr))}")
        array = draw(st.sampled_from(["$inputs.rows"] + [e + ".rows" for e in earlier]))
        if kind == "tool":
            lines += ["    type: tool", f"    tool: t{draw(st.integers(0, 2))}"]
            each = draw(st.booleans())
            if each:
                lines.append(f"    each: {_q(array)}")
                if draw(st.booleans()):
                    lines.append("    delay: 10ms")
            if draw(st.booleans()):
                lines.append("    retry: {max: 2, delay: 100ms, backoff: 2}")
            if draw(st.booleans()):
                lines.append("    on_error: ignore")
            inner = draw(st.sampled_from(pool + ["$item", "$item.name", "$index"] if each else pool))
            lines += ["    inputs:", f"      a: {{type: string, value: {_q(inner)}}}",
                      f"      b: {{type: string, value: {_q('x ${inputs.word} ' + str(i))}}}"]
            if draw(st.booleans()):
                lines += ["    outputs:", "      rows: {type: array, value: $result.rows}",
                          f"      total: {{type: {draw(TYPES)}}}"]
                if draw(st.booleans()):
                    lines.append(f"      label: {{type: {draw(TYPES)}, value: $result.total}}")
        elif kind in ("filter", "map", "sort"):
            lines += ["    type: transform", f"    operation: {kind}"]
            if kind == "filter":
                w = draw(st.sampled_from(["$item.score > 2", "$item.name contains \"a\"", "$item.tags",
                                          "$index < 2", "$item.score == $inputs.n"]))
                lines.append(f"    where: {_q(w)}")
            elif kind == "map":
                lines += ["    expression:", "      id: $item.id", "      label: $item.name",
                          "      extra: {fixed: [1, 2], n: $inputs.n}"]
            else:
                lines += [f"    field: {draw(st.sampled_from(['score', 'name', 'id', 'tags']))}",
                          f"    direction: {draw(st.sampled_from(['asc', 'desc']))}"]
            lines += ["    inputs:", f"      items: {{type: array, value: {_q(array)}}}",
                      "    outputs:", "      rows: {type: array}"]
            if draw(st.booleans()):  # checked at run time, unlike the result array itself
                lines.append(f"      count: {{type: {draw(TYPES)}, value: $result.rows.length}}")
        elif kind == "exit":
            lines += ["    type: exit", f"    status: {draw(st.sampled_from(['success', 'failed']))}"]
            if draw(st.booleans()):
                lines.append(f"    output: {_q(draw(st.sampled_from(pool)))}")
            else:
                lines += ["    output:", f"      result: {_q(draw(st.sampled_from(pool)))}"]
        else:
            later = list(range(i + 1, n))
            if not later:
                kind = "skip"
            else:
                then = draw(st.lists(st.sampled_from(later), min_size=1, max_size=2))
                other = draw(st.lists(st.sampled_from(later), max_size=2))
                branch_targets.update(then)
                branch_targets.update(other)
                lines += ["    type: conditional", f"    condition: {_q(draw(expr))}",
                          f"    then: [{', '.join(f's{t}' for t in then)}]"]
                if other:
                    lines.append(f"    else: [{', '.join(f's{t}' for t in other)}]")
        if kind == "skip":
            lines = [f"  - id: {sid}", "    type: tool", "    tool: t0"]
        steps.append(lines)
    outputs = draw(st.sampled_from([
        [],
        ["  result: {type: object}"],
        ["  result: {type: object}", "  total: {type: int}"],
        ["  result: {type: object, value: $steps.s0.output}", "  word: {type: string, value: \"${inputs.word}!\"}"],
    ]))
    n_type = draw(st.sampled_from(["int", "int", "float", "string"]))
    text = "\n".join(
        ["inputs:", f"  n: {{type: {n_type}, default: 3}}" if n_type != "string" else "  n: {type: string}",
         "  word: {type: string, default: abc}", "  rows: {type: array, default: []}",
         "outputs:" if outputs else "outputs: {}", *outputs, "steps:"]
        + [line for s in steps for line in s]) + "\n"
    script = {f"t{k}": draw(st.one_of(TOOL_RESULT, st.lists(TOOL_RESULT, min_size=1, max_size=3)))
              for k in range(3)}
    # inputs of the declared types, or (one time in four) of any type: a wrong type fails the
    # run before any step runs
    if draw(st.integers(0, 3)):
        optional = {"n": st.integers(0, 5), "word": st.sampled_from(["a", "zz"]), "rows": ROWS}
    else:
        optional = {"n": st.one_of(SCALARS, st.just(2.0), st.just(2.5)), "word": SCALARS,
                    "rows": st.one_of(ROWS, SCALARS, st.just({"a": 1})), "extra": SCALARS}
    inputs = draw(st.fixed_dictionaries({}, optional=optional))
    return text, script, inputs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(workflows())
def test_vm_and_python_backend_agree(case):
    text, script, inputs = case
    result = driver.compile_text(text, "generated.yaml", "workflowskill")
    assume(result.ok)
    wf = result.workflow
    want = load_module(python_compile(wf)).run(inputs, ScriptedHost(script))
    got = load(compile_workflow(wf)).run(inputs, ScriptedHost(script))
    assert got == want, text
    assert json.dumps(got, default=repr) == json.dumps(want, default=repr)
