"""The dataflow scheduling model (dialect 3's dependency graph) -> a WorkflowSkill step list.

Dialect 3 runs one ready step at a time, the smallest id first; the steps
are written in that order, so the host sees the calls in the same order.
A step runs in dialect 3 when its ``when`` holds and not every dependency
was pruned; a switch prunes the arms it did not choose. WorkflowSkill only
skips a step whose own guard is false, so every step that can be pruned
gets a guard that says when it is *live*: its own ``when`` and, when all
its dependencies may be pruned, that one of them is live (guards are pure,
so evaluating them again gives the same answer). Switch cases become
guards on their targets.

Each kind's translation is in :data:`KIND_RULES`, each operator's in
:data:`OPERATOR_RULES`; docs/translation.md lists them.
"""

from __future__ import annotations

import itertools

from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.ops import END_NODE_ID
from flowc.ir.span import Span
from flowc.ir.workflow import (
    Attr,
    Binding,
    Edge,
    EdgeKind,
    Guard,
    Iteration,
    Node,
    Param,
    RetryPolicy,
    Workflow,
)
from flowc.runtime.wfs import js_to_number
from flowc.translation.control.dataflow import DataflowGraph
from flowc.translation.ids import IdRenamer
from flowc.translation.kinds import ARRAY, BOOL, NUMBER, STRING, Kinds, wfs_equality_is_cel
from flowc.translation.report import Report
from flowc.translation.workflowskill.flags import ID_DISALLOWED, PROFILE, STEP_ID
from flowc.translation.workflowskill.lowerings import OPERATOR_RULES

__all__ = ["lower_dataflow"]

_TYPE_NAME = {"string": T.STRING, "number": T.FLOAT, "bool": T.BOOL, "array": T.ARRAY, "object": T.OBJECT}


class CelToWfs:
    """Rewrites CEL (and ``{{ }}`` templates) into WorkflowSkill expressions."""

    def __init__(self, report: Report, kinds: Kinds) -> None:
        self.report = report
        self.kinds = kinds
        self.params: dict[str, str] = {}       # lambda parameter -> wfs root (item, index)
        self.prunable: set[str] = set()        # steps that may be pruned (their output is then null)
        self.shapes: dict[str, str] = {}       # step id -> "items" (transform) or "value" (map trick)
        self.ids: dict[str, str] = {}          # instruction id -> wfs id

    def _finding(self, message: str, span: Span, code: str = "TRN102") -> None:
        self.report.finding(code, message, span)

    def expr(self, e: E.Expr) -> E.Expr:
        if isinstance(e, E.Literal):
            if e.kind in ("uint", "bytes"):
                self._finding(f"a CEL {e.kind} constant has no WorkflowSkill form", e.span, "TRN101")
            return e
        if isinstance(e, E.Ref):
            return self.ref(e)
        if isinstance(e, E.Unary) and e.op == "cel.not":
            return E.Unary("wfs.not", self.expr(e.operand), e.span)
        if isinstance(e, E.Binary) and e.op in OPERATOR_RULES:
            return self.binary(e)
        if isinstance(e, E.Template):
            return self.template(e)
        if isinstance(e, E.ListExpr) and _constant(e) is not _NOT_CONSTANT:
            return E.Literal(_constant(e), "list", e.span)   # a list of constants is a constant
        if isinstance(e, E.MapExpr) and all(isinstance(m.key, E.Literal) for m in e.entries):
            return E.MapExpr(tuple(E.MapEntry(m.key, self.expr(m.value), m.span) for m in e.entries), e.span)
        if isinstance(e, E.Call) and e.func == "cel.size" and len(e.args) == 1:
            arg = e.args[0]
            if self.kinds.of(arg) <= ARRAY | {"null"} and isinstance(arg, E.Ref):
                inner = self.expr(arg)
                if isinstance(inner, E.Ref):
                    self.report.lowered("size()", "`.length`", e.span)
                    return E.Ref(inner.root, inner.path + (E.Field("length"),), e.span)
            self._finding("size() of a value not known to be a list has no WorkflowSkill form (`.length` reads "
                          "arrays only)", e.span, "TRN101")
            return E.Literal(None, "null", e.span)
        what = getattr(e, "op", None) or getattr(e, "func", None) or type(e).__name__
        self._finding(f"{what} has no WorkflowSkill form (WorkflowSkill expressions have no functions, "
                      "arithmetic or conditionals)", e.span, "TRN101")
        return E.Literal(None, "null", e.span)

    def binary(self, e: E.Binary) -> E.Expr:
        target, rule = OPERATOR_RULES[e.op]
        lk, rk = self.kinds.of(e.left), self.kinds.of(e.right)
        left, right = self.expr(e.left), self.expr(e.right)
        if rule == "equality" and not wfs_equality_is_cel(e.left, lk, e.right, rk):
            self._finding(f"`{'==' if e.op == 'cel.eq' else '!='}`: WorkflowSkill finds a number equal to numeric "
                          "text, CEL never does; the operand types are not known to rule that out", e.span)
        elif rule == "numbers" and not (lk <= NUMBER and rk <= NUMBER):
            self._finding("CEL orders text, WorkflowSkill compares numbers only (text becomes a number or 0); the "
                          "operands are not known to be numbers", e.span)
        elif rule == "list membership":
            if not rk <= ARRAY | {"null"}:
                self._finding("`in`: on a map it tests a key, and WorkflowSkill's contains on text is a "
                              "substring test; the right side is not known to be a list", e.span)
            return E.Binary(target, right, left, e.span)
        return E.Binary(target, left, right, e.span)

    def ref(self, e: E.Ref) -> E.Expr:
        if e.root in self.params and not e.path:
            return E.Ref(self.params[e.root], (), e.span)
        if e.root in self.params:
            return E.Ref(self.params[e.root], e.path, e.span)
        if e.root == "inputs":
            return E.Ref("inputs", e.path, e.span)
        if e.root == "steps" and len(e.path) >= 2 and isinstance(e.path[0], E.Field) \
                and isinstance(e.path[1], E.Field):
            sid, field = e.path[0].name, e.path[1].name
            if field != "output":
                self._finding(f"steps.{sid}.{field} has no WorkflowSkill form (only a step's output is kept)",
                              e.span, "TRN101")
                return E.Literal(None, "null", e.span)
            if sid in self.prunable and len(e.path) > 2:
                self._finding(f"step {sid!r} may be pruned: dialect 3 then fails on a field of its null output, "
                              "WorkflowSkill reads it as undefined", e.span)
            wid = self.ids.get(sid, sid)
            shape = self.shapes.get(sid)
            extra: tuple = ()
            if shape == "items":
                extra = (E.Field("items"),)
            elif shape == "value":
                extra = (E.Field("items"), E.Index(E.Literal(0, "int")), E.Field("value"))
            elif shape == "none":
                self._finding(f"step {sid!r} has no output in WorkflowSkill", e.span, "TRN101")
                return E.Literal(None, "null", e.span)
            path = tuple(E.Field(p.name, p.span) if isinstance(p, E.Field) else
                         E.Index(self.expr(p.index), p.span) for p in e.path[2:])
            return E.Ref("steps", (E.Field(wid), E.Field("output")) + extra + path, e.span)
        self._finding(f"`{e.root}` has no WorkflowSkill form", e.span, "TRN101")
        return E.Literal(None, "null", e.span)

    def template(self, e: E.Template) -> E.Expr:
        if e.typed_whole and len(e.parts) == 1 and isinstance(e.parts[0], E.Ref):
            return self.ref(e.parts[0])  # `{{ path }}` alone is the value itself
        parts = []
        for p in e.parts:
            if isinstance(p, E.Literal):
                parts.append(p)
            elif isinstance(p, E.Ref):
                parts.append(self.ref(p))
            else:
                self._finding("a template default (`| value`) has no WorkflowSkill form", p.span, "TRN101")
                parts.append(E.Literal("", "string", p.span))
        if not e.typed_whole:
            for original in e.parts:
                if not isinstance(original, E.Literal) and not self.kinds.of(original) <= STRING | NUMBER | BOOL:
                    self.report.note("TRN201", "a placeholder's value is written as JSON in dialect 3 and with "
                                     "JavaScript's String() in WorkflowSkill; they agree on text, numbers, "
                                     "booleans, null, lists and objects", original.span)
        return E.Template(tuple(parts), "wfs", e.typed_whole and len(parts) == 1, e.span)


def _label_is_exact(label: str) -> bool:
    """Whether WorkflowSkill's ``value == "label"`` holds exactly when dialect
    3 chooses the case ``label`` for any value: a string compares as text
    in both; a number, boolean, null, list or object never equals a label
    that is not numeric text (``Number()`` of it is NaN), not ``true``,
    ``false`` or ``null``, and not JSON of a list or object, which is how
    dialect 3 writes such values as text."""
    return label not in ("true", "false", "null") and label[:1] not in ("[", "{") \
        and js_to_number(label) != js_to_number(label)


_NOT_CONSTANT = object()


def _constant(e: E.Expr):
    """The value of a list of constants (nested lists too), else _NOT_CONSTANT."""
    if isinstance(e, E.Literal) and e.kind not in ("uint", "bytes"):
        return e.value
    if isinstance(e, E.ListExpr):
        items = [_constant(i) for i in e.items]
        return _NOT_CONSTANT if any(i is _NOT_CONSTANT for i in items) else items
    return _NOT_CONSTANT


def _verbatim_in_map(v) -> bool:
    """Whether a constant is itself as a map expression value: WorkflowSkill
    reads a string that starts with `$` there as an expression (also inside
    an object, which it reads member by member); arrays and other constants
    are copied as they are."""
    if isinstance(v, str):
        return not v.startswith("$")
    if isinstance(v, dict):
        return all(_verbatim_in_map(x) for x in v.values())
    return True


def _is_tool_call(node: Node) -> bool:
    """A call of the host's tool capability (dialect 3's ``tool`` kind)."""
    capability = node.attr("capability")
    return node.op == "call" and isinstance(capability, E.Literal) and capability.value == "tool"


def _lit(v, kind="string") -> E.Literal:
    return E.Literal(v, kind)


def _type_of(kinds: frozenset[str]) -> T.Type:
    known = kinds - {"null"}
    if len(known) == 1:
        return _TYPE_NAME[next(iter(known))]
    if known <= NUMBER:
        return T.FLOAT
    return T.OBJECT


class _Lowering:
    def __init__(self, wf: Workflow, report: Report) -> None:
        self.wf = wf
        self.report = report
        self.kinds = Kinds(wf)
        self.cel = CelToWfs(report, self.kinds)
        self.by_id = wf.node_map()
        self.graph = DataflowGraph(wf)
        self.deps, self.cases = self.graph.deps, self.graph.cases
        for e in sorted(wf.edges, key=lambda e: e.order):
            if e.kind is EdgeKind.ERROR:
                self.report.finding("TRN101", f"on_error goto / on_timeout routes have no WorkflowSkill form "
                                    f"(step {e.source!r})", e.span)
        self.live: dict[str, E.Expr | None] = {}   # None: always runs
        # step -> (switch, its choices that make the step live), when that is all its liveness says
        self.origin: dict[str, tuple[str, frozenset[str]] | None] = {}
        self.cel.prunable = self.graph.prunable()
        self.nodes: list[Node] = []
        renamer = IdRenamer(STEP_ID, ID_DISALLOWED, report, {n.id for n in wf.nodes})
        for n in wf.nodes:
            if not STEP_ID.match(n.id):
                self.cel.ids[n.id] = renamer.rename(n.id, n.span)

    def wid(self, sid: str) -> str:
        return self.cel.ids.get(sid, sid)

    def liveness(self, sid: str) -> E.Expr | None:
        """When does ``sid`` run (not pruned)? None: whenever the run gets there."""
        if sid in self.live:
            return self.live[sid]
        self.live[sid] = None  # cycles: assume live
        node = self.by_id[sid]
        parts: list[E.Expr] = []
        deps = self.deps[sid]
        if deps:
            dep_live = []
            for d in deps:
                lv = self._edge_live(d, sid)
                if lv is None:
                    dep_live = []
                    break
                dep_live.append(lv)
            if dep_live and not self._covers_every_case(sid, node):
                any_live = dep_live[0]
                for other in dep_live[1:]:
                    any_live = E.Binary("wfs.or", any_live, other)
                parts.append(any_live)
        if node.guard is not None and node.op != "trigger":
            parts.append(self.cel.expr(node.guard.expr))
        result = None
        for p in parts:
            result = p if result is None else E.Binary("wfs.and", result, p)
        self.live[sid] = result
        return result

    def _covers_every_case(self, sid: str, node: Node) -> bool:
        """Whether ``sid`` is live whatever one always-live switch chooses:
        its dependencies are that switch's arms (each live exactly when the
        switch chose it) and together they take every case and `$default`.
        A step joining every arm then always runs, so its guard, which
        would only restate that, is left out. Records in ``self.origin``
        which choices of which switch make ``sid`` live."""
        origins = [self._edge_origin(d, sid) for d in self.deps[sid]]
        origin = None
        if origins and all(o is not None and o[0] == origins[0][0] for o in origins) and (
                node.guard is None or node.op == "trigger"):
            switch = origins[0][0]
            origin = (switch, frozenset().union(*(o[1] for o in origins)))
        if origin is not None and origin[1] >= self.graph.choices(origin[0]):
            self.origin[sid] = None
            return True
        self.origin[sid] = origin
        return False

    def _edge_origin(self, dep: str, target: str) -> tuple[str, frozenset[str]] | None:
        if self.by_id[dep].op == "switch":
            labels = self.graph.first_labels(dep, target)
            return (dep, labels) if labels and self.liveness(dep) is None else None
        self.liveness(dep)
        return self.origin.get(dep)

    def _edge_live(self, dep: str, target: str) -> E.Expr | None:
        """Is ``dep`` live as a dependency of ``target`` (a switch: did it choose ``target``)?"""
        base = self.liveness(dep)
        if self.by_id[dep].op != "switch":
            return base
        cases = self.cases.get(dep, [])
        labels = [label for label, t in cases if t == target]
        if not labels:
            return base
        on = self.by_id[dep].attr("on")
        if on is None:
            return E.Literal(False, "bool")
        value = self.cel.expr(on)
        first: dict[str, str] = {}
        for label, t in cases:
            first.setdefault(label, t)
        if first.get("$default") == target:
            # chosen unless the value names a case that leads elsewhere
            tested = [label for label, t in first.items() if label != "$default" and t != target]
            tests = [E.Binary("wfs.ne", value, _lit(label)) for label in tested]
        else:
            tested = [label for label, t in first.items() if t == target]
            tests = [E.Binary("wfs.eq", value, _lit(label)) for label in tested]
        text = self.kinds.of(on) <= STRING | {"null"}   # null is the label "null" in dialect 3
        if not all(_label_is_exact(label) or (text and label != "null") for label in tested):
            self.report.finding("TRN102", "a switch compares its value's text with the case names; the value is "
                                "not known to be text, and WorkflowSkill's == finds a number equal to numeric "
                                "text and never a boolean, null, list or object equal to the text dialect 3 "
                                "writes for it", on.span)
        test = tests[0] if tests else E.Literal(True, "bool")
        for t in tests[1:]:
            test = E.Binary("wfs.and" if first.get("$default") == target else "wfs.or", test, t)
        return test if base is None else E.Binary("wfs.and", base, test)

    # ---------------------------------------------------------------- run
    def run(self) -> Workflow:
        wf = self.wf
        order = self.graph.trigger_first_order()
        finishes = []
        for sid in order:
            node = self.by_id[sid]
            self.report.current = self.wid(sid)
            self.cel.params = {}
            self.step(node)
            if node.op == "finish":
                finishes.append(node)
        self.report.current = ""
        if not self._always_finishes(finishes):
            self.report.finding("TRN102", "a dialect-3 run that reaches no finish ends `stalled`; WorkflowSkill "
                                "ends it successfully", wf.span)
        outputs = self.outputs(finishes)
        nodes = [*self.nodes, Node(END_NODE_ID, "end", "end", wf.span)]
        edges = [Edge(a.id, b.id, EdgeKind.SEQUENCE) for a, b in itertools.pairwise(nodes)
                 if not (a.op == "exit" and a.guard is None)]
        entry = (nodes[0].id,)
        return Workflow(name=wf.name, dialect=wf.dialect, semantics=PROFILE.name, nodes=tuple(nodes),
                        edges=tuple(edges), entry=entry, terminal=END_NODE_ID,
                        inputs=self.inputs(),
                        outputs=tuple(outputs), description=wf.description,
                        metadata={"frontmatter": {"name": wf.name, **({"description": wf.description}
                                                                      if wf.description else {})}},
                        span=wf.span)

    def _always_finishes(self, finishes: list[Node]) -> bool:
        """Whether every run that does not fail reaches a finish: one always
        runs, or the finishes take every choice of one switch between them."""
        if any(self.liveness(f.id) is None for f in finishes):
            return True
        origins = [self.origin.get(f.id) for f in finishes]
        if not origins or any(o is None or o[0] != origins[0][0] for o in origins):
            return False
        return frozenset().union(*(o[1] for o in origins)) >= self.graph.choices(origins[0][0])

    def inputs(self) -> tuple[Param, ...]:
        """The declared inputs. WorkflowSkill refuses a run whose input has
        another type than declared and has no type for any value; an input
        of any type is left undeclared (WorkflowSkill passes undeclared
        inputs through as they are), unless it has a default."""
        out = []
        for p in self.wf.inputs:
            if p.type.kind != "any":
                out.append(p)
            elif p.has_default:
                self.report.finding("TRN102", f"input {p.name!r} may be of any type and has a default: "
                                    "WorkflowSkill declares a type with a default, and refuses other types", p.span)
                out.append(Param(p.name, T.OBJECT, p.default, p.has_default, p.description, p.span))
            else:
                self.report.lowered("an input of any type", "not declared (passed through as it is)", p.span)
        return tuple(out)

    def outputs(self, finishes: list[Node]) -> list[Binding]:
        """The run outputs: the keys of the finish outputs (objects with
        fixed keys). A finish without an output ends a run with no outputs,
        which WorkflowSkill writes as a workflow that declares none."""
        keys: list[str] | None = None
        for f in finishes:
            out = f.attr("output")
            if out is None or (isinstance(out, E.Literal) and out.value is None):
                ks: list[str] = []
            elif isinstance(out, E.MapExpr) and all(isinstance(m.key, E.Literal) for m in out.entries):
                ks = [m.key.value for m in out.entries]
            else:
                self.report.finding("TRN102", "a finish output that is not an object with fixed keys: "
                                    "WorkflowSkill's run outputs are named", f.span)
                return [Binding("output", T.OBJECT)]
            if keys is not None and ks != keys:
                self.report.finding("TRN102", "finish steps with different output keys: WorkflowSkill declares one "
                                    "set of outputs (the missing ones are null)", f.span)
            if keys is None or (not keys and ks):
                keys = ks
        if keys is not None and not keys and finishes:
            self.report.lowered("finish without an output", "a workflow without outputs", finishes[0].span)
        return [Binding(k, T.OBJECT) for k in keys or []]

    def _guard(self, node: Node) -> Guard | None:
        live = self.liveness(node.id)
        if live is None:
            return None
        if node.guard is not None or self.deps[node.id]:
            self.report.lowered("when / pruning", "a guard that holds when the step is live", node.span)
        return Guard(live, "js_boolean", node.guard.span if node.guard else node.span)

    def _policies(self, node: Node) -> RetryPolicy | None:
        if node.on_error.action != "fail":
            self.report.finding("TRN101", f"on_error: {node.on_error.action} has no WorkflowSkill form "
                                "(ignore gives null, not {error})", node.on_error.span
                                if node.on_error.span.known else node.span)
        if node.attr("timeout_ms") is not None:
            self.report.finding("TRN101", "WorkflowSkill has no step timeouts", node.span)
        if node.retry is None:
            return None
        self.report.finding("TRN103", "retry: dialect 3 retries any failure and doubles the wait with +-20% "
                            "jitter; WorkflowSkill retries tool errors only, without jitter", node.retry.span
                            if node.retry.span.known else node.span)
        return RetryPolicy(node.retry.max_retries, node.retry.delay_ms, 2.0, "tool_error", node.retry.span)

    # ---------------------------------------------------------------- steps
    def step(self, node: Node) -> None:
        """``node`` lowered by its op (:data:`_OP_LOWERINGS`)."""
        lowering = _OP_LOWERINGS.get(node.op)
        if lowering is None or lowering(self, node) is False:
            self._no_form(node, f"{node.kind} ({node.op}) has no WorkflowSkill form")

    def trigger(self, node: Node) -> None:
        if node.inputs or self._payload_read(node.id):
            self.report.finding("TRN101", "a trigger's payload has no WorkflowSkill form", node.span)
        self.cel.shapes[node.id] = "none"
        self.report.lowered("trigger", "the run's start", node.span)

    def noop(self, node: Node) -> None:
        self.cel.shapes[node.id] = "none"
        self.report.lowered("noop", "nothing", node.span)

    def switch(self, node: Node) -> None:
        self.cel.shapes[node.id] = "value"
        self.report.lowered("switch", "guards on its case targets", node.span)
        if self._output_read(node.id):
            self._value_step(node, node.attr("on") or E.Literal(None, "null"))

    def call(self, node: Node) -> bool | None:
        """A tool call; False: another capability (no form)."""
        return self.tool(node) if _is_tool_call(node) else False

    def assign(self, node: Node) -> bool | None:
        """A value (``template``, ``assign`` without ``writes``); False: a
        run variable's write (no form)."""
        if node.attr("writes") is not None:
            return False
        value = node.attr("value") if node.attr("value") is not None else node.attr("text")
        return self._value_step(node, value if value is not None else E.Literal(None, "null"))

    def _no_form(self, node: Node, why: str) -> None:
        """A finding, and a tool step named after the kind in the step's place
        (so that what reads the step's output still names a step)."""
        self.report.finding("TRN101", f"{why}; written as a tool step named {node.kind!r}", node.span)
        self.nodes.append(Node(self.wid(node.id), "call", "tool", node.span, node.description,
                               attrs=(Attr("capability", _lit("tool")), Attr("name", _lit(node.kind))),
                               guard=self._guard(node)))

    def _payload_read(self, sid: str) -> bool:
        return self._output_read(sid)

    def _output_read(self, sid: str) -> bool:
        for n in self.wf.nodes:
            for e in _exprs(n):
                for r in E.refs(e):
                    if r.step_id() == sid:
                        return True
        return False

    def _value_step(self, node: Node, value: E.Expr) -> None:
        """A computed value: a map transform over one item, read back as
        ``output.items[0].value``."""
        self.cel.shapes[node.id] = "value"
        self.report.lowered(node.kind, "a map transform over one item", node.span)
        expr = self.cel.expr(value)
        if not (isinstance(expr, E.Ref) or (isinstance(expr, E.Literal) and _verbatim_in_map(expr.value))):
            self.report.finding("TRN101", "a map expression value must be a `$` reference or a constant in "
                                "WorkflowSkill; this computed value has no form there",
                                value.span if value.span.known else node.span)
        self.nodes.append(Node(self.wid(node.id), "transform.map", "transform", node.span, node.description,
                               attrs=(Attr("expression", E.MapExpr((E.MapEntry(_lit("value"), expr),))),),
                               inputs=(Binding("items", T.ARRAY, E.Literal([0], "list")),),
                               outputs=(Binding("items", T.ARRAY),), guard=self._guard(node)))

    def tool(self, node: Node, guard: Guard | None = None, iteration: Iteration | None = None) -> None:
        name = None
        for a in node.attrs[2:]:
            if a.name == "name" and isinstance(a.value, E.Literal):
                name = a.value.value
        if name is None:
            call = node.attr("name")
            name = call.value if isinstance(call, E.Literal) else ""
        args = node.attr("args")
        inputs = []
        if isinstance(args, E.Literal) and isinstance(args.value, dict):
            for k, v in args.value.items():
                inputs.append(Binding(k, _type_of(frozenset({_kind(v)})), E.Literal(v, _literal_kind(v))))
        elif isinstance(args, E.MapExpr) and all(isinstance(m.key, E.Literal) for m in args.entries):
            for m in args.entries:
                value = self.cel.expr(m.value)
                inputs.append(Binding(m.key.value, _type_of(self.kinds.of(m.value)), value))
        elif args is not None:
            self.report.finding("TRN101", "tool args that are not an object with fixed keys have no WorkflowSkill "
                                "form", args.span if args.span.known else node.span)
        for a in node.attrs[2:]:
            if a.name not in ("name", "args", "timeout_ms"):
                self.report.finding("TRN101", f"tool field {a.name!r} has no WorkflowSkill form", a.span
                                    if a.span.known else node.span)
        self.report.lowered("tool", "a tool step (args as inputs)", node.span)
        self.nodes.append(Node(self.wid(node.id), "call", "tool", node.span, node.description,
                               attrs=(Attr("capability", _lit("tool")), Attr("name", _lit(name))),
                               inputs=tuple(inputs), guard=guard if guard is not None else self._guard(node),
                               iteration=iteration, retry=self._policies(node)))

    def transform(self, node: Node) -> None:
        self.cel.shapes[node.id] = "items"
        over = node.attr("over")
        items = self.cel.expr(over) if over is not None else E.ListExpr(())
        attrs: list[Attr] = []
        lam = node.attr("expr")
        if isinstance(lam, E.Lambda):
            self.cel.params = {lam.params[0]: "item"}
            if len(lam.params) > 1:
                self.cel.params[lam.params[1]] = "index"
        if node.op == "transform.filter":
            body = self.cel.expr(lam.body) if isinstance(lam, E.Lambda) else E.Literal(True, "bool")
            if isinstance(lam, E.Lambda) and not self.kinds.of(lam.body) <= BOOL:
                self.report.finding("TRN102", "a filter's expression must be a bool in CEL; WorkflowSkill tests it "
                                    "for truthiness", lam.span)
            attrs = [Attr("where", body), Attr("truthiness", _lit("js_boolean"))]
        elif node.op == "transform.map":
            body = lam.body if isinstance(lam, E.Lambda) else None
            if isinstance(body, E.MapExpr) and all(isinstance(m.key, E.Literal) for m in body.entries):
                entries = []
                for m in body.entries:
                    v = self.cel.expr(m.value)
                    if not isinstance(v, (E.Ref, E.Literal, E.MapExpr)):
                        self.report.finding("TRN101", "a map value must be a `$` reference in WorkflowSkill",
                                            m.value.span)
                    entries.append(E.MapEntry(m.key, v))
                attrs = [Attr("expression", E.MapExpr(tuple(entries)))]
            else:
                self.report.finding("TRN101", "a map whose expression is not an object literal has no "
                                    "WorkflowSkill form", node.span)
                attrs = [Attr("expression", E.MapExpr(()))]
        else:
            by = node.attr("by")
            direction = node.attr("direction")
            if not (isinstance(by, E.Literal) and isinstance(by.value, str) and by.value):
                self.report.finding("TRN101", "a sort of the items themselves (no `by`) has no WorkflowSkill "
                                    "form: WorkflowSkill sorts by a field", node.span)
                by = _lit("value")
            attrs = [Attr("field", by),
                     Attr("direction", direction if isinstance(direction, E.Literal) else _lit("asc"))]
            self.report.finding("TRN102", "sort: CEL orders mixed types and text outside the Basic Multilingual "
                                "Plane differently from WorkflowSkill's JavaScript comparison", node.span)
        self.cel.params = {}
        self.report.lowered(node.kind, f"a {node.kind} transform (its result read as output.items)", node.span)
        self.nodes.append(Node(self.wid(node.id), node.op, "transform", node.span, node.description,
                               attrs=tuple(attrs), inputs=(Binding("items", T.ARRAY, items),),
                               outputs=(Binding("items", T.ARRAY),), guard=self._guard(node),
                               retry=self._policies(node)))

    def finish(self, node: Node) -> None:
        status = node.attr("status")
        text = status.value if isinstance(status, E.Literal) else "completed"
        if text not in ("completed", "failed"):
            self.report.finding("TRN101", f"finish status {text!r} has no WorkflowSkill form (success or failed)",
                                node.span)
        output = node.attr("output")
        value = self.cel.expr(output) if output is not None else E.Literal(None, "null")
        self.report.lowered("finish", "an exit", node.span)
        self.nodes.append(Node(self.wid(node.id), "exit", "exit", node.span, node.description,
                               attrs=(Attr("status", _lit("failed" if text == "failed" else "success")),
                                      Attr("output", value)), guard=self._guard(node)))

    def foreach(self, node: Node) -> None:
        body = node.regions[0] if node.regions else None
        calls = [n for n in body.nodes if _is_tool_call(n)] if body else []
        if body is None or len(body.nodes) != 1 or len(calls) != 1 or node.iteration is None:
            return self._no_form(node, "a foreach whose body is not one tool step has no WorkflowSkill form")
        it = node.iteration
        self.cel.params = {it.item_var: "item", "item": "item", "index": "index"}
        over = self.cel.expr(it.over)
        if isinstance(over, E.Literal) and over.kind == "list":
            self.report.finding("TRN101", "`each` over a list constant has no WorkflowSkill form (`each` is an "
                                "expression, and expressions have no list constants)", it.span)
            over = E.Literal(None, "null", it.span)
        if it.max_parallel != 1:
            self.report.note("TRN202", "foreach lanes run items one at a time in both dialects", node.span)
        self.report.lowered("foreach", "each on its tool step", node.span)
        inner = calls[0]
        self.tool(Node(self.wid(node.id), inner.op, inner.kind, inner.span, node.description, attrs=inner.attrs,
                       retry=inner.retry, on_error=inner.on_error, guard=None),
                  guard=self._guard(node), iteration=Iteration(over, span=it.span))
        self.cel.params = {}


def _kind(v) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if v is None:
        return "null"
    return "object"


def _literal_kind(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    return "list" if isinstance(v, list) else "object"


def _exprs(node: Node):
    if node.guard is not None:
        yield node.guard.expr
    if node.iteration is not None:
        yield node.iteration.over
    for a in node.attrs:
        yield a.value
    for b in node.inputs:
        if b.value is not None:
            yield b.value
    for r in node.regions:
        for n in r.nodes:
            yield from _exprs(n)


# IR op -> how a step of it is lowered (an op not listed has no WorkflowSkill form).
_OP_LOWERINGS = {
    "trigger": _Lowering.trigger,
    "noop": _Lowering.noop,
    "switch": _Lowering.switch,
    "call": _Lowering.call,
    "assign": _Lowering.assign,
    "transform.filter": _Lowering.transform,
    "transform.map": _Lowering.transform,
    "transform.sort": _Lowering.transform,
    "finish": _Lowering.finish,
    "foreach": _Lowering.foreach,
}


def lower_dataflow(wf: Workflow, report: Report) -> Workflow:
    return _Lowering(wf, report).run()

