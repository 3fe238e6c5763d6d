"""The instruction-catalog front end (agentd workflow dialect 3): documents -> IR.

Reads the three carriers (:mod:`.carriers`), checks every step strictly
against the node catalog (:mod:`.catalog`: the kind's fields plus the
common ones, "did you mean" on typos), applies the catalog's cross-field
rules, compiles CEL (``when``, ``CEL:``-prefixed values, the fields steps
evaluate themselves) and ``{{ }}`` templates, checks the dependency graph
of every body (targets, siblings-only, triggers and finish outside bodies,
cycles, nesting, caps), and lowers each workflow to the IR described in
docs/ARCHITECTURE.md section 3.3.

Top-level graph properties that are not dialect-specific (reachability
from the triggers, cycles, the terminal) are left to
:mod:`flowc.compiler.analyze`, which reads them from the IR.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

from flowc.compiler.instruction import catalog as CAT
from flowc.compiler.instruction import config_vars
from flowc.compiler.instruction.carriers import Carried, locate
from flowc.compiler.instruction.cel import CelSyntaxError, parse_cel
from flowc.compiler.instruction.templates import TemplateError, has_placeholder, parse_template
from flowc.compiler.numbers import shown as shown_number
from flowc.compiler.suggest import did_you_mean
from flowc.compiler.yamlsrc import YMap, YNode, YScalar, YSeq, out_of_range_int, type_name
from flowc.ir import expr as E
from flowc.ir import graph as G
from flowc.ir import types as T
from flowc.ir.diagnostics import Diagnostic, DiagnosticSink, error
from flowc.ir.limit_checks import expr_limit_findings
from flowc.ir.limits import MAX_DECLARED_ITERATIONS, MAX_DURATION_MS, MAX_STEPS
from flowc.ir.span import Span
from flowc.ir.workflow import (
    Attr,
    Binding,
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

__all__ = ["DIALECT", "compile_instruction", "compile_instruction_all", "parse_duration_ms", "workflow_names"]

DIALECT = "instruction"
# The schema's pattern ends in `$`, which in Python also matches before a final
# line break ("s\n" passed as an id): Python ends it at \Z.
_ID = re.compile(CAT.ID_PATTERN.removesuffix("$") + r"\Z")
_CEL_PREFIX = re.compile(r"^\s*CEL:\s*")
_DURATION_PART = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h|d)?")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, None: 1000}
DEFAULT_TIMEOUT_MS = 600_000

# The roots a workflow expression may name (instruction-dialect.md 2.5-2.6)
# and the names CEL itself defines (type names).
_CEL_TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map",
                             "null_type", "type"})
ROOTS = frozenset({"inputs", "steps", "vars", "run", "env", "memory", "signals"}) | _CEL_TYPE_NAMES
BODY_ROOTS = frozenset({"item", "index", "batch", "iteration", "branch"})
TRIGGER_INPUT_ROOTS = frozenset({"payload", "env"}) | _CEL_TYPE_NAMES
WAIT_CONDITION_ROOTS = frozenset({"runs", "subagents", "now_ms", "signals"}) | _CEL_TYPE_NAMES
LOOP_UNTIL_ROOTS = frozenset({"outcome", "last"}) | _CEL_TYPE_NAMES
# A trigger's own fields (a webhook's `signal`, its `filter`) are read
# against the trigger payload's top-level keys, never the step scope: agentd
# renders a webhook's `signal:` over {method, path, headers, body, raw_body}.
# The other shapes are what agentd's starts fire with; a trigger not listed
# fires with a payload the caller chooses, so any name is accepted there.
TRIGGER_PAYLOAD_ROOTS: dict[str, frozenset[str]] = {
    "webhook": frozenset({"method", "path", "headers", "body", "raw_body"}),
    "loop": frozenset({"iteration"}),
    "schedule": frozenset({"scheduled_for", "iteration"}),
    "signal": frozenset({"signal", "payload"}),
    "event": frozenset({"event", "payload"}),
    "subscribe": frozenset({"server", "uri", "content"}),
    "stream": frozenset({"id", "stream", "subject", "seq", "ts", "source", "correlation", "data"}),
}

# Fields a step evaluates itself: CEL (prefix optional) or nested graphs; never templated.
_CEL_FIELDS = {
    ("assert", "condition"), ("map", "expr"), ("filter", "expr"), ("reduce", "expr"),
    ("iterate", "while"), ("iterate", "until"), ("wait", "condition"), ("think", "check"),
    ("loop", "until"), ("subscribe", "filter"), ("signal", "filter"), ("event", "filter"),
    ("webhook", "filter"),
}
# Fields kept verbatim (schemas and other data the host reads as is).
_RAW_FIELDS = {"output_schema", "schema", "otel", "output_contract", "respond", "auth", "sign",
               "payment", "breaker", "rate", "limits"}
_FINISH_STATUSES = ("completed", "failed", "refused", "cancelled")
_ON_REPLAY = ("retry", "skip", "fail")
_ASSIGN_MODES = ("overwrite", "append", "merge", "union")
_SORT_ORDERS = ("asc", "desc")
_LOOP_BODY_KINDS = ("foreach", "batch", "parallel", "race")
_TOP_LEVEL_OLD = {"start": "dialect 1/2 (`start`)", "nodes": "dialect 1/2 (`nodes`)",
                  "triggers": "another dialect (`triggers`)"}


def parse_duration_ms(node: YNode | None) -> int | None:
    """A duration in ms: ``"30s"``, ``"5m"``, ``"2h"``, ``"500ms"``, ``"1h30m"``,
    bare seconds (a number or digits), or ``{ms: n}``; None when invalid.
    A duration beyond ``MAX_DURATION_MS`` (an infinity included) comes back
    as ``MAX_DURATION_MS + 1``, for the caller to report as ``LIM105``."""
    if isinstance(node, YMap):
        ms = node.get("ms")
        if len(node.items) == 1 and isinstance(ms, YScalar) and isinstance(ms.value, (int, float)) \
                and not isinstance(ms.value, bool) and ms.value >= 0 \
                and (isinstance(ms.value, int) or out_of_range_int(ms)):
            return _bounded_ms(ms.value)
        return None
    if not isinstance(node, YScalar):
        return None
    v = node.value
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return _bounded_ms(v * 1000) if v >= 0 else None
    if not isinstance(v, str) or not v.strip():
        return None
    total, pos = 0.0, 0
    text = v.strip()
    while pos < len(text):
        m = _DURATION_PART.match(text, pos)
        if not m or m.end() == pos:
            return None
        total += float(m.group(1)) * _UNIT_MS[m.group(2)]
        pos = m.end()
        if m.group(2) is None and pos < len(text):
            return None
    return _bounded_ms(total)


def _bounded_ms(ms: float) -> int | None:
    """Milliseconds as an int, capped at ``MAX_DURATION_MS + 1`` (so that an
    infinity or a 4,000-digit number never reaches ``int()``); NaN is None."""
    if math.isnan(ms):
        return None
    return int(ms) if ms <= MAX_DURATION_MS else MAX_DURATION_MS + 1


class _Scope:
    """The steps of one graph (the top level or one body) and what encloses it."""

    def __init__(self, parent: _Scope | None, depth: int, owner_kind: str | None, ids: Iterable[str],
                 roots: frozenset[str], name: str) -> None:
        self.parent = parent
        self.depth = depth
        self.owner_kind = owner_kind
        self.ids = set(ids)
        self.roots = roots
        self.name = name

    def knows(self, step_id: str) -> bool:
        scope: _Scope | None = self
        while scope is not None:
            if step_id in scope.ids:
                return True
            scope = scope.parent
        return False

    def all_ids(self) -> set[str]:
        out: set[str] = set()
        scope: _Scope | None = self
        while scope is not None:
            out |= scope.ids
            scope = scope.parent
        return out

    def inside(self, kinds: Iterable[str]) -> str | None:
        scope: _Scope | None = self
        wanted = set(kinds)
        while scope is not None:
            if scope.owner_kind in wanted:
                return scope.owner_kind
            scope = scope.parent
        return None


class _Step:
    __slots__ = ("body", "id", "key", "kind", "spec")

    def __init__(self, step_id: str, key: YScalar, body: YMap, kind: str, spec) -> None:
        self.id = step_id
        self.key = key
        self.body = body
        self.kind = kind
        self.spec = spec


class _KindFields(NamedTuple):
    """What a kind's field reader works with (InstructionFrontEnd._kind_fields)."""

    info: _Step
    scope: _Scope
    roots: frozenset[str] | None     # the names the kind's expressions may read
    add: Callable[[str, E.Expr, YNode], None]
    edges: list[Edge]


class InstructionFrontEnd:
    def __init__(self, text: str, file: str) -> None:
        self.text = text.replace("\r\n", "\n")
        self.file = file
        self.lines = self.text.split("\n")
        self.sink = DiagnosticSink()
        self.own: list[tuple[str | None, Workflow | None, list[Diagnostic]]] = []

    # ------------------------------------------------------------------ entry
    def compile_all(self) -> list[Workflow]:
        carried, diags = locate(self.text, self.file)
        self.sink.extend(diags)
        workflows = []
        for item in carried:
            first = len(self.sink.items)
            wf = self._workflow(item)
            if wf is not None:
                workflows.append(wf)
            # Each workflow's own findings, so one can be compiled while
            # another in the same document has errors.
            self.own.append((wf.name if wf is not None else _carried_name(item), wf, self.sink.items[first:]))
        seen: dict[str, Workflow] = {}
        for wf in workflows:
            if wf.name in seen:
                self.sink.warning("INS111", f"a second workflow named {wf.name!r} in this document; a host "
                                  "loading both keeps one", wf.span,
                                  f"the first is at line {seen[wf.name].span.line}")
            else:
                seen[wf.name] = wf
        return workflows

    # ------------------------------------------------------------------ helpers
    def _scalar_origin(self, scalar: YScalar, skip: int = 0) -> tuple[Span, bool]:
        """Where the characters of a string scalar start (after ``skip``
        characters of its value), and whether they map one to one."""
        s = scalar.span
        if s.line != s.end_line or not (1 <= s.line <= len(self.lines)):
            return s, False
        source = self.lines[s.line - 1][s.col - 1:s.end_col - 1]
        value = scalar.value if isinstance(scalar.value, str) else str(scalar.value)
        offset = None
        if source == value:
            offset = 0
        elif len(source) >= 2 and source[0] == source[-1] and source[0] in "'\"" \
                and source[1:-1] == value:
            offset = 1
        if offset is None:
            return s, False
        start = s.col + offset + skip
        return Span(s.file, s.line, start, s.line, s.col + offset + len(value)), True

    def _error(self, code: str, message: str, span: Span, *notes: str) -> None:
        self.sink.error(code, message, span, *(n for n in notes if n))

    def _warning(self, code: str, message: str, span: Span, *notes: str) -> None:
        self.sink.warning(code, message, span, *(n for n in notes if n))

    def _string(self, node: YNode | None) -> str | None:
        if isinstance(node, YScalar) and isinstance(node.value, str):
            return node.value
        return None

    def _expect_map(self, node: YNode | None, what: str) -> YMap | None:
        if node is None:
            return None
        if not isinstance(node, YMap):
            self._error("INS102", f"{what} must be a mapping, not {type_name(node)}", node.span)
            return None
        return node

    def _enum(self, node: YNode | None, allowed: tuple[str, ...], what: str) -> str | None:
        if node is None:
            return None
        value = self._string(node)
        if value in allowed:
            return value
        shown = repr(node.value) if isinstance(node, YScalar) else type_name(node)
        self._error("INS105", f"{what} must be one of {', '.join(allowed)}, not {shown}", node.span,
                    did_you_mean(value, allowed) if value else None)
        return None

    def _int(self, node: YNode | None, what: str, low: int | None = None, high: int | None = None,
             code: str = "INS105") -> int | None:
        if node is None:
            return None
        v = node.value if isinstance(node, YScalar) else None
        if out_of_range_int(node):
            self._error("LIM103", f"{what} {shown_number(node.text)} is out of range (more than 64 bits)",
                        node.span)
            return None
        if not isinstance(v, int) or isinstance(v, bool):
            self._error("INS102", f"{what} must be an integer, not {type_name(node)}", node.span)
            return None
        if low is not None and v < low:
            self._error(code, f"{what} must be at least {low}, not {v}", node.span)
            return None
        if high is not None and v > high:
            self._error(code, f"{what} is {v}; the limit is {high}", node.span)
            return None
        return v

    def _duration(self, node: YNode | None, what: str) -> int | None:
        if node is None:
            return None
        ms = parse_duration_ms(node)
        if ms is not None and ms > MAX_DURATION_MS:
            text = node.text if isinstance(node, YScalar) else "this duration"
            self._error("LIM105", f"{what} {shown_number(text)} exceeds {MAX_DURATION_MS}ms (about 24.8 days)",
                        node.span)
            return None
        if ms is None:
            shown_value = repr(node.value) if isinstance(node, YScalar) else type_name(node)
            self._error("INS108", f"{what} is not a duration: {shown_value}", node.span,
                        'write "30s", "5m", "2h", "500ms", bare seconds or {ms: n}')
        return ms

    # ------------------------------------------------------------------ expressions
    def _cel_syntax(self, node: YScalar) -> None:
        """Only the syntax of a CEL field (of a step that is otherwise dropped)."""
        text = node.value
        prefix = _CEL_PREFIX.match(text)
        skip = prefix.end() if prefix else 0
        origin, exact = self._scalar_origin(node, skip)
        try:
            parse_cel(text[skip:], origin, exact)
        except CelSyntaxError as exc:
            self._error("CEL201", f"CEL syntax error: {exc.message}", exc.span if exc.span.known else node.span)

    def _cel(self, node: YNode, roots: frozenset[str] | None, scope: _Scope | None,
             lambda_vars: frozenset[str] = frozenset()) -> E.Expr:
        """A field that is always CEL (an optional ``CEL:`` prefix is trimmed)."""
        if isinstance(node, YScalar) and isinstance(node.value, bool):
            return E.Literal(node.value, "bool", node.span)
        text = self._string(node)
        if text is None:
            self._error("INS102", f"a CEL expression must be a string, not {type_name(node)}", node.span)
            return E.Literal(None, "null", node.span)
        prefix = _CEL_PREFIX.match(text)
        skip = prefix.end() if prefix else 0
        origin, exact = self._scalar_origin(node, skip)
        try:
            expr = parse_cel(text[skip:], origin, exact)
        except CelSyntaxError as exc:
            message = exc.message if exc.code != "CEL201" else f"CEL syntax error: {exc.message}"
            self._error(exc.code, message, exc.span if exc.span.known else node.span)
            return E.Literal(None, "null", node.span)
        if self._beyond_limits(expr, node):
            return E.Literal(None, "null", node.span)
        self._check_expr(expr, roots, scope, "CEL203", lambda_vars)
        return expr

    def _beyond_limits(self, expr: E.Expr, node: YNode) -> bool:
        """Reports an expression beyond LIM101/LIM102 here, before anything
        walks it (the walks recurse per level)."""
        found = expr_limit_findings(expr, node.span)
        for d in found:
            self._error(d.code, d.message, d.span, *d.notes)
        return any(d.is_error for d in found)

    def _template(self, node: YScalar, roots: frozenset[str], scope: _Scope | None,
                  force_string: bool = False) -> E.Expr:
        text = node.value
        origin, exact = self._scalar_origin(node)
        try:
            expr = parse_template(text, origin, exact)
        except TemplateError as exc:
            self._error("INS501", f"template error: {exc.message}", exc.span if exc.span.known else node.span)
            return E.Literal(text, "string", node.span)
        if self._beyond_limits(expr, node):
            return E.Literal(text, "string", node.span)
        if force_string and isinstance(expr, E.Template) and expr.typed_whole:
            expr = E.Template(expr.parts, expr.stringify, False, expr.span)
        if isinstance(expr, E.Literal):
            return E.Literal(expr.value, "string", node.span)
        self._check_expr(expr, roots, scope, "INS502", frozenset())
        return expr

    def _value(self, node: YNode, roots: frozenset[str], scope: _Scope | None, raw: bool = False,
               force_string: bool = False) -> E.Expr:
        """A kind field's value: ``CEL:`` strings are CEL, strings with
        ``{{`` are templates, mappings and lists are built from their
        items; anything without a dynamic part is one Literal."""
        if raw:
            return _literal(node)
        if isinstance(node, YScalar):
            v = node.value
            if isinstance(v, str):
                if _CEL_PREFIX.match(v):
                    return self._cel(node, roots, scope)
                if has_placeholder(v):
                    return self._template(node, roots, scope, force_string)
            return _literal(node)
        if isinstance(node, YSeq):
            items = tuple(self._value(i, roots, scope) for i in node.items)
            if all(isinstance(i, E.Literal) for i in items):
                return _literal(node)
            return E.ListExpr(items, node.span)
        if isinstance(node, YMap):
            entries = tuple(E.MapEntry(E.Literal(k.value, "string", k.span), self._value(v, roots, scope),
                                       k.span.cover(v.span)) for k, v in node.items)
            if all(isinstance(e.value, E.Literal) for e in entries):
                return _literal(node)
            return E.MapExpr(entries, node.span)
        return _literal(node)

    def _check_expr(self, expr: E.Expr, roots: frozenset[str] | None, scope: _Scope | None, code: str,
                    lambda_vars: frozenset[str]) -> None:
        def visit(node: E.Expr, bound: frozenset[str]) -> None:
            if code == "INS502" and _config_ref(node, bound):
                self._spaced_config(node)
                return
            if isinstance(node, E.Call) and node.func == "cel.unbound":
                name = node.args[0].value if node.args and isinstance(node.args[0], E.Literal) else "?"
                self._error("CEL202", f"unknown function or wrong number of arguments: {name}()", node.span)
            if isinstance(node, E.Ref):
                self._check_ref(node, roots, scope, code, bound)
            if isinstance(node, E.Lambda):
                bound = bound | frozenset(node.params)
            for child in node.children():
                visit(child, bound)

        visit(expr, lambda_vars)

    def _spaced_config(self, node: E.Expr) -> None:
        """``{{ config.x }}``: agentd substitutes only the literal ``{{config.``."""
        ref = node if isinstance(node, E.Ref) else node.args[0]
        name = ".".join(str(s.name) if isinstance(s, E.Field) else str(getattr(s.index, "value", "?"))
                        for s in ref.path)
        fix = f"write `{{{{config.{name}}}}}` (no space after the braces)"
        if isinstance(node, E.Ref):
            self._error("INS503", f"`config.{name}` is not substituted: agentd folds in only the literal "
                        "`{{config.` at load, and at run time `config` is no name, so the step fails",
                        ref.span, fix)
        else:
            self._warning("INS503", f"`config.{name}` is not substituted: agentd folds in only the literal "
                          "`{{config.` at load, so the default is used every time", ref.span, fix)

    def _check_ref(self, ref: E.Ref, roots, scope: _Scope | None, code: str, bound: frozenset[str]) -> None:
        if ref.root in bound:
            return
        if roots is not None and ref.root not in roots:
            notes = []
            if scope is not None and scope.knows(ref.root):
                notes.append(f"a step's result is at steps.{ref.root}.output, not at the bare id")
            else:
                hint = did_you_mean(ref.root, sorted(roots - _CEL_TYPE_NAMES))
                if hint:
                    notes.append(hint)
            self._error(code, f"unknown name {ref.root!r} (known here: "
                        f"{', '.join(sorted(roots - _CEL_TYPE_NAMES))})", ref.span, *notes)
            return
        if ref.root == "steps" and scope is not None and ref.path and isinstance(ref.path[0], E.Field):
            step = ref.path[0].name
            if not scope.knows(step):
                self._error("INS309", f"steps.{step} names a step that does not exist", ref.path[0].span
                            if ref.path[0].span.known else ref.span,
                            did_you_mean(step, scope.all_ids()))

    # ------------------------------------------------------------------ workflow
    def _workflow(self, carried: Carried) -> Workflow | None:
        root = carried.body
        if root is None:
            return None
        if carried.carrier == "config":
            # agentd folds the config's vars in at load, before typing.
            folded: list[Diagnostic] = []
            root = config_vars.substitute(root, carried.variables, folded)
            self.sink.extend(folded)
        if not isinstance(root, YMap):
            self._error("INS102", f"a workflow document must be a mapping, not {type_name(root)}", root.span)
            return None
        for key, value in root.items:
            if key.value in CAT.TOP_LEVEL_KEYS:
                continue
            if key.value in _TOP_LEVEL_OLD:
                self._error("INS110", f"`{key.value}` belongs to {_TOP_LEVEL_OLD[key.value]}; dialect 3 "
                            "declares triggers as steps and edges with depends_on", key.span)
                continue
            self._error("INS104", f"unknown top-level key {key.value!r}", key.span,
                        did_you_mean(key.value, CAT.TOP_LEVEL_KEYS),
                        f"allowed: {', '.join(CAT.TOP_LEVEL_KEYS)}")
        name, name_span = self._workflow_name(root, carried)
        version = root.get("version")
        if version is not None and not (isinstance(version, YScalar) and version.value == 3
                                        and not isinstance(version.value, bool)):
            self._error("INS110", f"`version` must be 3 for this dialect, not {version.plain()!r}", version.span)
        description = self._string(root.get("description")) or carried.description
        if root.get("description") is not None and self._string(root.get("description")) is None:
            self._error("INS102", "`description` must be a string", root.get("description").span)
        metadata = self._metadata(root, carried)
        params = self._inputs(root.get("inputs"))
        outputs = self._expect_map(root.get("outputs"), "`outputs`")
        if outputs is not None:
            schema = outputs.get("schema") if "schema" in outputs else outputs
            if not isinstance(schema, (YMap,)) and not (isinstance(schema, YScalar)
                                                        and isinstance(schema.value, bool)):
                self._error("INS102", "`outputs.schema` must be a JSON Schema (a mapping)", schema.span)
        steps = root.get("steps")
        if steps is None:
            if root.get("file") is None and root.get("uri") is None:
                self._error("INS103", "the workflow has no `steps`", name_span or carried.span)
            return None
        scope_ids = steps.keys() if isinstance(steps, YMap) else []
        scope = _Scope(None, 0, None, [k for k in scope_ids if isinstance(k, str)], ROOTS, "")
        nodes, edges = self._graph(steps, scope)
        if nodes is None:
            return None
        triggers = sorted(n.id for n in nodes if n.op == "trigger")
        if not triggers:
            self._error("INS308", "the workflow has no start node: a step whose kind is a trigger "
                        f"({', '.join(sorted(CAT.TRIGGER_KINDS))})", steps.span)
        return Workflow(
            name=name,
            dialect=DIALECT,
            semantics=DIALECT,
            nodes=tuple(nodes),
            edges=tuple(edges),
            entry=tuple(triggers),
            terminal=None,
            inputs=tuple(params),
            outputs=(),
            description=description,
            metadata=metadata,
            span=root.span,
        )

    def _workflow_name(self, root: YMap, carried: Carried) -> tuple[str, Span | None]:
        node = root.get("name")
        if carried.name is not None:
            name, span = carried.name, carried.name_span
        elif node is not None:
            name, span = self._string(node), node.span
            if name is None:
                self._error("INS102", f"`name` must be a string, not {type_name(node)}", node.span)
                name = "workflow"
        else:
            self._error("INS103", "the workflow has no `name`", carried.span)
            return "workflow", None
        if not _ID.match(name):
            self._error("INS107", f"workflow name {name!r} must match [a-zA-Z_][a-zA-Z0-9_-]{{0,63}}",
                        span or carried.span)
        return name, span

    def _metadata(self, root: YMap, carried: Carried) -> dict:
        meta: dict = {"carrier": carried.carrier}
        armed = root.get("armed")
        if armed is not None and not (isinstance(armed, YScalar) and isinstance(armed.value, bool)):
            self._error("INS102", "`armed` must be true or false", armed.span)
        meta["armed"] = carried.armed if carried.armed is not None else (
            armed.value if isinstance(armed, YScalar) and isinstance(armed.value, bool) else True)
        conc = self._expect_map(root.get("concurrency"), "`concurrency`")
        if conc is not None:
            self._closed(conc, ("max_runs", "on_overflow"), "`concurrency`")
            self._int(conc.get("max_runs"), "`concurrency.max_runs`", 1, 1024)
            self._enum(conc.get("on_overflow"), ("queue", "drop", "replace"), "`concurrency.on_overflow`")
        limits = self._expect_map(root.get("limits"), "`limits`")
        if limits is not None:
            self._closed(limits, ("steps", "tokens", "deadline", "budget"), "`limits`")
            steps = self._int(limits.get("steps"), "`limits.steps`", 1)
            self._int(limits.get("tokens"), "`limits.tokens`", 1)
            deadline = self._duration(limits.get("deadline"), "`limits.deadline`")
            # what the run enforces (docs/durable.md), in the units the runtime counts
            run_limits = {"steps": steps, "deadline_ms": deadline}
            if any(v is not None for v in run_limits.values()):
                meta["run_limits"] = run_limits
        self._enum(root.get("priority"), ("low", "normal", "high"), "`priority`")
        unload = self._expect_map(root.get("unload"), "`unload`")
        if unload is not None:
            self._closed(unload, ("policy", "timeout"), "`unload`")
            self._enum(unload.get("policy"), ("drain", "cancel", "detach"), "`unload.policy`")
            self._duration(unload.get("timeout"), "`unload.timeout`")
        durable = root.get("durable")
        if durable is not None and not (isinstance(durable, YScalar) and isinstance(durable.value, bool)):
            self._error("INS102", "`durable` must be true or false", durable.span)
        state = self._expect_map(root.get("state"), "`state`")
        if state is not None:
            for key, spec in state.items:
                spec_map = self._expect_map(spec, f"`state.{key.value}`")
                if spec_map is not None:
                    self._closed(spec_map, ("schema", "reducer"), f"`state.{key.value}`")
                    self._enum(spec_map.get("reducer"), _ASSIGN_MODES, f"`state.{key.value}.reducer`")
        for key in ("concurrency", "limits", "priority", "unload", "durable", "state", "version"):
            if root.get(key) is not None:
                meta[key] = root.get(key).plain()
        inputs = root.get("inputs")
        if isinstance(inputs, YMap):
            meta["inputs_schema"] = (inputs.get("schema") if "schema" in inputs else inputs).plain()
        outputs = root.get("outputs")
        if isinstance(outputs, YMap):
            meta["outputs_schema"] = (outputs.get("schema") if "schema" in outputs else outputs).plain()
        return meta

    def _closed(self, node: YMap, allowed: tuple[str, ...], what: str) -> None:
        for key, _value in node.items:
            if key.value not in allowed:
                self._error("INS104", f"unknown key {key.value!r} in {what}", key.span,
                            did_you_mean(key.value, allowed), f"allowed: {', '.join(allowed)}")

    def _inputs(self, node: YNode | None) -> list[Param]:
        inputs = self._expect_map(node, "`inputs`")
        if inputs is None:
            return []
        schema = inputs.get("schema") if "schema" in inputs else inputs
        if "schema" in inputs:
            self._closed(inputs, ("schema",), "`inputs`")
        if not isinstance(schema, YMap):
            self._error("INS102", "`inputs.schema` must be a JSON Schema (a mapping)", schema.span)
            return []
        props = schema.get("properties")
        if props is None:
            return []
        if not isinstance(props, YMap):
            self._error("INS102", "`properties` must be a mapping", props.span)
            return []
        out = []
        for key, prop in props.items:
            ptype = T.ANY
            default, has_default, desc = None, False, None
            if isinstance(prop, YMap):
                tnode = prop.get("type")
                if isinstance(tnode, YScalar) and isinstance(tnode.value, str):
                    ptype = T.from_name(tnode.value) or T.ANY
                if "default" in prop:
                    default, has_default = prop.get("default").plain(), True
                desc = self._string(prop.get("description"))
            out.append(Param(str(key.value), ptype, default, has_default, desc, key.span))
        return out

    # ------------------------------------------------------------------ graphs
    def _graph(self, steps: YNode, scope: _Scope) -> tuple[list[Node] | None, list[Edge]]:
        """Lower one graph (the top level or a body): its nodes sorted by id
        and its edges."""
        if not isinstance(steps, YMap):
            self._error("INS102", f"`steps` must be a mapping of step ids to steps, not {type_name(steps)}",
                        steps.span)
            return None, []
        if not steps.items:
            self._error("INS103", "`steps` is empty", steps.span)
            return [], []
        # The limits are checked before any work on the steps, so a huge
        # step map costs one count, not a compile.
        if scope.depth == 0 and len(steps.items) > CAT.MAX_STEPS:
            self._error("INS306", f"the workflow has {len(steps.items)} top-level steps; the limit is "
                        f"{CAT.MAX_STEPS}", steps.span)
            return None, []
        if scope.depth == 0 and _count_steps(steps) > MAX_STEPS:
            self._error("LIM002", f"the workflow has more than {MAX_STEPS} steps, nested steps included",
                        steps.span)
            return None, []
        infos: list[_Step] = []
        for key, body in steps.items:
            info = self._step_header(key, body, scope)
            if info is not None:
                infos.append(info)
        nodes: list[Node] = []
        edges: list[Edge] = []
        for info in sorted(infos, key=lambda i: i.id):
            node, node_edges = self._step(info, scope)
            nodes.append(node)
            edges.extend(node_edges)
        if scope.depth > 0:
            self._body_cycles(nodes, edges, scope)
        self._upstream(nodes, edges, scope)
        return nodes, edges

    def _step_header(self, key: YScalar, body: YNode, scope: _Scope) -> _Step | None:
        step_id = key.value
        if not isinstance(step_id, str) or not _ID.match(step_id):
            self._error("INS107", f"step id {step_id!r} must match [a-zA-Z_][a-zA-Z0-9_-]{{0,63}}", key.span)
            if not isinstance(step_id, str):
                return None
        if not isinstance(body, YMap):
            self._error("INS102", f"step {step_id!r} must be a mapping, not {type_name(body)}", body.span)
            return None
        kind_node = body.get("kind")
        if kind_node is None:
            self._error("INS103", f"step {step_id!r} has no `kind`", key.span)
            return None
        kind = self._string(kind_node)
        spec = CAT.KINDS.get(kind) if kind is not None else None
        if spec is None:
            shown = repr(kind) if kind is not None else type_name(kind_node)
            self._error("INS106", f"step {step_id!r} has unknown kind {shown}", kind_node.span,
                        did_you_mean(kind, CAT.KINDS) if kind else None)
            # the step is dropped; its guard's syntax errors are reported now, not once the kind is fixed
            when = body.get("when")
            if isinstance(when, YScalar) and isinstance(when.value, str):
                self._cel_syntax(when)
            return None
        return _Step(step_id, key, body, kind, spec)

    def _body_cycles(self, nodes: list[Node], edges: list[Edge], scope: _Scope) -> None:
        g = _simple_graph(nodes, edges)
        try:
            cycle = G.find_cycle(g)
        except G.NoCycle:
            return
        ids = [u for u, *_ in cycle] + [cycle[0][0]]
        node = next(n for n in nodes if n.id == ids[0])
        self._error("INS307", "the body's steps depend on each other in a cycle: " + " -> ".join(ids), node.span)

    def _upstream(self, nodes: list[Node], edges: list[Edge], scope: _Scope) -> None:
        """A step that reads steps.X of a sibling X that is not upstream of it
        may read it before it exists."""
        ancestors_of = _ancestor_bits(nodes, edges)
        bit = {n.id: 1 << i for i, n in enumerate(nodes)}
        for node in nodes:
            ancestors = ancestors_of.get(node.id, 0)
            seen = set()
            for expr in _node_exprs(node):
                for ref in E.refs(expr):
                    target = ref.step_id()
                    if target is None or target not in scope.ids or target in seen:
                        continue
                    seen.add(target)
                    if target == node.id:
                        self._error("INS303", f"step {node.id!r} reads its own result", ref.span)
                    elif not ancestors & bit.get(target, 0):
                        self._warning("INS310", f"step {node.id!r} reads steps.{target}, but {target!r} is "
                                      "not upstream of it", ref.span,
                                      f"add {target!r} to its depends_on so the value exists when it runs")

    # ------------------------------------------------------------------ steps
    def _step(self, info: _Step, scope: _Scope) -> tuple[Node, list[Edge]]:
        body, spec = info.body, info.spec
        self._check_field_names(info)
        edges: list[Edge] = []
        attrs: list[Attr] = []
        # ---- common fields
        self._depends_on(info, scope, edges)
        guard = None
        when = body.get("when")
        if when is not None:
            guard = Guard(self._cel(when, scope.roots, scope), "cel_bool", when.span, on_false="prune")
        retry = self._retry(body.get("retry"))
        on_error = self._error_policy(info, scope, edges, attrs)
        self._timeout(info, attrs)
        self._check_common_fields(body)
        desc_node = body.get("description")
        description = self._string(desc_node)
        if desc_node is not None and description is None:
            self._error("INS102", "`description` must be a string", desc_node.span)
        self._common_attrs(info, scope, attrs)
        # ---- the kind
        regions: list[Region] = []
        iteration = self._kind_fields(info, scope, attrs, edges, regions)
        self._cross_field_rules(info, scope)
        inputs: tuple[Binding, ...] = ()
        if spec.is_trigger:
            inputs = self._trigger_inputs(body.get("inputs"), scope)
        if spec.op == "call":
            attrs = [Attr("capability", E.Literal(spec.capability, "string", info.key.span), info.key.span),
                     Attr("name", E.Literal(self._call_name(info), "string", info.key.span), info.key.span),
                     *attrs]
        node = Node(
            id=info.id, op=spec.op, kind=info.kind, span=info.key.span, description=description,
            attrs=tuple(attrs), inputs=inputs, guard=guard, iteration=iteration, on_error=on_error,
            retry=retry, regions=tuple(regions),
        )
        return node, edges

    def _check_field_names(self, info: _Step) -> None:
        """Every field is the kind's or a common one; every required one is there."""
        body, spec, kind = info.body, info.spec, info.kind
        allowed = set(CAT.COMMON_FIELDS) | set(spec.fields)
        for key, _value in body.items:
            if key.value not in allowed:
                listing = ", ".join(sorted(set(spec.fields))) or "none"
                self._error("INS104", f"unknown field {key.value!r} for kind {kind!r}", key.span,
                            did_you_mean(key.value, allowed), f"kind {kind} takes: {listing} "
                            "(plus the common fields)")
        for field in spec.required:
            if field not in body:
                self._error("INS103", f"step {info.id!r} of kind {kind!r} needs `{field}`", info.key.span)

    def _error_policy(self, info: _Step, scope: _Scope, edges: list[Edge], attrs: list[Attr]) -> ErrorPolicy:
        """The step's `on_error`; for a kind with an `on_error` field of its
        own, that field becomes an attr and the step's policy stays fail."""
        oe = info.body.get("on_error")
        if oe is None:
            return ErrorPolicy("fail")
        kind_on_error = "on_error" in info.spec.fields
        on_error = self._on_error(oe, info, scope, edges, kind_level=kind_on_error)
        if not kind_on_error:
            return on_error
        attrs.append(Attr("on_error", E.Literal(on_error.action, "string", oe.span), oe.span))
        return ErrorPolicy("fail")

    def _timeout(self, info: _Step, attrs: list[Attr]) -> None:
        timeout = info.body.get("timeout")
        if timeout is not None:
            ms = self._duration(timeout, f"`timeout` of step {info.id!r}")
            if ms is not None:
                attrs.append(Attr("timeout_ms", E.Literal(ms, "int", timeout.span), timeout.span))

    def _check_common_fields(self, body: YMap) -> None:
        """The shapes of the common fields that are checked, not lowered here."""
        replay = body.get("on_replay")
        if replay is not None:
            self._enum(replay, _ON_REPLAY, "`on_replay`")
        idem = body.get("idempotent")
        if idem is not None and not (isinstance(idem, YScalar) and isinstance(idem.value, bool)):
            self._error("INS102", "`idempotent` must be true or false", idem.span)
        budget = body.get("budget")
        if budget is not None:
            self._int(budget, "`budget`", 0)
        skills = body.get("skills")
        if skills is not None and not (isinstance(skills, YSeq) and all(
                isinstance(s, YScalar) and isinstance(s.value, str) for s in skills.items)):
            self._error("INS102", "`skills` must be a list of strings", skills.span)
        cache = body.get("cache")
        if cache is not None:
            cache_map = self._expect_map(cache, "`cache`")
            if cache_map is not None:
                self._closed(cache_map, ("key", "ttl"), "`cache`")
                self._duration(cache_map.get("ttl"), "`cache.ttl`")

    def _common_attrs(self, info: _Step, scope: _Scope, attrs: list[Attr]) -> None:
        """Common fields kept as attrs (unless the kind has a field of that name)."""
        for name in ("on_replay", "idempotent", "budget", "skills", "cache", "otel", "output_schema"):
            node = info.body.get(name)
            if node is not None and name not in info.spec.fields:
                attrs.append(Attr(name, self._value(node, scope.roots, scope,
                                                    raw=name in _RAW_FIELDS or name != "cache"), node.span))

    def _call_name(self, info: _Step) -> str:
        template = info.spec.name or info.kind

        def field(m: re.Match) -> str:
            name = m.group(1)
            if name == "kind":
                return info.kind
            value = info.body.get(name)
            return str(value.value) if isinstance(value, YScalar) and value.value is not None else ""

        return re.sub(r"\{([a-z_]+)\}", field, template)

    def _depends_on(self, info: _Step, scope: _Scope, edges: list[Edge]) -> None:
        node = info.body.get("depends_on")
        if node is None:
            return
        if info.spec.is_trigger:
            self._error("INS302", f"start node {info.id!r} ({info.kind}) must not have depends_on", node.span)
            return
        items: list[YScalar] = []
        if isinstance(node, YScalar) and isinstance(node.value, str):
            items = [node]
        elif isinstance(node, YSeq):
            for item in node.items:
                if isinstance(item, YScalar) and isinstance(item.value, str):
                    items.append(item)
                else:
                    self._error("INS102", f"a depends_on entry must be a step id, not {type_name(item)}",
                                item.span)
        else:
            self._error("INS102", f"`depends_on` must be a step id or a list of them, not {type_name(node)}",
                        node.span)
            return
        seen = set()
        for position, item in enumerate(items):
            target = item.value
            if target in seen:
                self._warning("INS301", f"{target!r} is listed twice in depends_on", item.span)
                continue
            seen.add(target)
            if target == info.id:
                self._error("INS303", f"step {info.id!r} depends on itself", item.span)
                continue
            if not self._target_exists(target, item, scope, "depends_on"):
                continue
            edges.append(Edge(target, info.id, EdgeKind.DEPENDENCY, None, position, item.span))

    def _target_exists(self, target: str, node: YNode, scope: _Scope, what: str) -> bool:
        if target in scope.ids:
            return True
        if scope.depth > 0 and scope.knows(target):
            self._error("INS304", f"{what} names {target!r}, which is outside this body; body steps depend "
                        "only on their siblings", node.span)
            return False
        self._error("INS301", f"{what} names {target!r}, which is not a step"
                    + (" of this body" if scope.depth else ""), node.span,
                    did_you_mean(target, scope.ids))
        return False

    def _retry(self, node: YNode | None) -> RetryPolicy | None:
        retry = self._expect_map(node, "`retry`")
        if retry is None:
            return None
        self._closed(retry, ("max", "backoff"), "`retry`")
        max_node = retry.get("max")
        count = self._int(max_node, "`retry.max`", 0) if max_node is not None else 0
        if count is not None and count > 20:
            self._warning("INS105", f"`retry.max` is {count}; it is clamped to 20", max_node.span)
            count = 20
        backoff = retry.get("backoff")
        delay = self._duration(backoff, "`retry.backoff`") if backoff is not None else 0
        return RetryPolicy(max_retries=count or 0, delay_ms=delay or 0, backoff=2.0, retry_on="any",
                           span=retry.span, jitter=0.2)

    def _on_error(self, node: YNode, info: _Step, scope: _Scope, edges: list[Edge],
                  kind_level: bool) -> ErrorPolicy:
        text = self._string(node)
        if text in ("fail", "continue"):
            return ErrorPolicy(text, None, node.span)
        if text is not None and text.startswith("goto:") and not kind_level:
            target = text[len("goto:"):].strip()
            if target == info.id:
                self._error("INS303", f"step {info.id!r} routes its errors to itself", node.span)
            elif self._target_exists(target, node, scope, "on_error goto"):
                edges.append(Edge(info.id, target, EdgeKind.ERROR, "goto", 0, node.span))
            return ErrorPolicy("goto", target, node.span)
        allowed = ("fail", "continue") if kind_level else ("fail", "continue", "goto:<step>")
        self._error("INS105", f"`on_error` must be {', '.join(allowed)}, not {node.plain()!r}", node.span,
                    did_you_mean(text, ("fail", "continue")) if text else None)
        return ErrorPolicy("fail", None, node.span)

    def _trigger_inputs(self, node: YNode | None, scope: _Scope) -> tuple[Binding, ...]:
        mapping = self._expect_map(node, "a start node's `inputs`")
        if mapping is None:
            return ()
        return tuple(Binding(str(k.value), T.ANY, self._value(v, TRIGGER_INPUT_ROOTS, None), k.span)
                     for k, v in mapping.items)

    # ------------------------------------------------------------------ kinds
    def _kind_fields(self, info: _Step, scope: _Scope, attrs: list[Attr], edges: list[Edge],
                     regions: list[Region]) -> Iteration | None:
        """Attrs for the kind's own fields; regions for bodies and branches.
        Returns an Iteration for foreach."""
        roots = scope.roots
        field_scope: _Scope | None = scope
        if info.spec.is_trigger:
            # Read against the payload the trigger fires with, not the steps.
            payload = TRIGGER_PAYLOAD_ROOTS.get(info.kind)
            roots = payload | _CEL_TYPE_NAMES if payload is not None else None
            field_scope = None

        def add(name: str, value: E.Expr, node: YNode) -> None:
            attrs.append(Attr(name, value, node.span))

        handled = {"on_error", "timeout", "inputs"}
        reader = _KIND_FIELD_READERS.get(info.kind)
        if reader is not None:
            handled |= reader(self, _KindFields(info, scope, roots, add, edges))
        handled |= self._nested(info, scope, regions)
        iteration = None
        if info.kind == "foreach" and info.body.get("over") is not None:
            iteration = self._foreach_iteration(info, scope, roots, attrs, add)
            handled.add("over")
        self._other_kind_fields(info, roots, field_scope, handled, add)
        return iteration

    # Each reader checks and lowers the fields of one kind (or of kinds that
    # share them) and returns the names it handled; _KIND_FIELD_READERS
    # (below the class) says which reads which kind.
    def _switch_fields(self, k: _KindFields) -> set[str]:
        self._switch(k.info, k.scope, k.edges)
        return {"cases", "default"}

    def _wait_fields(self, k: _KindFields) -> set[str]:
        target_node = k.info.body.get("on_timeout")
        if target_node is not None:
            target = self._string(target_node)
            if target is None:
                self._error("INS102", "`on_timeout` must be a step id", target_node.span)
            elif self._target_exists(target, target_node, k.scope, "on_timeout"):
                k.edges.append(Edge(k.info.id, target, EdgeKind.ERROR, "timeout", 0, target_node.span))
                k.add("on_timeout", E.Literal(target, "string", target_node.span), target_node)
        return {"on_timeout"}

    def _sleep_fields(self, k: _KindFields) -> set[str]:
        node = k.info.body.get("duration")
        ms = self._duration(node, "`sleep.duration`") if node is not None else None
        if ms is not None:
            k.add("duration_ms", E.Literal(ms, "int", node.span), node)
        return {"duration"}

    def _finish_fields(self, k: _KindFields) -> set[str]:
        status = k.info.body.get("status")
        if status is not None:
            self._enum(status, _FINISH_STATUSES, "`finish.status`")
        else:
            k.add("status", E.Literal("completed", "string", k.info.key.span), k.info.key)
        return set()

    def _writes_fields(self, k: _KindFields) -> set[str]:
        body = k.info.body
        writes = body.get("writes")
        if writes is not None and not (self._string(writes) and _ID.match(self._string(writes))):
            self._error("INS105", "`writes` must name a run variable ([a-zA-Z_][a-zA-Z0-9_-]*)", writes.span)
        if body.get("mode") is not None:
            self._enum(body.get("mode"), _ASSIGN_MODES, "`mode`")
        return set()

    def _template_fields(self, k: _KindFields) -> set[str]:
        body, info = k.info.body, k.info
        text = body.get("text")
        if text is not None:
            if isinstance(text, YScalar) and isinstance(text.value, str):
                k.add("text", self._value(text, k.roots, k.scope, force_string=True), text)
            else:
                self._error("INS102", "`template.text` must be a string", text.span)
        if text is None and body.get("value") is None:
            self._error("INS204", f"template step {info.id!r} needs `text` or `value`", info.key.span)
        return {"text"}

    def _lambda_fields(self, k: _KindFields) -> set[str]:
        body, kind = k.info.body, k.info.kind
        item = self._alias(body.get("as"), "item")
        acc = self._alias(body.get("acc"), "acc")
        params = (acc, item, "index") if kind == "reduce" else (item, "index")
        expr_node = body.get("expr")
        if expr_node is not None:
            inner = k.roots | set(params)
            lam = E.Lambda(params, self._cel(expr_node, frozenset(inner), k.scope), expr_node.span)
            k.add("expr", lam, expr_node)
        if kind == "filter":
            k.add("truthiness", E.Literal("cel_bool", "string", k.info.key.span), k.info.key)
        return {"expr", "as", "acc"}

    def _sort_fields(self, k: _KindFields) -> set[str]:
        key = k.info.key
        order = k.info.body.get("order")
        direction = self._enum(order, _SORT_ORDERS, "`sort.order`") if order is not None else "asc"
        k.add("direction", E.Literal(direction or "asc", "string", (order or key).span), order or key)
        k.add("ordering", E.Literal("cel", "string", key.span), key)
        return {"order"}

    def _chunk_fields(self, k: _KindFields) -> set[str]:
        body = k.info.body
        self._int(body.get("size"), "`chunk.size`", 1)
        if body.get("overlap") is not None:
            self._int(body.get("overlap"), "`chunk.overlap`", 0)
        return set()

    def _iterate_fields(self, k: _KindFields) -> set[str]:
        body, info = k.info.body, k.info
        loop_roots = frozenset(k.roots | BODY_ROOTS | {"result", "last"})
        for name in ("while", "until"):
            node = body.get(name)
            if node is not None:
                k.add(name, self._cel(node, loop_roots, k.scope), node)
        mi = body.get("max_iterations")
        limit = CAT.MAX_ITERATIONS
        if isinstance(mi, YScalar) and type(mi.value) in (int, float) and mi.value > MAX_DECLARED_ITERATIONS:
            # Beyond what flowc runs at all (not only beyond the dialect's cap).
            self._error("LIM106", f"`iterate.max_iterations` {shown_number(mi.text)} exceeds "
                        f"{MAX_DECLARED_ITERATIONS}", mi.span)
        elif mi is not None:
            value = self._int(mi, "`iterate.max_iterations`", 1, CAT.MAX_ITERATIONS, code="INS306")
            limit = value or CAT.MAX_ITERATIONS
        k.add("max_iterations", E.Literal(limit, "int", (mi or info.key).span), mi or info.key)
        if body.get("while") is None and body.get("until") is None:
            self._warning("INS204", f"iterate step {info.id!r} has neither `while` nor `until`; it runs "
                          f"max_iterations ({limit}) times", info.key.span)
        return {"while", "until", "max_iterations"}

    def _lanes_fields(self, k: _KindFields) -> set[str]:
        self._lanes(k.info)
        return {"as"}

    def _nested(self, info: _Step, scope: _Scope, regions: list[Region]) -> set[str]:
        """The Regions of a kind with a body or branches; the field handled."""
        nested = info.spec.nested
        if nested == "body":
            region = self._body(info, scope, "body", info.body.get("body"))
            if region is not None:
                regions.append(region)
            return {"body"}
        if nested == "branches":
            regions.extend(self._branches(info, scope))
            return {"branches"}
        return set()

    def _foreach_iteration(self, info: _Step, scope: _Scope, roots, attrs: list[Attr], add) -> Iteration:
        body = info.body
        over = self._value(body.get("over"), roots, scope)
        batch = body.get("batch")
        lanes = 1
        if isinstance(batch, YMap) and isinstance(batch.get("parallel"), YScalar) \
                and isinstance(batch.get("parallel").value, int):
            lanes = max(1, min(batch.get("parallel").value, CAT.MAX_PARALLEL))
        policy = "error_object_and_continue" if any(
            a.name == "on_error" and a.value.value == "continue" for a in attrs) else "fail"
        iteration = Iteration(over, self._alias(body.get("as"), "item"), "index", 0, lanes, policy,
                              body.get("over").span)
        alias = self._alias(body.get("as"), "item")
        if alias != "item":
            add("as", E.Literal(alias, "string", body.get("as").span), body.get("as"))
        return iteration

    def _other_kind_fields(self, info: _Step, roots, field_scope: _Scope | None, handled: set[str], add) -> None:
        """Every kind field no reader handled, in document order."""
        kind = info.kind
        for key, value in info.body.items:
            name = key.value
            # A field that is both common and the kind's (output_schema, skills)
            # counts as the kind's, so it is lowered here.
            if name in handled or name not in info.spec.fields:
                continue
            if (kind, name) in _CEL_FIELDS:
                field_roots = None if name == "filter" and kind != "webhook" else (
                    WAIT_CONDITION_ROOTS if (kind, name) == ("wait", "condition") else
                    LOOP_UNTIL_ROOTS if (kind, name) == ("loop", "until") else roots)
                add(name, self._cel(value, field_roots, field_scope), key)
                continue
            add(name, self._value(value, roots, field_scope, raw=name in _RAW_FIELDS), key)

    def _alias(self, node: YNode | None, default: str) -> str:
        if node is None:
            return default
        text = self._string(node)
        if text is None or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", text) or text in ROOTS:
            self._error("INS105", f"`{default if default != 'item' else 'as'}` must be a plain name that is "
                        "not a root (inputs, steps, vars ...)", node.span)
            return default
        return text

    def _lanes(self, info: _Step) -> None:
        body = info.body
        if info.kind == "batch":
            if body.get("parallel") is not None:
                self._int(body.get("parallel"), "`batch.parallel`", 1, CAT.MAX_PARALLEL, code="INS306")
            if body.get("size") is not None:
                self._int(body.get("size"), "`batch.size`", 1)
        batch = body.get("batch") if info.kind == "foreach" else None
        if batch is not None:
            bmap = self._expect_map(batch, "`foreach.batch`")
            if bmap is not None:
                self._closed(bmap, ("size", "parallel"), "`foreach.batch`")
                if bmap.get("parallel") is not None:
                    self._int(bmap.get("parallel"), "`batch.parallel`", 1, CAT.MAX_PARALLEL, code="INS306")
                if bmap.get("size") is not None:
                    self._int(bmap.get("size"), "`batch.size`", 1)
        collect = body.get("collect")
        if collect is not None and isinstance(collect, YMap):
            self._closed(collect, ("into", "mode"), "`collect`")
            if collect.get("mode") is not None:
                self._enum(collect.get("mode"), _ASSIGN_MODES, "`collect.mode`")

    def _switch(self, info: _Step, scope: _Scope, edges: list[Edge]) -> None:
        body = info.body
        cases = body.get("cases")
        if cases is not None:
            cases_map = self._expect_map(cases, "`switch.cases`")
            if cases_map is not None:
                for position, (key, target_node) in enumerate(cases_map.items):
                    target = self._string(target_node)
                    if target is None:
                        self._error("INS102", "a switch case names one step id (a string), not "
                                    f"{type_name(target_node)}", target_node.span)
                        continue
                    if self._target_exists(target, target_node, scope, f"case {key.value!r}"):
                        edges.append(Edge(info.id, target, EdgeKind.BRANCH, key.text, position,
                                          target_node.span))
        default = body.get("default")
        if default is not None:
            target = self._string(default)
            if target is None:
                self._error("INS102", "`switch.default` names one step id (a string), not "
                            f"{type_name(default)}", default.span)
            elif self._target_exists(target, default, scope, "the switch default"):
                edges.append(Edge(info.id, target, EdgeKind.BRANCH, "$default", 0, default.span))

    def _body(self, info: _Step, scope: _Scope, name: str, node: YNode | None,
              branch: str | None = None) -> Region | None:
        if node is None:
            return None
        graph = self._expect_map(node, f"the `{name}` of step {info.id!r}")
        if graph is None:
            return None
        self._closed(graph, ("steps",), f"the `{name}` of step {info.id!r}")
        steps = graph.get("steps")
        if steps is None:
            self._error("INS103", f"the `{name}` of step {info.id!r} has no `steps`", graph.span)
            return None
        depth = scope.depth + 1
        if depth > CAT.MAX_DEPTH:
            self._error("INS305", f"bodies nest {depth} deep at step {info.id!r}; the limit is {CAT.MAX_DEPTH}",
                        info.key.span)
            return None
        extra = set(BODY_ROOTS)
        alias = info.body.get("as")
        if isinstance(alias, YScalar) and isinstance(alias.value, str):
            extra.add(alias.value)
        if info.kind == "iterate":
            extra |= {"result", "last"}
        ids = steps.keys() if isinstance(steps, YMap) else []
        inner = _Scope(scope, depth, info.kind, [k for k in ids if isinstance(k, str)],
                       frozenset(scope.roots | extra), branch or name)
        nodes, edges = self._graph(steps, inner)
        if nodes is None:
            return None
        for node_ in nodes:
            if node_.op == "trigger":
                self._error("INS304", f"a start node ({node_.kind}) cannot be inside a body", node_.span)
            elif node_.op == "finish":
                self._error("INS304", "`finish` cannot be inside a body; a body's result is its sinks",
                            node_.span)
            elif node_.kind == "human":
                owner = inner.inside(_LOOP_BODY_KINDS)
                if owner is not None:
                    self._error("INS311", f"a human step cannot be inside a {owner} body", node_.span,
                                "ask before or after the fan-out")
        return Region(branch or name, tuple(nodes), tuple(edges), graph.span, result="sinks")

    def _branches(self, info: _Step, scope: _Scope) -> list[Region]:
        node = info.body.get("branches")
        branches = self._expect_map(node, f"the `branches` of step {info.id!r}")
        if branches is None:
            return []
        if not branches.items:
            self._error("INS103", f"step {info.id!r} has no branches", branches.span)
        out = []
        for key, value in sorted(branches.items, key=lambda kv: str(kv[0].value)):
            name = key.value
            if not isinstance(name, str) or not _ID.match(name):
                self._error("INS107", f"branch name {name!r} must match [a-zA-Z_][a-zA-Z0-9_-]{{0,63}}", key.span)
                continue
            region = self._body(info, scope, "branch", value, branch=name)
            if region is not None:
                out.append(region)
        return out

    # ------------------------------------------------------------------ rules
    def _cross_field_rules(self, info: _Step, scope: _Scope) -> None:
        body, kind = info.body, info.kind
        for field in info.spec.required_by_rule:
            if field not in body:
                self._error("INS204", f"{kind} step {info.id!r} needs `{field}`", info.key.span,
                            "a correlate trigger needs an explicit event window (it bounds the pending sets)"
                            if kind == "correlate" else None)
        if kind == "schedule":
            given = [k for k in ("cron", "every", "at") if k in body]
            if len(given) > 1:
                self._error("INS203", f"a schedule chooses one of cron, every and at, not {' and '.join(given)}",
                            body.key_node(given[1]).span)
            elif not given:
                self._error("INS204", f"schedule step {info.id!r} needs one of `cron`, `every` or `at`",
                            info.key.span)
            if "every" in body:
                self._duration(body.get("every"), "`schedule.every`")
        elif kind == "human" and "reply_uri" in body:
            self._error("INS201", "`human.reply_uri` is not supported: the compatibility host rejects it",
                        body.key_node("reply_uri").span, "route the answer through `to` instead")
        elif kind == "think":
            for field in ("check", "retries"):
                if field in body:
                    self._warning("INS202", f"`think.{field}` guarantees nothing: it is a compatibility field "
                                  "with no checking or retry behaviour", body.key_node(field).span,
                                  "use output_schema, a validate or assert step, and retry")
        elif kind == "mcp.tool":
            detach = body.get("detach")
            if "cache" in body and isinstance(detach, YScalar) and detach.value not in (False, None):
                self._error("INS203", "a detached mcp.tool call cannot be cached: detached execution and "
                            "response caching are incompatible", body.key_node("cache").span)
        elif kind == "subagent":
            has_i, has_t = "instruction" in body, "template" in body
            if has_i and has_t:
                self._error("INS203", "a subagent takes `instruction` or `template`, not both",
                            body.key_node("template").span)
            elif not has_i and not has_t:
                self._error("INS204", f"subagent step {info.id!r} needs `instruction` or `template`",
                            info.key.span)
            if "params" in body and not has_t:
                self._error("INS204", "`params` needs `template`", body.key_node("params").span)
            if has_t:
                for field in ("tools", "servers"):
                    if field in body:
                        self._error("INS203", f"`{field}` cannot be given with `template`",
                                    body.key_node(field).span)
        elif kind == "a2a.delegate":
            if "objective" not in body and "command" not in body:
                self._error("INS204", f"a2a.delegate step {info.id!r} needs `objective` or `command`",
                            info.key.span)
            if "args" in body and "command" not in body:
                self._error("INS204", "`args` needs `command`", body.key_node("args").span)
        elif kind == "emit" and ("stream" in body) != ("subject" in body):
            present = "stream" if "stream" in body else "subject"
            self._error("INS204", "`stream` and `subject` travel together", body.key_node(present).span)


def _count_steps(steps: YMap) -> int:
    """Steps of a top-level step map, those of bodies (`body.steps`) and
    branches (`branches.<name>.steps`) included; one walk, no recursion,
    stopping soon after MAX_STEPS."""
    count = 0
    pending = [steps]
    while pending and count <= MAX_STEPS:
        graph = pending.pop()
        count += len(graph.items)
        for _key, step in graph.items:
            if not isinstance(step, YMap):
                continue
            holders = [step.get("body")]
            branches = step.get("branches")
            if isinstance(branches, YMap):
                holders.extend(value for _name, value in branches.items)
            for holder in holders:
                inner = holder.get("steps") if isinstance(holder, YMap) else None
                if isinstance(inner, YMap):
                    pending.append(inner)
    return count


def _ancestor_bits(nodes: list[Node], edges: list[Edge]) -> dict[str, int]:
    """Each step's ancestors (the steps with a path to it) as a bit set over
    the positions in ``nodes``, all computed in one pass over the
    condensation (cycles collapse to one component whose members are each
    other's ancestors) instead of one graph search per step."""
    g = _simple_graph(nodes, edges)
    bit = {n.id: 1 << i for i, n in enumerate(nodes)}
    components = [sorted(c) for c in G.strongly_connected_components(g)]
    component_of = {step_id: k for k, members in enumerate(components) for step_id in members}
    successors: list[set[int]] = [set() for _ in components]
    waiting = [0] * len(components)
    for u in g:
        for v in g.successors(u):
            cu, cv = component_of[u], component_of[v]
            if cu != cv and cv not in successors[cu]:
                successors[cu].add(cv)
                waiting[cv] += 1
    members = [0] * len(components)
    for k, ids in enumerate(components):
        for step_id in ids:
            members[k] |= bit[step_id]
    below = [0] * len(components)  # component -> bits of its strict ancestors' members
    ready = [k for k in range(len(components)) if waiting[k] == 0]
    while ready:                   # Kahn's order: every component after its predecessors
        k = ready.pop()
        for succ in successors[k]:
            below[succ] |= below[k] | members[k]
            waiting[succ] -= 1
            if waiting[succ] == 0:
                ready.append(succ)
    return {step_id: below[k] | (members[k] if len(components[k]) > 1 else 0)
            for step_id, k in component_of.items()}


def _literal(node: YNode) -> E.Literal:
    value = node.plain()
    if value is None:
        kind = "null"
    elif isinstance(value, bool):
        kind = "bool"
    elif isinstance(value, int):
        kind = "int"
    elif isinstance(value, float):
        kind = "float"
    elif isinstance(value, str):
        kind = "string"
    elif isinstance(value, list):
        kind = "list"
    else:
        kind = "object"
    return E.Literal(value, kind, node.span)


def _config_ref(node: E.Expr, bound: frozenset[str]) -> bool:
    """A ``config.*`` placeholder (with or without a default) in a template."""
    if isinstance(node, E.Call) and node.func == "tmpl.default" and node.args:
        node = node.args[0]
    return isinstance(node, E.Ref) and node.root == "config" and "config" not in bound


def _node_exprs(node: Node):
    if node.guard is not None:
        yield node.guard.expr
    if node.iteration is not None:
        yield node.iteration.over
    for attr in node.attrs:
        yield attr.value
    for b in node.inputs:
        if b.value is not None:
            yield b.value


def _front_end(text: str, path: str) -> tuple[InstructionFrontEnd, list[Workflow]]:
    fe = InstructionFrontEnd(text, path)
    try:
        workflows = fe.compile_all()
    except RecursionError:
        fe.sink.error("ANA406", "the workflow nests too deeply to compile", Span(path, 1, 1, 1, 2))
        workflows = []
    return fe, workflows


# Which reader (InstructionFrontEnd._*_fields) checks and lowers a kind's own fields.
_KIND_FIELD_READERS: dict[str, Callable[[InstructionFrontEnd, _KindFields], set[str]]] = {
    "switch": InstructionFrontEnd._switch_fields,
    "wait": InstructionFrontEnd._wait_fields,
    "sleep": InstructionFrontEnd._sleep_fields,
    "finish": InstructionFrontEnd._finish_fields,
    "assign": InstructionFrontEnd._writes_fields,
    "transform": InstructionFrontEnd._writes_fields,
    "template": InstructionFrontEnd._template_fields,
    "map": InstructionFrontEnd._lambda_fields,
    "filter": InstructionFrontEnd._lambda_fields,
    "reduce": InstructionFrontEnd._lambda_fields,
    "sort": InstructionFrontEnd._sort_fields,
    "chunk": InstructionFrontEnd._chunk_fields,
    "iterate": InstructionFrontEnd._iterate_fields,
    "batch": InstructionFrontEnd._lanes_fields,
    "foreach": InstructionFrontEnd._lanes_fields,
}


def compile_instruction_all(text: str, path: str) -> tuple[list[Workflow], list[Diagnostic]]:
    """Every workflow of a document, and the front end's findings (without
    the dialect-independent analyses)."""
    fe, workflows = _front_end(text, path)
    return workflows, fe.sink.sorted()


def compile_instruction(text: str, path: str, name: str | None = None,
                        analyze: Callable[[Workflow], list[Diagnostic]] | None = None,
                        ) -> tuple[Workflow | None, list[Diagnostic]]:
    """The driver's front end: the document's first workflow, with the
    findings of every workflow in the document (the others are checked by
    ``analyze``, the driver's analysis, which the driver passes in: a front
    end does not import the analyses; the first is analysed by the driver).

    With ``name``, the workflow of that name, with its own findings and the
    document's (carriers, duplicate names): another workflow's errors don't
    stop it. A name no workflow has is an INS101 error."""
    fe, workflows = _front_end(text, path)
    if name is None:
        diags = fe.sink.sorted()
        for other in workflows[1:] if analyze is not None else ():
            diags.extend(analyze(other))
        return (workflows[0] if workflows else None), sorted(diags, key=Diagnostic.sort_key)
    position = next((i for i, (own_name, _wf, _found) in enumerate(fe.own) if own_name == name), None)
    if position is None:
        diags = fe.sink.sorted()
        names = ", ".join(n for n, _wf, _found in fe.own if n) or "none"
        diags.append(error("INS101", f"this document has no workflow named {name!r} (it has: {names})",
                           Span(path, 1, 1, 1, 2)))
        return None, diags
    others = {id(d) for i, (_n, _wf, found) in enumerate(fe.own) if i != position for d in found}
    return fe.own[position][1], sorted((d for d in fe.sink.items if id(d) not in others),
                                       key=Diagnostic.sort_key)


def _carried_name(carried: Carried) -> str | None:
    if carried.name is not None:
        return carried.name
    body = carried.body
    node = body.get("name") if isinstance(body, YMap) else None
    return node.value if isinstance(node, YScalar) and isinstance(node.value, str) else None


def workflow_names(text: str, path: str) -> list[str]:
    """The names of a document's workflows, read from the carriers alone
    (a workflow with errors still has its name)."""
    carried, _diags = locate(text, path)
    return [n for n in (_carried_name(c) for c in carried) if n is not None]


def _simple_graph(nodes: list[Node], edges: list[Edge]) -> G.Graph:
    """The dependency graph of one body's steps (parallel edges merged)."""
    g = G.Graph(multi=False)
    for n in nodes:
        g.add_node(n.id)
    for e in edges:
        if e.source in g and e.target in g:
            g.add_edge(e.source, e.target)
    return g
