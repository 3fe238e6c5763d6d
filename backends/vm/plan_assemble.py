"""IR of a workflow run by its plan -> a program for the VM (:mod:`flowc.backends.vm.plan_vm`).

Every scheduling model runs a workflow as plain data on the VM:
WorkflowSkill's sequential steps, kernel routing and dataflow. A program
holds the plan of :mod:`flowc.plan` as rows (docs/bytecode.md sections 2, 8
and 9; a sequential plan's rows with each step's body, which the Python
backend generates as code instead), with every expression of its nodes
compiled to a block of the VM's expression machine
(:mod:`flowc.backends.vm.expr_assemble`). What differs between the models
is a row of :data:`MODELS`, keyed by the plan's model: how expressions are
compiled and named (:class:`ExpressionRow`), the layout of a node's row
(:class:`RowLayout`: its fixed fields, the optional fields its mask names,
the rows of its regions' nodes), how a field's value is written, and the
run-wide fields around the graph. The container's sections are the model's
(format.py MODEL_SECTIONS). The same IR always gives the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import attrs
import msgpack
from flowc.backends.vm import format as F
from flowc.backends.vm.expr_assemble import DEFAULT_MAX_DEPTH, ExprAssembleError, Tables, assemble_expression
from flowc.ir import expr as E
from flowc.ir.workflow import Node, Workflow
from flowc.plan import ExecutionModelError, PlanError, build_plan, execution_model
from flowc.plan.kernel import flat_key

__all__ = ["MODELS", "AssembleError", "PlanAssembleError", "assemble_expressions", "assemble_plan", "bodies",
           "plan_section"]


class AssembleError(Exception):
    """The workflow uses something the bytecode can't express."""


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


# ================================================================ sequential steps
#
# A WorkflowSkill step's body is data of its row: its kind (the op), the
# call's capability and name, and a block per value (guard, each list,
# inputs, filter test / map object / condition / exit output, output
# mapping); the run (flowc.runtime.sequence_run) gets a step function per
# row from the VM (plan_steps.py), which evaluates them as the generated
# step function does.

# IR type kinds -> the codes of declared types (input and output checks); other kinds
# (any, null) are not checked.
_TYPES = {kind: F.TYPES.index(name) for kind, name in (
    ("string", "string"), ("int", "int"), ("float", "float"), ("bool", "boolean"), ("array", "array"),
    ("object", "object"))}
# The run's last value as the workflow outputs' block reads it (expr_wfs.STATE_ROOT).
_FINAL = E.Ref("@final")


class _PlainTables(Tables):
    """The pools of a sequential program: constants are plain JSON values,
    builtin keys share the name table."""

    def __init__(self) -> None:
        super().__init__(tagged=False, keys_in_names=True)

    def const(self, value: Any, kind: str = "auto") -> int:
        value = _plain(value)
        key = msgpack.packb(value, use_bin_type=True)
        if key not in self._const_index:
            self._const_index[key] = len(self.consts)
            self.consts.append(value)
        return self._const_index[key]


def _plain(value: Any) -> Any:
    """A literal as plain msgpack-able data (tuples become lists)."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, bool) or value is None or isinstance(value, (int, float, str)):
        return value
    raise AssembleError(f"a constant of type {type(value).__name__} can't be encoded")


def _may_be_missing(expr: E.Expr) -> bool:
    """Can ``expr`` evaluate to the missing value? (As the Python backend decides.)"""
    if isinstance(expr, (E.Literal, E.Binary, E.Unary, E.MapExpr, E.ListExpr)):
        return False
    if isinstance(expr, E.Template):
        return expr.typed_whole and any(_may_be_missing(p) for p in expr.parts)
    return True


def _binding(e: E.Expr) -> E.Expr:
    """A binding's value: an object literal drops its keys whose value is
    missing (``wfs.compact``), nested object literals too."""
    if not isinstance(e, E.MapExpr):
        return e
    entries = []
    missing = False
    for entry in e.entries:
        if not (isinstance(entry.key, E.Literal) and isinstance(entry.key.value, str)):
            raise AssembleError("object keys must be constant strings")
        missing = missing or (not isinstance(entry.value, E.MapExpr) and _may_be_missing(entry.value))
        entries.append(E.MapEntry(entry.key, _binding(entry.value), entry.span))
    built = E.MapExpr(tuple(entries), e.span)
    return E.Call("wfs.compact", (built,), e.span) if missing else built


def _outputs(bindings: list, source: E.Ref) -> E.Expr:
    """The object of declared outputs: each its value, else ``source[name]
    ?? null`` (``wfs.pick``); keys whose value is missing dropped."""
    entries = []
    for b in bindings:
        key = E.Literal(b.name, span=b.span)
        value = _binding(b.value) if b.value is not None else E.Call("wfs.pick", (source, key), b.span)
        entries.append(E.MapEntry(key, value, b.span))
    built = E.MapExpr(tuple(entries))
    if any(b.value is not None and not isinstance(b.value, E.MapExpr) and _may_be_missing(b.value)
           for b in bindings):
        return E.Call("wfs.compact", (built,))
    return built


def _literal_text(node: Node, name: str, what: str) -> str | None:
    v = node.attr(name)
    if v is None:
        return None
    if not (isinstance(v, E.Literal) and isinstance(v.value, str)):
        raise AssembleError(f"step {node.id!r}: {what} must be a constant string")
    return v.value


def _js_boolean(node: Node, truth: E.Expr | None) -> None:
    if truth is not None and not (isinstance(truth, E.Literal) and truth.value == "js_boolean"):
        raise AssembleError(f"step {node.id!r}: unsupported truthiness")


class _StepBodies:
    """The bodies of a sequential plan's steps, compiled into one program's pools."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self.known: dict[bytes, int] = {}   # a block's bytes -> its index: equal values share a block

    def block(self, e: E.Expr) -> int:
        blocks = self.tables.blocks
        before = len(blocks)
        try:
            block, _params, _slots = assemble_expression(self.tables, e, "wfs", None, DEFAULT_MAX_DEPTH)
        except ExprAssembleError as exc:
            raise AssembleError(str(exc)) from None
        # a WorkflowSkill expression is one block (no lambdas): a repeated one is the first's
        assert len(blocks) == before + 1 and block == before, "a WorkflowSkill value of more than one block"
        same = self.known.setdefault(blocks[block], block)
        if same != block:
            blocks.pop()
        return same

    def step(self, node: Node) -> dict:
        """The body fields of a step's node (docs/bytecode.md section 2)."""
        if node.op not in F.SEQUENTIAL_OPS or node.op == "end":
            raise AssembleError(f"step {node.id!r}: operation {node.op!r} is not supported")
        out: dict[str, Any] = {}
        if node.guard is not None:
            if node.guard.truthiness != "js_boolean":
                raise AssembleError(f"unsupported guard truthiness {node.guard.truthiness!r}")
            out["guard"] = self.block(node.guard.expr)
        if node.op == "branch":
            _js_boolean(node, node.attr("truthiness"))
            cond = node.attr("condition")
            if cond is None:
                raise AssembleError(f"step {node.id!r}: a branch needs a condition")
            out["body"] = self.block(cond)
            return out
        if node.op == "exit":
            output = node.attr("output")
            out["body"] = self.block(E.Literal(None) if output is None else _binding(output))
            status = node.attr("status")
            if not (isinstance(status, E.Literal) and status.value in ("success", "failed")):
                raise AssembleError(f"step {node.id!r}: exit status must be success or failed")
            out["status"] = status.value
            return out
        if node.iteration is not None:
            out["over"] = self.block(node.iteration.over)
        out["args"] = self.block(E.MapExpr(tuple(E.MapEntry(E.Literal(b.name, span=b.span), _binding(b.value), b.span)
                                                 for b in node.inputs if b.value is not None)))
        if node.op == "call":
            cap = _literal_text(node, "capability", "capability and name")
            name = _literal_text(node, "name", "capability and name")
            if cap is None or name is None:
                raise AssembleError(f"step {node.id!r}: capability and name must be constant strings")
            out["capability"], out["call_name"] = cap, name
        else:
            self.transform(node, out)
            out["key"] = node.outputs[0].name if node.outputs else "items"
        if any(b.value is not None for b in node.outputs):
            out["mapping"] = self.block(_outputs(node.outputs, E.Ref("result")))
        declared = []
        for i, b in enumerate(node.outputs):
            # a transform's first output holds its result array by definition
            if b.type.kind in _TYPES and not (i == 0 and node.op != "call" and b.value is None):
                declared += [b.name, _TYPES[b.type.kind]]
        if declared:
            out["declared"] = declared
        return out

    def transform(self, node: Node, out: dict) -> None:
        kind = node.op.split(".", 1)[1]
        if kind == "sort":
            field = _literal_text(node, "field", "`field`")
            if field is None:
                raise AssembleError(f"step {node.id!r}: `field` must be a constant string")
            direction = node.attr("direction")
            if direction is not None and not (isinstance(direction, E.Literal)
                                              and direction.value in ("asc", "desc")):
                raise AssembleError(f"step {node.id!r}: sort direction must be asc or desc")
            out["sort"] = [field.split("."), isinstance(direction, E.Literal) and direction.value == "desc"]
        elif kind == "filter":
            where = node.attr("where")
            if where is None:
                raise AssembleError(f"step {node.id!r}: a filter needs `where`")
            _js_boolean(node, node.attr("truthiness"))
            out["body"] = self.block(where)
        else:
            body = node.attr("expression")
            if not isinstance(body, E.MapExpr):
                raise AssembleError(f"step {node.id!r}: a map needs an `expression` object")
            out["body"] = self.block(_binding(body))

    def run_wide(self, workflow: Workflow) -> dict:
        """The inputs (name, declared type, default) and the workflow outputs."""
        inputs = []
        for p in workflow.inputs:
            if not isinstance(p.name, str):
                raise AssembleError("an input name is not a string")
            inputs.append([p.name, _TYPES.get(p.type.kind),
                           self.tables.const(p.default) if p.has_default else None])
        keys = [b.name for b in workflow.outputs]
        block = None
        if any(b.value is not None for b in workflow.outputs):
            block = self.block(_outputs(workflow.outputs, _FINAL))
        return {"inputs": inputs, "outputs": [keys, block]}


def _sequential_bodies(workflow: Workflow, body: _Bodies, plan: dict) -> dict:
    """The plan's nodes with their bodies, and its run-wide fields (the
    Python backend's plan holds neither: its bodies are generated code)."""
    steps = _StepBodies(body.tables)
    by_id = {n.id: n for n in workflow.nodes}
    nodes = []
    for node in plan["nodes"]:
        row = dict(node)
        if node["op"] != "end":
            row.update(steps.step(by_id[node["id"]]))
        nodes.append(row)
    lines = [[by_id[n["id"]].span.line, by_id[n["id"]].span.col] if by_id[n["id"]].span.known else [0, 0]
             for n in plan["nodes"]]
    file = os.path.basename(workflow.span.file) if workflow.span.file else ""
    return dict(plan, nodes=nodes, srcmap=[file, [x for pair in lines for x in pair]], **steps.run_wide(workflow))


def _sequential_section(plan: dict, rows: _Rows) -> list:
    """``[entry, terminal, inputs, outputs, nodes, edges]``: entry and
    terminal node indexes (nil: none), inputs flat ``name, type, default``
    triples, outputs ``[keys, block]``."""
    ids = [n["id"] for n in plan["nodes"]]
    index = {sid: i for i, sid in reversed(list(enumerate(ids)))}
    nodes, edges = rows.graph(plan, "step")
    return [index.get(plan["entry"]), index.get(plan["terminal"]), [x for row in plan["inputs"] for x in row],
            plan["outputs"], nodes, edges]


_SEQUENTIAL_VALUES: dict[str, Callable[[dict], list]] = {
    "op": lambda node: [F.SEQUENTIAL_OPS.index(node["op"])],
    "on_error": lambda node: [1 if node["on_error"] == "ignore" else 0],
    "retry": lambda node: [int(node["retry"][0]), int(node["retry"][1]), float(node["retry"][2])],
    "each": lambda node: [int(node["each"]["delay_ms"])],
    "sort": lambda node: list(node["sort"]),
    "status": lambda node: [1 if node["status"] == "failed" else 0],
}
_SEQUENTIAL_LAYOUTS = {
    "step": RowLayout(("id", "op", "on_error"), F.SEQUENTIAL_STEP_FIELDS, "step", ("guarded",)),
}


# ================================================================ the models' rows


@attrs.frozen
class ModelRow:
    """How one model's program is written."""

    expressions: ExpressionRow
    rows: _Rows
    section: Callable[[dict, _Rows], list]   # section plan (docs/bytecode.md)
    # the plan's nodes with their bodies and its run-wide fields, when the
    # plan builder leaves them to the backend (sequential scheduling)
    with_bodies: Callable[[Workflow, _Bodies, dict], dict] | None = None
    # section code holds the blocks as forms (docs/bytecode.md section 2.3)
    forms: bool = False


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
    "sequential": ModelRow(
        # WorkflowSkill's values; plain constants, the builtin keys in the name table
        ExpressionRow(_PlainTables, ("wfs", "wfs"), None, DEFAULT_MAX_DEPTH, indexed=False, params=False,
                      label=lambda node, what: f"step {node.id!r}, {what}"),
        _Rows(_SEQUENTIAL_LAYOUTS, _SEQUENTIAL_VALUES), _sequential_section, _sequential_bodies, forms=True),
}


def bodies(model: str) -> _Bodies:
    """Fresh bodies of ``model``'s plan (what :func:`flowc.plan.build_plan` asks)."""
    return _Bodies(MODELS[model].expressions)


def plan_section(plan: dict) -> list:
    """Section plan of a built plan (docs/bytecode.md sections 2, 8 and 9)."""
    row = MODELS[plan["model"]]
    return row.section(plan, row.rows)


def _pack(model: str, name: str | None, body: _Bodies, section: list | None, srcmap: list | None = None) -> bytes:
    t = body.tables
    code = F.forms_of_blocks(t.blocks) if MODELS[model].forms else t.blocks
    values = {"consts": t.consts, "names": t.names, "keys": t.keys, "exprs": body.exprs, "plan": section,
              "code": code, "srcmap": srcmap}
    required, optional = F.MODEL_SECTIONS[model]
    return F.pack_container(model, name, [(s, values[s]) for s in (*required, *optional) if values[s] is not None
                                          or s in required])


def assemble_plan(workflow: Workflow, strip: bool = False) -> bytes:
    """The program of a checked workflow its profile runs by a plan."""
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
    row = MODELS[model]
    if row.with_bodies is not None:
        plan = row.with_bodies(workflow, body, plan)
    srcmap = plan.pop("srcmap", None)
    return _pack(model, plan["name"], body, plan_section(plan), None if strip else srcmap)


def assemble_expressions(exprs: list[E.Expr]) -> bytes:
    """A dataflow program of bare expressions (no plan): expression i is ``exprs[i]``."""
    body = bodies("dataflow")
    for e in exprs:
        try:
            body.add(e)
        except ExprAssembleError as exc:
            raise PlanAssembleError(f"expression: {exc}") from None
    return _pack("dataflow", None, body, None)
