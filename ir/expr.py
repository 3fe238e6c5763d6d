"""One expression tree for every dialect.

Every node carries its source span. Where the dialects disagree about what a
symbol means, the node names the meaning explicitly: ``Binary.op`` is a key
of :data:`flowc.ir.semantics.OPERATORS` (``wfs.eq`` is not ``cel.eq``), and a
condition carries the truthiness rule it is tested with. Backends and
translators read those names; they never guess from the dialect.
"""

from __future__ import annotations

from typing import Any

import attrs
from flowc.ir.span import NO_SPAN, Span


class Expr:
    """Base of all expression nodes (a marker; every subclass is frozen attrs)."""

    span: Span

    def children(self) -> tuple[Expr, ...]:
        return ()


@attrs.frozen
class Literal(Expr):
    """A constant. ``kind`` disambiguates what JSON cannot: ``int`` vs ``uint``
    vs ``float``, and ``bytes`` (whose value is then a hex string)."""

    value: Any
    kind: str = "auto"  # null bool int uint float string bytes list object auto
    span: Span = NO_SPAN


@attrs.frozen
class Field:
    """``.name`` in a reference path."""

    name: str
    span: Span = NO_SPAN


@attrs.frozen
class Index:
    """``[expr]`` in a reference path."""

    index: Expr
    span: Span = NO_SPAN


Segment = Field | Index


@attrs.frozen
class Ref(Expr):
    """A reference: a root name (``inputs``, ``steps``, ``item``, ``index``,
    ``result``, ``vars``, ``input`` ...) followed by field and index segments.

    ``$steps.fetch.output.items[0]`` is ``Ref("steps", (Field("fetch"),
    Field("output"), Field("items"), Index(Literal(0))))``.
    """

    root: str
    path: tuple[Segment, ...] = ()
    span: Span = NO_SPAN

    def children(self) -> tuple[Expr, ...]:
        return tuple(seg.index for seg in self.path if isinstance(seg, Index))

    def step_id(self) -> str | None:
        """For ``steps.<id>...`` references, the step id."""
        if self.root == "steps" and self.path and isinstance(self.path[0], Field):
            return self.path[0].name
        return None


@attrs.frozen
class Unary(Expr):
    op: str  # key of semantics.OPERATORS, e.g. "wfs.not", "cel.neg"
    operand: Expr
    span: Span = NO_SPAN

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,)


@attrs.frozen
class Binary(Expr):
    op: str  # key of semantics.OPERATORS, e.g. "wfs.eq", "wfs.contains"
    left: Expr
    right: Expr
    span: Span = NO_SPAN

    def children(self) -> tuple[Expr, ...]:
        return (self.left, self.right)


@attrs.frozen
class Conditional(Expr):
    """``test ? then : otherwise`` (CEL ternary, aevatar ``if``)."""

    op: str  # which truthiness the test uses, e.g. "cel.ternary"
    test: Expr
    then: Expr
    otherwise: Expr
    span: Span = NO_SPAN

    def children(self) -> tuple[Expr, ...]:
        return (self.test, self.then, self.otherwise)


@attrs.frozen
class Call(Expr):
    """A function call; ``func`` is a key of semantics.FUNCTIONS (``cel.size``,
    ``aevatar.concat``). Method calls put the receiver first in ``args``."""

    func: str
    args: tuple[Expr, ...] = ()
    span: Span = NO_SPAN

    def children(self) -> tuple[Expr, ...]:
        return self.args


@attrs.frozen
class Lambda(Expr):
    """The body of a comprehension macro: ``x, x > 2`` in ``list.all(x, x > 2)``."""

    params: tuple[str, ...]
    body: Expr
    span: Span = NO_SPAN

    def children(self) -> tuple[Expr, ...]:
        return (self.body,)


@attrs.frozen
class ListExpr(Expr):
    items: tuple[Expr, ...] = ()
    span: Span = NO_SPAN

    def children(self) -> tuple[Expr, ...]:
        return self.items


@attrs.frozen
class MapEntry:
    key: Expr
    value: Expr
    span: Span = NO_SPAN


@attrs.frozen
class MapExpr(Expr):
    """An object built from expressions (CEL map literal, WorkflowSkill map
    ``expression``, exit ``output`` objects)."""

    entries: tuple[MapEntry, ...] = ()
    span: Span = NO_SPAN

    def children(self) -> tuple[Expr, ...]:
        out: list[Expr] = []
        for e in self.entries:
            out.append(e.key)
            out.append(e.value)
        return tuple(out)


@attrs.frozen
class Template(Expr):
    """A string with placeholders. ``parts`` alternate literal text
    (``Literal`` strings) and expressions. ``stringify`` names how a
    placeholder value becomes text (semantics.STRINGIFY). ``typed_whole`` is
    set when the template is exactly one placeholder and the dialect keeps
    the value's type (``"${inputs.n}"`` is the number 7, not "7")."""

    parts: tuple[Expr, ...]
    stringify: str
    typed_whole: bool = False
    span: Span = NO_SPAN

    def children(self) -> tuple[Expr, ...]:
        return self.parts


EXPR_CLASSES: tuple[type, ...] = (
    Literal, Ref, Unary, Binary, Conditional, Call, Lambda, ListExpr, MapExpr, Template,
)


def walk(expr: Expr):
    """Every node of an expression tree, parents before children."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children()))


def refs(expr: Expr):
    """Every reference in an expression tree."""
    for node in walk(expr):
        if isinstance(node, Ref):
            yield node


def strip_spans(value):
    """The same tree with every span cleared (for comparisons modulo spans)."""
    if isinstance(value, tuple):
        return tuple(strip_spans(v) for v in value)
    if attrs.has(type(value)):
        changes = {}
        for a in attrs.fields(type(value)):
            v = getattr(value, a.name)
            if a.name == "span":
                changes["span"] = NO_SPAN
            elif isinstance(v, tuple) or attrs.has(type(v)):
                changes[a.name] = strip_spans(v)
        return attrs.evolve(value, **changes) if changes else value
    return value
