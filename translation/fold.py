"""Constant folding of aevatar expressions with the runtime's own functions.

A translation that knows every value an aevatar expression reads (literals,
or variables known on the path) writes the text the engine would compute:
the expression is evaluated here by :mod:`flowc.runtime.aevatar_text`,
the functions the compiled workflow runs, so the folded text is the
engine's by construction. Only the evaluator's pure functions fold.
"""

from __future__ import annotations

import keyword

from flowc.ir import expr as E
from flowc.ir.semantics import AEVATAR, FUNCTIONS
from flowc.runtime import aevatar_text

__all__ = ["NotFoldable", "fold"]

# The pure functions of aevatar's expression evaluator (no host, no state).
_PURE = frozenset({
    "aevatar.concat", "aevatar.isblank", "aevatar.length", "aevatar.not", "aevatar.and", "aevatar.or",
    "aevatar.upper", "aevatar.lower", "aevatar.trim", "aevatar.json", "aevatar.add", "aevatar.sub",
    "aevatar.mul", "aevatar.div", "aevatar.eq", "aevatar.lt", "aevatar.lte", "aevatar.gt", "aevatar.gte",
    "aevatar.fail", "aevatar.conditional_test",
})
_MAX_DEPTH = 90  # as deep as the Python backend compiles an aevatar expression


class NotFoldable(Exception):
    """The expression reads something unknown, or is not aevatar's."""


def fold(e: E.Expr) -> str:
    """The text ``e`` (without references) evaluates to; raises
    :class:`NotFoldable`, or ``aevatar_text.AevatarError`` when the engine
    would throw. The whole expression is checked first, the branches not
    taken too, as the backend compiles it whole."""
    _check(e, 0)
    return _value(e)


def _check(e: E.Expr, depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise NotFoldable("expression is nested too deeply")
    if isinstance(e, E.Literal):
        if not isinstance(e.value, str):
            raise NotFoldable(f"aevatar values are strings, not {type(e.value).__name__}")
        return
    if not (isinstance(e, E.Template) and e.stringify == AEVATAR.stringify) and \
            not (isinstance(e, E.Conditional) and e.op == "aevatar.if") and \
            not (isinstance(e, E.Call) and e.func in _PURE):
        raise NotFoldable(f"not a foldable aevatar expression: {type(e).__name__}")
    for child in e.children():
        _check(child, depth + 1)


def _helper(key: str):
    name = key.split(".", 1)[1]
    return getattr(aevatar_text, name + "_" if keyword.iskeyword(name) else name)


def _value(e: E.Expr) -> str:
    """``e``'s text; ``e`` passed :func:`_check`."""
    if isinstance(e, E.Literal):
        return e.value
    if isinstance(e, E.Template):
        return aevatar_text.template(*[_value(p) for p in e.parts])
    if isinstance(e, E.Conditional):
        return _value(e.then if aevatar_text.is_truthy(_value(e.test)) else e.otherwise)
    assert isinstance(e, E.Call)
    if FUNCTIONS[e.func].lazy:
        return _helper(e.func)(*[_thunk(a) for a in e.args])
    return _helper(e.func)(*[_value(a) for a in e.args])


def _thunk(e: E.Expr):
    return lambda: _value(e)
