"""Section plan of a dataflow program (docs/bytecode.md section 9): node
rows with a field mask, edges as flat quadruples of indexes. The loader
decodes it back into the plan flowc.plan builds, field for field and in
the same key order, and refuses every malformed row with VerifyError."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from flowc.backends.vm import VerifyError, plan_vm
from flowc.backends.vm import compile_workflow as compile_bytecode
from flowc.backends.vm import format as F
from flowc.backends.vm import load as load_program
from flowc.backends.vm.plan_assemble import bodies, plan_section
from flowc.pipeline import driver
from flowc.plan import build_plan
from flowc.plan.dataflow import SUPPORTED_OPS
from flowc.runtime import dataflow_run, edges
from flowc.testing.strategies import ir_workflows
from hypothesis import HealthCheck, given, settings

from tests.program_bytes import open_program, pack_program

DATA = Path(__file__).resolve().parent / "data" / "instruction"

# Every optional node field, limits, a schema, reducers, branch and error edges, nested regions.
RICH = """\
name: rich
inputs:
  schema:
    type: object
    properties: { who: { type: string } }
state:
  seen: { reducer: append }
limits: { steps: 50, deadline: 30s }
steps:
  hook: { kind: webhook, path: /x, inputs: { who: "{{ payload.body.user }}" } }
  call: { kind: tool, depends_on: hook, name: flaky, retry: { max: 3, backoff: 1s }, on_error: "goto:fix" }
  fix: { kind: assign, depends_on: call, value: 1, when: "true", writes: seen }
  sw: { kind: switch, depends_on: fix, on: "{{ inputs.who }}", cases: { x: each }, default: groups }
  each:
    kind: foreach
    depends_on: sw
    over: [1, 0, 2]
    on_error: continue
    body:
      steps:
        div: { kind: assign, value: "CEL: 10 / item" }
        inner:
          kind: foreach
          depends_on: div
          over: [1]
          body: { steps: { deep: { kind: noop } } }
  groups:
    kind: batch
    depends_on: sw
    over: [1, 2, 3]
    size: 2
    body: { steps: { n: { kind: assign, value: "CEL: size(item)" } } }
  done: { kind: finish, depends_on: [each, groups], output: "{{ steps.each.output }}" }
"""


def _workflow(text: str):
    result = driver.compile_text(textwrap.dedent(text), "w.yaml", "instruction")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    return result.workflow


def _as_loaded(graph: dict) -> dict:
    """A plan (or body) of flowc.plan as the loader holds it, expressions
    left as their indexes: retry a tuple, regions (name, graph) pairs."""
    out = dict(graph)
    out["nodes"] = []
    for node in graph["nodes"]:
        n = dict(node)
        if "retry" in n:
            n["retry"] = tuple(n["retry"])
        if "regions" in n:
            n["regions"] = [(name, _as_loaded(g)) for name, g in n["regions"]]
        out["nodes"].append(n)
    return out


class _References:
    """The plan's expressions as their indexes (what the assembler wrote)."""

    def function(self, ref):
        return ref


def _round_trip(workflow) -> None:
    plan = build_plan(workflow, bodies("dataflow"), "dataflow")
    decoded = {"model": plan["model"], "name": plan["name"],
               **dict(plan_vm.plan_fields("dataflow", plan_section(plan), _References()))}
    # repr: the same values and the same key order, level by level
    assert repr(decoded) == repr(_as_loaded(plan))


def test_the_code_tables_agree():
    assert F.DATAFLOW_OPS == plan_vm.DATAFLOW_OPS and set(F.DATAFLOW_OPS) == SUPPORTED_OPS == set(dataflow_run._OPS)
    assert F.EDGE_KINDS == edges.KINDS
    optional = plan_vm.LAYOUTS["dataflow"]["node"]["optional"]
    assert [bit for bit, _keys in F.NODE_FIELDS] == list(range(len(optional)))
    counts = [{"inputs": 1, "retry": 4}.get(keys[0], len(keys)) for _bit, keys in F.NODE_FIELDS]
    assert counts == [count for count, _field in optional]


def test_every_field_decodes_back_to_the_plan():
    wf = _workflow(RICH)
    plan = build_plan(wf, bodies("dataflow"), "dataflow")
    keys = {k for node in plan["nodes"] for k in node} | set(plan)
    assert {"inputs", "input_order", "retry", "guard", "over", "item_name", "item_policy", "batch_size",
            "regions", "capability", "call_name", "limits"} <= keys
    assert {e[2] for e in plan["edges"]} == {"dependency", "branch", "error"}
    _round_trip(wf)
    for path in sorted(DATA.iterdir()):
        result = driver.compile_file(str(path))
        if result.ok:
            _round_trip(result.workflow)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ir_workflows("instruction"))
def test_generated_workflows_decode_back_to_their_plan(workflow):
    _round_trip(workflow)


def test_the_plan_section_holds_no_node_keys():
    data = compile_bytecode(_workflow(RICH), strip=True)
    _model, _name, sections = open_program(data)
    for key in (b"attr_order", b"input_order", b"call_name", b"item_policy", b"dependency", b"nodes"):
        assert key not in data
    assert type(sections["plan"]) is list and len(sections["plan"]) == 6
    assert load_program(data).plan["limits"] == {"steps": 50, "deadline_ms": 30000}


def _with_plan(change) -> bytes:
    _model, name, sections = open_program(compile_bytecode(_workflow(RICH)))
    change(sections["plan"])
    return pack_program("dataflow", name, sections)


def _node(plan, node_id):
    return next(row for row in plan[4] if row[0] == node_id)


def _set(index, value):
    def change(plan):
        plan[index] = value
    return change


def _row(node_id, index, value):
    def change(plan):
        _node(plan, node_id)[index] = value
    return change


def _edge(index, value):
    def change(plan):
        plan[5][index] = value
    return change


@pytest.mark.parametrize("change,message", [
    (_set(0, []), "defaults must be a map"),
    (_set(3, [1]), r"limits must be \[steps, deadline_ms\]"),
    (_set(3, [-1, None]), "non-negative"),
    (_set(4, {}), "nodes must be an array"),
    (_set(5, [0, 1, 3]), "quadruples"),
    (_edge(0, 99), "not a node of its graph"),
    (_edge(1, -1), "not a node of its graph"),
    (_edge(1, "hook"), "not a node of its graph"),
    (_edge(2, 5), "kind must be an index"),
    (_edge(3, 7), "label must be a string or nil"),
    (_row("hook", 0, 7), "node ids must be unique"),
    (_row("fix", 0, "hook"), "node ids must be unique"),
    (_row("hook", 1, len(F.DATAFLOW_OPS)), "unknown operation"),
    (_row("hook", 1, "trigger"), "unknown operation"),
    (_row("hook", 2, None), "kind and on_error must be strings"),
    (_row("fix", 5, 128), "field mask must be 0..127"),
    (_row("fix", 5, 0), "has 6 fields, not 7"),
    (_row("fix", 6, 999), "expression index is out of range"),
    (_row("fix", 6, -1), "expression index is out of range"),
    (_row("fix", 4, ["value"]), "name, expression pairs"),
    (_row("fix", 4, ["value", 1, "value", 2]), "names must be unique"),
    (_row("hook", 6, {"who": 0}), "name, expression pairs"),
    (_row("call", 7, 3), "a node's names must be strings"),
    (_row("call", 9, -1), "retry must be"),
    (_row("call", 11, "x"), "retry must be"),
    (_row("each", 8, 1.5), "batch_size must be"),
    (_row("each", 7, None), "a node's names must be strings"),
    (_row("each", 10, ["body"]), "name, nodes, edges triples"),
    (_row("groups", 7, ["body", [], [0, 0, 3, None]]), "not a node of its graph"),
])
def test_malformed_plans_are_refused(change, message):
    with pytest.raises(VerifyError, match=message):
        load_program(_with_plan(change))


# the mask bits of a node row's item_policy and regions
_ITEM_POLICY, _REGIONS = (1 << next(bit for bit, keys in F.NODE_FIELDS if keys[0] == key)
                          for key in ("item_policy", "regions"))


def _nested(levels: int):
    def change(plan):
        region = _node(plan, "groups")[7]   # ["body", nodes, edges]: depth 1
        for _ in range(levels):
            region[1] = [["g", F.DATAFLOW_OPS.index("batch"), "batch", None, [], _ITEM_POLICY | _REGIONS,
                          "fail", ["body", region[1], []]]]
    return change


def test_regions_nest_at_most_eight_deep():
    assert load_program(_with_plan(_nested(7))).plan is not None
    with pytest.raises(VerifyError, match="nest more than 8 deep"):
        load_program(_with_plan(_nested(8)))


def test_a_plan_of_the_map_layout_is_refused():
    _model, name, sections = open_program(compile_bytecode(_workflow(RICH)))
    sections["plan"] = {"defaults": {}, "reducers": {}, "input_schema": None, "nodes": [], "edges": []}
    with pytest.raises(VerifyError, match="section plan must be"):
        load_program(pack_program("dataflow", name, sections))
