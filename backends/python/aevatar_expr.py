"""aevatar IR expressions -> Python source over :mod:`aevatar_text`.

The generated text is a Python expression that names two things only:
``_rta`` (the module :mod:`flowc.runtime.aevatar_text`) and ``V``
(the run's variables: a dict of str to str, with ``input``, each finished
step's output under its id and ``steps.<id>.<field>`` keys, and the
variables ``assign`` wrote).

It compiles exactly the aevatar keys: Template with stringify ``aevatar``,
``aevatar.*`` calls, the ``aevatar.if`` conditional, string literals and
references with roots ``input``, ``vars`` and ``steps`` (flat dotted keys).
Anything else raises :class:`~flowc.backends.python.expr.ExprCompileError`.
User text reaches the output only as a ``str`` constant (``pysource.const``).

With ``case_insensitive`` the references use OrdinalIgnoreCase lookup (the
engine's while and foreach variable scopes).
"""

from __future__ import annotations

import functools
from types import CodeType
from typing import Any

from flowc.backends.python import pysource
from flowc.ir.expr import Call, Conditional, Expr, Literal, Ref, Template
from flowc.plan.kernel import flat_key
from flowc.plan.shape import PlanError
from flowc.runtime import aevatar_text as _rt_aevatar

__all__ = ["RUNTIME_NAME", "VARS_NAME", "AevatarCompileError", "compile_code", "compile_expr", "evaluate"]

RUNTIME_NAME = "_rta"
VARS_NAME = "V"

# key -> (helper, lazy)
_FUNCTIONS: dict[str, tuple[str, bool]] = {
    "aevatar.concat": ("concat", False),
    "aevatar.isblank": ("isblank", False),
    "aevatar.length": ("length", False),
    "aevatar.not": ("not_", False),
    "aevatar.and": ("and_", True),
    "aevatar.or": ("or_", True),
    "aevatar.upper": ("upper", False),
    "aevatar.lower": ("lower", False),
    "aevatar.trim": ("trim", False),
    "aevatar.json": ("json", False),
    "aevatar.add": ("add", True),
    "aevatar.sub": ("sub", True),
    "aevatar.mul": ("mul", True),
    "aevatar.div": ("div", True),
    "aevatar.eq": ("eq", False),
    "aevatar.lt": ("lt", True),
    "aevatar.lte": ("lte", True),
    "aevatar.gt": ("gt", True),
    "aevatar.gte": ("gte", True),
    "aevatar.fail": ("fail", False),
    "aevatar.conditional_test": ("conditional_test", False),
}
# stringify rule (a key of ir.semantics.STRINGIFY) -> the helper that joins
# a Template's parts by it.
_STRINGIFY: dict[str, str] = {"aevatar": "template"}

_MAX_DEPTH = 90  # brackets per level: Python refuses more than 200 nested


class AevatarCompileError(Exception):
    """The expression is not an aevatar expression this compiler knows."""


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise AevatarCompileError(f"aevatar values are strings, not {type(value).__name__}")
    return pysource.const(str(value))


def _expr(e: Expr, depth: int, ci: bool) -> str:
    if depth > _MAX_DEPTH:
        raise AevatarCompileError("expression is nested too deeply to compile")
    rt = RUNTIME_NAME
    if isinstance(e, Literal):
        return _str(e.value)
    if isinstance(e, Ref):
        return _ref(e, ci)
    if isinstance(e, Template):
        fn = _STRINGIFY.get(e.stringify)
        if fn is None:
            raise AevatarCompileError(f"unsupported stringify rule: {e.stringify!r}")
        return f"{rt}.{fn}({', '.join(_expr(p, depth + 1, ci) for p in e.parts)})"
    if isinstance(e, Conditional):
        if e.op != "aevatar.if":
            raise AevatarCompileError(f"unsupported conditional: {e.op!r}")
        return (f"({_expr(e.then, depth + 1, ci)} if {rt}.is_truthy({_expr(e.test, depth + 1, ci)}) "
                f"else {_expr(e.otherwise, depth + 1, ci)})")
    if isinstance(e, Call):
        spec = _FUNCTIONS.get(e.func)
        if spec is None:
            raise AevatarCompileError(f"unsupported function: {e.func!r}")
        name, lazy = spec
        if lazy:
            args = ", ".join(f"lambda: {_expr(a, depth + 1, ci)}" for a in e.args)
        else:
            args = ", ".join(_expr(a, depth + 1, ci) for a in e.args)
        return f"{rt}.{name}({args})"
    raise AevatarCompileError(f"unsupported expression: {type(e).__name__}")


def _ref(e: Ref, ci: bool) -> str:
    fn = "var_ci" if ci else "var"
    try:
        key = flat_key(e)
    except PlanError as exc:
        raise AevatarCompileError(str(exc)) from None
    return f"{RUNTIME_NAME}.{fn}({VARS_NAME}, {_str(key)})"


def compile_expr(expr: Expr, case_insensitive: bool = False) -> str:
    try:
        return _expr(expr, 0, case_insensitive)
    except RecursionError:
        raise AevatarCompileError("expression is nested too deeply to compile") from None


@functools.lru_cache(maxsize=4096)
def _code(source: str) -> CodeType:
    return compile(source, "<flowc aevatar expression>", "eval")


def compile_code(expr: Expr, case_insensitive: bool = False) -> CodeType:
    return _code(compile_expr(expr, case_insensitive))


_GLOBALS: dict[str, Any] = {"__builtins__": {}, RUNTIME_NAME: _rt_aevatar}


def evaluate(expr: Expr, variables: dict, case_insensitive: bool = False) -> str:
    """The string value of ``expr`` with ``variables``; raises
    ``aevatar_text.AevatarError`` when the engine would throw."""
    # One globals dict per evaluation: the lambdas of lazy arguments read V
    # as a global (eval's locals are not visible inside them).
    scope = dict(_GLOBALS)
    scope[VARS_NAME] = variables
    return eval(compile_code(expr, case_insensitive), scope)
