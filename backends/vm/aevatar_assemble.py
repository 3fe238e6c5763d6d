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
    return [sub["id"], sub["type"], sub["role"], sub["params"], sub["capability"], sub["name"]]


def _step_row(step: dict) -> list:
    retry = step["retry"]
    if retry is not None:
        retry = [int(v) if isinstance(v, float) and v == int(v) else v for v in retry]
    regions = step.get("regions")
    return [step["id"], step["type"], step["role"], step["params"], step["capability"], step["name"],
            step["on_error"], retry, step.get("default_output"), step.get("condition"),
            None if regions is None else [[name, [_sub_row(s) for s in graph["nodes"]], graph["edges"]]
                                          for name, graph in regions],
            step.get("timeout_ms")]


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
        ("plan", [roles, [_step_row(s) for s in plan["nodes"]], plan["edges"]]), ("code", pools.blocks)])
