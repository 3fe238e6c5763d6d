"""The steps and values the aevatar lowerings share.

:class:`ToAevatar` rewrites WorkflowSkill or CEL expressions into aevatar
text and knows what the aevatar text of a source value is (``scalar``);
:func:`lower_step` writes one step that does work (no control flow): tool
calls become ``tool_call`` steps whose JSON ``arguments`` hold the inputs,
references ``${...}`` placeholders (``${steps.<id>.json.<f>}`` for a field
of a tool's result), LLM steps :mod:`.llm`'s ``llm_call`` steps. What has
no aevatar form (typed outputs, transforms of typed data) is reported with
its span, and the closest step is written with a comment. :data:`STEP_RULES`
lists the translations.
"""

from __future__ import annotations

import json
import re

import attrs
from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.span import Span
from flowc.ir.workflow import Actor, Attr, Binding, ErrorPolicy, Node, Param, Workflow
from flowc.translation.aevatar.flags import PROFILE
from flowc.translation.aevatar.llm import lower_llm
from flowc.translation.aevatar.lowerings import STEP_RULES
from flowc.translation.kinds import NUMBER, STRING, Kinds
from flowc.translation.report import Report

__all__ = ["OUTPUT_RENAMED", "ToAevatar", "assign_step", "conditional_step", "failing_step", "lower_step",
           "output_step", "workflow_of"]

# aevatar's run output is one unnamed text (a record's `output`).
OUTPUT_RENAMED = "the source's one output, whatever its name, is aevatar's run output"

# Variable names aevatar's evaluator reads otherwise: `input` is the step
# input, a number or true/false is itself when no variable has that name.
_NOT_A_VARIABLE = re.compile(r"input\Z|steps\.|variables\.|true\Z|false\Z|[-+.0-9]", re.IGNORECASE)
# Declared scalar kinds whose aevatar text is the source's text (null and
# missing are blank in both): a string, true/false, an integer.
_TEXT_KINDS = frozenset({"string", "bool", "int"})


def _lit(v) -> E.Literal:
    return E.Literal(v, "string")


class ToAevatar:
    """Rewrites WorkflowSkill or CEL expressions into aevatar text, and
    knows what the aevatar text of a source value is (``scalar``)."""

    def __init__(self, report: Report, wf: Workflow) -> None:
        self.report = report
        self.kinds = Kinds(wf)
        self.wf = wf
        self.nodes = wf.node_map()
        self.params = {p.name: p for p in wf.inputs}
        schema = (wf.metadata or {}).get("inputs_schema")
        required = schema.get("required") if isinstance(schema, dict) else None
        # CEL access (dialect 3) fails a step that reads an input the run was
        # not given; WorkflowSkill reads it as undefined, as aevatar reads blank text.
        profile = wf.profile
        self.absent_fails = profile is not None and profile.access == "cel"
        self.required = set(required) if isinstance(required, list) else set()
        self.branch_nodes = {n.id for n in wf.nodes if n.op == "branch"}
        # Steps whose output is text that aevatar writes the same (an assign
        # or template of exact text), and the steps that run in every run
        # (the structure module fills it in as it goes): reading the whole
        # output of such a step is reading text, never null.
        self.text_steps: set[str] = set()
        self.always_run: set[str] = set()
        # Source steps with no aevatar step (a dialect-3 switch or noop, a
        # step that never runs): nothing can read their output.
        self.unwritten: set[str] = set()
        # Steps whose aevatar output is the host's answer as the engine makes
        # every result text (null as '', data as compact JSON): a dialect-3
        # template interpolates the source's value to the same text.
        self.answer_steps: set[str] = set()
        # Ids in use (the structure module shares its set): a step written
        # before another takes a fresh id from it.
        self.taken: set[str] = set(self.nodes)
        # (role setting, text) pairs -> the generated role carrying them.
        self.roles: dict[tuple, Actor] = {}

    def _finding(self, message: str, span: Span, code: str = "TRN102") -> None:
        self.report.finding(code, message, span)

    # ------------------------------------------------------------- references
    def input_problem(self, name: str) -> str | None:
        """Why ``${name}`` is not the input ``name`` in aevatar, or None."""
        param = self.params.get(name)
        if _NOT_A_VARIABLE.match(name) or name in self.nodes:
            return f"the input {name!r} has no aevatar variable of its own (a step id, `input` or a " \
                   "constant has that name)"
        if param is not None and param.has_default:
            return f"the input {name!r} has a default, and aevatar run parameters have none"
        if self.absent_fails and name not in self.required:
            return f"the input {name!r} may be absent, which fails the source's step and is blank text " \
                   "in aevatar"
        return None

    def ref(self, e: E.Ref, interpolated: bool = False) -> E.Expr:
        """``e`` in aevatar; ``interpolated``: read inside a dialect-3
        template's text (a value there becomes text as aevatar's do)."""
        if e.root == "inputs" and len(e.path) == 1 and isinstance(e.path[0], E.Field):
            why = self.input_problem(e.path[0].name)
            if why is not None:
                self._finding(why, e.span)
            return E.Ref("vars", (E.Field(e.path[0].name),), e.span)
        if e.root == "steps" and len(e.path) >= 2 and all(isinstance(s, E.Field) for s in e.path) \
                and e.path[1].name == "output":
            sid = e.path[0].name
            if sid in self.unwritten:
                self._finding(f"step {sid!r} has no aevatar step (a switch, a noop or a step that never runs), so "
                              "its output has no aevatar form", e.span, "TRN101")
                return E.Literal("", "string", e.span)
            if sid in self.branch_nodes:
                self._finding(f"the output of conditional {sid!r} (its arm's last listed step) has no aevatar "
                              "form: an aevatar conditional outputs its input", e.span)
            if len(e.path) == 2:
                if interpolated and sid in self.answer_steps & self.always_run:
                    self.report.lowered("a whole answer in text", STEP_RULES["answer in text"], e.span)
                elif sid not in self.branch_nodes and self.scalar(e)[0] != "string":
                    self._finding("a step's whole output is its JSON text in aevatar (fields stay readable as "
                                  "${steps.<id>.json.<field>})", e.span)
                return E.Ref("steps", e.path[:2], e.span)
            self.report.lowered("a field of a step's output", "${steps.<id>.json.<field>}", e.span)
            return E.Ref("steps", (e.path[0], E.Field("json")) + e.path[2:], e.span)
        self._finding(f"this reference ({e.root}) has no aevatar form", e.span, "TRN101")
        return E.Literal("", "string", e.span)

    def scalar(self, e: E.Ref) -> tuple[str | None, str | None]:
        """The declared scalar kind (``bool int float string``) of a value
        whose aevatar text is that value's own text, null and missing
        values being blank; or None and why not."""
        path = e.path
        if e.root == "inputs" and len(path) == 1 and isinstance(path[0], E.Field):
            name = path[0].name
            why = self.input_problem(name)
            param = self.params.get(name)
            if why is not None or param is None:
                return None, why or f"the input {name!r} is not declared"
            if param.type.kind == "string":
                return None, (f"aevatar trims run parameters: the text input {name!r} loses surrounding "
                              "white space")
            return param.type.kind, None
        if e.root == "steps" and len(path) == 2 and all(isinstance(s, E.Field) for s in path) \
                and path[1].name == "output" and path[0].name in self.text_steps & self.always_run:
            return "string", None
        if e.root == "steps" and len(path) == 3 and all(isinstance(s, E.Field) for s in path) \
                and path[1].name == "output":
            node = self.nodes.get(path[0].name)
            if node is not None and node.op == "call" and node.outputs \
                    and all(b.value is None for b in node.outputs):
                for b in node.outputs:
                    if b.name == path[2].name:
                        return b.type.kind, None
            return None, f"the type of {path[0].name}'s output field {path[2].name!r} is not declared"
        return None, "a value whose type is not declared"

    # ------------------------------------------------------------- values
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
            self._text_kind(e, whole=True)
            out = self.ref(e)
            return E.Template((out,), "aevatar", False, e.span) if isinstance(out, E.Ref) else out
        if isinstance(e, E.Template):
            parts = []
            whole = e.typed_whole or len(e.parts) == 1
            # dialect 3's text template: strings as they are, null as '',
            # the rest as compact JSON (cel.template_json)
            interpolated = e.stringify == "json" and not e.typed_whole
            for p in e.parts:
                if isinstance(p, E.Literal):
                    parts.append(p)
                elif isinstance(p, E.Ref):
                    self._text_kind(p, whole)
                    parts.append(self.ref(p, interpolated))
                else:
                    self._finding("a computed placeholder has no aevatar form", p.span, "TRN101")
            if e.typed_whole and not self.kinds.of(e.parts[0]) <= STRING:
                self._finding("a value that keeps its type becomes text in aevatar", e.span)
            return E.Template(tuple(parts), "aevatar", False, e.span)
        self._finding(f"{getattr(e, 'op', None) or getattr(e, 'func', None) or type(e).__name__} has no aevatar "
                      "form that keeps its meaning (aevatar values are text)", e.span)
        return _lit("")

    def _text_kind(self, e: E.Ref, whole: bool) -> None:
        """A placeholder's aevatar text is the source's when its declared
        kind is text, a boolean or an integer."""
        if (len(e.path) == 2 and e.root == "steps") or (e.root == "inputs" and len(e.path) == 1 and isinstance(
                e.path[0], E.Field) and self.input_problem(e.path[0].name)):
            return  # ref() reports it
        kind, why = self.scalar(e)
        if kind in _TEXT_KINDS and not (whole and kind != "string"):
            return
        if kind in _TEXT_KINDS:
            self._finding(f"a value of type {kind} on its own keeps its type in the source and is text in aevatar",
                          e.span)
            return
        self._finding((why or f"a value of type {kind}") + ": its aevatar text may differ from the source's", e.span)

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

    def output_text(self, value: E.Expr | None, span: Span) -> tuple[E.Expr, str | None]:
        """The run's text output ``value`` as an assign's value, and why it
        is not the source's text (None: it is). The source's value must be
        text: a constant, or a template that starts with constant text,
        because aevatar's assign outputs its input instead of a value that
        starts with `$`."""
        if value is None:
            return _lit(""), "the output has no value"
        if isinstance(value, E.Literal) and isinstance(value.value, str):
            if value.value.startswith("$"):
                return value, "aevatar's assign outputs its input instead of a value that starts with `$`"
            return value, None
        inner = value.parts[0] if isinstance(value, E.Template) and value.typed_whole and len(value.parts) == 1 \
            else value
        if isinstance(inner, E.Ref) and inner.root == "steps" and len(inner.path) == 2 \
                and self.scalar(inner)[0] == "string":
            # the text of a step that runs in every run and whose text starts
            # with constant text (an assign or template): never null or `$...`
            return E.Template((self.ref(inner),), "aevatar", False, value.span), None
        text = self.text(value)
        first = value.parts[0] if isinstance(value, E.Template) and not value.typed_whole else None
        if not (isinstance(first, E.Literal) and isinstance(first.value, str) and first.value
                and not first.value.startswith("$")):
            return text, ("an output that does not start with constant text may be null, not text, or start "
                          "with `$` (which aevatar's assign reads as its input)")
        return text, None


def lower_step(node: Node, conv: ToAevatar, report: Report) -> tuple[Node, ...]:
    """One step that does work (no control flow) as aevatar steps, in the
    kernel's order, the last one under the step's id; none for a step with
    no aevatar counterpart that does nothing."""
    if node.iteration is not None:
        report.finding("TRN101", "iteration (each / foreach) over typed data has no aevatar form",
                       node.iteration.span)
    skip = node.on_error.action == "ignore" and node.op == "call" and node.iteration is None
    if node.on_error.action != "fail" and not skip:
        report.finding("TRN101", f"on_error: {node.on_error.action} has no aevatar form here; a failure fails "
                       "the run", node.on_error.span if node.on_error.span.known else node.span)
    if node.retry is not None:
        report.finding("TRN103", "retry: aevatar retries with max_attempts and a fixed or doubling delay and "
                       "no jitter", node.span)
    rule = _STEP_LOWERINGS.get(node.op, _closest)
    out = rule(node, conv, report)
    steps = out if isinstance(out, tuple) else (out,) if out is not None else ()
    if skip and steps:
        # WorkflowSkill goes on with a null output, aevatar's skip with the
        # failed step's blank output and no fields: the same text for every
        # reader (a whole tool result is a finding anyway).
        report.lowered("on_error: ignore", STEP_RULES["on_error: ignore"], node.on_error.span)
        steps = steps[:-1] + (attrs.evolve(steps[-1], on_error=ErrorPolicy("skip")),)
    return steps


def _closest(node: Node, conv: ToAevatar, report: Report) -> Node:
    report.finding("TRN101", f"{node.kind} ({node.op}) has no aevatar form; written as a transform that "
                   "passes its input through", node.span)
    params = E.MapExpr((E.MapEntry(_lit("op"), _lit("identity")),))
    return _step(node.id, "transform", params, "transform.apply", node.span,
                 (Attr("function", _lit("aevatar.transform.identity")),))


def _call(node: Node, conv: ToAevatar, report: Report) -> Node | tuple[Node, ...]:
    capability = node.attr("capability")
    capability = capability.value if isinstance(capability, E.Literal) else None
    if capability == "tool":
        return _tool(node, conv, report)
    if capability == "llm":
        steps = lower_llm(node, conv, report)
        if steps is not None:
            return steps
    return _closest(node, conv, report)


def _tool(node: Node, conv: ToAevatar, report: Report) -> Node:
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
    else:
        conv.answer_steps.add(node.id)  # tool_call's output: the result as text
    return _step(node.id, "tool_call", params, "call", node.span,
                 (Attr("capability", _lit("tool")), Attr("name", _lit(name))))


def _sleep(node: Node, conv: ToAevatar, report: Report) -> Node:
    ms = node.attr("duration_ms")
    params = E.MapExpr((E.MapEntry(_lit("duration_ms"), _lit(str(ms.value) if isinstance(ms, E.Literal)
                                                              else "1000")),))
    report.lowered("sleep", STEP_RULES["sleep"], node.span)
    return _step(node.id, "delay", params, "sleep", node.span, (Attr("duration_ms", params.entries[0].value),))


def _assign(node: Node, conv: ToAevatar, report: Report) -> Node:
    """A dialect-3 ``assign`` or ``template``: an assign of the value's
    text. Exact when the value is text aevatar writes the same and nothing
    else (run variables) is written."""
    value = node.attr("value") if node.attr("value") is not None else node.attr("text")
    writes = node.attr("writes")
    text, why = conv.output_text(value, node.span)
    if writes is not None:
        why = "the run variable it writes has no aevatar form"
    if why is None:
        report.lowered(node.kind, STEP_RULES["text"], node.span)
        conv.text_steps.add(node.id)
    else:
        report.finding("TRN102", f"aevatar values are text; the assigned value is written as text: {why}",
                       node.span)
    return assign_step(node.id, text, node.span)


def _nothing(node: Node, conv: ToAevatar, report: Report) -> None:
    return None


def _trigger(node: Node, conv: ToAevatar, report: Report) -> None:
    report.lowered("trigger", "the run's start", node.span)


# IR operation -> how a step of it is written (control flow is the
# structure modules' work: branch, switch, exit, finish).
_STEP_LOWERINGS = {
    "call": _call,
    "sleep": _sleep,
    "assign": _assign,
    "noop": _nothing,
    "end": _nothing,
    "trigger": _trigger,
}


def assign_step(sid: str, text: E.Expr, span: Span, target: str | None = None) -> Node:
    entries = ((E.MapEntry(_lit("target"), _lit(target)),) if target else ()) + (E.MapEntry(_lit("value"), text),)
    return _step(sid, "assign", E.MapExpr(entries), "assign", span,
                 (Attr("value", text),) + ((Attr("writes", _lit(target)),) if target else ()))


def output_step(sid: str, value: E.Expr | None, conv: ToAevatar, report: Report, span: Span,
                what: str) -> Node:
    """An assign whose output is the run's output ``value``; reports when
    that is not the source's text."""
    text, why = conv.output_text(value, span)
    if why is None:
        report.lowered(what, STEP_RULES["output" if what == "output" else "exit"], span)
    else:
        report.finding("TRN102", f"aevatar's run output is one text: {why}", span)
    return assign_step(sid, text, span)


def failing_step(sid: str, span: Span) -> Node:
    """A step that fails whatever its input: a regex check that nothing
    matches (an empty negative lookahead, in .NET and Python alike)."""
    params = E.MapExpr((E.MapEntry(_lit("check"), _lit("regex")), E.MapEntry(_lit("pattern"), _lit("(?!)"))))
    return _step(sid, "guard", params, "assert", span, (Attr("on_fail", _lit("fail")),))


def conditional_step(sid: str, condition: E.Expr, span: Span) -> Node:
    params = E.MapExpr((E.MapEntry(_lit("condition"), condition),))
    return _step(sid, "conditional", params, "branch", span, ())


def _step(sid: str, kind: str, params: E.MapExpr, op: str, span: Span, extra: tuple) -> Node:
    return Node(sid, op, kind, span, attrs=(Attr("parameters", params), *extra))


def workflow_of(wf: Workflow, nodes: list[Node], edges: list, actors: tuple[Actor, ...] = ()) -> Workflow:
    return Workflow(name=wf.name, dialect=wf.dialect, semantics=PROFILE.name, nodes=tuple(nodes), edges=tuple(edges),
                    actors=actors,
                    entry=(nodes[0].id,) if nodes else (), terminal=nodes[-1].id if nodes else None,
                    inputs=(Param("input", T.STRING, "", True),), outputs=(Binding("output", T.STRING),),
                    description=wf.description or "", metadata={}, span=wf.span)
