"""The nodes and edges of a plan under kernel scheduling (the aevatar engine's step loop).

Run-wide field: ``roles`` ({role id: {"id", setting: str | [str]...}}).
A node (a step)::

    {"id", "type", "role", "params", "capability", "name", "on_error", "retry",
     "default_output"? (on_error skip), "timeout_ms"? (100..600000),
     "condition"? (while), "regions"? [[name, {"nodes": [sub-step...], "edges"}]...]}
    sub-step = {"id", "type", "role", "params", "capability", "name"}

``on_error`` is ``fail``, ``skip`` or ``fallback`` (to the target of the
step's ``error`` edge labelled ``fallback``); ``retry`` None or ``[max,
delay_ms, 1 | 2]`` (fixed or doubling delays). ``params`` is what
``bodies.params(node, entries, case_insensitive)`` returns for the step's
parameters (without the ones a while evaluates itself); ``condition``
what ``bodies.expression`` returns.

Routing is edges: ``sequence`` (the step's ``next``), ``branch`` (a
switch's or conditional's arms, labelled by key; a guard's ``on_fail``
arm), ``error`` (``fallback``) and ``fallthrough``. The kernel activates
one step at a time: after a step without a ``sequence`` edge it continues
with the next step in document order, and the plan makes that
``fallthrough`` edge explicit for every such step (the IR leaves it out
where the step's branches are exhaustive).
"""

from __future__ import annotations

from typing import Any

from flowc.ir import expr as E
from flowc.ir.semantics import KERNEL_PRIMITIVES
from flowc.ir.workflow import EdgeKind, Node, Region, Workflow
from flowc.plan.shape import Bodies, PlanError, edge_row

__all__ = ["DEFERRED_PREFIX", "OPS", "build", "flat_key", "step_type"]

# The IR operations the aevatar front end lowers to.
OPS = frozenset({"call", "transform.apply", "assign", "branch", "switch", "assert", "while", "foreach",
                 "parallel", "race", "map_reduce", "cache", "reflect", "vote", "sleep"})
# Parameters a while evaluates itself, per iteration (not at dispatch).
DEFERRED_PREFIX = "sub_param_"


def _lit(node: Node, name: str) -> str | None:
    value = node.attr(name)
    return value.value if isinstance(value, E.Literal) and isinstance(value.value, str) else None


# Operations several primitives lower to (llm_call, tool_call, evaluate ...
# are all a `call`): the front end records the primitive as attr `primitive`.
_RECORDED_OPS = frozenset({"call", "transform.apply"})


def step_type(node: Node) -> str:
    """The kernel's name for a step's primitive (canonical; ``extension`` for
    extension primitives), from the node's op and attributes."""
    if node.op == "call" and _lit(node, "capability") == "extension":
        return "extension"
    if node.op in _RECORDED_OPS:
        primitive = _lit(node, "primitive")
        if primitive is None:
            raise PlanError(f"step {node.id!r}: operation {node.op!r} without attr `primitive`; the "
                            "kernel can't tell which primitive it runs")
        return primitive
    primitive = KERNEL_PRIMITIVES.get(node.op)
    if primitive is None:
        raise PlanError(f"step {node.id!r}: operation {node.op!r} is not run by kernel scheduling")
    return primitive


class _Builder:
    def __init__(self, workflow: Workflow, bodies: Bodies) -> None:
        self.wf = workflow
        self.bodies = bodies
        # Each step's outgoing edges, indexed once: a plan is linear in the workflow.
        self.out_edges: dict[str, list] = {}
        for edge in workflow.edges:
            self.out_edges.setdefault(edge.source, []).append(edge)

    def params(self, node: Node, ci: bool, skip=lambda key: False) -> Any:
        mapping = node.attr("parameters")
        entries: list[tuple[str, E.Expr]] = []
        if isinstance(mapping, E.MapExpr):
            for entry in mapping.entries:
                key = entry.key.value if isinstance(entry.key, E.Literal) else None
                if not isinstance(key, str):
                    raise PlanError(f"step {node.id!r}: a parameter name is not a string")
                if skip(key):
                    continue
                entries.append((key, entry.value))
        return self.bodies.params(node, entries, ci)

    def sub_node(self, node: Node) -> dict:
        ci = _lit(node, "variables") == "case_insensitive"
        return {
            "id": node.id,
            "type": step_type(node),
            "role": node.actor,
            "params": self.params(node, ci),
            "capability": _lit(node, "capability"),
            "name": _lit(node, "name"),
        }

    def region(self, region: Region) -> list:
        return [region.name, {"nodes": [self.sub_node(n) for n in region.nodes],
                              "edges": [edge_row(e) for e in region.edges]}]

    def step(self, node: Node) -> dict:
        if node.op not in OPS:
            raise PlanError(f"step {node.id!r}: operation {node.op!r} is not run by kernel scheduling")
        kind = step_type(node)
        deferred = kind == "while"
        data: dict[str, Any] = {
            "id": node.id,
            "type": kind,
            "role": node.actor,
            "params": self.params(
                node, False, (lambda k: k == "condition" or k.lower().startswith(DEFERRED_PREFIX))
                if deferred else (lambda k: False)),
            "capability": _lit(node, "capability"),
            "name": _lit(node, "name"),
            "on_error": node.on_error.action,
            "retry": None,
        }
        if node.retry is not None:
            r = node.retry
            data["retry"] = [r.max_retries, r.delay_ms, 2 if r.backoff == 2.0 else 1]
        default = node.attr("default_output")
        if node.on_error.action == "skip" and isinstance(default, E.Literal) and default.value is not None:
            data["default_output"] = default.value
        timeout = node.attr("timeout_ms")
        if isinstance(timeout, E.Literal) and type(timeout.value) is int:
            data["timeout_ms"] = timeout.value  # the front end clamped it (100..600000)
        if deferred:
            data["condition"] = self.bodies.expression(node, node.attr("condition"), "while condition", True)
        if node.regions:
            data["regions"] = [self.region(region) for region in node.regions]
        return data

    def edges(self) -> list[list]:
        """Each step's routes in the order the kernel takes them (see the module docstring)."""
        nodes = self.wf.nodes
        first: dict[str, int] = {}
        for i, node in enumerate(nodes):
            first.setdefault(node.id, i)
        rows: list[list] = []
        for i, node in enumerate(nodes):
            if first[node.id] != i:
                continue  # a repeated id: its edges are the first step's (the checks refuse it)
            out = self.out_edges.get(node.id, ())
            sequence = [e for e in out if e.kind is EdgeKind.SEQUENCE]
            rows += [edge_row(e) for e in sequence]
            rows += [edge_row(e) for e in out if e.kind is EdgeKind.BRANCH]
            rows += [edge_row(e) for e in out if e.kind is EdgeKind.ERROR]
            if not sequence and i + 1 < len(nodes):
                rows.append([node.id, nodes[i + 1].id, EdgeKind.FALLTHROUGH.value, None])
        return rows

    def roles(self) -> dict:
        out: dict[str, dict] = {}
        for actor in self.wf.actors:
            config: dict[str, Any] = {"id": actor.id}
            for attr in actor.attrs:
                if isinstance(attr.value, E.Literal) and isinstance(attr.value.value, str):
                    config[attr.name] = attr.value.value
                elif isinstance(attr.value, E.ListExpr):
                    config[attr.name] = [i.value for i in attr.value.items if isinstance(i, E.Literal)]
            out[actor.id] = config
        return out


def build(workflow: Workflow, bodies: Bodies) -> dict:
    """The kernel plan's fields: roles, nodes (steps) and edges."""
    b = _Builder(workflow, bodies)
    return {"roles": b.roles(), "nodes": [b.step(n) for n in workflow.nodes], "edges": b.edges()}


def flat_key(e: E.Ref) -> str:
    """The variable key a reference reads under kernel scheduling (aevatar's
    flat variable keys: ``input``, a variable, ``steps.<id>.<field>``); both
    backends name variables by it."""
    names = []
    for seg in e.path:
        if not isinstance(seg, E.Field) or not isinstance(seg.name, str):
            raise PlanError("aevatar references are dotted keys")
        names.append(seg.name)
    if e.root == "input" and not names:
        return "input"
    if e.root == "vars" and len(names) == 1:
        return names[0]
    if e.root == "steps" and names:
        return "steps." + ".".join(names)
    raise PlanError(f"unsupported reference root: {e.root!r}")
