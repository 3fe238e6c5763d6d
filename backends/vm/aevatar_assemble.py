"""IR of an aevatar workflow -> an aevatar program for the VM
(:mod:`flowc.backends.vm.aevatar_vm`, docs/bytecode.md section 8).

The plan is the one the Python backend generates
(:mod:`flowc.plan`); each parameter value and while
condition is compiled to a block of aevatar expression code. The same IR
always gives the same bytes.
"""

from __future__ import annotations

from typing import Any

from flowc.backends.vm import format as F
from flowc.backends.vm.assemble import AssembleError
from flowc.backends.vm.expr_assemble import ExprAssembleError, Tables, assemble_expression
from flowc.ir import expr as E
from flowc.ir.workflow import Node, Workflow
from flowc.plan import PlanError, build_plan
from flowc.plan.kernel import flat_key

__all__ = ["AevatarAssembleError", "assemble_aevatar"]

# As the Python backend's expression compiler: deeper expressions do not compile.
MAX_DEPTH = 90


class AevatarAssembleError(AssembleError):
    """The aevatar workflow can't be expressed as an aevatar program."""


def _flat_key(ref: E.Ref) -> str:
    try:
        return flat_key(ref)
    except PlanError as exc:
        raise ExprAssembleError(str(exc)) from None


class _Tables:
    """String constants, names (the builtin keys among them) and blocks."""

    def __init__(self) -> None:
        self.pools = Tables(tagged=False, keys_in_names=True)

    def block(self, expr: E.Expr, ci: bool) -> int:
        try:
            block, _params, _slots = assemble_expression(
                self.pools, expr, "flat_keys_ci" if ci else "flat_keys", _flat_key, MAX_DEPTH)
        except ExprAssembleError as exc:
            raise AevatarAssembleError(str(exc)) from None
        return block


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise AevatarAssembleError(f"{what} must be a string")
    return value


def _role_config(config: dict) -> dict:
    out: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, list):
            out[key] = [_text(v, f"role setting {key!r}") for v in value]
        else:
            out[key] = _text(value, f"role setting {key!r}")
    return out


def _sub_row(sub: dict) -> list:
    """``[id, type, role, params, capability, name]``, params flat ``[name, block...]``."""
    return [sub["id"], sub["type"], sub["role"], [x for pair in sub["params"] for x in pair], sub["capability"],
            sub["name"]]


def _step_row(step: dict) -> list:
    """A sub-step row, then ``on_error`` (an index into KERNEL_ON_ERROR), the
    field mask and the values of the fields it names (KERNEL_STEP_FIELDS)."""
    row = _sub_row(step) + [F.KERNEL_ON_ERROR.index(step["on_error"]), 0]
    for bit, key in enumerate(F.KERNEL_STEP_FIELDS):
        value = step.get(key)
        if value is None:
            continue
        row[7] |= 1 << bit
        if key == "retry":
            row += [int(v) if isinstance(v, float) and v == int(v) else v for v in value]
        elif key == "regions":
            row.append([x for name, graph in value
                        for x in (name, [_sub_row(s) for s in graph["nodes"]], _flat_edges(graph["edges"], graph))])
        else:
            row.append(value)
    return row


def _flat_edges(edges: list, graph: dict) -> list:
    """``source, target, kind, label`` per edge: node indexes and an index into EDGE_KINDS."""
    index = {node["id"]: i for i, node in reversed(list(enumerate(graph["nodes"])))}
    return [x for source, target, kind, label in edges
            for x in (index[source], index[target], F.EDGE_KINDS.index(kind), label)]


def _plan_section(plan: dict, roles: dict) -> list:
    """``[roles, steps, edges]``; the ``fallthrough`` edges are left out (the
    loader adds them back: after every step without a ``sequence`` edge but the last)."""
    edges = [e for e in plan["edges"] if e[2] != "fallthrough"]
    ids = [step["id"] for step in plan["nodes"]]
    assert with_fallthrough(edges, ids) == plan["edges"], "edges not listed step by step"
    return [roles, [_step_row(s) for s in plan["nodes"]], _flat_edges(edges, plan)]


def with_fallthrough(edges: list, ids: list[str]) -> list:
    """The plan's edges: ``edges`` (step by step) with each step's
    ``fallthrough`` edge to the next after its own when it has no ``sequence`` edge."""
    by_source: dict[str, list] = {}
    for edge in edges:
        by_source.setdefault(edge[0], []).append(edge)
    out = []
    for i, sid in enumerate(ids):
        own = by_source.pop(sid, [])
        out += own
        if i + 1 < len(ids) and all(e[2] != "sequence" for e in own):
            out.append([sid, ids[i + 1], "fallthrough", None])
    return out + [e for rest in by_source.values() for e in rest]


class _Bodies:
    """Parameters and conditions as blocks of aevatar expression code."""

    def __init__(self, tables: _Tables) -> None:
        self.tables = tables

    def params(self, node: Node, entries: list[tuple[str, E.Expr]], ci: bool) -> list:
        pairs = []
        for key, value in entries:
            try:
                pairs.append([key, self.tables.block(value, ci)])
            except AevatarAssembleError as exc:
                raise AevatarAssembleError(f"step {node.id!r}, parameter {key!r}: {exc}") from None
        return pairs

    def expression(self, node: Node, expr: E.Expr, what: str, ci: bool) -> int:
        try:
            return self.tables.block(expr, ci)
        except AevatarAssembleError as exc:
            raise AevatarAssembleError(f"step {node.id!r}, {what}: {exc}") from None


def assemble_aevatar(workflow: Workflow) -> bytes:
    """The aevatar program of a checked aevatar workflow."""
    tables = _Tables()
    try:
        plan = build_plan(workflow, _Bodies(tables), "kernel")
    except PlanError as exc:
        raise AevatarAssembleError(str(exc)) from None
    roles = {rid: _role_config(config) for rid, config in plan["roles"].items()}
    pools = tables.pools
    return F.pack_container("kernel", plan["name"], [
        ("consts", pools.consts), ("names", pools.names),
        ("plan", _plan_section(plan, roles)), ("code", pools.blocks)])
