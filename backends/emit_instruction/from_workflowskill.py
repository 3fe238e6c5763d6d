"""WorkflowSkill IR -> instruction IR (sequential steps -> a dependency graph).

The run starts at a ``manual`` trigger. Top-level steps become a chain of
``depends_on`` edges; a step after one that may be pruned (a guard) also
depends on the chain's anchor, because in dialect 3 a step all of whose
dependencies are pruned is pruned too, while in WorkflowSkill the next
step still runs. Each construct's translation is in :data:`NODE_RULES`
and each operator's in :data:`OPERATOR_RULES`; docs/translation.md lists
them.

Shapes that differ are rebuilt exactly with small ``template`` steps that
keep the source step's id (so ``steps.<id>.output`` means the same):

- a tool step with output mappings or ``on_error: ignore``: the call is
  ``<id>_call`` and ``<id>`` maps its result (``{k: result.f}``, or null
  after an ignored failure);
- a transform: the operation is ``<id>_items`` and ``<id>`` is
  ``{"items": ...}`` (WorkflowSkill's transform result);
- a conditional: a ``switch`` (``<id>_switch``) routes to a ``noop`` entry
  of each arm; ``<id>`` joins the arms and takes the output of the last
  listed step of the arm that ran;
- an exit: ``finish`` with the declared outputs; the end: a ``finish``
  that resolves the workflow outputs as WorkflowSkill does.
"""

from __future__ import annotations

import re

from flowc.backends.emitcore import Report
from flowc.backends.emitcore.kinds import ANY, ARRAY, BOOL, NUMBER, OBJECT, STRING, Kinds
from flowc.ir import expr as E
from flowc.ir.span import NO_SPAN, Span
from flowc.ir.workflow import (
    Attr,
    Edge,
    EdgeKind,
    ErrorPolicy,
    Guard,
    Iteration,
    Node,
    Param,
    Region,
    RetryPolicy,
    Workflow,
)

__all__ = ["OPERATOR_RULES", "lower_workflowskill"]

_NUMERIC_TEXT = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*\Z|\s*0[xX][0-9a-fA-F]+\s*\Z|\s*\Z")
_ID = re.compile(r"[a-zA-Z_][a-zA-Z0-9_-]{0,63}\Z")

# wfs operator -> (CEL operator, the rule that says when the meaning is the same)
OPERATOR_RULES: dict[str, tuple[str | None, str]] = {
    "wfs.eq": ("cel.eq", "equality"),
    "wfs.ne": ("cel.ne", "equality"),
    "wfs.lt": ("cel.lt", "numbers"),
    "wfs.le": ("cel.le", "numbers"),
    "wfs.gt": ("cel.gt", "numbers"),
    "wfs.ge": ("cel.ge", "numbers"),
    "wfs.contains": (None, "contains"),
    "wfs.and": ("cel.and", "truthy"),
    "wfs.or": ("cel.or", "truthy"),
    "wfs.not": ("cel.not", "truthy"),
}


def _lit(value, kind: str = "string") -> E.Literal:
    return E.Literal(value, kind)


def _attr(name: str, value: E.Expr) -> Attr:
    return Attr(name, value)


def _may_be_number_text(e: E.Expr, kinds: frozenset[str]) -> bool:
    """Could this side be a string that JavaScript reads as a number?"""
    if isinstance(e, E.Literal):
        return isinstance(e.value, str) and bool(_NUMERIC_TEXT.match(e.value))
    return "string" in kinds


class WfsToCel:
    """Rewrites WorkflowSkill expressions into CEL, reporting where the
    meaning differs."""

    def __init__(self, report: Report, kinds: Kinds) -> None:
        self.report = report
        self.kinds = kinds
        self.scope: dict[str, frozenset[str]] = {}
        self.result_ref: E.Ref | None = None     # what $result reads
        self.guarded: set[str] = set()           # steps that may be skipped

    def _finding(self, message: str, span: Span, code: str = "TRN102") -> None:
        self.report.finding(code, message, span)

    # ---------------------------------------------------------------- expressions
    def expr(self, e: E.Expr) -> E.Expr:
        if isinstance(e, E.Literal):
            if e.kind in ("list", "object"):
                return _literal_value(e.value, e.span)
            return e
        if isinstance(e, E.Ref):
            return self.ref(e)
        if isinstance(e, E.Unary):
            if e.op == "wfs.not":
                return E.Unary("cel.not", self.truthy(e.operand, "wfs_truthy"), e.span)
            self._finding(f"operator {e.op} has no instruction form", e.span, "TRN101")
            return E.Literal(None, "null", e.span)
        if isinstance(e, E.Binary):
            return self.binary(e)
        if isinstance(e, E.Template):
            return self.template(e)
        if isinstance(e, E.MapExpr):
            return E.MapExpr(tuple(E.MapEntry(self.expr(m.key), self.expr(m.value), m.span) for m in e.entries),
                             e.span)
        self._finding(f"{type(e).__name__} has no instruction form", e.span, "TRN101")
        return E.Literal(None, "null", e.span)

    def binary(self, e: E.Binary) -> E.Expr:
        target, rule = OPERATOR_RULES.get(e.op, (None, "none"))
        left_kinds = self.kinds.of(e.left, self.scope)
        right_kinds = self.kinds.of(e.right, self.scope)
        if rule == "truthy":
            return E.Binary(target, self.truthy(e.left, "wfs_truthy"), self.truthy(e.right, "wfs_truthy"), e.span)
        left, right = self.expr(e.left), self.expr(e.right)
        if rule == "equality":
            if not _equality_same(e.left, left_kinds, e.right, right_kinds):
                self._finding(f"`{e.op.split('.')[1]}`: WorkflowSkill compares a number with a numeric string "
                              "by value, CEL never finds them equal; the types of these operands are not known "
                              "to rule that out", e.span)
            return E.Binary(target, left, right, e.span)
        if rule == "numbers":
            if not (left_kinds <= NUMBER and right_kinds <= NUMBER):
                self._finding(f"`{_SYMBOLS[e.op]}`: WorkflowSkill compares numbers only (text becomes a number, "
                              "or 0); CEL compares text as text; the operands are not known to be numbers",
                              e.span)
            return E.Binary(target, left, right, e.span)
        if rule == "contains":
            return self.contains(e, left, right, left_kinds)
        self._finding(f"operator {e.op} has no instruction form", e.span, "TRN101")
        return E.Literal(None, "null", e.span)

    def contains(self, e: E.Binary, left: E.Expr, right: E.Expr, left_kinds) -> E.Expr:
        """``a contains b``: membership for an array, else a case-insensitive
        substring test of the stringified sides."""
        member = E.Binary("cel.in", right, left, e.span)
        if left_kinds <= ARRAY | {"null"} and left_kinds != frozenset({"null"}):
            self.report.lowered("wfs.contains", "`in` (array membership)", e.span)
            return member
        if not (isinstance(right, E.Literal) and isinstance(right.value, str)):
            self._finding("`contains` is a case-insensitive substring test in WorkflowSkill; CEL's contains() "
                          "is case-sensitive and the text sought is not a constant, so it cannot be made "
                          "case-insensitive", e.span)
            return E.Call("cel.contains", (E.Call("cel.string", (left,), e.span), right), e.span)
        pattern = E.Literal("(?i)" + _regex_escape(right.value), "string", right.span)
        if left_kinds <= STRING | {"null"}:
            self.report.lowered("wfs.contains", "matches() with a case-insensitive pattern", e.span)
            return E.Call("cel.matches", (left, pattern), e.span)
        text = E.Call("cel.matches", (E.Call("cel.string", (left,), e.span), pattern), e.span)
        self.report.lowered("wfs.contains", "a list test, else matches() with a case-insensitive pattern", e.span)
        is_list = E.Binary("cel.eq", E.Call("cel.type", (left,), e.span), E.Ref("list", (), e.span), e.span)
        return E.Conditional("cel.ternary", is_list, member, text, e.span)

    def truthy(self, e: E.Expr, rule: str) -> E.Expr:
        """``e`` as a CEL bool under WorkflowSkill truthiness ``rule``
        (``wfs_truthy``: [] is false; ``js_boolean``: [] is true)."""
        kinds = self.kinds.of(e, self.scope)
        out = self.expr(e)
        if kinds <= BOOL:
            return out
        if kinds <= BOOL | {"null"}:
            return E.Binary("cel.eq", out, E.Literal(True, "bool"), e.span)
        if kinds <= STRING | {"null"}:
            self.report.lowered(rule, "`!= \"\"` on text", e.span)
            return _and_not_null(out, E.Binary("cel.ne", out, E.Literal("", "string"), e.span), kinds, e.span)
        if kinds <= NUMBER | {"null"}:
            self.report.lowered(rule, "`!= 0` on a number", e.span)
            return _and_not_null(out, E.Binary("cel.ne", out, E.Literal(0, "int"), e.span), kinds, e.span)
        if kinds <= ARRAY | {"null"}:
            self.report.lowered(rule, "a size test on a list" if rule == "wfs_truthy" else "`!= null` on a list",
                                e.span)
            test = E.Binary("cel.ne", E.Call("cel.size", (out,), e.span), E.Literal(0, "int"), e.span) \
                if rule == "wfs_truthy" else E.Literal(True, "bool")
            return _and_not_null(out, test, kinds, e.span)
        if kinds <= OBJECT | {"null"}:
            self.report.lowered(rule, "`!= null` on an object", e.span)
            return E.Binary("cel.ne", out, E.Literal(None, "null"), e.span)
        self._finding("this condition is tested for truthiness in WorkflowSkill, but CEL needs a boolean and the "
                      "value's type is not known", e.span)
        return out

    def ref(self, e: E.Ref) -> E.Expr:
        root, path = e.root, e.path
        if root == "result" and self.result_ref is not None:
            root, path = self.result_ref.root, self.result_ref.path + path
        if root == "steps" and len(path) > 2 and isinstance(path[0], E.Field) and path[0].name in self.guarded:
            self._finding(f"step {path[0].name!r} may be skipped or fail under on_error: ignore; WorkflowSkill "
                          "then reads its fields as undefined, CEL fails on a field of null", e.span)
        out: E.Expr = E.Ref(root, (), e.span)
        segs: list = []
        for i, seg in enumerate(path):
            if isinstance(seg, E.Field) and seg.name == "length" and i == len(path) - 1 and i > 0:
                base = E.Ref(e.root, e.path[:-1])
                if self.kinds.of(base, self.scope) <= ARRAY | {"null"}:
                    out = _ref_with(out, segs)
                    return E.Call("cel.size", (out,), e.span)
                self._finding("`.length` is an array's length in WorkflowSkill (and a field otherwise); the "
                              "value here is not known to be an array", seg.span if seg.span.known else e.span)
            if isinstance(seg, E.Field) and not _cel_name(seg.name):
                segs.append(E.Index(E.Literal(seg.name, "string", seg.span), seg.span))
            elif isinstance(seg, E.Index):
                segs.append(E.Index(self.expr(seg.index), seg.span))
            else:
                segs.append(seg)
        return _ref_with(out, segs)

    def template(self, e: E.Template) -> E.Expr:
        """A ``${...}`` template: a ``{{ }}`` template when every placeholder
        is a path, else CEL string concatenation."""
        parts = []
        for p in e.parts:
            if isinstance(p, E.Literal):
                parts.append(p)
                continue
            out = self.expr(p)
            parts.append(out)
        if all(isinstance(p, (E.Literal, E.Ref)) for p in parts) and not any(
                isinstance(p, E.Literal) and "{{" in str(p.value) for p in parts):
            return E.Template(tuple(parts), "json", e.typed_whole, e.span)
        if e.typed_whole:
            return parts[0]
        self.report.lowered("template", "CEL string concatenation", e.span)
        total: E.Expr | None = None
        for original, p in zip(e.parts, parts, strict=True):
            piece = p if isinstance(p, E.Literal) else self._stringify(original, p)
            total = piece if total is None else E.Binary("cel.add", total, piece, e.span)
        return total if total is not None else E.Literal("", "string", e.span)

    def _stringify(self, original: E.Expr, out: E.Expr) -> E.Expr:
        kinds = self.kinds.of(original, self.scope)
        if kinds <= STRING:
            return out
        if kinds <= BOOL or kinds <= NUMBER:
            return E.Call("cel.string", (out,), out.span)
        self._finding("a placeholder whose value may be null, a list or an object is written as text differently "
                      "by CEL's string()", original.span)
        return E.Call("cel.string", (out,), out.span)


_SYMBOLS = {"wfs.lt": "<", "wfs.le": "<=", "wfs.gt": ">", "wfs.ge": ">="}
_CEL_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                           "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
                           "void", "while"})


def _cel_name(name: str) -> bool:
    return bool(re.match(r"[_a-zA-Z][_a-zA-Z0-9]*\Z", name)) and name not in _CEL_RESERVED


def _ref_with(base: E.Expr, segs: list) -> E.Expr:
    if isinstance(base, E.Ref):
        return E.Ref(base.root, base.path + tuple(segs), base.span)
    return base


def _and_not_null(value: E.Expr, test: E.Expr, kinds, span: Span) -> E.Expr:
    if "null" not in kinds:
        return test
    return E.Binary("cel.and", E.Binary("cel.ne", value, E.Literal(None, "null"), span), test, span)


def _equality_same(le: E.Expr, lk, re_: E.Expr, rk) -> bool:
    """Is WorkflowSkill's == the same as CEL's for these operands?"""
    for e, other_kinds in ((le, rk), (re_, lk)):
        if isinstance(e, E.Literal) and (e.value is None or isinstance(e.value, bool)):
            return True
        if isinstance(e, E.Literal) and isinstance(e.value, str) and not _NUMERIC_TEXT.match(e.value):
            return True
    if lk == ANY or rk == ANY:
        return False
    number_vs_text = ("number" in lk and _may_be_number_text(re_, rk)) or \
                     ("number" in rk and _may_be_number_text(le, lk))
    containers = bool(lk & {"array", "object"}) and bool(rk & {"array", "object"})
    return not number_vs_text and not containers


def _regex_escape(text: str) -> str:
    """Escape for RE2 and Python alike: every ASCII punctuation character."""
    return "".join("\\" + ch if (ch.isascii() and not ch.isalnum() and ch != " " and ch != "_") else ch
                   for ch in text)


def _literal_value(value, span: Span = NO_SPAN) -> E.Expr:
    """A JSON value as a CEL expression (lists and maps as literals)."""
    if isinstance(value, dict):
        return E.MapExpr(tuple(E.MapEntry(E.Literal(k, "string"), _literal_value(v)) for k, v in value.items()),
                         span)
    if isinstance(value, list):
        return E.ListExpr(tuple(_literal_value(v) for v in value), span)
    if isinstance(value, bool) or value is None:
        return E.Literal(value, "bool" if isinstance(value, bool) else "null", span)
    if isinstance(value, int):
        return E.Literal(value, "int", span)
    if isinstance(value, float):
        return E.Literal(value, "float", span)
    return E.Literal(value, "string", span)


# ------------------------------------------------------------------ the graph
class _Graph:
    def __init__(self, taken: set[str]) -> None:
        self.nodes: list[Node] = []
        self.edges: list[Edge] = []
        self.taken = taken

    def fresh(self, base: str) -> str:
        candidate = base[:64]
        n = 2
        while candidate in self.taken:
            candidate = f"{base[:60]}_{n}"
            n += 1
        self.taken.add(candidate)
        return candidate

    def add(self, node: Node, deps: list[str]) -> None:
        self.nodes.append(node)
        for i, d in enumerate(dict.fromkeys(deps)):
            self.edges.append(Edge(d, node.id, EdgeKind.DEPENDENCY, None, i, node.span))


class _Lowering:
    def __init__(self, wf: Workflow, report: Report) -> None:
        self.wf = wf
        self.report = report
        self.kinds = Kinds(wf)
        self.cel = WfsToCel(report, self.kinds)
        self.by_id = wf.node_map()
        self.arms: dict[str, dict[str, list[str]]] = {}
        self.next: dict[str, str] = {}
        for e in wf.edges:
            if e.kind is EdgeKind.BRANCH:
                self.arms.setdefault(e.source, {}).setdefault(e.label or "", []).append((e.order, e.target))
            elif e.kind is EdgeKind.SEQUENCE:
                self.next[e.source] = e.target
        for arms in self.arms.values():
            for label in arms:
                arms[label] = [t for _, t in sorted(arms[label])]
        # Steps whose output may be null: skipped by a guard, or failed under on_error: ignore.
        self.cel.guarded = {n.id for n in wf.nodes if n.guard is not None or n.on_error.action == "ignore"}
        self.placed: set[str] = set()

    def run(self) -> Workflow:
        wf = self.wf
        graph = _Graph({n.id for n in wf.nodes})
        start = graph.fresh("start")
        graph.add(Node(start, "trigger", "manual", wf.span), [])
        self.report.lowered("run start", "a manual trigger", wf.span)
        chain = []
        current = wf.entry[0] if wf.entry else None
        seen = set()
        while current is not None and current not in seen and current in self.by_id:
            seen.add(current)
            chain.append(current)
            current = self.next.get(current)
        last, may_prune = self.sequence(graph, [i for i in chain if self.by_id[i].op != "end"], start, start)
        self.report.current = ""
        if not chain or self.by_id[chain[-1]].op == "end":
            done = graph.fresh("done")
            deps = [last] + ([start] if may_prune else [])
            graph.add(Node(done, "finish", "finish", wf.span,
                           attrs=(_attr("status", _lit("completed")), _attr("output", self.outputs(last)))), deps)
            self.report.lowered("workflow outputs", "a finish step that resolves them", wf.span)
        params = tuple(Param(p.name, p.type, p.default, p.has_default, p.description, p.span) for p in wf.inputs)
        meta = {"carrier": "standalone", "armed": True}
        return Workflow(name=_workflow_name(wf.name, self.report, wf.span), dialect=wf.dialect,
                        semantics="instruction", nodes=tuple(sorted(graph.nodes, key=lambda n: n.id)),
                        edges=tuple(graph.edges), entry=(start,), terminal=None, inputs=params, outputs=(),
                        description=wf.description, metadata=meta, span=wf.span)

    # ---------------------------------------------------------------- sequences
    def sequence(self, graph: _Graph, ids: list[str], prev: str, anchor: str) -> tuple[str, bool]:
        """Chain ``ids`` after ``prev``; returns the last step and whether it may be pruned."""
        may_prune = False
        for sid in ids:
            node = self.by_id[sid]
            if sid in self.placed:
                self.report.finding("TRN101", f"step {sid!r} runs in more than one place (it is listed in "
                                    "several branch arms); dialect 3 steps run once", node.span)
                continue
            self.placed.add(sid)
            self.report.current = sid
            deps = [prev] + ([anchor] if may_prune else [])
            prev = self.step(graph, node, deps)
            may_prune = node.guard is not None
        return prev, may_prune

    def step(self, graph: _Graph, node: Node, deps: list[str]) -> str:
        if node.op == "call":
            return self.tool(graph, node, deps)
        if node.op.startswith("transform."):
            return self.transform(graph, node, deps)
        if node.op == "branch":
            return self.branch(graph, node, deps)
        if node.op == "exit":
            return self.exit(graph, node, deps)
        self.report.finding("TRN101", f"operation {node.op} has no instruction form", node.span)
        graph.add(Node(node.id, "noop", "noop", node.span), deps)
        return node.id

    def _guard(self, node: Node) -> Guard | None:
        if node.guard is None:
            return None
        self.report.lowered("guard", "`when` (with the chain kept alive past a pruned step)", node.guard.span)
        return Guard(self.cel.truthy(node.guard.expr, node.guard.truthiness), "cel_bool", node.guard.span,
                     on_false="prune")

    def _policies(self, node: Node) -> tuple[RetryPolicy | None, list[str]]:
        if node.retry is not None:
            self.report.finding("TRN103", "retry: WorkflowSkill retries tool errors only and waits delay * "
                                f"backoff^(k-1) ({node.retry.backoff:g}); dialect 3 retries any failure and "
                                "doubles the wait with +-20% jitter", node.retry.span if node.retry.span.known
                                else node.span)
            return RetryPolicy(node.retry.max_retries, node.retry.delay_ms, 2.0, "any", node.retry.span, 0.2), []
        return None, []

    # ---------------------------------------------------------------- tools
    def tool(self, graph: _Graph, node: Node, deps: list[str]) -> str:
        name = node.attr("name")
        tool_name = name.value if isinstance(name, E.Literal) else ""
        self.cel.scope = {}
        item_scope = node.iteration is not None
        if item_scope:
            self.cel.scope = {"item": ANY, "index": NUMBER}
        args = E.MapExpr(tuple(E.MapEntry(_lit(b.name), self.value(b.value)) for b in node.inputs
                               if b.value is not None), node.span)
        retry, _ = self._policies(node)
        mapped = any(b.value is not None for b in node.outputs)
        ignore = node.on_error.action == "ignore"
        guard = self._guard(node)
        call_attrs = (_attr("capability", _lit("tool")), _attr("name", _lit(tool_name)),
                      _attr("name", _lit(tool_name)), _attr("args", _args_value(args)))
        if node.iteration is None:
            if not (mapped or ignore):
                graph.add(Node(node.id, "call", "tool", node.span, node.description, attrs=call_attrs,
                               guard=guard, retry=retry), deps)
                return node.id
            call_id = graph.fresh(f"{node.id}_call")
            graph.add(Node(call_id, "call", "tool", node.span, node.description, attrs=call_attrs, guard=guard,
                           retry=retry, on_error=ErrorPolicy("continue" if ignore else "fail")), deps)
            self.report.lowered("step outputs" if mapped else "on_error: ignore",
                                "a template step that maps the call's result", node.span)
            graph.add(Node(node.id, "assign", "template", node.span,
                           attrs=(_attr("value", self.result_value(node, call_id, ignore)),)), [call_id])
            return node.id
        # each: a foreach whose body calls the tool once per item
        over = self.value(node.iteration.over)
        self.report.lowered("each", "foreach with the call in its body", node.iteration.span)
        if node.iteration.delay_ms:
            self.report.finding("TRN103", f"delay: dialect 3 has no pause between foreach items "
                                f"({node.iteration.delay_ms} ms are not waited)", node.iteration.span)
        body = _Graph(set())
        body.add(Node("call", "call", "tool", node.span, attrs=call_attrs, retry=retry,
                      on_error=ErrorPolicy("continue")), [])
        if ignore:
            # A failed item is null and the loop goes on: the body never fails.
            body.add(Node("result", "assign", "template", node.span,
                          attrs=(_attr("value", self.result_value(node, "call", True)),)), ["call"])
            graph.add(Node(node.id, "foreach", "foreach", node.span, node.description, guard=guard,
                           iteration=Iteration(over, "item", "index", 0, 1, "fail", node.iteration.span),
                           regions=(Region("body", tuple(body.nodes), tuple(body.edges), node.span),)), deps)
            return node.id
        # on_error: fail: every item runs (a failed one is null), then the step
        # fails if one did. The body gives {result, failed} per item; a check
        # after the loop fails the step, and <id> keeps the results.
        self.report.lowered("each with on_error: fail", "items that cannot fail the loop, then a check",
                            node.iteration.span)
        body.add(Node("result", "assign", "template", node.span,
                      attrs=(_attr("value", self.result_value(node, "call", True)),)), ["call"])
        failed = E.Binary("cel.ne", E.Ref("steps", (E.Field("call"), E.Field("error"))), E.Literal(None, "null"))
        body.add(Node("failed", "assign", "template", node.span, attrs=(_attr("value", failed),)), ["call"])
        loop_id = graph.fresh(f"{node.id}_items")
        graph.add(Node(loop_id, "foreach", "foreach", node.span, node.description, guard=guard,
                       iteration=Iteration(over, "item", "index", 0, 1, "fail", node.iteration.span),
                       regions=(Region("body", tuple(body.nodes), tuple(body.edges), node.span),)), deps)
        results = E.Ref("steps", (E.Field(loop_id), E.Field("output")))
        check_id = graph.fresh(f"{node.id}_check")
        none_failed = E.Unary("cel.not", E.Call("cel.exists", (results, E.Lambda(("r",), E.Ref(
            "r", (E.Field("failed"),))))))
        graph.add(Node(check_id, "assert", "assert", node.span, attrs=(
            _attr("condition", none_failed), _attr("message", _lit(f"step {node.id!r}: an item failed")))),
            [loop_id])
        graph.add(Node(node.id, "assign", "template", node.span, attrs=(_attr("value", E.Call(
            "cel.map", (results, E.Lambda(("r",), E.Ref("r", (E.Field("result"),)))))),)), [check_id])
        return node.id

    def result_value(self, node: Node, call_id: str, ignore: bool) -> E.Expr:
        """The step's output from the call's raw result (WorkflowSkill's output mapping)."""
        raw = E.Ref("steps", (E.Field(call_id), E.Field("output")))
        self.cel.result_ref = raw
        if any(b.value is not None for b in node.outputs):
            entries = []
            for b in node.outputs:
                if b.value is not None:
                    value = self.cel.expr(b.value)
                else:
                    value = E.Conditional("cel.ternary", E.Binary("cel.in", _lit(b.name), raw), E.Ref(
                        "steps", raw.path + (E.Field(b.name) if _cel_name(b.name) else E.Index(_lit(b.name)),)),
                        E.Literal(None, "null"))
                entries.append(E.MapEntry(_lit(b.name), value))
            value: E.Expr = E.MapExpr(tuple(entries), node.span)
        else:
            value = raw
        self.cel.result_ref = None
        if ignore:
            failed = E.Binary("cel.ne", E.Ref("steps", (E.Field(call_id), E.Field("error"))), E.Literal(None, "null"))
            value = E.Conditional("cel.ternary", failed, E.Literal(None, "null"), value, node.span)
        return value

    def value(self, e: E.Expr) -> E.Expr:
        """A value position: data stays data, a lone reference becomes a
        ``{{ path }}`` template (which keeps the value's type)."""
        if isinstance(e, E.Literal):
            return e
        out = _as_data(self.cel.expr(e))
        if isinstance(out, E.Ref) and all(isinstance(s, E.Field) or (
                isinstance(s.index, E.Literal) and isinstance(s.index.value, int)) for s in out.path):
            return E.Template((out,), "json", True, out.span)
        return out

    # ---------------------------------------------------------------- transforms
    def transform(self, graph: _Graph, node: Node, deps: list[str]) -> str:
        op = node.op.split(".", 1)[1]
        items_binding = next((b for b in node.inputs if b.name == "items"), None) or \
            next((b for b in node.inputs if b.type.kind == "array"), None) or \
            (node.inputs[0] if node.inputs else None)
        if items_binding is None or items_binding.value is None:
            self.report.finding("TRN101", f"transform {node.id!r} has no input items", node.span)
            over: E.Expr = E.ListExpr((), node.span)
        else:
            self.cel.scope = {}
            over = self.value(items_binding.value)
            if items_binding.type.kind != "array":
                if len(node.inputs) == 1:
                    # WorkflowSkill's rule for one input: an array as it is, null as
                    # [], anything else as a one-element array.
                    v = self.cel.expr(items_binding.value)
                    is_list = E.Binary("cel.eq", E.Call("cel.type", (v,)), E.Ref("list", ()))
                    over = E.Conditional("cel.ternary", is_list, v, E.Conditional(
                        "cel.ternary", E.Binary("cel.eq", v, E.Literal(None, "null")), E.ListExpr(()),
                        E.ListExpr((v,))))
                    self.report.lowered("transform input", "a list test that wraps a single value",
                                        items_binding.span)
                else:
                    self.report.finding("TRN102", "a transform takes the first array among several inputs in "
                                        "WorkflowSkill; dialect 3 reads the one chosen here", items_binding.span)
        if node.iteration is not None:
            self.report.finding("TRN101", "each on a transform step has no instruction form", node.span)
        guard = self._guard(node)
        items_id = graph.fresh(f"{node.id}_items")
        self.cel.scope = {"item": ANY, "index": NUMBER}
        if op == "filter":
            where = node.attr("where")
            body = self.cel.truthy(where, "js_boolean") if where is not None else E.Literal(True, "bool")
            attrs = (_attr("expr", E.Lambda(("item", "index"), body)), _attr("truthiness", _lit("cel_bool")),
                     _attr("over", over))
            kind = "filter"
        elif op == "map":
            m = node.attr("expression")
            body = self.cel.expr(m) if isinstance(m, E.MapExpr) else E.MapExpr(())
            attrs = (_attr("expr", E.Lambda(("item", "index"), body)), _attr("over", over))
            kind = "map"
        else:
            field = node.attr("field")
            direction = node.attr("direction")
            attrs = (_attr("direction", direction if isinstance(direction, E.Literal) else _lit("asc")),
                     _attr("ordering", _lit("cel")), _attr("over", over),
                     _attr("by", field if isinstance(field, E.Literal) else _lit("")))
            kind = "sort"
            self.report.finding("TRN102", "sort: WorkflowSkill orders mixed types with JavaScript's < and text by "
                                "UTF-16 units; CEL orders by its own rules (the same for numbers, and for text "
                                "without characters outside the Basic Multilingual Plane)", node.span)
        self.cel.scope = {}
        graph.add(Node(items_id, node.op, kind, node.span, node.description, attrs=attrs, guard=guard), deps)
        self.report.lowered(f"transform {op}", f"{kind} with the result wrapped as {{items: ...}}", node.span)
        out_name = node.outputs[0].name if node.outputs else "items"
        wrapped: E.Expr = E.MapExpr((E.MapEntry(_lit(out_name), E.Ref("steps", (E.Field(items_id),
                                                                                  E.Field("output")))),))
        if any(b.value is not None for b in node.outputs):
            self.cel.result_ref = None
            self.report.finding("TRN101", "output mappings on a transform step are not translated", node.span)
        graph.add(Node(node.id, "assign", "template", node.span, attrs=(_attr("value", wrapped),)), [items_id])
        return node.id

    # ---------------------------------------------------------------- control
    def branch(self, graph: _Graph, node: Node, deps: list[str]) -> str:
        cond = node.attr("condition")
        self.cel.scope = {}
        on = self.cel.truthy(cond, "js_boolean") if cond is not None else E.Literal(False, "bool")
        switch_id = graph.fresh(f"{node.id}_switch")
        graph.add(Node(switch_id, "switch", "switch", node.span, node.description, attrs=(_attr("on", on),)), deps)
        self.report.lowered("conditional", "a switch on true/false with a join", node.span)
        ends: list[str] = []
        lasts: dict[str, str | None] = {}
        entries: dict[str, str] = {}
        for i, label in enumerate(("then", "else")):
            entry = entries[label] = graph.fresh(f"{node.id}_{label}")
            graph.add(Node(entry, "noop", "noop", node.span), [switch_id])
            graph.edges.append(Edge(switch_id, entry, EdgeKind.BRANCH, "true" if label == "then" else "false", i,
                                    node.span))
            targets = self.arms.get(node.id, {}).get(label, [])
            last, _ = self.sequence(graph, targets, entry, entry)
            ends += [last, entry]
            lasts[label] = targets[-1] if targets else None
        value: E.Expr = E.Literal(None, "null")
        for label in ("else", "then"):
            target = lasts[label]
            if target is None:
                continue
            ran = E.Binary("cel.eq", E.Ref("steps", (E.Field(entries[label]), E.Field("status"))),
                           _lit("done"))
            value = E.Conditional("cel.ternary", ran, E.Ref("steps", (E.Field(target), E.Field("output"))), value)
        graph.add(Node(node.id, "assign", "template", node.span, attrs=(_attr("value", value),)), ends)
        return node.id

    def exit(self, graph: _Graph, node: Node, deps: list[str]) -> str:
        status = node.attr("status")
        status_text = "failed" if isinstance(status, E.Literal) and status.value == "failed" else "completed"
        output = node.attr("output")
        self.cel.scope = {}
        keys = [b.name for b in self.wf.outputs]
        if isinstance(output, E.MapExpr):
            given = {m.key.value: m.value for m in output.entries if isinstance(m.key, E.Literal)}
            value: E.Expr = _as_data(E.MapExpr(tuple(E.MapEntry(_lit(k), self.value(given[k]) if k in given
                                                                 else E.Literal(None, "null")) for k in keys)))
        elif output is None or (isinstance(output, E.Literal) and output.value is None):
            value = E.MapExpr(tuple(E.MapEntry(_lit(k), E.Literal(None, "null")) for k in keys))
        else:
            value = self._key_matched(self.cel.expr(output), self.kinds.of(output), keys, node.span)
        self.report.lowered("exit", "finish", node.span)
        graph.add(Node(node.id, "finish", "finish", node.span, node.description, guard=self._guard(node),
                       attrs=(_attr("status", _lit(status_text)), _attr("output", value))), deps)
        return node.id

    def _key_matched(self, value: E.Expr, kinds, keys: list[str], span: Span) -> E.Expr:
        """WorkflowSkill's outputs from one value: an object gives its keys
        (null when absent), anything else goes to the first output."""
        if not keys:
            return E.MapExpr(())
        by_key = E.MapExpr(tuple(E.MapEntry(_lit(k), E.Conditional(
            "cel.ternary", E.Binary("cel.in", _lit(k), value), E.Binary("cel.index", value, _lit(k)),
            E.Literal(None, "null"))) for k in keys))
        first = E.MapExpr((E.MapEntry(_lit(keys[0]), value),) + tuple(
            E.MapEntry(_lit(k), E.Literal(None, "null")) for k in keys[1:]))
        if kinds <= OBJECT:
            return by_key
        if "object" not in kinds:
            return first
        is_map = E.Binary("cel.eq", E.Call("cel.type", (value,)), E.Ref("map", ()))
        return E.Conditional("cel.ternary", is_map, by_key, first, span)

    def outputs(self, last: str) -> E.Expr:
        """The workflow outputs at the normal end (WorkflowSkill's `$end`)."""
        keys = [b.name for b in self.wf.outputs]
        last_value = E.Ref("steps", (E.Field(last), E.Field("output")))
        if last == "start" or last not in self.by_id:
            last_value = E.Literal(None, "null")
        self.cel.scope = {}
        if any(b.value is not None for b in self.wf.outputs):
            entries = []
            for b in self.wf.outputs:
                if b.value is not None:
                    entries.append(E.MapEntry(_lit(b.name), self.value(b.value)))
                else:
                    entries.append(E.MapEntry(_lit(b.name), E.Conditional(
                        "cel.ternary", E.Binary("cel.and", E.Binary("cel.eq", E.Call("cel.type", (last_value,)),
                                                                     E.Ref("map", ())),
                                                 E.Binary("cel.in", _lit(b.name), last_value)),
                        E.Binary("cel.index", last_value, _lit(b.name)), E.Literal(None, "null"))))
            return _as_data(E.MapExpr(tuple(entries)))
        last_kinds = self.kinds.of(last_value) if isinstance(last_value, E.Ref) else frozenset({"null"})
        if last in self.by_id and self.by_id[last].op.startswith("transform."):
            last_kinds = OBJECT
        return self._key_matched(last_value, last_kinds, keys, self.wf.span)


def _as_data(e: E.Expr) -> E.Expr:
    """An object or list built from constants only, as one constant (the
    form dialect 3 gives a YAML mapping or list without placeholders)."""
    if isinstance(e, E.MapExpr) and all(isinstance(m.key, E.Literal) and isinstance(m.key.value, str)
                                        for m in e.entries):
        values = [_as_data(m.value) for m in e.entries]
        if all(isinstance(v, E.Literal) and v.kind not in ("uint", "bytes") for v in values):
            return E.Literal({m.key.value: v.value for m, v in zip(e.entries, values, strict=True)}, "object",
                             e.span)
        return E.MapExpr(tuple(E.MapEntry(m.key, v, m.span) for m, v in zip(e.entries, values, strict=True)),
                         e.span)
    if isinstance(e, E.ListExpr):
        items = [_as_data(i) for i in e.items]
        if all(isinstance(i, E.Literal) and i.kind not in ("uint", "bytes") for i in items):
            return E.Literal([i.value for i in items], "list", e.span)
        return E.ListExpr(tuple(items), e.span)
    return e


def _args_value(args: E.MapExpr) -> E.Expr:
    if all(isinstance(m.value, E.Literal) and m.value.kind not in ("uint", "bytes") for m in args.entries):
        return E.Literal({m.key.value: m.value.value for m in args.entries}, "object", args.span)
    return args


def _workflow_name(name: str, report: Report, span: Span) -> str:
    if _ID.match(name):
        return name
    fixed = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "workflow"
    if not re.match(r"[a-zA-Z_]", fixed):
        fixed = "w_" + fixed[:62]
    report.lowered("workflow name", f"{fixed!r} (dialect 3 names are [a-zA-Z_][a-zA-Z0-9_-]*)", span)
    return fixed


def lower_workflowskill(wf: Workflow, report: Report) -> Workflow:
    return _Lowering(wf, report).run()
