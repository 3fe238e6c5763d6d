"""The kernel scheduling model (aevatar's step kernel) -> a WorkflowSkill step list.

The kernel's graph (``next``, document order, the branches of ``switch``
and ``conditional``) is walked from the first step, carrying the *value*
each step hands the next (aevatar's ``${input}``) as a WorkflowSkill
expression. A step that calls the host becomes a tool step and its value
``$steps.<id>.output``; a step that only computes text (an ``assign``, a
``transform`` that returns its input, a branch, which passes its input on)
becomes no step at all: its value is written where it is read (the next
step's input, a variable, the run's output).

A branch becomes ``conditional`` steps (one per key, in the kernel's
matching order) whose arms are the steps up to the branch's join, the
first step every path from it meets. After the join the value is the one
every arm hands on, or the conditional's output (the output of the arm's
last listed step); where the arms hand on different texts and no step
after the join calls the host, each arm runs on to the end and finishes
with an ``exit`` that carries the run's output. A guard that the input
contains a keyword is a conditional whose arm is an exit that fails the
run. Loops back (the body runs once) and error fallbacks are findings; a
graph that is not nested this way is a finding too, and is written in the
kernel's order with its branches passing their input on.

Every aevatar value is text, so a construct is lowered only where the
WorkflowSkill form gives the same text for every text the source allows:
aevatar's branch keys compare ignoring case by upper-casing, WorkflowSkill's
``contains`` by lower-casing, which agree on the characters of
:data:`NEEDLE_CHARS`. :data:`STEP_RULES` lists what each step becomes.
"""

from __future__ import annotations

import itertools

import attrs
from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.ops import END_NODE_ID
from flowc.ir.semantics import AEVATAR_TRANSFORM_OPS
from flowc.ir.span import Span
from flowc.ir.workflow import Attr, Binding, Edge, EdgeKind, Node, Param, Workflow
from flowc.runtime import aevatar_text as rta
from flowc.runtime import routing_run as rtr
from flowc.translation.control.kernel import KernelGraph as AevatarKernel
from flowc.translation.control.kernel import (
    StraightPath,
    capability_is,
    json_object,
    parameters_of,
    primitive,
    variable_sources,
    written_type,
)
from flowc.translation.fold import NotFoldable, fold
from flowc.translation.ids import IdRenamer
from flowc.translation.report import Report
from flowc.translation.workflowskill.flags import ID_DISALLOWED, PROFILE, STEP_ID
from flowc.translation.workflowskill.lowerings import NEEDLE_CHARS, STEP_RULES

__all__ = ["lower_kernel"]

# A key is sought as every spelling of it (one `contains` each): a bound.
_MAX_SPELLINGS = 8
# An op of the transform primitive that returns its input unchanged (the
# engine returns the input for an op it does not know).
_PASS_THROUGH_OPS = frozenset({"identity"})
# Transform ops computed at translation time when their input is known:
# those flowc's kernel implements as the engine does (json_extract's
# pretty-printing and the newer generation's ops are approximations).
_COMPUTED_OPS = frozenset({"count", "count_words", "take", "take_last", "join", "split", "distinct", "uppercase",
                           "lowercase", "trim", "reverse_lines"})
# Arms that each run on to the end repeat the steps after their join: a
# bound on the steps that may give.
_MAX_STEPS = 400


class Unstructured(Exception):
    """The kernel's graph has no nested form (a step that calls the host
    shared by the arms of different branches, or after a join the arms
    hand different text to); it is written in the kernel's order instead."""

    def __init__(self, node: Node | None) -> None:
        super().__init__(node.id if node else "")
        self.node = node


@attrs.frozen
class _State:
    """What a point of the run knows: the value handed on, the variables,
    the outputs of the steps run on every path here (None: not the same
    on every path)."""

    value: E.Expr
    variables: dict = attrs.field(factory=dict)
    outputs: dict = attrs.field(factory=dict)

    def evolve(self, **changes) -> _State:
        return attrs.evolve(self, **changes)


class AevatarToWfs:
    """aevatar references and templates -> WorkflowSkill values."""

    def __init__(self, report: Report, wf: Workflow) -> None:
        self.report = report
        self.step_ids, self.targets = variable_sources(wf)
        self.params: set[str] = set()   # run parameters: an input each (absent: the engine's fallback text)

    def _finding(self, message: str, span: Span, code: str = "TRN101") -> None:
        self.report.finding(code, message, span)

    def _known(self, table: dict, key: str, what: str, span: Span) -> E.Expr:
        value = table.get(key)
        if value is None:
            self._finding(f"{what} may not have run on every path here (aevatar reads it as empty text, "
                          "WorkflowSkill as nothing)", span, "TRN102")
            return E.Literal("", "string", span)
        return value

    def ref(self, e: E.Ref, state: _State) -> E.Expr:
        if e.root == "input":
            return state.value
        if e.root == "steps" and len(e.path) >= 2 and isinstance(e.path[1], E.Field):
            sid, field = e.path[0].name, e.path[1].name
            if field == "output" and len(e.path) == 2:
                return self._known(state.outputs, sid, f"step {sid!r}", e.span)
            if field == "json":
                out = self._known(state.outputs, sid, f"step {sid!r}", e.span)
                if isinstance(out, E.Ref) and out.root == "steps":
                    self.report.lowered("steps.<id>.json.<f>", "a field of the step's output", e.span)
                    return E.Ref("steps", out.path + e.path[2:], e.span)
        if e.root == "vars" and e.path and isinstance(e.path[0], E.Field) and len(e.path) == 1:
            name = e.path[0].name
            if name in state.variables:
                return self._known(state.variables, name, f"variable {name!r}", e.span)
            if name in self.step_ids:
                return self._known(state.outputs, name, f"step {name!r}", e.span)
            # a run parameter: the engine trims it and leaves it out when empty (then a name that
            # reads as a number or boolean is that text, any other ''), the input is read as given
            self.params.add(name)
            self._finding(f"run parameter {name!r}: aevatar trims it and reads an empty one as absent; "
                          "WorkflowSkill reads the input as it is given", e.span, "TRN102")
            return E.Ref("inputs", (E.Field(name),), e.span)
        self._finding(f"{e.root} {'.'.join(getattr(s, 'name', '[]') for s in e.path)} has no WorkflowSkill form",
                      e.span)
        return E.Literal("", "string", e.span)

    def value(self, e: E.Expr, state: _State) -> E.Expr:
        """A parameter value (text) as a WorkflowSkill value."""
        return _joined(self._parts(e, state), e.span)

    def _parts(self, e: E.Expr, state: _State) -> list[E.Expr]:
        if isinstance(e, E.Literal):
            return [e]
        if isinstance(e, E.Ref):
            return _parts_of(self.ref(e, state))
        if isinstance(e, E.Template):
            return [p for part in e.parts for p in self._parts(part, state)]
        if isinstance(e, E.Call) and e.func == "aevatar.concat":
            # every argument is text, so the concatenation is a template of them
            self.report.lowered("concat()", "the arguments side by side in a template", e.span)
            return [p for a in e.args for p in self._parts(a, state)]
        folded = self._folded(e, state)
        if folded is not None:
            self.report.lowered("a function of text known here", "its text, computed as the engine does", e.span)
            return [folded]
        name = getattr(e, "func", None) or getattr(e, "op", None) or type(e).__name__
        self._finding(f"{name} has no WorkflowSkill form (WorkflowSkill has no functions)", e.span)
        return [E.Literal("", "string", e.span)]

    def _folded(self, e: E.Expr, state: _State) -> E.Literal | None:
        """A function call whose arguments are text known on this path (a
        literal, or a reference to one): its text, as the engine's
        evaluator computes it. None when something is not known, or when
        the engine would throw."""
        scratch = Report(self.report.target)
        report, self.report = self.report, scratch
        try:
            constant = self._constant(e, state)
        finally:
            self.report = report
        if constant is None or scratch.diagnostics:
            return None
        try:
            return E.Literal(fold(constant), "string", e.span)
        except (rta.AevatarError, NotFoldable):
            return None

    def _constant(self, e: E.Expr, state: _State) -> E.Expr | None:
        """``e`` with every reference replaced by the literal it reads, or None."""
        if isinstance(e, E.Literal):
            return e
        if isinstance(e, E.Ref):
            value = self.ref(e, state)
            return value if isinstance(value, E.Literal) else None
        parts = [self._constant(c, state) for c in e.children()]
        if any(p is None for p in parts):
            return None
        if isinstance(e, E.Call):
            return attrs.evolve(e, args=tuple(parts))
        if isinstance(e, E.Conditional):
            return attrs.evolve(e, test=parts[0], then=parts[1], otherwise=parts[2])
        if isinstance(e, E.Template):
            return attrs.evolve(e, parts=tuple(parts))
        return None


def _parts_of(value: E.Expr) -> list[E.Expr]:
    if isinstance(value, E.Template):
        return list(value.parts)
    return [value]


def _joined(parts: list[E.Expr], span: Span) -> E.Expr:
    """Text parts as one value: a literal, a reference, or a template."""
    merged: list[E.Expr] = []
    for p in parts:
        if isinstance(p, E.Literal) and merged and isinstance(merged[-1], E.Literal):
            merged[-1] = E.Literal(str(merged[-1].value) + str(p.value), "string", merged[-1].span)
        elif not (isinstance(p, E.Literal) and p.value == ""):
            merged.append(p if not isinstance(p, E.Literal) else E.Literal(str(p.value), "string", p.span))
    if not merged:
        return E.Literal("", "string", span)
    if len(merged) == 1:
        return merged[0]
    return E.Template(tuple(merged), "wfs", False, span)


# ------------------------------------------------------------------ the kernel's graph
class KernelGraph(AevatarKernel):
    """The kernel's graph (:class:`flowc.translation.control.kernel.KernelGraph`)
    with the reachable steps in an order where each comes after every step
    that can precede it, and each step's join (``ipdom``): the first step
    every path from it meets."""

    def __init__(self, wf: Workflow, report: Report) -> None:
        super().__init__(wf, report, "no WorkflowSkill form", "no WorkflowSkill form")
        self.order = self.postorder[::-1]
        self.ipdom = self.post_dominators(self.order)


# ------------------------------------------------------------------ lowering
class _Lowering:
    def __init__(self, wf: Workflow, report: Report) -> None:
        self.wf = wf
        self.report = report
        self.conv = AevatarToWfs(report, wf)
        self.nodes: list[Node] = []        # in declaration order
        self.branch_edges: list[Edge] = []
        self.emitted: set[str] = set()
        # The WorkflowSkill id of an aevatar step: the same, or with the
        # characters a `$steps.<id>` reference cannot hold replaced.
        self.renamer = IdRenamer(STEP_ID, ID_DISALLOWED, report, {n.id for n in wf.nodes})
        self.wid = self.renamer.rename
        self.fresh = self.renamer.fresh

    # ------------------------------------------------------------ one step
    def step(self, node: Node, state: _State) -> tuple[list[str], _State]:
        """The WorkflowSkill step ids for ``node`` (none for a step that
        only computes text) and the state after it."""
        self.report.current = ""       # a step written as no step: its findings go on the document
        params = parameters_of(node)
        computes = _COMPUTING_STEPS.get(primitive(node))
        done = computes(self, node, params, state) if computes is not None else None
        if done is not None:
            return done
        if node.id in self.emitted:
            raise Unstructured(node)
        self.emitted.add(node.id)
        self.report.current = self.wid(node.id)
        wfs = self._host_step(node, params, written_type(node), state)
        self.nodes.append(wfs)
        out = E.Ref("steps", (E.Field(wfs.id), E.Field("output")))
        return [wfs.id], state.evolve(value=out, outputs={**state.outputs, node.id: out})

    def _assigned(self, node: Node, params: dict, state: _State) -> tuple[list[str], _State]:
        return [], self._assign(node, params, state)

    def _passes_on(self, node: Node, params: dict, state: _State) -> tuple[list[str], _State]:
        """An (unbranched) switch or conditional passes its input on."""
        return [], state.evolve(outputs={**state.outputs, node.id: state.value})

    def _transform(self, node: Node, params: dict, state: _State) -> tuple[list[str], _State] | None:
        """A transform that passes its input on, or of text known on the
        path; None: the engine computes it (a host step)."""
        if self._passes_through(node, params):
            self.report.lowered("transform", STEP_RULES["transform"], node.span)
            return [], state.evolve(outputs={**state.outputs, node.id: state.value})
        text = self._transformed(params, state)
        if text is None:
            return None
        self.report.lowered("transform", "of text known on the path: its text, computed as the engine does",
                            node.span)
        return [], state.evolve(value=text, outputs={**state.outputs, node.id: text})

    def _guard(self, node: Node, params: dict, state: _State) -> tuple[list[str], _State] | None:
        """A guard that the input contains a keyword (ignoring case): a
        conditional that ends the run `failed` when it does not, as the
        guard fails it (``on_fail: skip`` lets it pass). Other checks
        (blank text, a length in UTF-16 units, a regular expression, JSON)
        have no WorkflowSkill form: None."""
        check, keyword, on_fail = params.get("check"), params.get("keyword"), params.get("on_fail")
        if not (isinstance(check, E.Literal) and str(check.value).lower() == "contains"
                and isinstance(keyword, E.Literal) and not rta.is_blank(str(keyword.value))
                and (on_fail is None or isinstance(on_fail, E.Literal) and on_fail.value != "branch")
                and node.retry is None):
            return None
        passed = state.evolve(outputs={**state.outputs, node.id: state.value})
        word = str(keyword.value)
        if on_fail is not None and on_fail.value == "skip":
            self.report.lowered("guard", "nothing: a failed check is skipped", node.span)
            return [], passed
        self.report.lowered("guard", STEP_RULES["guard"], node.span)
        if isinstance(state.value, E.Literal):
            if rta.upper(word) in rta.upper(str(state.value.value)):
                return [], passed
            return [self._exit(None, node)], passed
        if node.id in self.emitted:
            raise Unstructured(node)
        self.emitted.add(node.id)
        sid = self.wid(node.id)
        missing = E.Unary("wfs.not", self._contains(state.value, word, node), node.span)
        self._conditional(sid, node, missing, [self._exit(None, node)], [])
        return [sid], passed

    def _transformed(self, params: dict, state: _State) -> E.Literal | None:
        """The transform's output when its input and parameters are text
        known on this path (None: not known, or the engine fails the step)."""
        known = {k: self.conv._folded(v, state) if not isinstance(v, E.Literal) else v for k, v in params.items()}
        if not isinstance(state.value, E.Literal) or any(v is None for v in known.values()) or (
                "operation" in known and "op" not in known):
            return None   # (flowc's kernel reads `op` only; the guide also names `operation`)
        op = known.get("op")
        if op is None or str(op.value).strip().lower() not in _COMPUTED_OPS:
            return None
        try:
            text = rtr.transform(str(op.value), str(state.value.value),
                                 {k: str(v.value) for k, v in known.items()})
        except rtr.StepFailure:
            return None
        return E.Literal(text, "string", state.value.span)

    def _passes_through(self, node: Node, params: dict) -> bool:
        op = params.get("op", params.get("operation", E.Literal("identity", "string")))
        if not isinstance(op, E.Literal):
            return False
        name = str(op.value).strip().lower()
        return name in _PASS_THROUGH_OPS or name not in AEVATAR_TRANSFORM_OPS

    def _assign(self, node: Node, params: dict, state: _State) -> _State:
        raw = params.get("value", E.Literal("", "string"))
        # the kernel: a value that starts with `$` stands for the step input
        value = self.conv.value(raw, state)
        first = value.parts[0] if isinstance(value, E.Template) else value
        if isinstance(first, E.Literal) and str(first.value)[:1] != "$" and (str(first.value) or first is value):
            pass                       # text that does not start with `$`
        elif isinstance(first, E.Literal) and str(first.value).startswith("$"):
            value = state.value
        elif _same(value, state.value):
            pass                       # the input itself, whether or not it starts with `$`
        else:
            self.report.finding("TRN102", "an assign value computed at run time stands for the step input when it "
                                "starts with `$`; WorkflowSkill cannot test that", node.span)
        span = node.span
        target = node.attr("writes")
        variables = state.variables
        if isinstance(target, E.Literal) and isinstance(target.value, str) and target.value.strip():
            variables = {**variables, target.value: value}
        elif target is not None and not isinstance(target, E.Literal):
            self.report.finding("TRN101", "an assign target computed at run time has no WorkflowSkill form", span)
        self.report.lowered("assign", STEP_RULES["assign"], span)
        return state.evolve(value=value, variables=variables, outputs={**state.outputs, node.id: value})

    def _host_step(self, node: Node, params: dict, written: str, state: _State) -> Node:
        report, conv = self.report, self.conv
        inputs: list[Binding] = []
        if node.op == "call" and capability_is(node, "tool"):
            name = node.attr("name")
            tool = name.value if isinstance(name, E.Literal) else ""
            args = params.get("arguments")
            data = json_object(args.value) if isinstance(args, E.Literal) else None
            if data is not None:
                inputs = [Binding(k, _type(v), E.Literal(v, _kind(v))) for k, v in data.items()]
                report.lowered("tool_call", STEP_RULES["tool_call"], node.span)
            else:
                report.finding("TRN102", "tool_call arguments that are not a constant JSON object are parsed at run "
                               "time by aevatar", node.span)
                inputs = [Binding("arguments", T.STRING, conv.value(args, state) if args is not None
                                  else state.value)]
            report.finding("TRN102", "an aevatar step's output is text (a tool's JSON result serialised); in "
                           "WorkflowSkill it is the result itself", node.span)
        elif node.op == "call" and capability_is(node, "llm"):
            tool = f"llm.{node.actor or 'assistant'}"
            prefix = params.get("prompt_prefix")
            inputs = [Binding("prompt", T.STRING, state.value)]
            if prefix is not None:
                inputs.insert(0, Binding("prompt_prefix", T.STRING, conv.value(prefix, state)))
            report.finding("TRN104", "llm_call: WorkflowSkill has no roles or LLM steps; written as a tool step "
                           f"{tool!r}, which the host is asked for by another name and with other arguments",
                           node.span)
        else:
            tool = written
            report.finding("TRN101", f"{tool}: this aevatar primitive has no WorkflowSkill form; written as a tool "
                           "step of that name", node.span)
        if node.retry is not None:
            report.finding("TRN103", "retry: aevatar retries every failure but a timeout; WorkflowSkill only tool "
                           "errors", node.span)
        return Node(self.wid(node.id), "call", "tool", node.span, node.description,
                    attrs=(Attr("capability", E.Literal("tool", "string")), Attr("name", E.Literal(tool))),
                    inputs=tuple(inputs))

    # ------------------------------------------------------------ branches
    def branch(self, node: Node, state: _State) -> tuple[dict[str | None, list[str]], list]:
        """How ``node`` chooses: {target: [key, ...]} in matching order and
        the tests (key, WorkflowSkill condition) that pick each key; a
        constant choice has one target and no tests."""
        params = parameters_of(node)
        prim = primitive(node)
        graph = self.graph
        keys = graph.routes[node.id]
        subject = state.value
        if prim == "conditional":
            condition = self._resolved(params.get("condition", E.Literal("default", "string")), state)
            if not isinstance(condition, E.Literal):
                self.report.finding("TRN101", "a computed conditional test (read as true/false/1/0 at run time, "
                                    "else sought in the input) has no WorkflowSkill form; written as `true`",
                                    node.span)
                return {graph.route(node.id, "true"): ["true"]}, []
            c = str(condition.value)
            if rta.try_parse_bool(c) is not None or c in ("1", "0", ""):
                key = rta.conditional_test(c, "")
                self.report.lowered("conditional", "the branch its constant condition always takes", node.span)
                return {graph.route(node.id, key): [key]}, []
            if isinstance(subject, E.Literal):
                key = rta.conditional_test(c, str(subject.value))
                self.report.lowered("conditional", "the branch its constant input always takes", node.span)
                return {graph.route(node.id, key): [key]}, []
            tests = [("true", self._contains(subject, c, node))]
            self.report.lowered("conditional", STEP_RULES["conditional"], node.span)
            return self._targets(node.id, ["true", "false"]), tests
        on = params.get("on")
        on = None if on is None or _is_input(on) else self._resolved(on, state)
        if isinstance(on, E.Literal) and not rta.is_blank(str(on.value)):
            key = rtr.switch_key(str(on.value), "", keys)
            self.report.lowered("switch", "the branch its constant key always takes", node.span)
            return {graph.route(node.id, key): [key]}, []
        if on is not None and not isinstance(on, E.Literal) and not _same(on, subject):
            self.report.finding("TRN101", "a switch on a computed value (the input when it is blank) has no "
                                "WorkflowSkill form; the input is tested", node.span)
        if isinstance(subject, E.Literal):
            key = rtr.switch_key(None, str(subject.value), keys)
            self.report.lowered("switch", "the branch its constant input always takes", node.span)
            return {graph.route(node.id, key): [key]}, []
        self._keys_exact(keys, node)
        tests = [(k, self._contains(subject, k, node)) for k in keys if k != "_default"]
        self.report.lowered("switch", STEP_RULES["switch"], node.span)
        return self._targets(node.id, [k for k, _ in tests] + ["_default"]), tests

    def _resolved(self, e: E.Expr, state: _State) -> E.Expr:
        """A parameter's text as far as it is known here (a literal when it
        is constant on this path), without findings for what has no form."""
        scratch = Report(self.report.target)
        conv, self.conv.report = self.conv.report, scratch
        try:
            value = self.conv.value(e, state)
        finally:
            self.conv.report = conv
        return value if not scratch.diagnostics else e

    def _targets(self, sid: str, keys: list[str]) -> dict[str | None, list[str]]:
        out: dict[str | None, list[str]] = {}
        for k in keys:
            out.setdefault(self.graph.route(sid, k), []).append(k)
        return out

    def _contains(self, subject: E.Expr, needle: str, node: Node) -> E.Expr:
        """``subject contains needle`` as aevatar finds it: one `contains`
        per spelling of the needle (:data:`NEEDLE_CHARS`), or a finding."""
        if not isinstance(subject, E.Ref):
            self.report.finding("TRN101", "a branch on text a template computes has no WorkflowSkill form (a "
                                "condition is an expression, not a template)", node.span)
            return E.Literal(False, "bool")
        spellings = [needle]
        if set(needle) <= NEEDLE_CHARS.keys():
            spellings = ["".join(p) for p in itertools.product(*(NEEDLE_CHARS[c] for c in needle))]
        if len(spellings) > _MAX_SPELLINGS or not set(needle) <= NEEDLE_CHARS.keys():
            spellings = [needle]
            self.report.finding("TRN102", f"{needle!r}: aevatar compares ignoring case by upper-casing, "
                                "WorkflowSkill's `contains` by lower-casing; they differ on some characters (K "
                                "and the Kelvin sign, İ and i ...) for keys with characters other than printable "
                                "ASCII but i and k, or with more than three s", node.span)
        test: E.Expr | None = None
        for text in spellings:
            found = E.Binary("wfs.contains", subject, E.Literal(text, "string"), node.span)
            test = found if test is None else E.Binary("wfs.or", test, found, node.span)
        return test

    def _keys_exact(self, keys: list[str], node: Node) -> None:
        for k in keys:
            if k == "_default":
                continue
            if k == "" or k[0] in rta.WHITESPACE or k[-1] in rta.WHITESPACE:
                self.report.finding("TRN102", f"switch key {k!r} is empty or starts or ends with white space; the "
                                    "switch trims its value, `contains` does not", node.span)
        upper = [rta.upper(k) for k in keys]
        for i, a in enumerate(upper):
            if any(i != j and a in b for j, b in enumerate(upper)):
                self.report.finding("TRN102", f"switch key {keys[i]!r} is part of another key: the switch prefers a "
                                    "key equal to its value, `contains` tests take the first key found", node.span)
                break

    # ------------------------------------------------------------ the walk
    def walk(self, start: str | None, stop: str | None, state: _State) -> tuple[list[str], _State | None]:
        """The steps from ``start`` up to ``stop`` (not included) as a list
        of WorkflowSkill step ids, and the state at ``stop`` (None: every
        path ended with an exit)."""
        items: list[str] = []
        current = start
        graph = self.graph
        while current is not None and current != stop:
            node = graph.by_id[current]
            if current not in graph.routes:
                ids, state = self.step(node, state)
                items += ids
                current = graph.following(current)
                continue
            self.report.current = ""
            targets, tests = self.branch(node, state)
            state = state.evolve(outputs={**state.outputs, node.id: state.value})
            if len(targets) == 1:
                current = next(iter(targets))
                continue
            join = graph.ipdom.get(current)
            arms: dict[str | None, tuple[list[str], _State | None]] = {
                t: self.walk(t, join, state) for t in targets}
            merged = self._merge(node, targets, tests, arms, join)
            items += merged[0]
            if merged[1] is None:
                return items, None
            state = merged[1]
            current = join
        if current is None and stop is not None:
            raise Unstructured(self.graph.by_id.get(start or ""))   # a path that misses the join
        return items, state

    def _merge(self, node: Node, targets, tests, arms, join: str | None) -> tuple[list[str], _State | None]:
        """The conditional steps of a branch and the state after its join."""
        ended = [s for _, s in arms.values() if s is None]
        values = [s.value for _, s in arms.values() if s is not None]
        if not ended and all(_same(v, values[0]) for v in values):
            ids = self._chain(node, targets, tests, {t: a[0] for t, a in arms.items()})
            return ids, self._meet(values[0], [s for _, s in arms.values()])
        if not ended and all(items and _same(s.value, E.Ref("steps", (E.Field(items[-1]), E.Field("output"))))
                             for items, s in arms.values()):
            ids = self._chain(node, targets, tests, {t: a[0] for t, a in arms.items()})
            self.report.lowered("a join after a branch", "the conditional's output (its arm's last step's output)",
                                node.span)
            value = E.Ref("steps", (E.Field(ids[0]), E.Field("output")))
            return ids, self._meet(value, [s for _, s in arms.values()])
        if not self._computes_only(join):
            raise Unstructured(node)
        # the arms hand on different text and nothing after the join calls the host:
        # each arm runs on to the end and finishes the run with its own output
        finished: dict[str | None, list[str]] = {}
        for t, (items, s) in arms.items():
            if s is not None:
                tail, s = self.walk(join, None, s)
                items = items + tail
            if s is not None:
                items = items + [self._exit(s, node)]
            finished[t] = items
        self.report.lowered("a branch whose arms hand on different text", "each arm runs on to the end and "
                            "finishes with an exit carrying the run's output", node.span)
        return self._chain(node, targets, tests, finished), None

    def _meet(self, value: E.Expr, states: list[_State]) -> _State:
        """The state after a join: what every arm agrees on."""
        def agreed(tables: list[dict]) -> dict:
            keys = set().union(*tables)
            return {k: (tables[0].get(k) if all(_same(t.get(k), tables[0].get(k)) for t in tables) else None)
                    for k in keys}
        return _State(value, agreed([s.variables for s in states]), agreed([s.outputs for s in states]))

    def _computes_only(self, start: str | None) -> bool:
        """Whether no step from ``start`` on calls the host (each would run once per arm)."""
        seen: set[str] = set()
        todo = [start] if start is not None else []
        while todo:
            sid = todo.pop()
            if sid in seen:
                continue
            seen.add(sid)
            node = self.graph.by_id[sid]
            if sid not in self.graph.routes and node.op != "assign" and not (
                    node.op == "transform.apply" and primitive(node) == "transform"
                    and self._passes_through(node, parameters_of(node))):
                return False
            todo += self.graph.successors(sid)
        return True

    def _exit(self, state: _State | None, node: Node) -> str:
        """An exit that ends the run with ``state``'s value as its output
        (None: an exit that fails the run)."""
        sid = self.fresh("finish" if state is not None else "fail")
        if state is None:
            attrs = (Attr("status", E.Literal("failed", "string")),)
        else:
            attrs = (Attr("status", E.Literal("success", "string")),
                     Attr("output", E.MapExpr((E.MapEntry(E.Literal("output", "string"), state.value),))))
        self.nodes.append(Node(sid, "exit", "exit", node.span, attrs=attrs))
        return sid

    def _chain(self, node: Node, targets: dict, tests: list, arms: dict[str | None, list[str]]) -> list[str]:
        """Conditional steps testing the keys in order (a key is tested
        only when the keys before it were not found); the outermost gets
        the branch step's id. Returns the ids to list where the branch stood."""
        key_target = {k: t for t, ks in targets.items() for k in ks}
        default = key_target.get("_default", key_target.get("false"))
        specs: dict[int, list] = {}

        def build(i: int) -> list[str]:
            if i == len(tests):
                return list(arms[default])
            key, condition = tests[i]
            then, rest = arms[key_target[key]], build(i + 1)
            if then == rest:   # (a key that leads to the default is still tested: it stops the later tests)
                return rest
            if not then:  # `then` may not be empty: test that the key is not found
                condition, then, rest = E.Unary("wfs.not", condition, condition.span), rest, []
            specs[i] = [condition, then, rest]
            return [f"\0{i}"]

        items = build(0)
        first = self.wid(node.id)
        names = {f"\0{i}": (first if n == 0 and first not in self.declared() else self.fresh(first))
                 for n, i in enumerate(sorted(specs))}
        for i in sorted(specs, reverse=True):   # inner first: each is declared before its arms
            condition, then, rest = specs[i]
            self._conditional(names[f"\0{i}"], node, condition, [names.get(t, t) for t in then],
                              [names.get(t, t) for t in rest])
        return [names.get(t, t) for t in items]

    def declared(self) -> set[str]:
        return {n.id for n in self.nodes}

    def _conditional(self, sid: str, node: Node, condition: E.Expr, then: list[str], other: list[str]) -> None:
        # a branch step must be declared after its conditional: insert before the first arm step
        if len(self.nodes) > _MAX_STEPS:
            raise Unstructured(node)
        first = min((i for i, n in enumerate(self.nodes) if n.id in set(then) | set(other)), default=len(self.nodes))
        self.nodes.insert(first, Node(sid, "branch", "conditional", node.span, node.description,
                                      attrs=(Attr("condition", condition),)))
        for label, ids in (("then", then), ("else", other)):
            for order, target in enumerate(ids):
                self.branch_edges.append(Edge(sid, target, EdgeKind.BRANCH, label, order, node.span))

    # ------------------------------------------------------------ the workflow
    def run(self, graph: KernelGraph | StraightPath) -> Workflow:
        """The workflow, or :class:`Unstructured` when ``graph`` has no nested form."""
        wf, report = self.wf, self.report
        self.graph = graph
        start = _State(E.Ref("inputs", (E.Field("input"),)))
        items, end = self.walk(graph.order[0] if graph.order else None, None, start)
        report.current = ""
        if not items:
            # WorkflowSkill needs a step: an exit that ends the run with its output
            items, end = [self._exit(end, wf)], None
        nodes = [*self.nodes, Node(END_NODE_ID, "end", "end", wf.span)]
        exits = {n.id for n in self.nodes if n.op == "exit"}
        edges = [Edge(a, b, EdgeKind.SEQUENCE) for a, b in itertools.pairwise([*items, END_NODE_ID]) if a not in exits]
        edges += self.branch_edges
        if end is not None:
            outputs = (Binding("output", T.STRING, end.value),)
            report.lowered("the run's output", "the output `output` (the value the last step hands on)", wf.span)
        else:
            outputs = (Binding("output", T.STRING),)
        inputs = [Param("input", T.STRING, "", True, "the run prompt")]
        # a missing run parameter: the engine's text
        inputs += [Param(p, T.STRING, rta.var({}, p), True, "a run parameter") for p in sorted(self.conv.params)]
        return Workflow(name=wf.name, dialect=wf.dialect, semantics=PROFILE.name, nodes=tuple(nodes),
                        edges=tuple(edges), entry=(items[0],), terminal=END_NODE_ID,
                        inputs=tuple(inputs), outputs=outputs, description=wf.description or None,
                        metadata={"frontmatter": {"name": wf.name, **({"description": wf.description}
                                                                      if wf.description else {})}},
                        span=wf.span)


# aevatar primitive -> a lowering that writes the step as no WorkflowSkill
# step, only computing text (None: the step is a host step after all).
_COMPUTING_STEPS = {
    "assign": _Lowering._assigned,
    "guard": _Lowering._guard,
    "switch": _Lowering._passes_on,
    "conditional": _Lowering._passes_on,
    "transform": _Lowering._transform,
}


def _same(a: E.Expr | None, b: E.Expr | None) -> bool:
    """The same value (wherever in the source it was written)."""
    if a is None or b is None:
        return a is b
    return E.strip_spans(a) == E.strip_spans(b)


def _is_input(e: E.Expr) -> bool:
    """``${input}`` or ``${trim(input)}``: the switch trims its value anyway."""
    if isinstance(e, E.Template) and len(e.parts) == 1:
        e = e.parts[0]
    if isinstance(e, E.Call) and e.func == "aevatar.trim" and len(e.args) == 1:
        e = e.args[0]
    return isinstance(e, E.Ref) and e.root == "input" and not e.path


def lower_kernel(wf: Workflow, report: Report) -> Workflow:
    # the nested form is tried on a report of its own, which is kept only when it succeeds
    scratch = Report(report.target, report.strict)
    try:
        out = _Lowering(wf, scratch).run(KernelGraph(wf, scratch))
    except Unstructured as exc:
        scratch = Report(report.target, report.strict)
        graph = KernelGraph(wf, scratch)   # its findings (loops, fallbacks) still hold
        where = exc.node or wf
        scratch.finding("TRN101", f"step {where.id if exc.node else wf.name!r}: a branch whose arms share steps with "
                        "other branches, or hand on different text to steps that call the host, has no nested "
                        "WorkflowSkill form; the steps are written in the order the kernel runs them without choices "
                        "(a branch passes its input on)", where.span)
        out = _Lowering(wf, scratch).run(StraightPath(wf, graph.order))
    report.diagnostics.extend(scratch.diagnostics)
    report.lowerings.extend(scratch.lowerings)
    for node_id, lines in scratch.comments.items():
        for line in lines:
            report.comment(node_id, line)
    return out


def _kind(v) -> str:
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


def _type(v) -> T.Type:
    return {"null": T.OBJECT, "bool": T.BOOL, "int": T.INT, "float": T.FLOAT, "string": T.STRING,
            "list": T.ARRAY, "object": T.OBJECT}[_kind(v)]
