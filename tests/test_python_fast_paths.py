"""The fast path of filter and map loops in generated modules.

codegen emits each filter/map comprehension twice: a fast form (fields read
with ``dict.get``, the commonest cases of the helpers inlined behind type
checks), tried first, and the general form, which runs whenever the fast one
raises. So the fast form must give exactly the general form's result whenever
it completes. These tests check that on every expression vector evaluated
per item (through a filter's ``where`` and a map value) and on generated
expressions and items: the module's record equals the reference's value and
the VM's record, and a module whose fallback is cut off (the fast form alone)
either gives the same record or fails the step (the fast form gave up).
"""

from __future__ import annotations

import json
import math
import re

import pytest
from flowc.backends.python import compile_workflow, load_module
from flowc.backends.vm import compile_workflow as vm_compile
from flowc.backends.vm import load as vm_load
from flowc.host import ScriptedHost
from flowc.pipeline import driver
from flowc.runtime import sequence_run as rt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_wfs_expressions import VECTORS, js_same

FALLBACK = "except _rt.STEP_ERRORS:  # a case the fast path does not cover: the general path decides"


def _modules(text: str):
    """(the module, the module with the fast form alone, the workflow), or None
    when the workflow does not compile."""
    result = driver.compile_text(text, "probe.yaml", "workflowskill")
    if not result.ok:
        return None
    source = compile_workflow(result.workflow)
    fast_only = source.replace(FALLBACK, "except ():  # the fast form alone")
    return load_module(source), load_module(fast_only), result.workflow, FALLBACK in source


def _declared(value) -> str:
    name = rt.type_name(value)
    return "string" if name == "null" else name  # null fits every declared type


def _probe_workflow(v: dict, operation: str) -> tuple[str, dict, dict, int]:
    """A workflow evaluating the vector's expression for one item, its inputs,
    host script and the item's position."""
    ctx = v["context"]
    index = ctx.get("index", 0) if type(ctx.get("index", 0)) is int else 0
    item = ctx.get("item", {})
    inputs = dict(ctx.get("inputs", {}))
    declared = {k: {"type": _declared(x)} for k, x in inputs.items()}
    declared["probe_items"] = {"type": "array"}
    inputs["probe_items"] = [item] * (index + 1)
    steps = [{"id": sid, "type": "tool", "tool": f"t_{sid}"} for sid in ctx.get("steps", {})]
    script = {f"t_{sid}": {"output": s.get("output")} for sid, s in ctx.get("steps", {}).items()}
    probe = {"id": "probe", "type": "transform", "operation": operation,
             "inputs": {"items": {"type": "array", "value": "$inputs.probe_items"}},
             "outputs": {"items": {"type": "array"}}}
    if operation == "filter":
        probe["where"] = v["text"]
    else:
        probe["expression"] = {"v": v["text"]}
    workflow = {"inputs": declared, "outputs": {"values": {"type": "array", "value": "$steps.probe.output.items"}},
                "steps": [*steps, probe]}
    return json.dumps(workflow), inputs, script, index


def _check_vector(v: dict, operation: str) -> str:
    """'fast', 'fallback' or 'skipped'; raises AssertionError on a wrong result."""
    text, inputs, script, index = _probe_workflow(v, operation)
    built = _modules(text)
    if built is None:
        return "skipped"  # refused at compile time (unknown root, undeclared step ...)
    module, fast_only, workflow, has_fast = built
    record = module.run(inputs, ScriptedHost(script))
    kind, expected = v["expected_kind"], v["expected"]
    if kind == "error":
        assert record["error"] == {"message": expected["error"], "step": "probe"}, (v["id"], record["error"])
    else:
        assert record["status"] == "success", (v["id"], record["error"])
        values = record["outputs"]["values"]
        if operation == "filter":
            kept = rt.js_boolean(rt.MISSING if kind == "undefined" else expected)
            assert len(values) == (index + 1 if kept else 0), v["id"]
        elif kind == "undefined":
            assert "v" not in values[index], v["id"]
        else:
            assert js_same(values[index]["v"], expected), (v["id"], values[index])
    assert vm_load(vm_compile(workflow)).run(inputs, ScriptedHost(script)) == record, v["id"]
    if not has_fast:
        return "skipped"
    alone = fast_only.run(inputs, ScriptedHost(script))
    if alone == record:
        return "fast"
    assert alone["error"] is not None and alone["error"]["step"] == "probe", (v["id"], alone, record)
    return "fallback"


# $item and $index have a value in a loop: vectors where they are absent don't apply; nor do
# those that read $inputs as a whole (the probe adds an input)
EXPRESSIONS = [v for v in VECTORS if v["kind"] == "expression" and "result" not in v["context"]
               and all(root in v["context"] or "$" + root not in v["text"] for root in ("item", "index"))
               and not re.search(r"\$inputs(?![.\[])", v["text"])]


@pytest.mark.parametrize("operation", ["filter", "map"])
def test_every_expression_vector_through_a_loop(operation):
    outcomes = {"fast": 0, "fallback": 0, "skipped": 0}
    for v in EXPRESSIONS:
        if operation == "map" and not v["text"].startswith("$"):
            continue  # a map value that does not start with $ is a literal string
        outcomes[_check_vector(v, operation)] += 1
    # most vectors run the fast form to the end (it gives up on items that are no objects)
    assert outcomes["fast"] > 3 * outcomes["fallback"], outcomes
    assert outcomes["fast"] >= 100, outcomes


# ------------------------------------------------------------------ generated

LITERALS = ["0", "1", "-1", "2.5", "9007199254740993", "-9007199254740993", '"a"', '"7"', '""', '" 12 "',
            "true", "false", "null"]
FIELDS = ["$item.a", "$item.b", "$item.c.d", "$item.tags", "$item.tags.length", "$item.c", "$index",
          "$steps.src.output.n", "$steps.src.output.s", "$steps.src.output.missing"]
ATOM = st.sampled_from(FIELDS + FIELDS + LITERALS)
CMP = st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "contains"])
COMPARISON = st.builds(lambda a, o, b: f"{a} {o} {b}", ATOM, CMP, ATOM)
TEST = st.one_of(
    ATOM, COMPARISON, ATOM.map(lambda a: f"!{a}"), COMPARISON.map(lambda c: f"!({c})"),
    st.builds(lambda a, o, b: f"({a}) {o} ({b})", COMPARISON, st.sampled_from(["&&", "||"]), COMPARISON),
    st.builds(lambda a, o, b: f"{a} {o} {b}", ATOM, st.sampled_from(["&&", "||"]), ATOM),
)
SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 12), st.sampled_from([2**53, 2**53 + 1, -(2**53) - 1, 10**21]),
    st.sampled_from([0.5, 2.0, -1.5, 1e300, math.inf, -math.inf, math.nan]),
    st.sampled_from(["", "a", "A", "7", " 12 ", "0x10", "1e3", "\u00e9", "Infinity", "abc"]),
)
VALUE = st.one_of(SCALAR, st.lists(SCALAR, max_size=3), st.dictionaries(st.sampled_from(["d", "a"]), SCALAR,
                                                                            max_size=2))
ITEM = st.fixed_dictionaries({}, optional={"a": VALUE, "b": VALUE, "c": VALUE, "tags": VALUE})
ITEMS = st.one_of(st.lists(ITEM, max_size=5), st.lists(st.one_of(ITEM, ITEM, ITEM, VALUE), max_size=5))


def _generated(where: str, values: list[str]) -> str:
    expression = {f"k{i}": v for i, v in enumerate(values)}
    expression["fixed"] = 1
    return json.dumps({
        "outputs": {"kept": {"type": "array", "value": "$steps.keep.output.items"},
                    "mapped": {"type": "array", "value": "$steps.shape.output.items"}},
        "steps": [
            {"id": "src", "type": "tool", "tool": "src"},
            {"id": "keep", "type": "transform", "operation": "filter", "where": where, "on_error": "ignore",
             "inputs": {"items": {"type": "array", "value": "$steps.src.output.items"}},
             "outputs": {"items": {"type": "array"}}},
            {"id": "shape", "type": "transform", "operation": "map", "expression": expression,
             "on_error": "ignore",
             "inputs": {"items": {"type": "array", "value": "$steps.src.output.items"}},
             "outputs": {"items": {"type": "array"}}},
        ]})


def _same(a: dict, b: dict) -> bool:
    return json.dumps(a, sort_keys=True, default=repr) == json.dumps(b, sort_keys=True, default=repr)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEST, st.lists(st.one_of(ATOM, COMPARISON), min_size=1, max_size=3), ITEMS, VALUE, VALUE)
def test_generated_loops_fast_and_general_agree(where, values, items, n, s):
    built = _modules(_generated(where, [v if v.startswith("$") else "$index == 0 && " + v for v in values]))
    if built is None:
        return
    module, fast_only, workflow, _ = built
    script = {"src": {"output": {"items": items, "n": n, "s": s}}}
    record = module.run({}, ScriptedHost(script))
    assert _same(record, vm_load(vm_compile(workflow)).run({}, ScriptedHost(script)))
    alone = fast_only.run({}, ScriptedHost(script))
    if not _same(alone, record):
        # the fast form gave up: a step failed that succeeds with the general form
        failed = {r["id"] for r in alone["steps"] if r["status"] == "failed"}
        assert failed and failed <= {"keep", "shape"}, (alone, record)
        assert not failed & {r["id"] for r in record["steps"] if r["status"] == "failed"}


class _Tag(str):
    """A str subclass: == "urgent" in Python, but not the same value for
    WorkflowSkill's array membership (SameValueZero wants a string)."""


ARRAY_CONTAINS = """\
inputs:
  rows: {type: array}
outputs:
  kept: {type: array, value: $steps.keep.output.items}
steps:
  - id: keep
    type: transform
    operation: filter
    where: $item.tags contains "urgent"
    inputs:
      items: {type: array, value: $inputs.rows}
    outputs:
      items: {type: array}
"""


@pytest.mark.parametrize("tags", [
    [], ["urgent"], ["URGENT"], ["vip", "urgent"], ["urgentx"], [1, None, ["urgent"]], [_Tag("urgent")],
    [_Tag("urgent"), "urgent"], ("urgent",), "not urgent", "URGENT!", None, 5, {"urgent": 1},
])
def test_array_contains_is_inlined_and_agrees_with_the_helper(tags):
    module, fast_only, _, has_fast = _modules(ARRAY_CONTAINS)
    assert has_fast
    rows = [{"tags": tags, "n": 1}]
    want = [row for row in rows if rt.wfs_contains(tags, "urgent")]
    for mod in (module, fast_only):
        record = mod.run({"rows": rows}, ScriptedHost({}))
        assert record["status"] == "success", record["error"]
        assert record["outputs"]["kept"] == want


def test_array_contains_in_the_fast_form_calls_no_helper_for_plain_lists():
    source = compile_workflow(driver.compile_text(ARRAY_CONTAINS, "probe.yaml", "workflowskill").workflow)
    fast = source.split(FALLBACK)[0]
    assert "'urgent' in _t0" in fast and " is list" in fast


class _Row(dict):
    """A dict subclass whose subscript lies: sort must read keys as dict.get does."""

    def __getitem__(self, key):
        return 0


@pytest.mark.parametrize("items, want", [
    ([{"s": 2}, {"s": 1}, {"s": 3}], [3, 2, 1]),
    ([{"s": 2}, {}, {"s": 3}, {"s": None}], [3, 2, None, None]),   # missing and null last
    ([{"s": 2}, [5], {"s": 3}], [3, 2, None]),                     # a non-object: missing
    ([_Row(s=1), {"s": 2}], [2, 1]),
])
def test_sort_by_one_key_reads_keys_as_objects_do(items, want):
    out = rt.wfs_sort(items, ("s",), descending=True)
    assert [x.get("s") if isinstance(x, dict) else None for x in out] == want


def test_a_bug_in_the_fast_path_surfaces():
    """The fast form falls back only on what the general form reports as the
    step's error; a NameError (a generator bug) is not hidden by it."""
    source = compile_workflow(driver.compile_text(ARRAY_CONTAINS, "probe.yaml", "workflowskill").workflow)
    fast, general = source.split(FALLBACK)
    broken = load_module(fast.replace("_get(item, ", "_get_misspelled(item, ") + FALLBACK + general)
    with pytest.raises(NameError):
        broken.run({"rows": [{"tags": ["urgent"]}]}, ScriptedHost({}))
    # an item that is no object is a case it expects: the general form decides
    record = load_module(source).run({"rows": [5, {"tags": ["urgent"]}]}, ScriptedHost({}))
    assert record["status"] == "success" and record["outputs"]["kept"] == [{"tags": ["urgent"]}]


def test_fast_paths_are_laid_out_within_100_columns():
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parent.parent / "benchmarks"
    sys.path.insert(0, str(bench))
    try:
        import bench_python_backend as b
    finally:
        sys.path.remove(str(bench))
    for text in (b.WORKFLOW, b.TRIAGE):
        source = compile_workflow(driver.compile_text(text, "w.md").workflow)
        long = [line for line in source.splitlines() if len(line) > 100 and "STEP_IDS" not in line]
        assert long == []


def test_a_conditional_fast_test_keeps_its_parentheses_in_the_if_clause():
    """``$index == $index``: the fast test is ``(a if c else b)``; laid out
    alone on its line it keeps the parentheses an ``if`` clause needs."""
    modules = _modules(json.dumps({"steps": [
        {"id": "s0", "type": "transform", "operation": "filter", "where": "$index == $index",
         "inputs": {"items": {"type": "array", "value": "$inputs.rows"}}}],
        "inputs": {"rows": {"type": "array"}}}))
    assert modules is not None
    module, fast_only, _wf, has_fallback = modules
    assert has_fallback
    for m in (module, fast_only):
        assert m.run({"rows": [1, "a"]}, ScriptedHost({}))["steps"] == [{"id": "s0", "status": "success"}]
