"""IR of a workflow run by its plan -> a program for the VM (:mod:`flowc.backends.vm.plan_vm`).

Two scheduling models run a workflow as plain data: kernel routing and
dataflow. A program of either holds the plan the Python backend generates
(:mod:`flowc.plan`) as rows (docs/bytecode.md sections 8 and 9), with every
expression of its nodes compiled to a block of the VM's expression machine
(:mod:`flowc.backends.vm.expr_assemble`). What differs between the models
is a row of :data:`MODELS`, keyed by the plan's model: how expressions are
compiled and named (:class:`ExpressionRow`), the layout of a node's row
(:class:`RowLayout`: its fixed fields, the optional fields its mask names,
the rows of its regions' nodes), how a field's value is written, and the
run-wide fields around the graph. The container's sections are the model's
(format.py MODEL_SECTIONS). The same IR always gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from flowc.backends.vm import format as F
from flowc.backends.vm.assemble import AssembleError
from flowc.backends.vm.expr_assemble import ExprAssembleError, Tables, assemble_expression
from flowc.ir import expr as E
from flowc.ir.workflow import Node, Workflow
from flowc.plan import PlanError, build_plan
from flowc.plan.kernel import flat_key

__all__ = ["MODELS", "PlanAssembleError", "assemble_expressions", "assemble_plan", "bodies", "plan_section"]


class PlanAssembleError(AssembleError):
    """The workflow or expression can't be expressed as a plan program."""


# ================================================================ expressions


def _flat_key(ref: E.Ref) -> str:
    try:
        return flat_key(ref)
    except PlanError as exc:
        raise ExprAssembleError(str(exc)) from None


@attrs.frozen
class ExpressionRow:
    """How a model's expressions are compiled and what the plan holds for one."""

    tables: Callable[[], Tables]        # the constant, name and key pools
    access: tuple[str, str] | None      # the load rule (case-sensitive, case-insensitive); None: the default
    resolve: Callable[[E.Ref], str] | None   # a reference -> the key it loads; None: the default
    max_depth: int | None               # deeper expressions do not compile; None: the default
    indexed: bool                       # the plan names an expression by its index in section exprs
    #                                     (block, params, slots triples), else by its block
    params: bool                        # the model's steps have parameter lists
    label: Callable[[Node, str], str]   # an expression in messages, from its node and what the plan calls it


class _Bodies:
    """A plan's bodies as blocks of expression code (flowc.plan's Bodies)."""

    def __init__(self, row: ExpressionRow) -> None:
        self.row = row
        self.tables = row.tables()
        self.exprs: list[int] = []   # block, params, slots of each indexed expression, one flat array

    def add(self, expr: E.Expr, ci: bool = False) -> int:
        """Compile ``expr`` (ExprAssembleError when it does not); what the plan holds for it."""
        row = self.row
        if row.access is None:
            block, params, slots = assemble_expression(self.tables, expr)
        else:
            block, params, slots = assemble_expression(self.tables, expr, row.access[ci], row.resolve, row.max_depth)
        if not row.indexed:
            return block
        self.exprs += [block, params, slots]
        return len(self.exprs) // 3 - 1

    def params(self, node: Node, entries: list[tuple[str, E.Expr]], ci: bool) -> list:
        if not self.row.params:
            raise PlanAssembleError(f"step {node.id!r}: a dataflow step has no kernel parameters")
        pairs = []
        for key, value in entries:
            try:
                pairs.append([key, self.add(value, ci)])
            except ExprAssembleError as exc:
                raise PlanAssembleError(f"step {node.id!r}, parameter {key!r}: {exc}") from None
        return pairs

    def expression(self, node: Node, expr: E.Expr, what: str, ci: bool = False) -> int:
        try:
            return self.add(expr, ci)
        except ExprAssembleError as exc:
            raise PlanAssembleError(f"{self.row.label(node, what)}: {exc}") from None


# ================================================================ rows


@attrs.frozen
class RowLayout:
    """A node's row: its fixed fields, then (with ``optional``) a field
    mask whose bit b set means the node has the fields of bit b, their
    values following in bit order."""

    fixed: tuple[str, ...]
    optional: tuple[tuple[int, tuple[str, ...]], ...] | None
    nested: str            # the layout of its regions' nodes
    implied: tuple[str, ...] = ()   # node keys another field's value holds (a map's key order)


def _pairs(mapping: dict, order: list) -> list:
    """``[name, value...]`` of a map in the order the plan names its keys."""
    assert list(mapping) == list(order), "a map's keys out of their order"
    return [x for key in order for x in (key, mapping[key])]


def _flat_edges(edges: list, nodes: list[dict]) -> list:
    """``source, target, kind, label`` per edge: node indexes (an id's first
    node) and an index into EDGE_KINDS."""
    index = {node["id"]: i for i, node in reversed(list(enumerate(nodes)))}
    return [x for source, target, kind, label in edges
            for x in (index[source], index[target], F.EDGE_KINDS.index(kind), label)]


class _Rows:
    """A model's nodes as rows."""

    def __init__(self, layouts: dict[str, RowLayout], values: dict[str, Callable[[Any], list]]) -> None:
        self.layouts = layouts
        self.values = values

    def graph(self, graph: dict, layout: str) -> list:
        """``[rows, edges]``: a row per node, the edges flat."""
        return [[self.row(node, layout) for node in graph["nodes"]], _flat_edges(graph["edges"], graph["nodes"])]

    def row(self, node: dict, name: str) -> list:
        layout = self.layouts[name]
        known = set(layout.fixed).union(layout.implied, *(keys for _bit, keys in layout.optional or ()))
        assert set(node) <= known, f"a plan node field the bytecode does not hold: {set(node) - known}"
        row = [x for key in layout.fixed for x in self.value(node, key, layout)]
        if layout.optional is None:
            return row
        mask_at = len(row)
        row.append(0)
        for bit, keys in layout.optional:
            present = [node.get(key) is not None for key in keys]
            if any(present):
                assert all(present), f"a node has some of {keys} only"
                row[mask_at] |= 1 << bit
                for key in keys:
                    row += self.value(node, key, layout)
        return row

    def value(self, node: dict, key: str, layout: RowLayout) -> list:
        """The row values of one node field."""
        if key == "regions":
            return [[x for name, graph in node["regions"] for x in (name, *self.graph(graph, layout.nested))]]
        encode = self.values.get(key)
        return [node[key]] if encode is None else encode(node)


# How each model writes the fields that are not written as they are.
def _kernel_retry(step: dict) -> list:
    return [int(v) if isinstance(v, float) and v == int(v) else v for v in step["retry"]]


_KERNEL_VALUES: dict[str, Callable[[dict], list]] = {
    "params": lambda step: [[x for pair in step["params"] for x in pair]],
    "on_error": lambda step: [F.KERNEL_ON_ERROR.index(step["on_error"])],
    "retry": _kernel_retry,
}
_DATAFLOW_VALUES: dict[str, Callable[[dict], list]] = {
    "op": lambda node: [F.DATAFLOW_OPS.index(node["op"])],
    # the display field "kind" is copied as it is (listings show it; nothing runs by it)
    "on_error": lambda node: [None if node["on_error"] == "fail" else node["on_error"]],
    "attrs": lambda node: [_pairs(node["attrs"], node["attr_order"])],
    "inputs": lambda node: [_pairs(node["inputs"], node["input_order"])],
    "retry": lambda node: list(node["retry"]),
}

_SUB_STEP = ("id", "type", "role", "params", "capability", "name")
_KERNEL_LAYOUTS = {
    "step": RowLayout((*_SUB_STEP, "on_error"), tuple((bit, (key,)) for bit, key in enumerate(F.KERNEL_STEP_FIELDS)),
                      "sub-step"),
    "sub-step": RowLayout(_SUB_STEP, None, "sub-step"),
}
_DATAFLOW_LAYOUTS = {
    "node": RowLayout(("id", "op", "kind", "on_error", "attrs"), F.NODE_FIELDS, "node", ("attr_order", "input_order")),
}


# ================================================================ run-wide fields


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise PlanAssembleError(f"{what} must be a string")
    return value


def _role_config(config: dict) -> dict:
    out: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, list):
            out[key] = [_text(v, f"role setting {key!r}") for v in value]
        else:
            out[key] = _text(value, f"role setting {key!r}")
    return out


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


def _kernel_section(plan: dict, rows: _Rows) -> list:
    """``[roles, steps, edges]``; the ``fallthrough`` edges are left out (the
    loader adds them back: after every step without a ``sequence`` edge but the last)."""
    roles = {rid: _role_config(config) for rid, config in plan["roles"].items()}
    edges = [e for e in plan["edges"] if e[2] != "fallthrough"]
    assert with_fallthrough(edges, [step["id"] for step in plan["nodes"]]) == plan["edges"], \
        "edges not listed step by step"
    steps, flat = rows.graph({"nodes": plan["nodes"], "edges": edges}, "step")
    return [roles, steps, flat]


def _dataflow_section(plan: dict, rows: _Rows) -> list:
    """``[defaults, reducers, input_schema, limits, nodes, edges]``."""
    limits = plan.get("limits")
    return [plan["defaults"], plan["reducers"], plan["input_schema"],
            None if limits is None else [limits["steps"], limits["deadline_ms"]], *rows.graph(plan, "node")]


# ================================================================ the models' rows


@attrs.frozen
class ModelRow:
    """How one model's program is written."""

    expressions: ExpressionRow
    rows: _Rows
    section: Callable[[dict, _Rows], list]   # section plan (docs/bytecode.md)


# The plan-run models, by the plan's model (plan/model.py MODELS).
MODELS: dict[str, ModelRow] = {
    "kernel": ModelRow(
        # aevatar's flat variable keys; the builtin keys are names (no key table); as the
        # Python backend's expression compiler, deeper expressions do not compile
        ExpressionRow(lambda: Tables(tagged=False, keys_in_names=True), ("flat_keys", "flat_keys_ci"), _flat_key,
                      90, indexed=False, params=True, label=lambda node, what: f"step {node.id!r}, {what}"),
        _Rows(_KERNEL_LAYOUTS, _KERNEL_VALUES), _kernel_section),
    "dataflow": ModelRow(
        # what the plan calls an expression names its node already
        ExpressionRow(Tables, None, None, None, indexed=True, params=False, label=lambda node, what: what),
        _Rows(_DATAFLOW_LAYOUTS, _DATAFLOW_VALUES), _dataflow_section),
}


def bodies(model: str) -> _Bodies:
    """Fresh bodies of ``model``'s plan (what :func:`flowc.plan.build_plan` asks)."""
    return _Bodies(MODELS[model].expressions)


def plan_section(plan: dict) -> list:
    """Section plan of a built plan (docs/bytecode.md sections 8 and 9)."""
    row = MODELS[plan["model"]]
    return row.section(plan, row.rows)


def _pack(model: str, name: str | None, body: _Bodies, section: list | None) -> bytes:
    t = body.tables
    values = {"consts": t.consts, "names": t.names, "keys": t.keys, "exprs": body.exprs, "plan": section,
              "code": t.blocks}
    return F.pack_container(model, name, [(s, values[s]) for s in F.MODEL_SECTIONS[model][0]])


def assemble_plan(workflow: Workflow) -> bytes:
    """The program of a checked workflow its profile runs by a plan."""
    from flowc.plan import ExecutionModelError, execution_model

    try:
        model = execution_model(workflow)
    except ExecutionModelError as exc:
        raise PlanAssembleError(str(exc)) from None
    if model not in MODELS:
        raise PlanAssembleError(f"the plan assembler writes {' and '.join(MODELS)} programs, not {model}")
    body = bodies(model)
    try:
        plan = build_plan(workflow, body, model)
    except PlanError as exc:
        raise PlanAssembleError(str(exc)) from None
    return _pack(model, plan["name"], body, plan_section(plan))


def assemble_expressions(exprs: list[E.Expr]) -> bytes:
    """A dataflow program of bare expressions (no plan): expression i is ``exprs[i]``."""
    body = bodies("dataflow")
    for e in exprs:
        try:
            body.add(e)
        except ExprAssembleError as exc:
            raise PlanAssembleError(f"expression: {exc}") from None
    return _pack("dataflow", None, body, None)
