"""WorkflowSkill expressions -> CEL, with WorkflowSkill's meaning.

:class:`WfsToCel` rewrites one WorkflowSkill expression (``$``-paths,
operators, templates) into the CEL dialect 3 evaluates. Each operator's
rule is in :data:`OPERATOR_RULES`: the CEL operator when the meaning is
the same for the values the static kinds allow, a lowering otherwise, or a
finding. A path WorkflowSkill may read as *undefined* is written with a
test and read as null otherwise (:mod:`.absent`); objects leave undefined
keys out. :mod:`.sequential` uses it for every expression of a
workflow it lowers.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from flowc.ir import expr as E
from flowc.ir.span import NO_SPAN, Span
from flowc.translation.instruction import absent
from flowc.translation.instruction.lowerings import OPERATOR_RULES
from flowc.translation.kinds import ANY, ARRAY, BOOL, NUMBER, OBJECT, STRING, Kinds, wfs_equality_is_cel
from flowc.translation.report import Report

__all__ = ["Converted", "WfsToCel", "lit"]


def lit(value, kind: str = "string") -> E.Literal:
    return E.Literal(value, kind)


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
            elif not wfs_equality_is_cel(e.left, left_kinds, e.right, right_kinds):
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
                               lit("done"))
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
        if isinstance(seg, E.Field) and not absent.cel_name(seg.name):
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
            return E.MapExpr(tuple(E.MapEntry(lit(k), v.expr if isinstance(v, Converted) else leaf(v))
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
            return E.MapExpr(tuple(E.MapEntry(lit(k), v if t is None else E.Conditional(
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
def _ref_with(base: E.Expr, segs: list) -> E.Expr:
    if isinstance(base, E.Ref):
        return E.Ref(base.root, base.path + tuple(segs), base.span)
    return base


def _and_not_null(value: E.Expr, test: E.Expr, kinds, span: Span) -> E.Expr:
    if "null" not in kinds:
        return test
    return E.Binary("cel.and", E.Binary("cel.ne", value, E.Literal(None, "null"), span), test, span)


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
