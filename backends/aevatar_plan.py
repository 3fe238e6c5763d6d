"""The plan of an aevatar workflow: its steps as plain data.

Both backends build the same plan from the IR and differ only in how a
step's parameters and a while's condition are represented: the Python
backend names a generated function, the VM the bytecode blocks of its
aevatar program (docs/bytecode.md section 8). The kernel
(:mod:`flowc.backends.python.rt_aevatar_run`) reads the plan::

    {"name", "roles": {role id: {"id", setting: str | [str]...}}, "steps": [step...]}
    step = {"id", "type", "role", "params", "capability", "name", "next",
            "branches": [[key, target]...], "retry": None | [max, delay_ms, 1 | 2],
            "on_error": None | [action, target, default_output],
            "timeout_ms"? (the step's deadline, 100..600000),
            "condition"? (while), "regions"? {name: [sub-step...]}}
    sub-step = {"id", "type", "role", "params", "capability", "name"}

``params`` is what ``params_fn(node, entries, case_insensitive)`` returns
for the step's parameters (``entries``: ``(name, expression)`` pairs in the
engine's order, without the ones a while evaluates itself); ``condition``
what ``expression_fn(node, expr, case_insensitive, what)`` returns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowc.backends.execution import runs_under
from flowc.ir import expr as E
from flowc.ir.workflow import EdgeKind, Node, Workflow

__all__ = ["OPS", "AevatarPlanError", "build_plan", "step_type"]

# The IR operations the aevatar front end lowers to.
OPS = frozenset({"call", "transform.apply", "assign", "branch", "switch", "assert", "while", "foreach",
                 "parallel", "race", "map_reduce", "cache", "reflect", "vote", "sleep"})
# Parameters a while evaluates itself, per iteration (not at dispatch).
DEFERRED_PREFIX = "sub_param_"

ParamsFn = Callable[[Node, list[tuple[str, E.Expr]], bool], Any]
ExpressionFn = Callable[[Node, E.Expr, bool, str], Any]


class AevatarPlanError(Exception):
    """The workflow uses something the aevatar kernel does not run."""


def _lit(node: Node, name: str) -> str | None:
    value = node.attr(name)
    return value.value if isinstance(value, E.Literal) and isinstance(value.value, str) else None


# The kernel's primitive for each IR operation exactly one primitive lowers to.
_OP_PRIMITIVES = {
    "assign": "assign", "branch": "conditional", "switch": "switch", "assert": "guard", "while": "while",
    "sleep": "delay", "foreach": "foreach", "parallel": "parallel", "race": "race", "map_reduce": "map_reduce",
    "cache": "cache", "reflect": "reflect", "vote": "vote",
}
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
            raise AevatarPlanError(f"step {node.id!r}: operation {node.op!r} without attr `primitive`; the "
                                   "kernel can't tell which primitive it runs")
        return primitive
    primitive = _OP_PRIMITIVES.get(node.op)
    if primitive is None:
        raise AevatarPlanError(f"step {node.id!r}: operation {node.op!r} is not run by kernel scheduling")
    return primitive


class _Builder:
    def __init__(self, workflow: Workflow, params_fn: ParamsFn, expression_fn: ExpressionFn) -> None:
        self.wf = workflow
        self.params_fn = params_fn
        self.expression_fn = expression_fn
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
                    raise AevatarPlanError(f"step {node.id!r}: a parameter name is not a string")
                if skip(key):
                    continue
                entries.append((key, entry.value))
        return self.params_fn(node, entries, ci)

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

    def step(self, node: Node) -> dict:
        if node.op not in OPS:
            raise AevatarPlanError(f"step {node.id!r}: operation {node.op!r} is not run by kernel scheduling")
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
            "next": None,
            "branches": [],
            "retry": None,
            "on_error": None,
        }
        for edge in self.out_edges.get(node.id, ()):
            if edge.kind is EdgeKind.SEQUENCE:
                data["next"] = edge.target
            elif edge.kind is EdgeKind.BRANCH and edge.label != "on_fail":
                data["branches"].append([edge.label or "", edge.target])
        if node.retry is not None:
            r = node.retry
            data["retry"] = [r.max_retries, r.delay_ms, 2 if r.backoff == 2.0 else 1]
        if node.on_error.action != "fail":
            default = node.attr("default_output")
            data["on_error"] = [node.on_error.action, node.on_error.target,
                                default.value if isinstance(default, E.Literal) else None]
        timeout = node.attr("timeout_ms")
        if isinstance(timeout, E.Literal) and type(timeout.value) is int:
            data["timeout_ms"] = timeout.value  # the front end clamped it (100..600000)
        if deferred:
            condition = node.attr("condition")
            data["condition"] = self.expression_fn(node, condition, True, "while condition")
        if node.regions:
            data["regions"] = {region.name: [self.sub_node(n) for n in region.nodes] for region in node.regions}
        return data

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


def build_plan(workflow: Workflow, params_fn: ParamsFn, expression_fn: ExpressionFn) -> dict:
    """The plan of a checked aevatar workflow; :class:`AevatarPlanError` when
    it holds something the kernel does not run."""
    why_not = runs_under(workflow, "kernel")
    if why_not is not None:
        raise AevatarPlanError(f"the aevatar kernel's plan: {why_not}")
    b = _Builder(workflow, params_fn, expression_fn)
    return {"name": workflow.name, "roles": b.roles(), "steps": [b.step(n) for n in workflow.nodes]}
