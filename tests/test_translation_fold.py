"""Constant folding in translation computes what the compiled workflow computes.

translation.fold evaluates a reference-free aevatar expression with
aevatar_text's functions; the Python backend compiles the same expression
(backends/python/aevatar_expr.py) and runs it. For random expressions
both give the same text, or both refuse (the engine throws, or the
expression is not one the compiler takes)."""

from __future__ import annotations

from flowc.backends.python import aevatar_expr
from flowc.ir import expr as E
from flowc.ir.semantics import FUNCTIONS
from flowc.runtime import aevatar_text
from flowc.translation.fold import _PURE, NotFoldable, fold
from hypothesis import given, settings
from hypothesis import strategies as st

TEXTS = st.sampled_from(["", " ", "0", "1", "2.5", "-3", "1e3", "true", "False", "abc", "Ab C", "[1,2]",
                         '{"a": 1}', "NaN", "\u00a0"])
LEAVES = st.one_of(TEXTS.map(lambda v: E.Literal(v, "string")),
                   st.sampled_from([E.Literal(3, "int"), E.Literal(None, "null")]))



def _extend(children):
    def call(key):
        arity = FUNCTIONS[key].arity if key in FUNCTIONS else 1
        n = st.integers(1, 3) if arity < 0 else st.just(arity)
        return n.flatmap(lambda k: st.lists(children, min_size=k, max_size=k)).map(
            lambda args: E.Call(key, tuple(args)))
    calls = st.sampled_from(sorted(_PURE) + ["aevatar.unknown"]).flatmap(call)
    templates = st.lists(children, min_size=1, max_size=3).map(lambda ps: E.Template(tuple(ps), "aevatar"))
    conditionals = st.tuples(children, children, children).map(lambda t: E.Conditional("aevatar.if", *t))
    return st.one_of(calls, templates, conditionals)


EXPRESSIONS = st.recursive(LEAVES, _extend, max_leaves=12)


def _compiled(e: E.Expr):
    try:
        return ("text", aevatar_expr.evaluate(e, {}))
    except (aevatar_text.AevatarError, aevatar_expr.AevatarCompileError):
        return ("refused",)


def _folded(e: E.Expr):
    try:
        return ("text", fold(e))
    except (aevatar_text.AevatarError, NotFoldable):
        return ("refused",)


@settings(max_examples=400, deadline=None)
@given(EXPRESSIONS)
def test_fold_is_the_compiled_expression(e):
    assert _folded(e) == _compiled(e)


def test_fold_examples():
    concat = E.Call("aevatar.concat", (E.Literal("a", "string"), E.Literal("b", "string")))
    assert fold(concat) == "ab"
    assert fold(E.Call("aevatar.add", (E.Literal("1", "string"), E.Literal("2", "string")))) == "3"
    deep: E.Expr = E.Literal("x", "string")
    for _ in range(95):
        deep = E.Call("aevatar.trim", (deep,))
    assert _folded(deep) == _compiled(deep) == ("refused",)
