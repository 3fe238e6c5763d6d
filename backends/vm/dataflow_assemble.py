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

__all__ = ["DataflowAssembleError", "assemble_dataflow", "assemble_expressions", "plan_section"]


class DataflowAssembleError(AssembleError):
    """The workflow or expression can't be expressed as a dataflow program."""


def _pack(tables: _Exprs, plan: dict | None) -> bytes:
    t = tables.tables
    name = None   # the container's header holds the plan's name (and model)
    section = None
    if plan is not None:
        name = plan["name"]
        section = plan_section(plan)
    return F.pack_container("dataflow", name, [
        ("consts", t.consts), ("names", t.names), ("keys", t.keys), ("exprs", tables.exprs), ("plan", section),
        ("code", t.blocks)])


def plan_section(plan: dict) -> list:
    """Section plan (docs/bytecode.md section 9): ``[defaults, reducers,
    input_schema, limits, nodes, edges]``, the graph as rows of positional
    fields and edges as flat quadruples of ints (and a label)."""
    limits = plan.get("limits")
    return [plan["defaults"], plan["reducers"], plan["input_schema"],
            None if limits is None else [limits["steps"], limits["deadline_ms"]], *_graph_rows(plan)]


def _graph_rows(graph: dict) -> list:
    """``[nodes, edges]``: a row per node; ``source, target, kind, label``
    per edge, the ends as node indexes and the kind an index into EDGE_KINDS."""
    index = {node["id"]: i for i, node in enumerate(graph["nodes"])}
    edges: list = []
    for source, target, kind, label in graph["edges"]:
        edges += [index[source], index[target], F.EDGE_KINDS.index(kind), label]
    return [[_node_row(node) for node in graph["nodes"]], edges]


_ROW_KEYS = {"id", "op", "kind", "on_error", "attrs", "attr_order", "input_order"}


def _node_row(node: dict) -> list:
    """``[id, op, kind, on_error, attrs, mask, fields...]``: on_error nil for
    ``fail``; attrs flat ``[name, expression...]`` in attr_order; mask's bit
    b set when the node has NODE_FIELDS' fields of bit b, their values following."""
    known = _ROW_KEYS.union(*(keys for _bit, keys in F.NODE_FIELDS))
    assert set(node) <= known, f"a plan node field the bytecode does not hold: {set(node) - known}"
    row = [node["id"], F.DATAFLOW_OPS.index(node["op"]), node["kind"],
           None if node["on_error"] == "fail" else node["on_error"],
           _pairs(node["attrs"], node["attr_order"]), 0]
    for bit, keys in F.NODE_FIELDS:
        present = [key in node for key in keys]
        if any(present):
            assert all(present), f"a node has some of {keys} only"
            row[5] |= 1 << bit
            for key in keys:
                row += _field(node, key)
    return row


def _field(node: dict, key: str) -> list:
    """The row values of one node field."""
    if key == "inputs":
        return [_pairs(node["inputs"], node["input_order"])]
    if key == "retry":
        return list(node["retry"])
    if key == "regions":
        return [[x for name, graph in node["regions"] for x in (name, *_graph_rows(graph))]]
    return [node[key]]


def _pairs(mapping: dict, order: list) -> list:
    """``[name, value...]`` of a map in the order the plan names its keys."""
    assert list(mapping) == list(order), "a map's keys out of their order"
    return [x for key in order for x in (key, mapping[key])]


class _Exprs:
    def __init__(self) -> None:
        self.tables = Tables()
        self.exprs: list[int] = []

    def params(self, node: Node, entries, ci: bool) -> int:
        raise DataflowAssembleError(f"step {node.id!r}: a dataflow step has no kernel parameters")

    def expression(self, node: Node | None, expr: E.Expr, what: str, ci: bool = False) -> int:
        return self.add(expr, what)

    def add(self, expr: E.Expr, what: str = "expression") -> int:
        try:
            block, params, slots = assemble_expression(self.tables, expr)
        except ExprAssembleError as exc:
            raise DataflowAssembleError(f"{what}: {exc}") from None
        self.exprs += [block, params, slots]   # one flat array of triples
        return len(self.exprs) // 3 - 1


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
