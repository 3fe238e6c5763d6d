"""IR -> a dataflow program for the VM (see :mod:`flowc.backends.vm.dataflow`).

The plan is the one the Python backend generates (:mod:`flowc.plan`);
each expression is compiled to expression code (:mod:`flowc.backends.vm.expr_assemble`)
and named by its index in the program's expression table. The same IR
always gives the same bytes.
"""

from __future__ import annotations

from flowc.backends.vm import format as F
from flowc.backends.vm.assemble import AssembleError
from flowc.backends.vm.expr_assemble import ExprAssembleError, Tables, assemble_expression
from flowc.ir import expr as E
from flowc.ir.workflow import Node, Workflow
from flowc.plan import PlanError, build_plan

__all__ = ["DataflowAssembleError", "assemble_dataflow", "assemble_expressions"]


class DataflowAssembleError(AssembleError):
    """The workflow or expression can't be expressed as a dataflow program."""


def _pack(tables: _Exprs, plan: dict | None) -> bytes:
    t = tables.tables
    name = None
    if plan is not None:
        plan = dict(plan)
        name = plan.pop("name")   # the container's header holds it
        del plan["model"]         # ... and its model
    return F.pack_container("dataflow", name, [
        ("consts", t.consts), ("names", t.names), ("keys", t.keys), ("exprs", tables.exprs), ("plan", plan),
        ("code", t.blocks)])


class _Exprs:
    def __init__(self) -> None:
        self.tables = Tables()
        self.exprs: list[list[int]] = []

    def params(self, node: Node, entries, ci: bool) -> int:
        raise DataflowAssembleError(f"step {node.id!r}: a dataflow step has no kernel parameters")

    def expression(self, node: Node | None, expr: E.Expr, what: str, ci: bool = False) -> int:
        return self.add(expr, what)

    def add(self, expr: E.Expr, what: str = "expression") -> int:
        try:
            block, params, slots = assemble_expression(self.tables, expr)
        except ExprAssembleError as exc:
            raise DataflowAssembleError(f"{what}: {exc}") from None
        self.exprs.append([block, params, slots])
        return len(self.exprs) - 1


def assemble_expressions(exprs: list[E.Expr]) -> bytes:
    """A program of bare expressions (no graph): expression i is ``exprs[i]``."""
    table = _Exprs()
    for e in exprs:
        table.add(e)
    return _pack(table, None)


def assemble_dataflow(workflow: Workflow) -> bytes:
    """The dataflow program of a checked instruction workflow."""
    table = _Exprs()
    try:
        plan = build_plan(workflow, table, "dataflow")
    except PlanError as exc:
        raise DataflowAssembleError(str(exc)) from None
    return _pack(table, plan)
