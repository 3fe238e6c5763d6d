"""The kernel scheduling model (aevatar's step kernel) -> a dialect-3 dependency graph.

The kernel's graph (``next``, document order, the branches of switch and
conditional) becomes ``depends_on`` edges after a ``manual`` trigger where
it is acyclic: a run is one path, and dialect 3's pruning runs exactly that
path (a switch on the branch key the kernel computes, a noop entry per
target). The run prompt is the input ``input``; a step's ``${input}`` is
the output of the step that ran before it. Loops are findings; the
on_error skip and fallback of an llm_call or tool_call are translated
(:func:`_recover`), other error handling is a finding. An ``llm_call`` is an
``agent`` step (docs/host.md, "LLM requests"), its answer made text.
Steps with an equivalent catalog kind translate by :data:`STEP_RULES`;
the others are written as the closest kind with a comment and a finding.
Every aevatar value is text, so an expression translates exactly only
where CEL's typed values agree with that (``concat`` of text is ``+``).
"""

from __future__ import annotations

from attrs import evolve as attrs_evolve
from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.span import Span
from flowc.ir.workflow import Attr, Edge, EdgeKind, ErrorPolicy, Guard, Node, Param, Workflow
from flowc.runtime import aevatar_text as rta
from flowc.runtime import routing_run as rtr
from flowc.runtime.routing_run import _rstrip_ws
from flowc.translation.control.kernel import KernelGraph as AevatarKernel
from flowc.translation.control.kernel import (
    capability_is,
    json_object,
    keys_out,
    parameters_of,
    primitive,
    variable_sources,
    written_type,
)
from flowc.translation.instruction.flags import PROFILE
from flowc.translation.instruction.graph import DependencyGraph, workflow_name
from flowc.translation.instruction.lowerings import STEP_RULES
from flowc.translation.report import Report

__all__ = ["lower_kernel"]


class AevatarToCel:
    def __init__(self, report: Report, wf: Workflow) -> None:
        self.report = report
        self.step_ids, self.targets = variable_sources(wf)
        self.previous: str | None = None
        self.input_expr: E.Expr | None = None   # the current step's aevatar input (None: the run prompt)
        self.params: set[str] = set()
        self.in_blank_test = False               # inside isBlank(), where trimming changes nothing

    def _finding(self, message: str, span: Span, code: str = "TRN102") -> None:
        self.report.finding(code, message, span)

    def input_ref(self, span: Span) -> E.Expr:
        if self.input_expr is None:
            return E.Ref("inputs", (E.Field("input"),), span)
        return self.input_expr

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
            if not self.in_blank_test:
                # isBlank() reads the same either way: trimming keeps a blank value blank
                self._finding(f"run parameter {name!r}: aevatar trims it and drops it when blank; dialect 3 reads "
                              "it as given", e.span)
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
        test = self.test(e)
        if test is not None:
            return E.Conditional("cel.ternary", test, E.Literal("true", "string"), E.Literal("false", "string"),
                                 e.span)
        if isinstance(e, E.Conditional) and e.op == "aevatar.if" and (test := self.test(e.test)) is not None:
            self.report.lowered("if()", "`?:` on a test that gives 'true'/'false'", e.span)
            return E.Conditional("cel.ternary", test, self.text(e.then), self.text(e.otherwise), e.span)
        name = getattr(e, "func", None) or getattr(e, "op", None) or type(e).__name__
        self._finding(f"{name} has no instruction form that keeps aevatar's text semantics", e.span)
        return E.Literal("", "string", e.span)

    def text(self, e: E.Expr) -> E.Expr:
        """``e`` as CEL text (a template becomes concatenation)."""
        return _plain(self.value(e)) if isinstance(e, E.Template) else self.expr(e)

    def test(self, e: E.Expr) -> E.Expr | None:
        """A CEL bool that holds when aevatar's ``e`` gives 'true' (it gives
        'false' otherwise), for the functions whose result is only ever one
        of those; None for others."""
        if not isinstance(e, E.Call):
            return None
        if e.func == "aevatar.isblank" and len(e.args) == 1:
            self.report.lowered("isBlank()", "matches() of white space only", e.span)
            saved, self.in_blank_test = self.in_blank_test, True
            try:
                arg = self.text(e.args[0])
            finally:
                self.in_blank_test = saved
            return E.Call("cel.matches", (arg, _lit("^" + _ws_class() + "*$")), e.span)
        if e.func == "aevatar.not" and len(e.args) == 1 and (inner := self.test(e.args[0])) is not None:
            return E.Unary("cel.not", inner, e.span)
        if e.func == "aevatar.eq" and len(e.args) == 2 and any(
                isinstance(a, E.Literal) and not _numeric(a.value) for a in e.args):
            self.report.lowered("eq()", "`==` on text, as 'true'/'false'", e.span)
            return E.Binary("cel.eq", E.Call("cel.string", (self.expr(e.args[0]),)),
                            E.Call("cel.string", (self.expr(e.args[1]),)), e.span)
        return None


def _numeric(text) -> bool:
    try:
        float(str(text).strip())
        return True
    except ValueError:
        return False


def _lit(v, kind="string") -> E.Literal:
    return E.Literal(v, kind)


def lower_kernel(wf: Workflow, report: Report) -> Workflow:
    """An aevatar step kernel as a dialect-3 dependency graph."""
    return _KernelLowering(wf, report).run()


class _KernelLowering:
    """The kernel's path as dependencies: each step depends on the steps
    the kernel can come from, and reads the aevatar input (the previous
    step's output) through them."""

    def __init__(self, wf: Workflow, report: Report) -> None:
        self.wf = wf
        self.report = report
        self.kernel = KernelGraph(wf, report)
        self.cel = AevatarToCel(report, wf)
        self.graph = DependencyGraph({n.id for n in wf.nodes})
        self.start = self.graph.fresh("start")
        self.graph.add(Node(self.start, "trigger", "manual", wf.span), [])
        self.llm = _LlmRoles(wf, report)
        # node id -> [(dialect-3 dependency, the node whose output is the aevatar input through it)]
        self.preds: dict[str, list[tuple[str, str | None]]] = {}
        if self.kernel.order:
            self.preds[self.kernel.order[0].id] = [(self.start, None)]
        self.sinks: list[tuple[str, str | None]] = []

    def link(self, source_dep: str, value_of: str, target: str | None) -> None:
        if target is None:
            self.sinks.append((source_dep, value_of))
        else:
            self.preds.setdefault(target, []).append((source_dep, value_of))

    def run(self) -> Workflow:
        report, cel = self.report, self.cel
        for node in self.kernel.order:
            report.current = node.id
            deps = [d for d, _ in self.preds.get(node.id, [])]
            cel.input_expr = _live_value(self.preds.get(node.id, []))
            params = parameters_of(node)
            if node.id in self.kernel.routes:
                self.route(node, deps, params)
            elif not self.step(node, deps, params):
                if node.retry is not None:
                    report.finding("TRN103", "retry: aevatar retries every failure but a timeout with a fixed or "
                                   "doubling delay and no jitter; dialect 3 adds +-20% jitter", node.span)
                self.link(node.id, node.id, self.kernel.following(node.id))
            cel.previous = node.id
        report.current = ""
        return self.finish()

    def route(self, node: Node, deps: list[str], params: dict) -> None:
        """switch / conditional: the output is the input; the branch key picks the next step."""
        graph, kernel, report, cel = self.graph, self.kernel, self.report, self.cel
        routes = kernel.routes[node.id]
        graph.add(Node(node.id, "assign", "template", node.span, node.description,
                       attrs=(Attr("value", cel.input_ref(node.span)),)), deps)
        key = kernel.static.get(node.id) or _branch_key(node, params, routes, cel, report)
        targets = {k: kernel.route(node.id, k) for k in keys_out(routes)}
        if isinstance(key, str):
            report.lowered(written_type(node), "the branch its constant key always takes", node.span)
            self.link(node.id, node.id, targets[key])
            return
        route_id = graph.fresh(f"{node.id}_route")
        graph.add(Node(route_id, "switch", "switch", node.span, attrs=(Attr("on", key),)), [node.id])
        entries: dict[str | None, str] = {}
        for order, (label, target) in enumerate(targets.items()):
            if target not in entries:
                entry = entries[target] = graph.fresh(f"{node.id}_to_{target or 'end'}")
                graph.add(Node(entry, "noop", "noop", node.span), [route_id])
                self.link(entry, node.id, target)
            graph.edges.append(Edge(route_id, entries[target], EdgeKind.BRANCH, label, order, node.span))
        report.lowered(written_type(node), "a switch on the branch key aevatar computes, a noop entry per "
                       "target and depends_on edges", node.span)

    def step(self, node: Node, deps: list[str], params: dict) -> bool:
        """Lower a step that does work by its primitive (:data:`_PRIMITIVE_LOWERINGS`);
        True when it is linked already (a recovered call)."""
        lowering = _PRIMITIVE_LOWERINGS.get(primitive(node), _KernelLowering.no_form)
        return bool(lowering(self, node, deps, params))

    def no_form(self, node: Node, deps: list[str], params: dict) -> None:
        self.report.finding("TRN101", f"{written_type(node)}: this aevatar primitive has no instruction form; "
                            "written as a noop", node.span)
        self.graph.add(Node(node.id, "noop", "noop", node.span), deps)

    def assign(self, node: Node, deps: list[str], params: dict) -> None:
        cel = self.cel
        target = node.attr("writes")
        raw = params.get("value", _lit(""))
        # the kernel: an evaluated value that starts with `$` stands for the step input
        if isinstance(raw, E.Literal):
            value = cel.input_ref(node.span) if str(raw.value).startswith("$") else raw
        elif isinstance(raw, E.Template) and raw.parts and isinstance(raw.parts[0], E.Literal) \
                and str(raw.parts[0].value)[:1] not in ("", "$"):
            value = cel.value(raw)
        else:
            text = _plain(cel.value(raw))
            value = E.Conditional("cel.ternary", E.Call("cel.startsWith", (text, _lit("$"))),
                                  cel.input_ref(node.span), text, node.span)
        attrs = [Attr("value", value)]
        if isinstance(target, E.Literal):
            attrs.append(Attr("writes", target))
        self.graph.add(Node(node.id, "assign", "assign", node.span, attrs=tuple(attrs)), deps)
        self.report.lowered("assign", STEP_RULES["assign"], node.span)

    def delay(self, node: Node, deps: list[str], params: dict) -> None:
        graph, report = self.graph, self.report
        ms = node.attr("duration_ms")
        try:
            duration = int(ms.value) if isinstance(ms, E.Literal) else 1000
        except ValueError:
            duration = 1000
            report.finding("TRN101", "a delay whose duration is computed has no instruction form", node.span)
        # a delay passes its input through: the sleep, then a template with the input under the step's id
        wait = graph.fresh(f"{node.id}_sleep")
        graph.add(Node(wait, "sleep", "sleep", node.span, attrs=(Attr("duration_ms", _lit(duration, "int")),)),
                  deps)
        graph.add(Node(node.id, "assign", "template", node.span,
                       attrs=(Attr("value", self.cel.input_ref(node.span)),)), [wait])
        report.lowered("delay", "sleep, then a template that passes the input through", node.span)

    def tool(self, node: Node, deps: list[str], params: dict) -> bool:
        graph, report, kernel = self.graph, self.report, self.kernel
        name = node.attr("name")
        args_text = params.get("arguments")
        args: E.Expr
        if isinstance(args_text, E.Literal) and json_object(args_text.value) is not None:
            args = E.Literal(json_object(args_text.value), "object")
        else:
            report.finding("TRN102", "tool_call arguments that are not a constant JSON object (the step input, "
                           "or text with placeholders) are parsed at run time by aevatar; dialect 3 passes "
                           "them as written", node.span)
            args = E.MapExpr((E.MapEntry(_lit("arguments"), self.cel.value(args_text or E.Ref("input", ()))),))
        call = graph.fresh(f"{node.id}_call")
        graph.add(Node(call, "call", "tool", node.span, attrs=(
            Attr("capability", _lit("tool")), Attr("name", name or _lit("")), Attr("name", name or _lit("")),
            Attr("args", args)), on_error=_continue_if(node, kernel)), deps)
        report.lowered("tool_call result", "a template that makes the result text", node.span)
        return self.answer_as_text(node, call)

    def agent(self, node: Node, deps: list[str], params: dict) -> bool:
        # aevatar makes the answer text (a structured one as JSON); a template's text does the same
        answer = self.graph.fresh(f"{node.id}_answer")
        self.graph.add(attrs_evolve(self.llm.agent(node, params, self.cel, answer),
                                    on_error=_continue_if(node, self.kernel)), deps)
        return self.answer_as_text(node, answer)

    def answer_as_text(self, node: Node, call: str) -> bool:
        """The call's answer as the step's text; a recovered call links its own ways on."""
        if node.id in self.kernel.recovers:
            _recover(self.graph, node, call, self.kernel, self.link, self.report)
            return True
        self.graph.add(_as_text(node.id, node.span, call), [call])
        return False

    def checked(self, node: Node, deps: list[str], params: dict) -> None:
        """transform / guard: the output is the input; a guard that can fail
        is an assert before it. Other ops of theirs have no form."""
        check = _text_check(primitive(node), params, self.cel.input_ref(node.span))
        if check is None:
            return self.no_form(node, deps, params)
        graph = self.graph
        rule, condition = check
        before = deps
        if condition is not None:
            before = [graph.fresh(f"{node.id}_check")]
            graph.add(Node(before[0], "assert", "assert", node.span, attrs=(
                Attr("condition", condition),
                Attr("message", _lit(f"step {node.id!r}: {written_type(node)} failed")))), deps)
        graph.add(Node(node.id, "assign", "template", node.span,
                       attrs=(Attr("value", self.cel.input_ref(node.span)),)), before)
        self.report.lowered(written_type(node), rule, node.span)

    def finish(self) -> Workflow:
        wf, graph, report, cel, sinks = self.wf, self.graph, self.report, self.cel, self.sinks
        done = graph.fresh("done")
        cel.input_expr = _live_value(sinks)
        graph.add(Node(done, "finish", "finish", wf.span, attrs=(
            Attr("status", _lit("completed")),
            Attr("output", E.MapExpr((E.MapEntry(_lit("output"), _as_value(cel.input_ref(wf.span))),
                                      )) if self.kernel.order else E.MapExpr(())))),
            [d for d, _ in sinks] or [self.start])
        report.lowered("the run's output", "a finish step with output {output: <last step's output>}", wf.span)
        inputs = [Param("input", T.STRING, "", True, "the run prompt")]
        inputs += [Param(p, T.STRING, "", True, "a run parameter") for p in sorted(cel.params)]
        return Workflow(name=workflow_name(wf.name, report, wf.span), dialect=wf.dialect, semantics=PROFILE.name,
                        nodes=tuple(graph.nodes), edges=tuple(graph.edges), entry=(self.start,), terminal=None,
                        inputs=tuple(inputs), outputs=(), description=wf.description or None,
                        metadata={"carrier": "standalone", "armed": True}, span=wf.span)


# aevatar primitive -> how a step of it is lowered (a primitive not listed
# has no instruction form; the switch and conditional are routes).
_PRIMITIVE_LOWERINGS = {
    "assign": _KernelLowering.assign,
    "delay": _KernelLowering.delay,
    "tool_call": _KernelLowering.tool,
    "llm_call": _KernelLowering.agent,
    "transform": _KernelLowering.checked,
    "guard": _KernelLowering.checked,
}


def _live_value(preds: list[tuple[str, str | None]]) -> E.Expr | None:
    """The aevatar input of a step: the output of the one predecessor that
    ran (``None``: the run prompt). In an acyclic kernel graph exactly one
    dependency of a running step is live."""
    values = [(d, v) for d, v in preds]
    if not values:
        return None
    if len({v for _, v in values}) == 1:
        v = values[0][1]
        return None if v is None else _value_of(v)
    out: E.Expr | None = None
    for dep, v in reversed(values):
        value = E.Ref("inputs", (E.Field("input"),)) if v is None else _value_of(v)
        if out is None:
            out = value
            continue
        ran = E.Binary("cel.eq", E.Ref("steps", (E.Field(dep), E.Field("status"))), _lit("done"))
        out = E.Conditional("cel.ternary", ran, value, out)
    return out


def _as_text(step_id: str, span: Span, source: str) -> Node:
    """A template step ``step_id``: the output of ``source`` as text, as aevatar
    makes every result (null as '', data as compact JSON), which a template's text does too."""
    return Node(step_id, "assign", "template", span, attrs=(Attr("text", E.Template(
        (E.Ref("steps", (E.Field(source), E.Field("output"))),), "json", False, span)),))


# The transform ops that change the text (routing_run.transform); any other op passes it through.
_TRANSFORM_OPS = frozenset({"count", "count_words", "take", "take_last", "join", "split", "distinct", "uppercase",
                            "lowercase", "trim", "reverse_lines", "json_extract", "json_parse"})


def _param_text(params: dict, key: str) -> str | None:
    """A parameter's constant text ('' when absent); None when computed."""
    value = params.get(key)
    if value is None:
        return ""
    return str(value.value) if isinstance(value, E.Literal) else None


def _text_check(prim: str, params: dict, text: E.Expr) -> tuple[str, E.Expr | None] | None:
    """A transform or guard that passes its input through: (how it is
    written, the condition a guard asserts or None). None: no exact form."""
    if prim == "transform":
        op = _param_text(params, "op")
        if op is None or rta.trim(op).lower() in _TRANSFORM_OPS:
            return None
        return "a template that passes the input through (op identity or unknown)", None
    if prim != "guard":
        return None
    on_fail, check = _param_text(params, "on_fail"), _param_text(params, "check")
    if on_fail is None or check is None:
        return None
    if on_fail == "skip":
        return "a template that passes the input through (on_fail: skip)", None
    if on_fail == "branch":
        return None
    check = "not_empty" if rta.is_blank(check) else check.lower()
    if check == "not_empty":
        blank = E.Call("cel.matches", (text, _lit("^" + _ws_class() + "*$")))
        return "an assert that the input is not blank, then the input", E.Unary("cel.not", blank)
    keyword = _param_text(params, "keyword")
    if check == "contains" and keyword is not None:
        # aevatar compares upper-cased text; the pattern takes every character with the same upper case
        found = E.Call("cel.matches", (text, _lit("".join(_upper_class(ch) for ch in keyword)))) if keyword \
            else E.Literal(False, "bool")
        return "an assert that the input contains the keyword (ignoring case), then the input", found
    return None


def _computed_head(prefix: E.Expr | None, cel: AevatarToCel) -> E.Expr | None:
    """A computed ``prompt_prefix`` as aevatar uses it (trailing white space
    trimmed, then a blank line), when its last part is text that is not all
    white space: then the trim stops inside that text. None otherwise."""
    if not (isinstance(prefix, E.Template) and prefix.parts and isinstance(prefix.parts[-1], E.Literal)):
        return None
    tail = _rstrip_ws(str(prefix.parts[-1].value))
    if not tail:
        return None
    return cel.value(E.Template(prefix.parts[:-1] + (_lit(tail + "\n\n"),), prefix.stringify, False,
                                prefix.span))


def _concat(head: E.Expr, text: E.Expr) -> E.Expr:
    """Text ``head`` followed by text ``text``: one template when both are, else CEL ``+``."""
    if isinstance(head, E.Template) and isinstance(text, (E.Ref, E.Literal)):
        return E.Template(head.parts + (text,), "json", False, head.span)
    return E.Binary("cel.add", _plain(head), text)


def _value_of(v: str | E.Expr) -> E.Expr:
    """The aevatar input a link carries: a step's output, or a value (the error text of a fallback)."""
    return v if isinstance(v, E.Expr) else E.Ref("steps", (E.Field(v), E.Field("output")))


# ------------------------------------------------------------------ on_error: skip / fallback
# aevatar's timeout test (routing_run._is_timeout): a timeout fails the run whatever on_error says.
# Letters as classes (not (?i)) so that only ASCII letters match, as after aevatar's lower().
_TIMEOUT = ("(^|\\W)" + "".join(f"[{c}{c.upper()}]" for c in "timeout") + "(\\W|$)"
            "|(^|[\\W_])" + "".join(f"[{c}{c.upper()}]" if c != " " else " " for c in "timed out after")
            + "\\s*[0-9]+\\s*(" + "|".join(
                "".join(f"[{c}{c.upper()}]" for c in u) for u in (
                    "milliseconds", "millisecond", "minutes", "minute", "seconds", "second", "hours", "hour",
                    "mins", "secs", "hrs", "min", "sec", "hr", "ms", "s", "m", "h")) + ")(\\W|$)")


def _recoverable(node: Node, by_id: dict) -> bool:
    """Is ``node``'s on_error translated? For an llm_call or a tool_call
    (with a tool name), whose only failures are the host's: aevatar's
    output is then '' and its error the host's message, as dialect 3's."""
    policy = node.on_error
    if policy.action == "fallback" and policy.target not in by_id:
        return False
    if policy.action not in ("skip", "fallback"):
        return False
    prim = primitive(node)
    if prim == "llm_call":
        return capability_is(node, "llm")
    if prim == "tool_call" and capability_is(node, "tool"):
        name = node.attr("name")
        return isinstance(name, E.Literal) and isinstance(name.value, str) and name.value.strip() != ""
    return False


def _continue_if(node: Node, kernel: KernelGraph) -> ErrorPolicy:
    return ErrorPolicy("continue") if node.id in kernel.recovers else ErrorPolicy()


def _recover(graph, node: Node, call: str, kernel: KernelGraph, link, report: Report) -> None:
    """``call`` (on_error: continue) failed or not, as aevatar's on_error
    goes on: the step's output is the answer as text, or '' after a
    failure; a timeout fails the run; ``skip`` continues to the next step
    with ``default_output`` (else ''), ``fallback`` to its target with the
    error message."""
    error = E.Ref("steps", (E.Field(call), E.Field("error")))
    failed = E.Binary("cel.ne", error, E.Literal(None, "null"))
    text = graph.fresh(f"{node.id}_text")
    graph.add(_as_text(text, node.span, call), [call])
    graph.add(Node(node.id, "assign", "template", node.span, attrs=(Attr("value", E.Conditional(
        "cel.ternary", failed, _lit(""), E.Ref("steps", (E.Field(text), E.Field("output"))))),)), [text])
    not_timeout = E.Unary("cel.not", E.Call("cel.matches", (error, _lit(_TIMEOUT))))
    message = _lit(f"step {node.id!r} timed out")
    policy = kernel.recovers[node.id]
    if policy.action == "skip":
        check = graph.fresh(f"{node.id}_check")
        graph.add(Node(check, "assert", "assert", node.span, attrs=(
            Attr("condition", E.Binary("cel.or", E.Unary("cel.not", failed), not_timeout)),
            Attr("message", message))), [node.id])
        default = node.attr("default_output")
        out: str | E.Expr = node.id if default is None else E.Conditional(
            "cel.ternary", failed, default, E.Ref("steps", (E.Field(node.id), E.Field("output"))))
        link(check, out, kernel.following(node.id))
        report.lowered("on_error: skip", "on_error: continue, an assert that the failure is no timeout, the next "
                       "step with default_output (else '')", node.span)
        return
    ok = graph.fresh(f"{node.id}_ok")
    graph.add(Node(ok, "noop", "noop", node.span, guard=Guard(E.Unary("cel.not", failed), "cel_bool", node.span,
                                                              on_false="prune")), [node.id])
    link(ok, node.id, kernel.following(node.id))
    fallback = graph.fresh(f"{node.id}_failed")
    graph.add(Node(fallback, "assert", "assert", node.span, attrs=(Attr("condition", not_timeout),
                                                                   Attr("message", message)),
                   guard=Guard(failed, "cel_bool", node.span, on_false="prune")), [call])
    link(fallback, error, kernel.fallback(node.id))
    report.lowered("on_error: fallback", "on_error: continue; the next step when the call succeeded, else an "
                   "assert that the failure is no timeout and the fallback step with the error message", node.span)


def _plain(e: E.Expr) -> E.Expr:
    """A template as a CEL value (text)."""
    if isinstance(e, E.Template):
        out: E.Expr | None = None
        for p in e.parts:
            piece = p if isinstance(p, E.Literal) else E.Call("cel.string", (p,), p.span)
            out = piece if out is None else E.Binary("cel.add", out, piece, e.span)
        return out if out is not None else _lit("")
    return e


def _as_value(e: E.Expr) -> E.Expr:
    return E.Template((e,), "json", True) if isinstance(e, E.Ref) else e


def _as_template(e: E.Expr) -> E.Expr:
    if isinstance(e, E.Ref):
        return E.Template((e,), "json", False, e.span)
    return e


# ------------------------------------------------------------------ the kernel's graph
class KernelGraph(AevatarKernel):
    """The steps the aevatar kernel can run, in an order where each comes
    after every step that can precede it. A run is one path through this
    graph; where it is acyclic, dialect 3's depends_on and pruning run
    exactly that path (each step has one live dependency). A translated
    on_error (skip, fallback: see _recover) is part of the path."""

    def __init__(self, wf: Workflow, report: Report) -> None:
        by_id = wf.node_map()
        recovers = {n.id: n.on_error for n in wf.nodes if _recoverable(n, by_id)}
        super().__init__(wf, report, "no translation", "no translation yet", attach=True, recovers=recovers)
        self.order = self.kahn_order()

    def static_keys(self) -> dict[str, str]:
        out = {}
        for sid, keys in self.routes.items():
            key = _static_key(self.by_id[sid], parameters_of(self.by_id[sid]), keys)
            if key is not None:
                out[sid] = key
        return out


# ------------------------------------------------------------------ branch keys
_INVERSE_UPPER: dict[str, list[str]] | None = None


def _upper_class(ch: str) -> str:
    """A regular-expression class of the characters aevatar's ignore-case
    comparison (simple upper-case mapping) takes for ``ch``."""
    global _INVERSE_UPPER
    if _INVERSE_UPPER is None:
        inverse: dict[str, list[str]] = {}
        for cp in range(0x110000):
            if 0xD800 <= cp < 0xE000:
                continue
            x = chr(cp)
            if rta._NATIVE_CASE:
                u = x.upper()
                if len(u) != 1:
                    u = rta._SIMPLE.get((x, 1), x)
            else:  # pragma: no cover - MicroPython
                u = rta.upper(x)
            inverse.setdefault(u, []).append(x)
        _INVERSE_UPPER = inverse
    chars = _INVERSE_UPPER.get(rta.upper(ch), [ch])
    escaped = "".join("\\" + c if c in "\\]^-[" else c for c in chars)
    return escaped if len(chars) == 1 and chars[0] not in ".^$*+?()[]{}|\\" and chars[0].isalnum() else f"[{escaped}]"


def _ws_class() -> str:
    return "[" + rta.WHITESPACE + "]"


def _static_key(node: Node, params: dict, keys: list[str]) -> str | None:
    if primitive(node) == "conditional":
        condition = params.get("condition", _lit("default"))
        if isinstance(condition, E.Literal):
            c = str(condition.value)
            if rta.try_parse_bool(c) is not None or c in ("1", "0", ""):
                return rta.conditional_test(c, "")
        return None
    on = params.get("on")
    if isinstance(on, E.Literal) and not rta.is_blank(str(on.value)):
        return rtr.switch_key(str(on.value), "", keys)
    return None


def _branch_key(node: Node, params: dict, keys: list[str], cel: AevatarToCel,
                report: Report) -> str | E.Expr:
    """The branch key aevatar computes for a switch or conditional: a
    constant, or a CEL expression that gives the same text."""
    text = cel.input_ref(node.span)
    if primitive(node) == "conditional":
        condition = params.get("condition", _lit("default"))
        if isinstance(condition, E.Template) and len(condition.parts) == 1 \
                and (test := cel.test(condition.parts[0])) is not None:
            # a function that gives 'true' or 'false', which the conditional reads as that flag
            return E.Conditional("cel.ternary", test, _lit("true"), _lit("false"), node.span)
        if not isinstance(condition, E.Literal):
            report.finding("TRN101", "a computed conditional test (parsed as true/false/1/0 at run time, else "
                           "sought in the input) has no instruction form", node.span)
            return E.Literal("true", "string", node.span)
        c = str(condition.value)
        if rta.try_parse_bool(c) is not None or c in ("1", "0") or c == "":
            return rta.conditional_test(c, "")
        pattern = "".join(_upper_class(ch) for ch in c)
        return E.Conditional("cel.ternary", E.Call("cel.matches", (text, _lit(pattern))), _lit("true"),
                             _lit("false"), node.span)
    on = params.get("on")
    if isinstance(on, E.Literal) and not rta.is_blank(str(on.value)):
        return rtr.switch_key(str(on.value), "", keys)
    value = text
    if on is not None and not isinstance(on, E.Literal):
        v = _plain(cel.value(on))
        blank = E.Call("cel.matches", (v, _lit("^" + _ws_class() + "*$")))
        value = E.Conditional("cel.ternary", blank, text, v)
    ws = _ws_class()
    out: E.Expr = _lit("_default")
    tests: list[tuple[E.Expr, str]] = []
    for k in keys:
        if k == "" or k[0] in rta.WHITESPACE or k[-1] in rta.WHITESPACE:
            report.finding("TRN102", f"switch key {k!r} is empty or starts or ends with white space; the key "
                           "test is not translated exactly", node.span)
            continue
        tests.append((_lit("^" + ws + "*" + "".join(_upper_class(ch) for ch in k) + ws + "*$"), k))
    for k in keys:
        if k != "_default" and k and k[0] not in rta.WHITESPACE and k[-1] not in rta.WHITESPACE:
            tests.append((_lit("".join(_upper_class(ch) for ch in k)), k))
    for pattern, k in reversed(tests):
        out = E.Conditional("cel.ternary", E.Call("cel.matches", (value, pattern)), _lit(k), out)
    return out


# ------------------------------------------------------------------ llm_call -> agent
_ROLE_FIELDS = {"system_prompt": "system", "model": "model"}


class _LlmRoles:
    """aevatar ``llm_call`` on role R asks the host ``llm:R`` with
    ``{prompt, role: {id, system_prompt, model, ...}}``; a dialect-3
    ``agent`` step asks ``llm:agent`` with ``{instruction, system, model}``.
    docs/host.md makes these the same request (a model asked the prompt
    under the role's system prompt); what a role holds beyond that, and
    roles an agent step cannot tell apart, are findings."""

    def __init__(self, wf: Workflow, report: Report) -> None:
        self.report = report
        self.actors = {a.id: a for a in wf.actors}
        used = {n.actor or "assistant" for n in wf.nodes if primitive(n) == "llm_call"}
        self.clashes: set[str] = set()
        seen: dict[tuple, str] = {}
        for role in sorted(used):
            sig = self._signature(role)
            if sig in seen:
                self.clashes |= {role, seen[sig]}
            seen.setdefault(sig, role)

    def _settings(self, role: str) -> dict[str, E.Expr]:
        actor = self.actors.get(role)
        if actor is None:
            return {}
        # what the kernel hands the host under `role` (aevatar_codegen: text and lists of text)
        return {a.name: a.value for a in actor.attrs
                if (isinstance(a.value, E.Literal) and isinstance(a.value.value, str)) or isinstance(a.value, E.ListExpr)}

    def _signature(self, role: str) -> tuple:
        s = self._settings(role)
        return tuple(repr(getattr(s.get(k), "value", None)) for k in _ROLE_FIELDS)

    def agent(self, node: Node, params: dict, cel: AevatarToCel, step_id: str) -> Node:
        report = self.report
        role = node.actor or "assistant"
        settings = self._settings(role)
        # `implicit`: the engine's default role (no role declared), an agent step without system or model
        other = [k for k in settings if k not in _ROLE_FIELDS and k != "implicit"]
        if other:
            report.finding("TRN104", f"llm_call: role {role!r} has settings an agent step has no field for "
                           f"({', '.join(other)}); the host sees the system prompt and model only", node.span)
        if role in self.clashes:
            report.finding("TRN104", f"llm_call: role {role!r} has the same system prompt and model as another "
                           "role; dialect 3's agent steps cannot tell them apart", node.span)
        extra = [k for k in params if k != "prompt_prefix"]
        if extra:
            report.finding("TRN101", f"llm_call parameters {', '.join(extra)} have no agent form", node.span)
        text = cel.input_ref(node.span)
        prefix = params.get("prompt_prefix")
        instruction: E.Expr = _as_template(text) if isinstance(text, E.Ref) else text
        if isinstance(prefix, E.Literal):
            if not rta.is_blank(str(prefix.value)):
                head = _lit(_rstrip_ws(str(prefix.value)) + "\n\n")
                if isinstance(text, E.Ref):
                    instruction = E.Template((head, text), "json", False)
                else:
                    instruction = E.Binary("cel.add", head, text)
        elif (head := _computed_head(prefix, cel)) is not None:
            # the prefix ends in text that is not white space, so trimming its end trims that text only
            instruction = _concat(head, text)
            report.lowered("computed prompt_prefix", "the prefix's template, its end trimmed, a blank line and "
                           "the input", node.span)
        elif prefix is not None:
            report.finding("TRN101", "a computed prompt_prefix (trimmed at run time) has no agent form; the "
                           "prompt is the input", node.span)
        attrs = [Attr("capability", _lit("llm")), Attr("name", _lit("agent")), Attr("instruction", instruction)]
        for key, field in _ROLE_FIELDS.items():
            value = settings.get(key)
            if isinstance(value, E.Literal) and isinstance(value.value, str):
                attrs.append(Attr(field, _lit(value.value)))
        report.lowered("llm_call", STEP_RULES["llm_call"], node.span)
        return Node(step_id, "call", "agent", node.span, attrs=tuple(attrs))
