"""Limits of one expression or constant (LIM101, LIM102), checked on the IR.

The front ends check an expression as they build it (a CEL guard deeper
than the limit is refused where it is written) and the analysis checks
every expression of a workflow (flowc.compiler.analyze.limits); both use
these functions. ``MAX_EXPR_DEPTH`` bounds the nesting of one expression,
``MAX_EXPR_ITEMS`` the arguments, elements, entries, parts or path
segments of one level, ``MAX_VALUE_DEPTH`` a constant's nesting. The walk
stops descending past the limit, so it is linear and its own recursion is
bounded by the limit, however deep the expression is.
"""

from __future__ import annotations

from flowc.ir import expr as E
from flowc.ir.diagnostics import Diagnostic, error
from flowc.ir.limits import MAX_EXPR_DEPTH, MAX_EXPR_ITEMS, MAX_VALUE_DEPTH
from flowc.ir.span import Span

__all__ = ["expr_limit_findings", "value_limit_findings"]


class _TooDeep(Exception):
    def __init__(self, span: Span) -> None:
        super().__init__()
        self.span = span


def expr_limit_findings(expr: E.Expr, fallback: Span | None = None) -> list[Diagnostic]:
    """LIM101 / LIM102 findings for one expression (at most one LIM101)."""
    out: list[Diagnostic] = []
    try:
        _expr(expr, 1, out, fallback or expr.span)
    except _TooDeep as exc:
        out.append(error("LIM101", f"the expression nests deeper than {MAX_EXPR_DEPTH} levels",
                         exc.span, "split it into steps, or name parts of it"))
    return out


def value_limit_findings(value, span: Span, limit: int = MAX_VALUE_DEPTH) -> list[Diagnostic]:
    """LIM101 for a constant (a default, a literal object) nested deeper than ``limit``."""
    try:
        _value(value, 0, limit, span)
    except _TooDeep:
        return [error("LIM101", f"the constant nests deeper than {limit} levels", span)]
    return []


def _where(e: E.Expr, fallback: Span) -> Span:
    span = getattr(e, "span", None)
    return span if span is not None and span.known else fallback


def _items(count: int, what: str, e: E.Expr, out: list[Diagnostic], fallback: Span) -> None:
    if count > MAX_EXPR_ITEMS:
        out.append(error("LIM102", f"{what} has {count} items; the limit is {MAX_EXPR_ITEMS}",
                         _where(e, fallback)))


def _expr(e: E.Expr, level: int, out: list[Diagnostic], fallback: Span) -> None:
    if level > MAX_EXPR_DEPTH:
        raise _TooDeep(_where(e, fallback))
    if isinstance(e, E.Literal):
        _value(e.value, level - 1, MAX_EXPR_DEPTH, _where(e, fallback))
        return
    if isinstance(e, E.Ref):
        _items(len(e.path), "the path", e, out, fallback)
        if level + len(e.path) > MAX_EXPR_DEPTH:
            raise _TooDeep(_where(e, fallback))
        for i, seg in enumerate(e.path):
            if isinstance(seg, E.Index):
                _expr(seg.index, level + i + 1, out, fallback)
        return
    if isinstance(e, E.Call):
        _items(len(e.args), f"the call of {e.func}", e, out, fallback)
    elif isinstance(e, E.ListExpr):
        _items(len(e.items), "the list", e, out, fallback)
    elif isinstance(e, E.MapExpr):
        _items(len(e.entries), "the map", e, out, fallback)
    elif isinstance(e, E.Template):
        _items(len(e.parts), "the template", e, out, fallback)
    for child in e.children():
        _expr(child, level + 1, out, fallback)


def _value(value, level: int, limit: int, span: Span) -> None:
    """Walk a constant; ``level`` levels are already open around it."""
    if isinstance(value, (list, tuple)):
        if level + 1 > limit:
            raise _TooDeep(span)
        for v in value:
            _value(v, level + 1, limit, span)
    elif isinstance(value, dict):
        if level + 1 > limit:
            raise _TooDeep(span)
        for v in value.values():
            _value(v, level + 1, limit, span)
