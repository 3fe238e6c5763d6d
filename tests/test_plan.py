"""The plan: one shape for every scheduling model, routing as edges by kind.

- Every corpus workflow's plan (three dialects) is ``{"model", "name",
  "nodes", "edges", ...}`` with edges ``[source, target, kind, label]`` of
  the IR's kinds between nodes of the same graph, regions graphs of the
  same shape, and no routing field (``next``, ``branches``, ``deps``,
  ``goto``, ``on_timeout``) left on a node.
- What each model reads: the kernel's document-order fall-through is an
  explicit edge; a dataflow body's sinks and a node's dependencies come
  from its edges; the sequential plan gives the top-level order and the
  arms, and refuses loops and second successors.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import attrs
import pytest
from flowc.pipeline import driver
from flowc.plan import MODELS, NO_BODIES, PlanError, build_plan
from flowc.plan.sequential import arms, top_level
from flowc.runtime.edges import KINDS, Edges

DATA = Path(__file__).resolve().parent / "data"
ROUTING_FIELDS = {"next", "branches", "deps", "goto", "on_timeout", "sinks", "top", "steps", "graph"}


class Tokens:
    """Bodies as strings naming what they stand for."""

    def params(self, node, entries, ci):
        return f"params of {node.id}"

    def expression(self, node, expr, what, ci):
        return f"{what}"


def compiled(text: str, dialect: str):
    result = driver.compile_text(textwrap.dedent(text), "w.yaml", dialect)
    assert result.ok, [(d.code, d.message) for d in result.diagnostics if d.is_error]
    return result.workflow


def corpus_workflows():
    paths = sorted((DATA / "aevatar" / "seed_examples").glob("*.yaml"))
    paths += sorted((DATA / "instruction").glob("0[23]-*.yaml"))
    paths += sorted((DATA / "workflowskill" / "examples").rglob("*.md"))[:12]
    for path in paths:
        result = driver.compile_file(str(path))
        if result.ok:
            yield path.name, result.workflow


def _check_graph(graph: dict, where: str) -> int:
    ids = [n["id"] for n in graph["nodes"]]
    assert len(set(ids)) == len(ids), where
    for source, target, kind, label in graph["edges"]:
        assert source in ids and target in ids and kind in KINDS, (where, source, target, kind)
        assert label is None or isinstance(label, str)
    graphs = 1
    for node in graph["nodes"]:
        assert not ROUTING_FIELDS & set(node), (where, node["id"], ROUTING_FIELDS & set(node))
        for name, region in node.get("regions") or ():
            assert set(region) == {"nodes", "edges"}
            graphs += _check_graph(region, f"{where}/{node['id']}/{name}")
    return graphs


def test_every_corpus_plan_has_one_shape():
    models = set()
    for name, workflow in corpus_workflows():
        plan = build_plan(workflow, Tokens())
        assert plan["model"] in ("sequential", "kernel", "dataflow") and plan["name"] == workflow.name
        assert json.loads(json.dumps(plan)) == plan, name   # plain data
        _check_graph(plan, name)
        models.add(plan["model"])
    assert models == set(MODELS) == {"sequential", "kernel", "dataflow"}   # every model has its plan


def test_the_kernel_falls_through_by_an_explicit_edge():
    wf = compiled("""\
        name: k
        steps:
          - id: a
            type: assign
            parameters: {target: x, value: "1"}
          - id: b
            type: conditional
            parameters: {condition: "true"}
            branches: {"true": d, "false": c}
          - id: c
            type: assign
            parameters: {target: y, value: "2"}
            next: a
            on_error: {strategy: fallback, fallback_step: d}
          - id: d
            type: assign
            parameters: {target: z, value: "3"}
        """, "aevatar")
    plan = build_plan(wf, Tokens(), "kernel")
    assert [e for e in plan["edges"] if e[0] in ("a", "c", "d")] == [
        ["a", "b", "fallthrough", None], ["c", "a", "sequence", None], ["c", "d", "error", "fallback"]]
    assert [e[1:] for e in plan["edges"] if e[0] == "b"][:2] == [["d", "branch", "true"], ["c", "branch", "false"]]
    edges = Edges(plan)
    assert edges.successor == {"a": "b", "b": "c", "c": "a"} and edges.route("c", "fallback") == "d"
    assert plan["nodes"][2]["on_error"] == "fallback"


def test_dataflow_dependencies_arms_and_sinks_come_from_edges():
    wf = compiled("""\
        name: d
        steps:
          start: { kind: manual }
          sw: { kind: switch, on: "x", cases: { x: a, y: b }, depends_on: start }
          a: { kind: assign, value: 1, depends_on: sw, on_error: "goto:b" }
          b: { kind: assign, value: 2, depends_on: [start, sw] }
          each:
            kind: foreach
            over: [1, 2]
            depends_on: [a, b]
            body:
              steps:
                one: { kind: assign, value: 1 }
                two: { kind: assign, value: 2, depends_on: one }
                three: { kind: assign, value: 3, depends_on: one }
          done: { kind: finish, depends_on: each }
        """, "instruction")
    plan = build_plan(wf, Tokens(), "dataflow")
    edges = Edges(plan)
    assert edges.deps["b"] == ["start", "sw"] and edges.deps["each"] == ["a", "b"]
    assert edges.branches["sw"] == [("x", "a"), ("y", "b")]
    assert edges.route("a", "goto") == "b" and edges.route("a", "timeout") is None
    assert edges.sinks == ["done"]
    body = plan["nodes"][[n["id"] for n in plan["nodes"]].index("each")]["regions"][0][1]
    assert [n["id"] for n in body["nodes"]] == ["one", "three", "two"]   # id order, as the scheduler scans
    assert Edges(body).sinks == ["three", "two"]
    with pytest.raises(PlanError, match="builds kernel plans"):
        build_plan(wf, Tokens(), "kernel")


WFS = """\
---
name: s
description: Arms and a top level.
---

```workflow
inputs:
  n:
    type: int
outputs:
  r:
    type: string
steps:
  - id: a
    type: tool
    tool: ta
    inputs: {}
    outputs: {}
  - id: b
    type: conditional
    condition: $inputs.n > 1
    inputs: {}
    outputs: {}
    then:
      - c
      - d
    else:
      - e
  - id: c
    type: tool
    tool: tc
    inputs: {}
    outputs: {}
  - id: d
    type: tool
    tool: td
    inputs: {}
    outputs: {}
  - id: e
    type: tool
    tool: te
    inputs: {}
    outputs: {}
  - id: z
    type: tool
    tool: tz
    inputs: {}
    outputs: {}
```
"""


def test_the_sequential_plan_orders_the_top_level_and_the_arms():
    result = driver.compile_text(WFS, "SKILL.md", "workflowskill")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics if d.is_error]
    plan = build_plan(result.workflow, NO_BODIES)
    assert plan["model"] == "sequential"
    assert top_level(plan) == ["a", "b", "z"]
    assert arms(plan) == {"b": {"then": ["c", "d"], "else": ["e"]}}
    assert [e[2:] for e in plan["edges"] if e[0] == "b"][-3:] == [["branch", "then"], ["branch", "then"],
                                                                  ["branch", "else"]]


def test_the_sequential_plan_refuses_loops_and_second_successors():
    result = driver.compile_text(WFS, "SKILL.md", "workflowskill")
    wf = result.workflow
    first = wf.edges[0]
    with pytest.raises(PlanError, match="two successors"):
        build_plan(attrs.evolve(wf, edges=(*wf.edges, attrs.evolve(first, target="z"))), NO_BODIES)
    loop = tuple(e for e in wf.edges if not (e.source == "b" and e.kind.value == "sequence"))
    loop += (attrs.evolve(first, source="b", target="a"),)
    with pytest.raises(PlanError, match="loop back to 'a'"):
        build_plan(attrs.evolve(wf, edges=loop), NO_BODIES)


def _routes(graph: dict) -> list:
    """A graph's node ids and edges, its regions' too (what routes a run, without the bodies)."""
    out = [[n["id"] for n in graph["nodes"]], [list(e) for e in graph["edges"]]]
    for node in graph["nodes"]:
        for name, region in node.get("regions") or ():
            out.append([node["id"], name, _routes(region)])
    return out


def test_both_backends_hold_the_same_plan():
    from flowc.backends import vm
    from flowc.backends.python import compile_workflow, load_module

    seen = 0
    for name, workflow in corpus_workflows():
        plan = build_plan(workflow, Tokens())
        if plan["model"] == "sequential":
            continue   # laid out as code by both backends; neither output holds the plan
        module_plan, program_plan = load_module(compile_workflow(workflow)).PLAN, vm.load(
            vm.compile_workflow(workflow)).plan
        assert module_plan["model"] == program_plan["model"] == plan["model"], name
        assert _routes(module_plan) == _routes(program_plan) == _routes(plan), name
        seen += 1
    assert seen >= 8
