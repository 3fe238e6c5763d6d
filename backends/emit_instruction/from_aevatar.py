"""aevatar IR -> instruction IR.

The kernel's straight path (``next`` and document order) becomes a
``depends_on`` chain after a ``manual`` trigger; the run prompt is the
input ``input``; a step's ``${input}`` is the previous step's output.
Steps with an equivalent catalog kind translate by :data:`STEP_RULES`;
the others are written as the closest kind with a comment and a finding.
Every aevatar value is text, so an expression translates exactly only
where CEL's typed values agree with that (``concat`` of text is ``+``).
"""

from __future__ import annotations

import json

from flowc.backends.emitcore import Report
from flowc.backends.emitcore.kernel import parameters_of, straight_path, variable_sources
from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.span import Span
from flowc.ir.workflow import Attr, Node, Param, Workflow

__all__ = ["STEP_RULES", "lower_aevatar"]

# canonical aevatar primitive (its IR op / capability) -> what it becomes
STEP_RULES = {
    "assign": "assign with `writes` (the value is text)",
    "delay": "sleep",
    "tool_call": "tool (arguments that are a JSON object become args)",
    "llm_call": "agent (a host call of another name: a finding)",
}


class AevatarToCel:
    def __init__(self, report: Report, wf: Workflow) -> None:
        self.report = report
        self.step_ids, self.targets = variable_sources(wf)
        self.previous: str | None = None
        self.params: set[str] = set()

    def _finding(self, message: str, span: Span, code: str = "TRN102") -> None:
        self.report.finding(code, message, span)

    def input_ref(self, span: Span) -> E.Expr:
        if self.previous is None:
            return E.Ref("inputs", (E.Field("input"),), span)
        return E.Ref("steps", (E.Field(self.previous), E.Field("output")), span)

    def ref(self, e: E.Ref) -> E.Expr:
        if e.root == "input":
            return self.input_ref(e.span)
        if e.root == "steps" and len(e.path) >= 2 and isinstance(e.path[1], E.Field):
            sid, field = e.path[0].name, e.path[1].name
            if field == "output" and len(e.path) == 2:
                return E.Ref("steps", (E.Field(sid), E.Field("output")), e.span)
            if field == "json":
                self.report.lowered("steps.<id>.json.<f>", "a field of the step's output", e.span)
                return E.Ref("steps", (E.Field(sid), E.Field("output")) + e.path[2:], e.span)
            self._finding(f"steps.{sid}.{field} has no instruction form", e.span, "TRN101")
            return E.Literal("", "string", e.span)
        if e.root == "vars" and e.path and isinstance(e.path[0], E.Field):
            name = e.path[0].name
            if name in self.step_ids:
                return E.Ref("steps", (E.Field(name), E.Field("output")), e.span)
            if name in self.targets:
                return E.Ref("vars", (E.Field(name),), e.span)
            self.params.add(name)
            return E.Ref("inputs", (E.Field(name),), e.span)
        self._finding(f"reference {e.root} has no instruction form", e.span, "TRN101")
        return E.Literal("", "string", e.span)

    def value(self, e: E.Expr) -> E.Expr:
        """A parameter value (text)."""
        if isinstance(e, E.Literal):
            return e
        if isinstance(e, E.Template):
            parts = []
            for p in e.parts:
                if isinstance(p, E.Literal):
                    parts.append(p)
                elif isinstance(p, E.Ref):
                    parts.append(self.ref(p))
                else:
                    parts.append(self.expr(p))
            if all(isinstance(p, (E.Literal, E.Ref)) for p in parts):
                return E.Template(tuple(parts), "json", False, e.span)
            out: E.Expr | None = None
            for p in parts:
                piece = p if isinstance(p, E.Literal) else E.Call("cel.string", (p,), p.span)
                out = piece if out is None else E.Binary("cel.add", out, piece, e.span)
            return out if out is not None else E.Literal("", "string", e.span)
        return self.expr(e)

    def expr(self, e: E.Expr) -> E.Expr:
        if isinstance(e, E.Literal):
            return e
        if isinstance(e, E.Ref):
            return self.ref(e)
        if isinstance(e, E.Call) and e.func == "aevatar.concat":
            self.report.lowered("concat()", "`+` on text", e.span)
            out: E.Expr | None = None
            for a in e.args:
                piece = self.expr(a)
                if not isinstance(piece, E.Literal):
                    piece = E.Call("cel.string", (piece,), a.span)
                out = piece if out is None else E.Binary("cel.add", out, piece, e.span)
            return out
        if isinstance(e, E.Call) and e.func == "aevatar.eq" and any(
                isinstance(a, E.Literal) and not _numeric(a.value) for a in e.args):
            self.report.lowered("eq()", "`==` on text, as 'true'/'false'", e.span)
            test = E.Binary("cel.eq", E.Call("cel.string", (self.expr(e.args[0]),)),
                            E.Call("cel.string", (self.expr(e.args[1]),)), e.span)
            return E.Conditional("cel.ternary", test, E.Literal("true", "string"), E.Literal("false", "string"))
        name = getattr(e, "func", None) or getattr(e, "op", None) or type(e).__name__
        self._finding(f"{name} has no instruction form that keeps aevatar's text semantics", e.span)
        return E.Literal("", "string", e.span)


def _numeric(text) -> bool:
    try:
        float(str(text).strip())
        return True
    except ValueError:
        return False


def _lit(v, kind="string") -> E.Literal:
    return E.Literal(v, kind)


def lower_aevatar(wf: Workflow, report: Report) -> Workflow:
    from flowc.backends.emit_instruction.from_workflowskill import _Graph, _workflow_name

    path, problems = straight_path(wf)
    for node in problems:
        report.finding("TRN101", f"step {node.id!r}: branches, loops back, error fallbacks and steps off the "
                       "straight path have no translation yet; the steps are written in the order the "
                       "kernel runs them without choices", node.span)
    cel = AevatarToCel(report, wf)
    graph = _Graph({n.id for n in wf.nodes})
    start = graph.fresh("start")
    graph.add(Node(start, "trigger", "manual", wf.span), [])
    prev = start
    for node in path:
        report.current = node.id
        params = parameters_of(node)
        canonical = node.kind.strip().lower()
        attrs: list[Attr] = []
        if node.op == "assign":
            target = node.attr("writes")
            value = cel.value(node.attr("value") or _lit(""))
            attrs = [Attr("value", value)]
            if isinstance(target, E.Literal):
                attrs.append(Attr("writes", target))
            graph.add(Node(node.id, "assign", "assign", node.span, attrs=tuple(attrs)), [prev])
            report.lowered("assign", STEP_RULES["assign"], node.span)
        elif node.op == "sleep":
            ms = node.attr("duration_ms")
            try:
                duration = int(ms.value) if isinstance(ms, E.Literal) else 1000
            except ValueError:
                duration = 1000
                report.finding("TRN101", "a delay whose duration is computed has no instruction form", node.span)
            graph.add(Node(node.id, "sleep", "sleep", node.span, attrs=(Attr("duration_ms", _lit(duration, "int")),)),
                      [prev])
            report.lowered("delay", "sleep", node.span)
        elif node.op == "call" and _is(node.attr("capability"), "tool"):
            name = node.attr("name")
            args_text = params.get("arguments")
            args: E.Expr
            if isinstance(args_text, E.Literal) and _json_object(args_text.value) is not None:
                args = E.Literal(_json_object(args_text.value), "object")
            else:
                report.finding("TRN102", "tool_call arguments that are not a constant JSON object (the step input, "
                               "or text with placeholders) are parsed at run time by aevatar; dialect 3 passes "
                               "them as written", node.span)
                args = E.MapExpr((E.MapEntry(_lit("arguments"), cel.value(args_text or E.Ref("input", ()))),))
            report.finding("TRN102", "an aevatar step's output is text (a tool's JSON result serialised); in "
                           "dialect 3 it is the result itself", node.span)
            graph.add(Node(node.id, "call", "tool", node.span, attrs=(
                Attr("capability", _lit("tool")), Attr("name", name or _lit("")), Attr("name", name or _lit("")),
                Attr("args", args))), [prev])
        elif node.op == "call" and _is(node.attr("capability"), "llm"):
            prefix = params.get("prompt_prefix")
            instruction: E.Expr = cel.input_ref(node.span)
            if prefix is not None:
                text = cel.value(prefix)
                instruction = E.Template((text, _lit("\n\n"), instruction), "json", False) \
                    if isinstance(text, E.Literal) else instruction
            report.finding("TRN104", f"llm_call: the host is asked by another name and with other arguments "
                           f"(aevatar: llm/{node.actor or 'assistant'} with the role's prompt; dialect 3: an agent "
                           "step)", node.span)
            graph.add(Node(node.id, "call", "agent", node.span, attrs=(
                Attr("capability", _lit("llm")), Attr("name", _lit("agent")),
                Attr("instruction", _as_template(instruction)))), [prev])
        else:
            report.finding("TRN101", f"{canonical}: this aevatar primitive has no instruction form; written as a "
                           "noop", node.span)
            graph.add(Node(node.id, "noop", "noop", node.span), [prev])
        if node.retry is not None:
            report.finding("TRN103", "retry: aevatar retries every failure but a timeout with a fixed or doubling "
                           "delay and no jitter; dialect 3 adds +-20% jitter", node.span)
        cel.previous = node.id
        prev = node.id
    report.current = ""
    done = graph.fresh("done")
    graph.add(Node(done, "finish", "finish", wf.span, attrs=(
        Attr("status", _lit("completed")),
        Attr("output", E.MapExpr((E.MapEntry(_lit("output"), E.Template((cel.input_ref(wf.span),), "json", True)),
                                  )) if path else E.MapExpr(())))), [prev])
    report.lowered("the run's output", "a finish step with output {output: <last step's output>}", wf.span)
    inputs = [Param("input", T.STRING, "", True, "the run prompt")]
    inputs += [Param(p, T.STRING, "", True, "a run parameter") for p in sorted(cel.params)]
    return Workflow(name=_workflow_name(wf.name, report, wf.span), dialect=wf.dialect, semantics="instruction",
                    nodes=tuple(graph.nodes), edges=tuple(graph.edges), entry=(start,), terminal=None,
                    inputs=tuple(inputs), outputs=(), description=wf.description or None,
                    metadata={"carrier": "standalone", "armed": True}, span=wf.span)


def _is(e: E.Expr | None, text: str) -> bool:
    return isinstance(e, E.Literal) and e.value == text


def _as_template(e: E.Expr) -> E.Expr:
    if isinstance(e, E.Ref):
        return E.Template((e,), "json", False, e.span)
    return e


def _json_object(text):
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return None
    return data if isinstance(data, dict) else None

