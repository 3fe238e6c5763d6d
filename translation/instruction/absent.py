"""WorkflowSkill's *undefined* written in CEL.

A WorkflowSkill path that does not resolve (a field of a number, a key the
object lacks, an index past the end) is *undefined*; in CEL the same
access is an error that fails the step. A path is therefore split into the
part that always resolves (``inputs.x``, ``steps.s.output``, ``item`` ...)
and the rest, and each further segment is written with the test that says
whether WorkflowSkill would find it (:func:`walk`). The translation reads
the value only when the test holds and uses null otherwise, which is what
WorkflowSkill's undefined means wherever a value is tested, compared with
a constant or interpolated; where undefined and null differ (an undefined
argument, object key or output is left out), the test chooses between
objects with and without the key (:func:`objects`).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from flowc.ir import expr as E
from flowc.translation.kinds import ANY, ARRAY, OBJECT

__all__ = ["MAX_ABSENT", "NEVER", "Access", "both", "cel_name", "objects", "type_is", "walk"]

# Objects with more values that may be undefined than this are not spelled
# out (2**n variants); the translation reports them instead.
MAX_ABSENT = 3

_CEL_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                           "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
                           "void", "while"})


@attrs.frozen
class Access:
    """A path as CEL: ``value`` is what WorkflowSkill reads when ``test``
    holds (``None``: always); otherwise WorkflowSkill reads undefined."""

    test: E.Expr | None
    value: E.Expr

    def or_null(self) -> E.Expr:
        if self.test is None:
            return self.value
        if _never(self.test):
            return E.Literal(None, "null", self.value.span)
        return E.Conditional("cel.ternary", self.test, self.value, E.Literal(None, "null"), self.value.span)


NEVER = E.Literal(False, "bool")  # the test of a path that never resolves


def _never(test: E.Expr | None) -> bool:
    return isinstance(test, E.Literal) and test.value is False


def type_is(value: E.Expr, name: str) -> E.Expr:
    return E.Binary("cel.eq", E.Call("cel.type", (value,)), E.Ref(name, ()))


def both(a: E.Expr | None, b: E.Expr | None) -> E.Expr | None:
    """``a && b`` where ``None`` is a test that always holds."""
    return _and(a, b)


def _and(a: E.Expr | None, b: E.Expr | None) -> E.Expr | None:
    if a is None:
        return b
    if b is None:
        return a
    return E.Binary("cel.and", a, b)


def _or(a: E.Expr, b: E.Expr) -> E.Expr:
    return E.Binary("cel.or", a, b)


def cel_name(name: str) -> bool:
    """Can ``name`` follow a dot in CEL (an identifier that is not reserved)?"""
    return name.isidentifier() and name.isascii() and name not in _CEL_RESERVED


def _select(base: E.Expr, key: str) -> E.Expr:
    if isinstance(base, E.Ref):
        seg = E.Field(key) if cel_name(key) else E.Index(E.Literal(key, "string"))
        return E.Ref(base.root, base.path + (seg,), base.span)
    if cel_name(key):
        return E.Binary("cel.select", base, E.Literal(key, "string"))
    return E.Binary("cel.index", base, E.Literal(key, "string"))


def _index(base: E.Expr, index: E.Expr) -> E.Expr:
    if isinstance(base, E.Ref):
        return E.Ref(base.root, base.path + (E.Index(index),), base.span)
    return E.Binary("cel.index", base, index)


def _array_index(name: str) -> int:
    """``name`` as a canonical array index ("0", "12"), else -1 (runtime._array_index)."""
    if not name or len(name) > 15 or not (name.isascii() and name.isdigit()) or (name[0] == "0" and name != "0"):
        return -1
    return int(name)


def _key(base: E.Expr, key: str, kinds: frozenset[str]) -> Access:
    """``base.key`` / ``base["key"]``: an object's key; on an array, a
    canonical index or ``length`` (runtime.wfs_get_field)."""
    on_map = Access(_and(type_is(base, "map"), E.Binary("cel.in", E.Literal(key, "string"), base)), _select(base, key))
    if not kinds & ARRAY:
        return on_map
    if key == "length":
        on_list = Access(type_is(base, "list"), E.Call("cel.size", (base,)))
        if kinds <= ARRAY | {"null"}:
            return Access(None if kinds <= ARRAY else E.Binary("cel.ne", base, E.Literal(None, "null")),
                          on_list.value)
        return _either(base, on_list, on_map)
    position = _array_index(key)
    if position < 0:
        return on_map
    return _either(base, _position(base, E.Literal(position, "int")), on_map) if kinds & OBJECT \
        else _position(base, E.Literal(position, "int"))


def _position(base: E.Expr, index: E.Expr) -> Access:
    """``base[i]`` of an array, ``i`` a whole number >= 0."""
    return Access(_and(type_is(base, "list"), E.Binary("cel.lt", index, E.Call("cel.size", (base,)))),
                  _index(base, index))


def _either(base: E.Expr, on_list: Access, on_map: Access) -> Access:
    """An array access or an object access, whichever ``base`` is."""
    assert on_list.test is not None and on_map.test is not None
    return Access(_or(on_list.test, on_map.test),
                  E.Conditional("cel.ternary", type_is(base, "list"), on_list.value, on_map.value))


def _segment(base: E.Expr, seg, kinds: frozenset[str], index: Callable[[E.Expr], tuple[E.Expr, bool]]) \
        -> Access | None:
    """One segment after ``base`` (``None``: no faithful form)."""
    if isinstance(seg, E.Field):
        return _key(base, seg.name, kinds)
    i = seg.index
    if isinstance(i, E.Literal) and isinstance(i.value, str):
        return _key(base, i.value, kinds)
    if isinstance(i, E.Literal) and isinstance(i.value, int) and not isinstance(i.value, bool):
        if i.value < 0:
            return _key(base, str(i.value), kinds - ARRAY)
        return _key(base, str(i.value), kinds)
    converted, whole = index(i)
    if not whole:
        return None
    on_list = _position(base, converted)
    if not kinds & OBJECT:
        return on_list
    # An object is indexed by the number's text (String(i)); CEL's string() agrees on integers.
    text = E.Call("cel.string", (converted,))
    on_map = Access(_and(type_is(base, "map"), E.Binary("cel.in", text, base)), E.Binary("cel.index", base, text))
    return _either(base, on_list, on_map) if kinds & ARRAY else on_map


def walk(base: E.Expr, kinds: frozenset[str], segments: tuple,
         index: Callable[[E.Expr], tuple[E.Expr, bool]]) -> Access | None:
    """``base`` (which always resolves, with static ``kinds``) followed by
    ``segments``. ``index`` converts a computed index and says whether it
    is a whole number >= 0. ``None``: a segment has no faithful form."""
    test: E.Expr | None = None
    value = base
    for seg in segments:
        step = _segment(value, seg, kinds, index)
        if step is None:
            return None
        test = _and(test, step.test)
        value = step.value
        kinds = ANY
    return Access(test, value)


def objects(entries: list[tuple[str, E.Expr, E.Expr | None]], span) -> E.Expr:
    """An object whose key ``k`` is left out when its test fails (each entry
    is ``(key, value, test)``; ``value`` is read only when ``test`` holds)."""
    entries = [e for e in entries if not _never(e[2])]
    absent = [i for i, (_, _, test) in enumerate(entries) if test is not None]

    def build(chosen: tuple[int, ...], rest: list[int]) -> E.Expr:
        if not rest:
            return E.MapExpr(tuple(E.MapEntry(E.Literal(k, "string"), v) for i, (k, v, t) in enumerate(entries)
                                   if t is None or i in chosen), span)
        first, others = rest[0], rest[1:]
        return E.Conditional("cel.ternary", entries[first][2], build(chosen + (first,), others),
                             build(chosen, others), span)

    return build((), absent)
