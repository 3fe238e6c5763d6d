"""The plan of a dataflow workflow: its graphs as plain data.

Both backends build the same plan from the IR and differ only in how an
expression is represented: the Python backend names a generated function,
the VM an index into its table of compiled CEL expressions. The scheduler
(:mod:`flowc.backends.python.rt_dag`) reads the plan.

A graph is ``{"top", "sinks", "nodes"}``; a node is::

    {"id", "op", "kind", "deps", "branches", "goto", "on_timeout", "on_error",
     "guard"?, "attrs", "attr_order", "capability"?, "call_name"?, "retry"?,
     "over"?, "item_name"?, "item_policy"?, "batch_size"?, "regions"?,
     "inputs"?, "input_order"?}

A trigger's ``inputs`` (its mapping, rendered against ``{payload, env}``)
become the run's inputs; the plan's ``input_schema`` (the workflow's
``inputs.schema``) checks them before any step runs.

``kind`` is a display field: the node's spelling in its source, for
listings (``flowc disassemble``); nothing decides behaviour on it
(tests/test_layering_execution.py). ``deps`` are the sources of the
node's dependency edges in order; ``branches`` a switch's ``[label, target]`` pairs in case order with
``$default`` last; ``goto``/``on_timeout`` the targets of its error routes;
``attrs`` maps each attr to an expression; ``regions`` are ``[name,
graph]`` pairs. ``sinks`` are the nodes no other node of the graph
depends on: a body's value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowc.backends.execution import runs_under
from flowc.ir import expr as E
from flowc.ir.workflow import EdgeKind, Node, Region, Workflow

__all__ = ["SUPPORTED_OPS", "PlanError", "build_plan", "is_dataflow"]

SUPPORTED_OPS = frozenset({
    "trigger", "call", "assign", "noop", "sleep", "assert", "fail", "finish", "switch", "transform.map",
    "transform.filter", "transform.reduce", "transform.sort", "transform.dedupe", "transform.chunk",
    "parse", "validate", "foreach", "batch", "iterate", "subgraph", "parallel", "race",
})
MAX_DEPTH = 8

# expression(expr, label) -> the backend's token for it
ExprFn = Callable[[E.Expr, str], Any]


class PlanError(Exception):
    """The workflow uses something the dataflow scheduler does not run."""


def is_dataflow(workflow: Workflow) -> bool:
    """Whether the dataflow scheduler runs ``workflow`` (its profile's flags say so)."""
    return runs_under(workflow, "dataflow") is None


def _literal_str(expr: E.Expr | None, what: str) -> str:
    if isinstance(expr, E.Literal) and isinstance(expr.value, str):
        return expr.value
    raise PlanError(f"the call {what} must be a constant string")


def _graph(nodes: tuple[Node, ...], edges, top: bool, where: str, depth: int, expression: ExprFn) -> dict:
    if depth > MAX_DEPTH:
        raise PlanError("bodies nest too deeply")
    deps: dict[str, list[tuple[int, str]]] = {}
    branches: dict[str, list[tuple[bool, int, str, str]]] = {}
    gotos: dict[str, str] = {}
    timeouts: dict[str, str] = {}
    has_dependents: set[str] = set()
    for e in edges:
        if e.kind is EdgeKind.DEPENDENCY:
            deps.setdefault(e.target, []).append((e.order, e.source))
            has_dependents.add(e.source)
        elif e.kind is EdgeKind.BRANCH:
            branches.setdefault(e.source, []).append((e.label == "$default", e.order, str(e.label), e.target))
        elif e.kind is EdgeKind.ERROR and e.label == "goto":
            gotos[e.source] = e.target
        elif e.kind is EdgeKind.ERROR and e.label == "timeout":
            timeouts[e.source] = e.target
    out = []
    for node in nodes:
        out.append(_node(node, [s for _, s in sorted(deps.get(node.id, []))],
                         [[label, target] for _d, _o, label, target in sorted(branches.get(node.id, []))],
                         gotos.get(node.id), timeouts.get(node.id), where, depth, expression))
    return {"top": top, "sinks": [n.id for n in nodes if n.id not in has_dependents], "nodes": out}


def _node(node: Node, deps, branches, goto, on_timeout, where: str, depth: int, expression: ExprFn) -> dict:
    if node.op not in SUPPORTED_OPS:
        raise PlanError(f"step {node.id!r}: operation {node.op!r} is not supported")
    label = f"{where}{node.id}"
    # "kind" is a display field (the source's spelling, shown by listings);
    # the scheduler decides by "op" and never reads it.
    out: dict[str, Any] = {"id": node.id, "op": node.op, "kind": node.kind, "deps": deps, "branches": branches,
                           "goto": goto, "on_timeout": on_timeout, "on_error": node.on_error.action}
    if node.guard is not None:
        out["guard"] = expression(node.guard.expr, label + " when")
    if node.op == "trigger" and node.inputs:
        out["inputs"] = {b.name: expression(b.value, f"{label}.inputs.{b.name}") for b in node.inputs
                         if b.value is not None}
        out["input_order"] = [b.name for b in node.inputs if b.value is not None]
    attrs = {}
    order = []
    for attr in node.attrs:
        if attr.name in ("capability", "name") and node.op == "call":
            continue
        attrs[attr.name] = expression(attr.value, f"{label}.{attr.name}")
        order.append(attr.name)
    out["attrs"] = attrs
    out["attr_order"] = order
    if node.op == "call":
        out["capability"] = _literal_str(node.attr("capability"), "capability")
        out["call_name"] = _literal_str(node.attr("name"), "name")
    if node.retry is not None:
        r = node.retry
        out["retry"] = [int(r.max_retries), int(r.delay_ms), float(r.backoff), float(r.jitter)]
    if node.iteration is not None:
        it = node.iteration
        out["over"] = expression(it.over, label + " over")
        out["item_name"] = it.item_var
        out["item_policy"] = it.on_item_error
        batch = node.attr("batch")
        size = batch.value.get("size") if isinstance(batch, E.Literal) and isinstance(batch.value, dict) else None
        out["batch_size"] = size if isinstance(size, int) and not isinstance(size, bool) else 0
    elif node.op == "batch":
        policy = node.attr("on_error")
        out["item_policy"] = ("error_object_and_continue" if isinstance(policy, E.Literal)
                              and policy.value == "continue" else "fail")
    if node.regions:
        out["regions"] = [[r.name, _region(r, label, depth, expression)] for r in node.regions]
    return out


def _region(region: Region, label: str, depth: int, expression: ExprFn) -> dict:
    if region.result != "sinks":
        raise PlanError(f"{label}: region result {region.result!r} is not supported")
    return _graph(region.nodes, region.edges, False, f"{label}/{region.name}/", depth + 1, expression)


def build_plan(workflow: Workflow, expression: ExprFn) -> dict:
    """The plan of a checked dataflow workflow; ``expression`` turns each
    expression into the backend's token."""
    why_not = runs_under(workflow, "dataflow")
    if why_not is not None:
        raise PlanError(f"the dataflow plan: {why_not}")
    defaults = {p.name: p.default for p in workflow.inputs if p.has_default}
    reducers = {}
    state = workflow.metadata.get("state") if isinstance(workflow.metadata, dict) else None
    if isinstance(state, dict):
        for key, spec in state.items():
            if isinstance(spec, dict) and isinstance(spec.get("reducer"), str):
                reducers[str(key)] = spec["reducer"]
    try:
        graph = _graph(workflow.nodes, workflow.edges, True, "", 0, expression)
    except RecursionError:
        raise PlanError("the workflow nests too deeply") from None
    schema = workflow.metadata.get("inputs_schema") if isinstance(workflow.metadata, dict) else None
    plan = {"workflow": workflow.name, "defaults": defaults, "reducers": reducers,
            "input_schema": schema if isinstance(schema, dict) else None, "graph": graph}
    limits = workflow.metadata.get("run_limits") if isinstance(workflow.metadata, dict) else None
    if isinstance(limits, dict):  # only when given: plans without limits stay as they were
        plan["limits"] = {"steps": limits.get("steps"), "deadline_ms": limits.get("deadline_ms")}
    return plan
