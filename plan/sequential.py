"""The nodes and edges of a plan under sequential scheduling (WorkflowSkill).

Run-wide fields: ``entry`` (the first top-level step; None: none) and
``terminal`` (the end node, where the top-level chain stops). A node::

    {"id", "op", "on_error", "retry", "each", "guarded"}

``on_error`` is ``fail`` or ``ignore``; ``retry`` None or ``[max,
delay_ms, backoff]``; ``each`` None or ``{"delay_ms"}`` (the step runs
once per item, one at a time); ``guarded`` whether a guard may skip it.
The step's bodies (guard, arguments, the list ``each`` walks, output
mapping) are the backends': the Python backend generates a function per
step, the VM's assembler adds each body to the step's row as data (its
kind, call and blocks of expression code: backends/vm/plan_assemble.py).
Both run this plan with flowc.runtime.sequence_run, which walks its top
level at run time and runs the arm a conditional chose by its ``branch``
edges.

Activation is edges: a node's ``sequence`` edge names the step after it
at the top level (:func:`top_level`); a branch's ``branch`` edges, labelled
``then`` or ``else`` and listed in arm order, are the steps its arms run
in place before control returns (:func:`arms`).
"""

from __future__ import annotations

from typing import Any

from flowc.ir.workflow import EdgeKind, Node, Workflow
from flowc.plan.shape import Bodies, PlanError, edge_row

__all__ = ["arms", "build", "top_level"]

_ARMS = ("then", "else")


def _node(node: Node) -> dict:
    if node.regions:
        raise PlanError(f"step {node.id!r}: nested regions are not supported")
    if node.on_error.action not in ("fail", "ignore"):
        raise PlanError(f"step {node.id!r}: on_error {node.on_error.action!r} is not supported")
    if node.retry is not None and node.retry.retry_on != "tool_error":
        raise PlanError(f"step {node.id!r}: retry on {node.retry.retry_on!r} is not supported")
    it = node.iteration
    if it is not None and (it.item_var != "item" or it.index_var != "index" or it.max_parallel != 1
                           or it.on_item_error != "null_and_continue"):
        raise PlanError(f"step {node.id!r}: this form of iteration is not supported")
    r = node.retry
    return {"id": node.id, "op": node.op, "on_error": node.on_error.action,
            "retry": None if r is None else [r.max_retries, r.delay_ms, r.backoff],
            "each": None if it is None else {"delay_ms": it.delay_ms}, "guarded": node.guard is not None}


def _edges(workflow: Workflow, ops: dict[str, str]) -> list[list]:
    """Each node's sequence edge, then its then-arm and else-arm steps in order."""
    sequence: dict[str, Any] = {}
    branches: dict[str, list] = {}
    for edge in workflow.edges:
        if edge.source not in ops or edge.target not in ops:
            raise PlanError(f"an edge joins unknown steps {edge.source!r} -> {edge.target!r}")
        if edge.kind is EdgeKind.SEQUENCE:
            if edge.source in sequence:
                raise PlanError(f"step {edge.source!r} has two successors")
            sequence[edge.source] = edge
        elif edge.kind is EdgeKind.BRANCH:
            if edge.label not in _ARMS:
                raise PlanError(f"step {edge.source!r}: branch arm {edge.label!r} is not supported")
            if ops[edge.source] != "branch":
                raise PlanError(f"step {edge.source!r} has branch edges but is not a branch")
            if ops[edge.target] == "end":
                raise PlanError(f"branch target {edge.target!r} is not a step")
            branches.setdefault(edge.source, []).append(edge)
        else:
            raise PlanError(f"{edge.kind.value} edges are not supported by sequential scheduling")
    rows: list[list] = []
    for node in workflow.nodes:
        if node.id in sequence:
            rows.append(edge_row(sequence[node.id]))
        for label in _ARMS:
            arm = sorted((e for e in branches.get(node.id, ()) if e.label == label), key=lambda e: e.order)
            rows += [edge_row(e) for e in arm]
    return rows


def top_level(plan: dict) -> list[str]:
    """The top-level steps in order: from the entry along sequence edges to
    the terminal; :class:`PlanError` when they loop."""
    successor = {e[0]: e[1] for e in plan["edges"] if e[2] == EdgeKind.SEQUENCE.value}
    steps = {n["id"] for n in plan["nodes"] if n["op"] != "end"}
    chain: list[str] = []
    seen: set[str] = set()
    current = plan["entry"]
    while current is not None and current != plan["terminal"]:
        if current in seen:
            raise PlanError(f"the top-level steps loop back to {current!r}")
        if current not in steps:
            raise PlanError(f"the entry {current!r} is not a step")
        seen.add(current)
        chain.append(current)
        current = successor.get(current)
    return chain


def arms(plan: dict) -> dict[str, dict[str, list[str]]]:
    """Each branch step's arms: ``{"then": [step...], "else": [step...]}``
    (empty arms included)."""
    out = {n["id"]: {"then": [], "else": []} for n in plan["nodes"] if n["op"] == "branch"}
    for source, target, kind, label in plan["edges"]:
        if kind == EdgeKind.BRANCH.value:
            out[source][label].append(target)
    return out


def build(workflow: Workflow, bodies: Bodies) -> dict:
    """The sequential plan's fields: entry, terminal, nodes and edges (the
    bodies are the backends' step code: ``bodies`` is not asked)."""
    ops: dict[str, str] = {}
    for node in workflow.nodes:
        if node.id in ops:
            raise PlanError(f"duplicate node id {node.id!r}")
        ops[node.id] = node.op
    nodes = [_node(n) for n in workflow.nodes]
    plan = {"entry": workflow.entry[0] if workflow.entry else workflow.terminal, "terminal": workflow.terminal,
            "nodes": nodes, "edges": _edges(workflow, ops)}
    top_level(plan)  # a loop or a missing entry is refused here, once for both backends
    return plan
