"""The nodes and edges of a plan under dataflow scheduling (runtime/dataflow_run.py).

Run-wide fields: ``defaults`` (input defaults), ``reducers`` (state key
-> reducer), ``input_schema`` (the workflow's ``inputs.schema``: it checks
the run's inputs before any step runs) and ``limits`` ``{"steps",
"deadline_ms"}`` when the workflow sets them. A node::

    {"id", "op", "kind", "on_error", "guard"?, "attrs", "attr_order",
     "capability"?, "call_name"?, "retry"?, "over"?, "item_name"?,
     "item_policy"?, "batch_size"?, "regions"?, "inputs"?, "input_order"?}

``kind`` is a display field: the node's spelling in its source, for
listings (``flowc disassemble``); nothing decides behaviour on it
(tests/test_layering_execution.py). ``attrs`` maps each attr to an
expression (``bodies.expression``); a trigger's ``inputs`` (its mapping,
rendered against ``{payload, env}``) become the run's inputs; ``retry``
is ``[max, delay_ms, backoff, jitter]``; ``regions`` are ``[name,
graph]`` pairs, a body's value being its sinks (the nodes no
``dependency`` edge leaves).

Readiness and routing are edges: ``dependency`` (a node waits for its
sources, in the order it names them), ``branch`` (a switch's arms in case
order, ``$default`` last) and ``error`` (``goto``: on_error goto;
``timeout``: on_timeout).
"""

from __future__ import annotations

from typing import Any

from flowc.ir import expr as E
from flowc.ir.workflow import EdgeKind, Node, Region, Workflow
from flowc.plan.shape import Bodies, PlanError, edge_row

__all__ = ["MAX_DEPTH", "SUPPORTED_OPS", "build"]

SUPPORTED_OPS = frozenset({
    "trigger", "call", "assign", "noop", "sleep", "assert", "fail", "finish", "switch", "transform.map",
    "transform.filter", "transform.reduce", "transform.sort", "transform.dedupe", "transform.chunk",
    "parse", "validate", "foreach", "batch", "iterate", "subgraph", "parallel", "race",
})
MAX_DEPTH = 8


def _literal_str(expr: E.Expr | None, what: str) -> str:
    if isinstance(expr, E.Literal) and isinstance(expr.value, str):
        return expr.value
    raise PlanError(f"the call {what} must be a constant string")


def _edges(nodes: tuple[Node, ...], edges) -> list[list]:
    """The graph's edges node by node: dependencies in the order the node
    names them, branches in case order with ``$default`` last, error routes."""
    incoming: dict[str, list] = {}
    outgoing: dict[str, list] = {}
    for e in edges:
        if e.kind is EdgeKind.DEPENDENCY:
            incoming.setdefault(e.target, []).append(e)
        elif e.kind in (EdgeKind.BRANCH, EdgeKind.ERROR):
            outgoing.setdefault(e.source, []).append(e)
    rows: list[list] = []
    for node in nodes:
        deps = sorted(incoming.get(node.id, ()), key=lambda e: (e.order, e.source))
        out = outgoing.get(node.id, ())
        arms = sorted((e for e in out if e.kind is EdgeKind.BRANCH),
                      key=lambda e: (e.label == "$default", e.order, str(e.label), e.target))
        rows += [edge_row(e) for e in deps]
        rows += [[e.source, e.target, e.kind.value, str(e.label)] for e in arms]
        rows += [edge_row(e) for e in out if e.kind is EdgeKind.ERROR]
    return rows


def _graph(nodes: tuple[Node, ...], edges, where: str, depth: int, bodies: Bodies) -> dict:
    if depth > MAX_DEPTH:
        raise PlanError("bodies nest too deeply")
    return {"nodes": [_node(node, where, depth, bodies) for node in nodes], "edges": _edges(nodes, edges)}


def _node(node: Node, where: str, depth: int, bodies: Bodies) -> dict:
    if node.op not in SUPPORTED_OPS:
        raise PlanError(f"step {node.id!r}: operation {node.op!r} is not supported")
    label = f"{where}{node.id}"

    def expression(expr: E.Expr, what: str) -> Any:
        return bodies.expression(node, expr, what, False)

    # "kind" is a display field (the source's spelling, shown by listings);
    # the scheduler decides by "op" and never reads it.
    out: dict[str, Any] = {"id": node.id, "op": node.op, "kind": node.kind, "on_error": node.on_error.action}
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
    _iteration(node, out, label, expression)
    if node.regions:
        out["regions"] = [[r.name, _region(r, label, depth, bodies)] for r in node.regions]
    return out


def _iteration(node: Node, out: dict, label: str, expression) -> None:
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


def _region(region: Region, label: str, depth: int, bodies: Bodies) -> dict:
    if region.result != "sinks":
        raise PlanError(f"{label}: region result {region.result!r} is not supported")
    return _graph(region.nodes, region.edges, f"{label}/{region.name}/", depth + 1, bodies)


def build(workflow: Workflow, bodies: Bodies) -> dict:
    """The dataflow plan's fields: defaults, reducers, input schema, nodes,
    edges and (when given) limits."""
    metadata = workflow.metadata if isinstance(workflow.metadata, dict) else {}
    defaults = {p.name: p.default for p in workflow.inputs if p.has_default}
    reducers = {}
    state = metadata.get("state")
    if isinstance(state, dict):
        for key, spec in state.items():
            if isinstance(spec, dict) and isinstance(spec.get("reducer"), str):
                reducers[str(key)] = spec["reducer"]
    try:
        graph = _graph(workflow.nodes, workflow.edges, "", 0, bodies)
    except RecursionError:
        raise PlanError("the workflow nests too deeply") from None
    schema = metadata.get("inputs_schema")
    plan = {"defaults": defaults, "reducers": reducers, "input_schema": schema if isinstance(schema, dict) else None,
            "nodes": graph["nodes"], "edges": graph["edges"]}
    limits = metadata.get("run_limits")
    if isinstance(limits, dict):  # only when given: plans without limits stay as they were
        plan["limits"] = {"steps": limits.get("steps"), "deadline_ms": limits.get("deadline_ms")}
    return plan
