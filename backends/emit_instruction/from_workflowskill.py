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

A path WorkflowSkill may read as *undefined* (a field of a value that is
not an object, an absent key, a step that has not run) is written with a
test and read as null otherwise (:mod:`.absent`); an undefined argument or
object key is left out, as WorkflowSkill leaves it out. Declared step
output types are checked after the call, as WorkflowSkill checks them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs
from flowc.backends.emit_instruction import absent
from flowc.backends.emit_instruction import printer as P
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


@attrs.frozen
class Converted:
    """A value already written in CEL (an object entry that is never undefined)."""

    expr: E.Expr


class WfsToCel:
    """Rewrites WorkflowSkill expressions into CEL, reporting where the
    meaning differs."""

    def __init__(self, report: Report, kinds: Kinds) -> None:
        self.report = report
        self.kinds = kinds
        self.scope: dict[str, frozenset[str]] = {}
        self.result_ref: E.Ref | None = None     # what $result reads
        self.guarded: set[str] = set()           # steps that may be skipped
        self.transform_results: dict[str, str] = {}  # transform step -> the key of its result array
        self.each_steps: set[str] = set()            # steps with `each` (their output is an array)
        self.raw_steps: set[str] = set()             # tool steps whose output is the host's answer
        self.cel_only = False                    # write templates as CEL (inside a CEL expression)
        self.sources: set[str] = set()           # the source workflow's step ids
        self.int_inputs: set[str] = set()        # inputs declared int
        self.ready: set[str] = set()             # steps translated so far (their outputs exist)
        self.arm_entry: dict[str, str] = {}      # a step of a conditional's arm -> the arm's entry

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
        if isinstance(e, E.MapExpr) and all(isinstance(m.key, E.Literal) and isinstance(m.key.value, str)
                                            for m in e.entries):
            return self.object([(m.key.value, m.value) for m in e.entries], e.span)
        self._finding(f"{type(e).__name__} has no instruction form", e.span, "TRN101")
        return E.Literal(None, "null", e.span)

    def binary(self, e: E.Binary) -> E.Expr:
        target, rule = OPERATOR_RULES.get(e.op, (None, "none"))
        left_kinds = self.kinds_of(e.left)
        right_kinds = self.kinds_of(e.right)
        if rule == "truthy":
            return E.Binary(target, self.truthy(e.left, "wfs_truthy"), self.truthy(e.right, "wfs_truthy"), e.span)
        left, right = self.expr(e.left), self.expr(e.right)
        if rule == "equality":
            if not self._undefined_same(e.left, e.right):
                self._finding(f"`{e.op.split('.')[1]}`: a side may be undefined; WorkflowSkill finds undefined "
                              "equal to undefined only, the translation reads it as null", e.span)
            elif not _equality_same(e.left, left_kinds, e.right, right_kinds):
                self._finding(f"`{e.op.split('.')[1]}`: WorkflowSkill compares a number with a numeric string "
                              "by value, CEL never finds them equal; the types of these operands are not known "
                              "to rule that out", e.span)
            return E.Binary(target, left, right, e.span)
        if rule == "numbers":
            return self.compare(e, target, left, right)
        if rule == "contains":
            return self.contains(e, left, right, left_kinds)
        self._finding(f"operator {e.op} has no instruction form", e.span, "TRN101")
        return E.Literal(None, "null", e.span)

    def contains(self, e: E.Binary, left: E.Expr, right: E.Expr, left_kinds) -> E.Expr:
        """``a contains b``: membership for an array, else a case-insensitive
        substring test of ``String(a ?? '')``. Null or undefined on the left
        is the empty text, which holds a constant only when it is empty."""
        member = E.Binary("cel.in", right, left, e.span)
        needle = right.value if isinstance(right, E.Literal) and isinstance(right.value, str) else None
        if self.missing(e.right) is not None:
            self._finding("`contains`: the value sought may be undefined, which WorkflowSkill finds in no array; "
                          "the translation reads it as null", e.span)
            return member
        values = left_kinds - {"null"}
        if "null" in left_kinds and values and not needle:
            self._finding("`contains` on a value that may be null or undefined (the empty text in WorkflowSkill) "
                          "needs a constant non-empty text to seek", e.span)
            return member
        if values and values <= ARRAY:
            self.report.lowered("wfs.contains", "`in` (array membership)", e.span)
            return _and_not_null(left, member, left_kinds, e.span)
        if needle is None or not values <= {"string", "array", "bool"}:
            self._finding("`contains` is a case-insensitive substring test of the value as JavaScript writes it; "
                          "the text sought is not a constant or the value is not known to be text, a list or a "
                          "boolean", e.span)
            return E.Call("cel.contains", (E.Call("cel.string", (left,), e.span), right), e.span)
        if needle == "":
            # The empty text is in every text (null and undefined are the empty text).
            return member if values <= ARRAY else E.Conditional(
                "cel.ternary", absent.type_is(left, "list"), member, E.Literal(True, "bool"), e.span) \
                if "array" in values else E.Literal(True, "bool", e.span)
        pattern = E.Literal("(?i)" + _regex_escape(needle), "string", right.span)
        if values <= STRING:
            self.report.lowered("wfs.contains", "matches() with a case-insensitive pattern", e.span)
            return _and_not_null(left, E.Call("cel.matches", (left, pattern), e.span), left_kinds, e.span)
        text = E.Call("cel.matches", (E.Call("cel.string", (left,), e.span), pattern), e.span)
        self.report.lowered("wfs.contains", "a list test, else matches() with a case-insensitive pattern", e.span)
        test = E.Conditional("cel.ternary", absent.type_is(left, "list"), member, text, e.span) \
            if "array" in values else text
        return _and_not_null(left, test, left_kinds, e.span)

    def compare(self, e: E.Binary, target: str, left: E.Expr, right: E.Expr) -> E.Expr:
        """``<`` ``<=`` ``>`` ``>=``: WorkflowSkill compares numbers, null
        and undefined as 0 (runtime.to_number)."""
        sides = []
        for side, out in ((e.left, left), (e.right, right)):
            kinds = self.kinds_of(side)
            if not kinds <= NUMBER | {"null"}:
                self._finding(f"`{_SYMBOLS[e.op]}`: WorkflowSkill compares numbers only (text becomes a number, "
                              "or 0); CEL compares text as text; the operands are not known to be numbers",
                              e.span)
                return E.Binary(target, left, right, e.span)
            if "null" in kinds:
                self.report.lowered(e.op, "null and undefined as 0", e.span)
                out = E.Conditional("cel.ternary", E.Binary("cel.eq", out, E.Literal(None, "null")),
                                    E.Literal(0, "int"), out, out.span)
            sides.append(out)
        return E.Binary(target, sides[0], sides[1], e.span)

    def _undefined_same(self, left: E.Expr, right: E.Expr) -> bool:
        """Does reading undefined as null keep ``left == right``? Yes when
        neither side may be undefined, or the other is a non-null constant."""
        for side, other in ((left, right), (right, left)):
            if self.missing(side) is not None and not (isinstance(other, E.Literal) and other.value is not None):
                return False
        return True

    def truthy(self, e: E.Expr, rule: str) -> E.Expr:
        """``e`` as a CEL bool under WorkflowSkill truthiness ``rule``
        (``wfs_truthy``: [] is false; ``js_boolean``: [] is true)."""
        kinds = self.kinds_of(e)
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
        """A path, null where WorkflowSkill reads undefined (see :mod:`.absent`)."""
        access = self.access(e)
        return access.or_null() if access is not None else E.Literal(None, "null", e.span)

    def _resolved(self, e: E.Ref) -> E.Ref:
        if e.root == "result" and self.result_ref is not None:
            return E.Ref(self.result_ref.root, self.result_ref.path + e.path, e.span)
        return e

    def access(self, e: E.Ref, report: bool = True) -> absent.Access | None:
        """The path as a presence test and the value it reads when the test
        holds; ``None`` when a segment has no faithful form (reported)."""
        e = self._resolved(e)
        root, path = e.root, e.path
        ran: E.Expr | None = None
        if root == "steps" and path and isinstance(path[0], E.Field) and path[0].name in self.sources:
            step = path[0].name
            if step not in self.ready:
                # Not run yet at this point (a later step, or the conditional an arm belongs to): undefined.
                return absent.Access(absent.NEVER, E.Literal(None, "null", e.span))
            if step in self.arm_entry:
                # A step of a conditional's arm has an output only when the arm ran (a pruned step's is null).
                ran = E.Binary("cel.eq", E.Ref("steps", (E.Field(self.arm_entry[step]), E.Field("status"))),
                               _lit("done"))
        known = self._resolving_prefix(e)
        base = E.Ref(root, tuple(self._segment(s) for s in path[:known]), e.span)
        out = absent.walk(base, self.static_kinds(E.Ref(root, path[:known])), path[known:], self._index)
        if out is None:
            if report:
                self._finding("an index that is not a whole number: WorkflowSkill reads undefined where CEL fails",
                              e.span)
            return None
        return absent.Access(absent.both(ran, out.test), out.value) if ran is not None else out

    def missing(self, e: E.Expr) -> E.Expr | None:
        """The test that ``e`` (a WorkflowSkill expression) is not undefined;
        ``None`` when it never is."""
        if isinstance(e, E.Template) and e.typed_whole and len(e.parts) == 1:
            e = e.parts[0]
        if not isinstance(e, E.Ref):
            return None
        access = self.access(e, report=False)
        return access.test if access is not None else None

    def kinds_of(self, e: E.Expr) -> frozenset[str]:
        """Static kinds of ``e`` as translated (undefined reads as null)."""
        kinds = self.static_kinds(e)
        return kinds | {"null"} if self.missing(e) is not None else kinds

    def static_kinds(self, e: E.Expr) -> frozenset[str]:
        """Static kinds, corrected where a run can differ from the declared
        shapes: any input may be given as null, a default notwithstanding;
        an ``each`` step gives an array; a tool step without output
        mappings gives the host's answer, whatever it is; a transform that
        always runs gives its result array."""
        kinds = self.kinds.of(e, self.scope)
        if isinstance(e, E.Template) and e.typed_whole and len(e.parts) == 1:
            e = e.parts[0]
        if not isinstance(e, E.Ref):
            return kinds
        path = e.path
        if e.root == "inputs" and len(path) == 1:
            return kinds | {"null"}
        if e.root != "steps" or len(path) < 2 or not all(isinstance(s, E.Field) for s in path[:2]) \
                or path[1].name != "output":
            return kinds
        step = path[0].name
        if step in self.each_steps:
            return ARRAY | {"null"} if len(path) == 2 else ANY
        if step in self.raw_steps and len(path) == 2:
            return ANY
        if len(path) == 3 and isinstance(path[2], E.Field) and self.transform_results.get(step) == path[2].name:
            return ARRAY
        return kinds

    def _resolving_prefix(self, e: E.Ref) -> int:
        """How many segments of ``e`` always resolve: a given input, a step's
        output, a transform's result array."""
        path = e.path
        if e.root in ("inputs",) and path and isinstance(path[0], E.Field):
            return 1
        if e.root == "steps" and len(path) >= 2 and all(isinstance(s, E.Field) for s in path[:2]) \
                and path[1].name == "output":
            result_key = self.transform_results.get(path[0].name)
            if len(path) >= 3 and isinstance(path[2], E.Field) and path[2].name == result_key:
                return 3
            return 2
        return 0

    def _segment(self, seg):
        if isinstance(seg, E.Field) and not _cel_name(seg.name):
            return E.Index(E.Literal(seg.name, "string", seg.span), seg.span)
        if isinstance(seg, E.Index):
            return E.Index(self.expr(seg.index), seg.span)
        return seg

    def _index(self, index: E.Expr) -> tuple[E.Expr, bool]:
        """A computed index and whether it is a whole number >= 0 (``$index``)."""
        whole = isinstance(index, E.Ref) and index.root == "index" and not index.path
        return self.expr(index), whole

    def object(self, entries: list[tuple[str, E.Expr | Converted]], span: Span,
               plain: Callable[[E.Expr], E.Expr] | None = None) -> E.Expr:
        """An object from WorkflowSkill values: a key whose value is
        undefined is left out, as WorkflowSkill leaves it out. Without such
        a value it is a map of ``plain(value)`` (default: CEL); with some,
        a choice between the objects with and without their keys."""
        tests = [None if isinstance(value, Converted) else self.missing(value) for _, value in entries]
        if all(t is None for t in tests):
            leaf = plain or self.expr
            return E.MapExpr(tuple(E.MapEntry(_lit(k), v.expr if isinstance(v, Converted) else leaf(v))
                                   for k, v in entries), span)
        saved, self.cel_only = self.cel_only, True
        try:
            return self._object(entries, span)
        finally:
            self.cel_only = saved

    def _object(self, entries: list[tuple[str, E.Expr | Converted]], span: Span) -> E.Expr:
        parts: list[tuple[str, E.Expr, E.Expr | None]] = []
        for key, value in entries:
            if isinstance(value, Converted):
                parts.append((key, value.expr, None))
                continue
            test = self.missing(value)
            if test is None:
                parts.append((key, self.expr(value), None))
                continue
            access = self.access(value if isinstance(value, E.Ref) else value.parts[0], report=False)
            self.expr(value)  # reports what the path needs reported
            parts.append((key, access.value, test))
        if sum(t is not None for _, _, t in parts) > absent.MAX_ABSENT:
            self._finding(f"more than {absent.MAX_ABSENT} values of this object may be undefined; WorkflowSkill "
                          "leaves their keys out, the translation writes them as null", span)
            return E.MapExpr(tuple(E.MapEntry(_lit(k), v if t is None else E.Conditional(
                "cel.ternary", t, v, E.Literal(None, "null"))) for k, v, t in parts), span)
        return absent.objects(parts, span)

    def template(self, e: E.Template) -> E.Expr:
        """A ``${...}`` template: a ``{{ }}`` template when every placeholder
        is a path, else CEL string concatenation. Text is the same where a
        placeholder holds text, a boolean, an integer, null or undefined
        (both ''); JavaScript writes a double (2.0 as 2) and an object
        (integer-like keys first) its own way."""
        parts = []
        placeholders = []
        for p in e.parts:
            if isinstance(p, E.Literal):
                parts.append(p)
                placeholders.append(p)
                continue
            if not e.typed_whole and not self._as_text_alike(p):
                self._finding("a placeholder whose value may be a double, a list or an object: JavaScript writes "
                              "it as text differently (2.0 as 2, integer-like keys first)", p.span)
            parts.append(self.expr(p))
            placeholders.append(self.placeholder(p) if isinstance(p, E.Ref) else None)
        if not self.cel_only and all(p is not None for p in placeholders) and not any(
                isinstance(p, E.Literal) and "{{" in str(p.value) for p in parts):
            return E.Template(tuple(placeholders), "json", e.typed_whole, e.span)
        if e.typed_whole:
            return parts[0]
        self.report.lowered("template", "CEL string concatenation", e.span)
        total: E.Expr | None = None
        for original, p in zip(e.parts, parts, strict=True):
            piece = p if isinstance(p, E.Literal) else self._stringify(original, p)
            total = piece if total is None else E.Binary("cel.add", total, piece, e.span)
        return total if total is not None else E.Literal("", "string", e.span)

    def _as_text_alike(self, e: E.Expr) -> bool:
        """Do WorkflowSkill and a dialect-3 template write ``e`` as the same text?"""
        kinds = self.kinds_of(e)
        if kinds <= {"string", "bool", "null"}:
            return True
        if self._array_length(e):
            return True  # an array's length is an integer, which both write alike
        # An input declared int holds an integer (or null), which both write alike.
        return kinds <= NUMBER | {"null"} and isinstance(e, E.Ref) and e.root == "inputs" and len(e.path) == 1 \
            and isinstance(e.path[0], E.Field) and e.path[0].name in self.int_inputs

    def _array_length(self, e: E.Expr) -> bool:
        """``x.length`` of an ``x`` known to be an array (or null, or undefined)."""
        if not (isinstance(e, E.Ref) and e.path and isinstance(e.path[-1], E.Field) and e.path[-1].name == "length"):
            return False
        return self.kinds_of(E.Ref(e.root, e.path[:-1], e.span)) <= ARRAY | {"null"}

    def placeholder(self, e: E.Ref) -> E.Expr | None:
        """``e`` as a ``{{ }}`` placeholder: its path, or ``{{ path | null }}``
        when it may be undefined and the template path fails exactly where
        WorkflowSkill reads undefined (object keys only: an index or
        ``.length`` reads differently). ``None``: no placeholder form."""
        access = self.access(e, report=False)
        if access is None or not isinstance(access.value, E.Ref):
            return None
        if access.test is None:
            return access.value
        resolved = self._resolved(e)
        rest = resolved.path[self._resolving_prefix(resolved):]
        if not all(isinstance(s, E.Field) and s.name != "length" and not s.name.isdigit() for s in rest):
            return None
        return E.Call("tmpl.default", (access.value, E.Literal(None, "null")), e.span)

    def _stringify(self, original: E.Expr, out: E.Expr) -> E.Expr:
        """A placeholder's text (null and undefined are ''; a double or an
        object has already been reported)."""
        kinds = self.kinds_of(original)
        text = out if kinds <= STRING | {"null"} else E.Call("cel.string", (out,), out.span)
        if "null" in kinds:
            return E.Conditional("cel.ternary", E.Binary("cel.eq", out, E.Literal(None, "null")),
                                 E.Literal("", "string"), text, out.span)
        return text


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
        self.cel.sources = set(self.by_id)
        self.cel.int_inputs = {p.name for p in wf.inputs if p.type.kind == "int"}
        self.cel.each_steps = {n.id for n in wf.nodes if n.iteration is not None}
        self.cel.raw_steps = {n.id for n in wf.nodes if n.op == "call" and not any(
            b.value is not None for b in n.outputs)}
        # A transform that always runs has its result array under its first output's key.
        self.cel.transform_results = {
            n.id: n.outputs[0].name if n.outputs else "items" for n in wf.nodes
            if n.op.startswith("transform.") and n.id not in self.cel.guarded and n.iteration is None}
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
        if wf.inputs:
            meta["inputs_schema"] = P.inputs_schema(wf, nullable=True)
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
            self.cel.ready.add(sid)
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
        args = self.cel.object([(b.name, b.value) for b in node.inputs if b.value is not None], node.span,
                               self.value)
        retry, _ = self._policies(node)
        mapped = any(b.value is not None for b in node.outputs)
        checked = bool(self.declared_types(node))
        ignore = node.on_error.action == "ignore"
        guard = self._guard(node)
        call_attrs = (_attr("capability", _lit("tool")), _attr("name", _lit(tool_name)),
                      _attr("name", _lit(tool_name)), _attr("args", _args_value(args)))
        if node.iteration is None:
            if not (mapped or ignore or checked):
                graph.add(Node(node.id, "call", "tool", node.span, node.description, attrs=call_attrs,
                               guard=guard, retry=retry), deps)
                return node.id
            call_id = graph.fresh(f"{node.id}_call")
            graph.add(Node(call_id, "call", "tool", node.span, node.description, attrs=call_attrs, guard=guard,
                           retry=retry, on_error=ErrorPolicy("continue" if ignore else "fail")), deps)
            self.report.lowered("step outputs" if mapped or checked else "on_error: ignore",
                                "a template step that maps the call's result", node.span)
            before = call_id
            if checked and not ignore:
                # WorkflowSkill fails the step when an output has another type than declared.
                before = graph.fresh(f"{node.id}_check")
                graph.add(Node(before, "assert", "assert", node.span, attrs=(
                    _attr("condition", self.types_hold(node, call_id)),
                    _attr("message", _lit(f"step {node.id!r}: an output has another type than declared")))),
                    [call_id])
                self.report.lowered("declared output types", "an assert on the types", node.span)
            graph.add(Node(node.id, "assign", "template", node.span,
                           attrs=(_attr("value", self.result_value(node, call_id, ignore)),)), [before])
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
        body.add(Node("failed", "assign", "template", node.span,
                      attrs=(_attr("value", self.item_failed(node, "call")),)), ["call"])
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

    @staticmethod
    def declared_types(node: Node) -> list[tuple[str, str]]:
        """The outputs whose declared type WorkflowSkill checks after the step (codegen._dispatch)."""
        return [(b.name, b.type.kind) for b in node.outputs if b.type.kind in _TYPE_TESTS]

    def _output_entries(self, node: Node, raw: E.Ref) -> list[tuple[str, E.Expr | Converted]]:
        """The mapped step output's entries: a mapped value, or the raw
        result's key (null when absent or the result is no object)."""
        entries: list[tuple[str, E.Expr | Converted]] = []
        for b in node.outputs:
            if b.value is not None:
                entries.append((b.name, b.value))
            else:
                entries.append((b.name, Converted(_key_or_null(raw, b.name))))
        return entries

    def types_hold(self, node: Node, call_id: str) -> E.Expr:
        """Do the step's outputs have their declared types (null and absent
        outputs always do)? Over the mapped output, or the raw result when
        it is an object."""
        raw = E.Ref("steps", (E.Field(call_id), E.Field("output")))
        declared = self.declared_types(node)
        self.cel.result_ref = raw
        try:
            if any(b.value is not None for b in node.outputs):
                values = {}
                for key, value in self._output_entries(node, raw):
                    values[key] = value.expr if isinstance(value, Converted) else self.cel.expr(value)
                tests = [_type_test(values[name], kind) for name, kind in declared]
                return _all(tests)
            tests = [_type_test(_key_or_null(raw, name), kind) for name, kind in declared]
            return E.Binary("cel.or", E.Unary("cel.not", absent.type_is(raw, "map")), _all(tests))
        finally:
            self.cel.result_ref = None

    def item_failed(self, node: Node, call_id: str) -> E.Expr:
        """Did the call fail, or its outputs break their declared types?"""
        failed: E.Expr = E.Binary("cel.ne", E.Ref("steps", (E.Field(call_id), E.Field("error"))),
                                  E.Literal(None, "null"))
        if self.declared_types(node):
            failed = E.Binary("cel.or", failed, E.Unary("cel.not", self.types_hold(node, call_id)))
        return failed

    def result_value(self, node: Node, call_id: str, ignore: bool) -> E.Expr:
        """The step's output from the call's raw result (WorkflowSkill's output mapping)."""
        raw = E.Ref("steps", (E.Field(call_id), E.Field("output")))
        self.cel.result_ref = raw
        if any(b.value is not None for b in node.outputs):
            value: E.Expr = self.cel.object(self._output_entries(node, raw), node.span)
        else:
            value = raw
        self.cel.result_ref = None
        if ignore:
            value = E.Conditional("cel.ternary", self.item_failed(node, call_id), E.Literal(None, "null"), value,
                                  node.span)
        return value

    def value(self, e: E.Expr) -> E.Expr:
        """A value position: data stays data, a lone reference becomes a
        ``{{ path }}`` template (which keeps the value's type)."""
        if isinstance(e, E.Literal):
            return e
        if isinstance(e, E.Ref) and self.cel.missing(e) is not None:
            self.cel.expr(e)  # reports what the path needs reported
            path = self.cel.placeholder(e)
            if path is not None:
                return E.Template((path,), "json", True, e.span)
        out = _as_data(self.cel.expr(e))
        if isinstance(out, E.Ref) and all(isinstance(s, E.Field) or (
                isinstance(s.index, E.Literal) and isinstance(s.index.value, int)) for s in out.path):
            return E.Template((out,), "json", True, out.span)
        return out

    # ---------------------------------------------------------------- transforms
    def transform(self, graph: _Graph, node: Node, deps: list[str]) -> str:
        op = node.op.split(".", 1)[1]
        self.cel.scope = {}
        over = self.transform_items(node)
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

    def transform_items(self, node: Node) -> E.Expr:
        """The array a transform works on (runtime.transform_items): the
        ``items`` input if it is an array, else the first input that is an
        array, else the first input in a list (none when it is null or
        undefined)."""
        bound = [b for b in node.inputs if b.value is not None]
        if not bound:
            return E.ListExpr((), node.span)
        order = sorted(bound, key=lambda b: b.name != "items")
        kinds = {b.name: self.cel.kinds_of(b.value) for b in bound}
        first = bound[0]
        if kinds[order[0].name] <= ARRAY:
            return self.value(order[0].value)
        values = {b.name: self.cel.expr(b.value) for b in bound}
        self.report.lowered("transform input", "a list test that takes the first array or wraps a single value",
                            node.span)
        v, k = values[first.name], kinds[first.name]
        out: E.Expr = E.ListExpr((v,)) if "null" not in k else E.ListExpr(()) if k <= {"null"} else \
            E.Conditional("cel.ternary", E.Binary("cel.eq", v, E.Literal(None, "null")), E.ListExpr(()),
                          E.ListExpr((v,)))
        if len(order) == 1 and k <= ARRAY | {"null"}:
            out = E.ListExpr(())
        for b in reversed(order):
            if "array" in kinds[b.name]:
                test = absent.type_is(values[b.name], "list") if not (len(order) == 1 and kinds[b.name] <= ARRAY | {
                    "null"}) else E.Binary("cel.ne", values[b.name], E.Literal(None, "null"))
                out = E.Conditional("cel.ternary", test, values[b.name], out)
        return out

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
            self.cel.arm_entry.update((t, entry) for t in targets if t not in self.placed)
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
            value = self._key_matched(E.Literal(None, "null"), frozenset({"null"}), keys, node.span)
        elif (test := self.cel.missing(output)) is not None:
            # An undefined output gives no outputs at all (runtime.exit_outputs).
            ref = output.parts[0] if isinstance(output, E.Template) else output
            self.cel.expr(output)  # reports what the path needs reported
            access = self.cel.access(ref, report=False)
            value = E.Conditional("cel.ternary", test, self._key_matched(
                access.value, self.cel.static_kinds(ref), keys, node.span), E.MapExpr(()), node.span)
        else:
            value = self._key_matched(self.cel.expr(output), self.cel.kinds_of(output), keys, node.span)
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
        # Anything but an object is the first output; the others are absent.
        first = E.MapExpr((E.MapEntry(_lit(keys[0]), value),))
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
            entries: list[tuple[str, E.Expr | Converted]] = []
            for b in self.wf.outputs:
                if b.value is not None:
                    entries.append((b.name, b.value))
                else:
                    entries.append((b.name, Converted(E.Conditional(
                        "cel.ternary", E.Binary("cel.and", E.Binary("cel.eq", E.Call("cel.type", (last_value,)),
                                                                     E.Ref("map", ())),
                                                 E.Binary("cel.in", _lit(b.name), last_value)),
                        E.Binary("cel.index", last_value, _lit(b.name)), E.Literal(None, "null")))))
            return _as_data(self.cel.object(entries, self.wf.span, self.value))
        last_kinds = self.cel.static_kinds(last_value) if isinstance(last_value, E.Ref) else frozenset({"null"})
        if last in self.cel.transform_results:
            last_kinds = OBJECT
        return self._key_matched(last_value, last_kinds, keys, self.wf.span)


# Declared type -> the CEL test that a value has it (runtime.type_matches:
# null fits every type; a whole double is an int, as JSON cannot tell).
_TYPE_TESTS: dict[str, tuple[str, ...]] = {
    "string": ("string",), "bool": ("bool",), "array": ("list",), "object": ("map",),
    "float": ("int", "double"), "int": ("int", "whole double"),
}


def _type_test(value: E.Expr, kind: str) -> E.Expr:
    """``value`` is null or has the declared type ``kind`` (bound once, as ``x``)."""
    x = E.Ref("x", ())
    test: E.Expr = E.Binary("cel.eq", x, E.Literal(None, "null"))
    for name in _TYPE_TESTS[kind]:
        if name == "whole double":
            test = E.Binary("cel.or", test, E.Binary("cel.and", absent.type_is(x, "double"), _whole_double(x)))
        else:
            test = E.Binary("cel.or", test, absent.type_is(x, name))
    return E.Call("cel.all", (E.ListExpr((value,)), E.Lambda(("x",), test)))


def _whole_double(v: E.Expr) -> E.Expr:
    """``v`` (a double) is a whole number: in the exact range, it survives
    int(); beyond 2**53 every finite double is whole."""
    big = E.Literal(9.0e15, "float")
    top = E.Literal(1.7976931348623157e308, "float")
    exact = E.Binary("cel.and", E.Binary("cel.and", E.Binary("cel.gt", v, E.Unary("cel.neg", big)),
                                         E.Binary("cel.lt", v, big)),
                     E.Binary("cel.eq", E.Call("cel.double", (E.Call("cel.int", (v,)),)), v))
    high = E.Binary("cel.and", E.Binary("cel.ge", v, big), E.Binary("cel.le", v, top))
    low = E.Binary("cel.and", E.Binary("cel.le", v, E.Unary("cel.neg", big)),
                   E.Binary("cel.ge", v, E.Unary("cel.neg", top)))
    return E.Binary("cel.or", E.Binary("cel.or", exact, high), low)


def _all(tests: list[E.Expr]) -> E.Expr:
    out = tests[0]
    for t in tests[1:]:
        out = E.Binary("cel.and", out, t)
    return out


def _key_or_null(value: E.Ref, key: str) -> E.Expr:
    """``value[key] ?? null`` for an object, null for anything else (runtime.key_or_null)."""
    seg = E.Field(key) if _cel_name(key) else E.Index(_lit(key))
    return E.Conditional("cel.ternary", E.Binary("cel.and", absent.type_is(value, "map"),
                                                 E.Binary("cel.in", _lit(key), value)),
                         E.Ref(value.root, value.path + (seg,)), E.Literal(None, "null"))


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


def _args_value(args: E.Expr) -> E.Expr:
    if not isinstance(args, E.MapExpr):
        return args
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
