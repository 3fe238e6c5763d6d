"""Another dialect's IR -> aevatar IR.

aevatar runs one step after another and every value is text: a run's
output is the last step's output, a step's input the previous step's
output. A WorkflowSkill or instruction workflow becomes a step list in the
order its source runs (WorkflowSkill's declaration order; dialect 3's
smallest-ready-id-first order). Tool calls become ``tool_call`` steps
whose JSON ``arguments`` hold the inputs; references become ``${...}``
placeholders (``${steps.<id>.json.<f>}`` for a field of a tool's result).
What has no aevatar form (typed outputs, transforms of typed data,
branches that rejoin, guards) is reported with its span, and the closest
step is written with a comment. :data:`STEP_RULES` lists the translations.
"""

from __future__ import annotations

import itertools
import json

from flowc.backends.emitcore import Report
from flowc.backends.emitcore.kinds import NUMBER, STRING, Kinds
from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.semantics import PROFILES
from flowc.ir.span import Span
from flowc.ir.workflow import Attr, Binding, Edge, EdgeKind, Node, Param, Workflow

__all__ = ["STEP_RULES", "lower"]

STEP_RULES = {
    "call tool": "tool_call with JSON arguments",
    "finish / exit": "assign of the output (the run's output is the last step's)",
    "sleep": "delay",
}


def _lit(v) -> E.Literal:
    return E.Literal(v, "string")


class ToAevatar:
    """Rewrites WorkflowSkill or CEL expressions into aevatar text."""

    def __init__(self, report: Report, kinds: Kinds) -> None:
        self.report = report
        self.kinds = kinds

    def _finding(self, message: str, span: Span, code: str = "TRN102") -> None:
        self.report.finding(code, message, span)

    def ref(self, e: E.Ref) -> E.Expr:
        if e.root == "inputs" and len(e.path) == 1 and isinstance(e.path[0], E.Field):
            return E.Ref("vars", (E.Field(e.path[0].name),), e.span)
        if e.root == "steps" and len(e.path) >= 2 and all(isinstance(s, E.Field) for s in e.path) \
                and e.path[1].name == "output":
            if len(e.path) == 2:
                return E.Ref("steps", e.path[:2], e.span)
            self.report.lowered("a field of a step's output", "${steps.<id>.json.<field>}", e.span)
            return E.Ref("steps", (e.path[0], E.Field("json")) + e.path[2:], e.span)
        self._finding(f"this reference ({e.root}) has no aevatar form", e.span, "TRN101")
        return E.Literal("", "string", e.span)

    def text(self, e: E.Expr) -> E.Expr:
        """A value as aevatar text (a parameter)."""
        if isinstance(e, E.Literal):
            if isinstance(e.value, str):
                return e
            if e.value is None:
                return _lit("")
            self._finding("a typed constant becomes text in aevatar", e.span)
            return _lit(json.dumps(e.value) if not isinstance(e.value, bool) else str(e.value).lower())
        if isinstance(e, E.Ref):
            out = self.ref(e)
            return E.Template((out,), "aevatar", False, e.span) if isinstance(out, E.Ref) else out
        if isinstance(e, E.Template):
            parts = []
            for p in e.parts:
                if isinstance(p, E.Literal):
                    parts.append(p)
                elif isinstance(p, E.Ref):
                    parts.append(self.ref(p))
                else:
                    self._finding("a computed placeholder has no aevatar form", p.span, "TRN101")
            if e.typed_whole and not self.kinds.of(e.parts[0]) <= STRING:
                self._finding("a value that keeps its type becomes text in aevatar", e.span)
            return E.Template(tuple(parts), "aevatar", False, e.span)
        self._finding(f"{getattr(e, 'op', None) or getattr(e, 'func', None) or type(e).__name__} has no aevatar "
                      "form that keeps its meaning (aevatar values are text)", e.span)
        return _lit("")

    def json_arguments(self, pairs: list[tuple[str, E.Expr]], span: Span) -> E.Expr:
        """A tool's arguments as the JSON text aevatar parses before the call."""
        parts: list[E.Expr] = []
        buf = "{"
        for i, (key, value) in enumerate(pairs):
            buf += ("," if i else "") + json.dumps(key) + ":"
            if isinstance(value, E.Literal) and value.kind not in ("uint", "bytes"):
                buf += json.dumps(value.value, ensure_ascii=False)
                continue
            kinds = self.kinds.of(value)
            inner = value.parts[0] if isinstance(value, E.Template) and value.typed_whole else value
            if not isinstance(inner, E.Ref):
                text = self.text(value)
                if isinstance(text, E.Literal):
                    buf += json.dumps(text.value, ensure_ascii=False)
                    continue
                self._finding("a computed tool argument is sent as text", value.span)
                parts.append(_lit(buf + '"'))
                parts.extend(text.parts if isinstance(text, E.Template) else (text,))
                buf = '"'
                continue
            ref = self.ref(inner)
            if kinds <= STRING:
                parts.append(_lit(buf + '"'))
                parts.append(E.Call("aevatar.json", (ref,), value.span))
                buf = '"'
                self.report.lowered("a text argument", '"${json(...)}" in the JSON arguments', value.span)
            elif kinds <= NUMBER:
                parts.append(_lit(buf))
                parts.append(ref)
                buf = ""
            else:
                self._finding("a tool argument whose type is not known to be text or a number is sent as text "
                              "by aevatar", value.span)
                parts.append(_lit(buf + '"'))
                parts.append(E.Call("aevatar.json", (ref,), value.span))
                buf = '"'
        buf += "}"
        if not parts:
            return _lit(buf)
        parts.append(_lit(buf))
        merged: list[E.Expr] = []
        for p in parts:
            if merged and isinstance(p, E.Literal) and isinstance(merged[-1], E.Literal):
                merged[-1] = _lit(merged[-1].value + p.value)
            elif not (isinstance(p, E.Literal) and p.value == ""):
                merged.append(p)
        return E.Template(tuple(merged), "aevatar", False, span)


def _order(wf: Workflow) -> list[Node]:
    """The order the source runs its steps in."""
    by_id = wf.node_map()
    profile = PROFILES.get(wf.semantics)
    if profile is not None and profile.scheduling == "dataflow":
        deps: dict[str, set[str]] = {n.id: set() for n in wf.nodes}
        for e in wf.edges:
            if e.kind is EdgeKind.DEPENDENCY and e.target in deps:
                deps[e.target].add(e.source)
        out, placed = [], set()
        remaining = sorted(deps)
        while remaining:
            ready = [i for i in remaining if deps[i] <= placed]
            nxt = ready[0] if ready else remaining[0]
            out.append(by_id[nxt])
            placed.add(nxt)
            remaining.remove(nxt)
        return out
    return [n for n in wf.nodes if n.op != "end"]


def lower(wf: Workflow, report: Report) -> Workflow:
    kinds = Kinds(wf)
    conv = ToAevatar(report, kinds)
    nodes: list[Node] = []
    for e in wf.edges:
        if e.kind in (EdgeKind.BRANCH, EdgeKind.ERROR):
            report.finding("TRN101", f"step {e.source!r}: branches and error routes have no aevatar translation "
                           "yet; the steps are written in the order they are declared", e.span)
            break
    for node in _order(wf):
        report.current = node.id
        if node.guard is not None:
            report.finding("TRN101", "a guard (condition / when) has no aevatar form: aevatar steps always run "
                           "when reached", node.guard.span)
        if node.iteration is not None:
            report.finding("TRN101", "iteration (each / foreach) over typed data has no aevatar form",
                           node.iteration.span)
        if node.op == "trigger":
            report.lowered("trigger", "the run's start", node.span)
            continue
        if node.op == "call" and isinstance(node.attr("capability"), E.Literal) \
                and node.attr("capability").value == "tool":
            name = None
            for a in node.attrs[2:]:
                if a.name == "name" and isinstance(a.value, E.Literal):
                    name = a.value.value
            if name is None:
                n = node.attr("name")
                name = n.value if isinstance(n, E.Literal) else ""
            pairs = [(b.name, b.value) for b in node.inputs if b.value is not None]
            args = node.attr("args")
            if args is not None and not pairs:
                if isinstance(args, E.Literal) and isinstance(args.value, dict):
                    pairs = [(k, E.Literal(v, "auto")) for k, v in args.value.items()]
                elif isinstance(args, E.MapExpr):
                    pairs = [(m.key.value, m.value) for m in args.entries if isinstance(m.key, E.Literal)]
            params = E.MapExpr((E.MapEntry(_lit("tool"), _lit(name)),
                                E.MapEntry(_lit("arguments"), conv.json_arguments(pairs, node.span))))
            report.lowered("tool", STEP_RULES["call tool"], node.span)
            if node.outputs and any(b.value is not None for b in node.outputs):
                report.finding("TRN101", "step output mappings have no aevatar form", node.span)
            report.finding("TRN102", "a tool's result becomes its JSON text in aevatar (fields stay readable as "
                           "${steps.<id>.json.<field>})", node.span)
            nodes.append(_step(node.id, "tool_call", params, "call", node.span,
                               (Attr("capability", _lit("tool")), Attr("name", _lit(name)))))
        elif node.op == "sleep":
            ms = node.attr("duration_ms")
            params = E.MapExpr((E.MapEntry(_lit("duration_ms"), _lit(str(ms.value) if isinstance(ms, E.Literal)
                                                                      else "1000")),))
            report.lowered("sleep", "delay", node.span)
            nodes.append(_step(node.id, "delay", params, "sleep", node.span,
                               (Attr("duration_ms", params.entries[0].value),)))
        elif node.op in ("exit", "finish", "assign"):
            value = node.attr("output") if node.op != "assign" else node.attr("value")
            text = conv.text(value) if value is not None else _lit("")
            report.finding("TRN102", "aevatar's run output is one text (the last step's output); the source's "
                           "structured output is written as text", node.span)
            params = E.MapExpr((E.MapEntry(_lit("target"), _lit(node.id)), E.MapEntry(_lit("value"), text)))
            nodes.append(_step(node.id, "assign", params, "assign", node.span,
                               (Attr("value", text), Attr("writes", _lit(node.id)))))
        elif node.op in ("noop", "end"):
            continue
        else:
            report.finding("TRN101", f"{node.kind} ({node.op}) has no aevatar form; written as a transform that "
                           "passes its input through", node.span)
            params = E.MapExpr((E.MapEntry(_lit("op"), _lit("identity")),))
            nodes.append(_step(node.id, "transform", params, "transform.apply", node.span,
                               (Attr("function", _lit("aevatar.transform.identity")),)))
        if node.retry is not None:
            report.finding("TRN103", "retry: aevatar retries with max_attempts and a fixed or doubling delay and "
                           "no jitter", node.span)
    report.current = ""
    if wf.outputs:
        report.finding("TRN102", "aevatar has one text output; the named workflow outputs are not kept", wf.span)
    edges = tuple(Edge(a.id, b.id, EdgeKind.FALLTHROUGH) for a, b in itertools.pairwise(nodes))
    return Workflow(name=wf.name, dialect=wf.dialect, semantics="aevatar", nodes=tuple(nodes), edges=edges,
                    entry=(nodes[0].id,) if nodes else (), terminal=nodes[-1].id if nodes else None,
                    inputs=(Param("input", T.STRING, "", True),), outputs=(Binding("output", T.STRING),),
                    description=wf.description or "", metadata={}, span=wf.span)


def _step(sid: str, kind: str, params: E.MapExpr, op: str, span: Span, extra: tuple) -> Node:
    return Node(sid, op, kind, span, attrs=(Attr("parameters", params), *extra))
