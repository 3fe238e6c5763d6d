"""IR expressions -> Python source expressions over the run-time helpers.

The generated text is a Python *expression* that refers to two names only:

- ``_rt``: the module :mod:`flowc.runtime.sequence_run` (generated
  modules ``import ... runtime as _rt``);
- ``env``: a dict holding the roots of the WorkflowSkill context under the
  keys ``"inputs"`` (dict), ``"steps"`` (dict: step id -> ``{"output": value}``),
  ``"item"``, ``"index"`` and ``"result"``. An absent key is a missing value
  (JavaScript undefined), so ``$item`` outside ``each`` is MISSING.

Safety: nothing from the source document reaches the generated text except
as ``repr()`` of a plain ``str``/``int``/``float``/``bool``/``None`` constant
(computed with the base type's ``__repr__``, so a subclass can't change it).
Every other piece of text is chosen from the fixed tables below; an operator,
root or node the tables don't know is refused at compile time. Evaluation
(:func:`evaluate`) runs the code with no builtins.

Only WorkflowSkill meanings (``wfs.*`` operators and the ``wfs`` stringify
rule) are implemented here; other dialects' keys raise
:class:`ExprCompileError`.
"""

from __future__ import annotations

import functools
from types import CodeType
from typing import Any

from flowc.backends.python import pysource
from flowc.ir.expr import (
    Binary,
    Call,
    Expr,
    Field,
    Index,
    ListExpr,
    Literal,
    MapExpr,
    Ref,
    Template,
    Unary,
)
from flowc.runtime import wfs as _runtime

__all__ = [
    "ENV_NAME",
    "ENV_ROOTS",
    "RUNTIME_NAME",
    "ExprCompileError",
    "compile_code",
    "compile_expr",
    "evaluate",
]

RUNTIME_NAME = "_rt"
ENV_NAME = "env"

# The roots a WorkflowSkill reference can name; any other root compiles to
# code that raises EvalError("Unknown reference: $name") when evaluated.
ENV_ROOTS: frozenset[str] = frozenset({"inputs", "steps", "item", "index", "result"})

_BINARY: dict[str, str] = {
    "wfs.eq": "wfs_eq",
    "wfs.ne": "wfs_ne",
    "wfs.lt": "wfs_lt",
    "wfs.le": "wfs_le",
    "wfs.gt": "wfs_gt",
    "wfs.ge": "wfs_ge",
    "wfs.contains": "wfs_contains",
}
# `&&` / `||` chains become one call over all operands (both evaluate every
# operand, left to right, and return a boolean), so long chains don't nest.
_CHAIN: dict[str, str] = {"wfs.and": "wfs_all", "wfs.or": "wfs_any"}
_STRINGIFY: dict[str, str] = {"wfs": "wfs_template"}
# The functions of the outputs' rules (ir/dialects/workflowskill.py FUNCTIONS).
_CALLS: dict[str, str] = {"wfs.compact": "compact", "wfs.pick": "key_or_null"}

# Python's parser refuses more than 200 nested brackets in one expression.
_MAX_BRACKETS = 200


class ExprCompileError(Exception):
    """The expression can't be compiled (unsupported node or operator, a
    constant that isn't plain data, or nesting too deep for Python)."""


def _too_deep() -> ExprCompileError:
    return ExprCompileError("expression is nested too deeply to compile")


def _const(value: Any) -> str:
    """Python source for a plain constant (see pysource.const)."""
    try:
        return pysource.const(value, RUNTIME_NAME)
    except pysource.NotAConstant as exc:
        raise ExprCompileError(str(exc)) from None


def _data(value: Any, depth: int) -> str:
    """Python source that builds a fresh copy of a JSON-shaped constant;
    ``depth`` is the number of brackets already open around it."""
    if depth >= _MAX_BRACKETS:
        raise _too_deep()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_data(v, depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise ExprCompileError(f"object key is not a string: {type(k).__name__}")
            items.append(_const(k) + ": " + _data(v, depth + 1))
        return "{" + ", ".join(items) + "}"
    return _const(value)


def _expr(e: Expr, depth: int) -> str:
    """Python source for ``e``; ``depth`` is the number of brackets already
    open around it (checked against Python's limit as it grows)."""
    if depth >= _MAX_BRACKETS:
        raise _too_deep()
    rt = RUNTIME_NAME
    if isinstance(e, Literal):
        return _data(e.value, depth)
    if isinstance(e, Ref):
        return _ref(e, depth)
    if isinstance(e, Binary):
        if e.op in _CHAIN:
            args = ", ".join(_expr(x, depth + 2) for x in _chain(e))
            return f"{rt}.{_CHAIN[e.op]}(({args},))"
        fn = _BINARY.get(e.op)
        if fn is None:
            raise ExprCompileError(f"unsupported operator: {e.op!r}")
        return f"{rt}.{fn}({_expr(e.left, depth + 1)}, {_expr(e.right, depth + 1)})"
    if isinstance(e, Unary):
        if e.op != "wfs.not":
            raise ExprCompileError(f"unsupported operator: {e.op!r}")
        # `!!!x`: fold the chain (each `!` gives a boolean by isTruthy).
        count = 0
        while isinstance(e, Unary) and e.op == "wfs.not":
            count += 1
            e = e.operand
        fn = "wfs_not" if count % 2 else "wfs_truthy"
        return f"{rt}.{fn}({_expr(e, depth + 1)})"
    if isinstance(e, Template):
        fn = _STRINGIFY.get(e.stringify)
        if fn is None:
            raise ExprCompileError(f"unsupported stringify rule: {e.stringify!r}")
        if e.typed_whole:
            if len(e.parts) != 1:
                raise ExprCompileError("a typed_whole template has exactly one part")
            return _expr(e.parts[0], depth)
        return f"{rt}.{fn}(({''.join(_expr(p, depth + 2) + ', ' for p in e.parts)}))"
    if isinstance(e, ListExpr):
        return "[" + ", ".join(_expr(x, depth + 1) for x in e.items) + "]"
    if isinstance(e, Call):
        fn = _CALLS.get(e.func)
        if fn is None:
            raise ExprCompileError(f"unsupported function: {e.func!r}")
        return f"{rt}.{fn}(" + ", ".join(_expr(x, depth + 1) for x in e.args) + ")"
    if isinstance(e, MapExpr):
        entries = ", ".join(f"{_expr(en.key, depth + 1)}: {_expr(en.value, depth + 1)}" for en in e.entries)
        return "{" + entries + "}"
    raise ExprCompileError(f"unsupported expression: {type(e).__name__}")


def _ref(e: Ref, depth: int) -> str:
    rt = RUNTIME_NAME
    if not isinstance(e.root, str):
        raise ExprCompileError("reference root is not a string")
    if e.root not in ENV_ROOTS:
        # Raises before any index is evaluated, as the reference does.
        return f"{rt}.unknown_ref({_const(e.root)})"
    # Runs of fields become one wfs_get_fields call; each index one
    # wfs_get_index call. The last group is the outermost call.
    groups: list[Any] = []
    for seg in e.path:
        if isinstance(seg, Field):
            if not isinstance(seg.name, str):
                raise ExprCompileError("field name is not a string")
            if groups and isinstance(groups[-1], list):
                groups[-1].append(seg.name)
            else:
                groups.append([seg.name])
        elif isinstance(seg, Index):
            groups.append(seg)
        else:
            raise ExprCompileError(f"unsupported path segment: {type(seg).__name__}")
    if depth + len(groups) + 2 >= _MAX_BRACKETS:
        raise _too_deep()
    code = f"{rt}.env_root({ENV_NAME}, {_const(e.root)})"
    for j, group in enumerate(groups):
        if isinstance(group, list):
            if len(group) == 1:
                code = f"{rt}.wfs_get_field({code}, {_const(group[0])})"
            else:
                code = f"{rt}.wfs_get_fields({code}, ({', '.join(_const(n) for n in group)},))"
        else:
            inner = depth + len(groups) - j  # brackets open around this call's arguments
            code = f"{rt}.wfs_get_index({code}, {_expr(group.index, inner)})"
    return code


def _chain(e: Binary) -> list[Expr]:
    """The operands of a left-nested chain of one operator, left to right."""
    op = e.op
    rights: list[Expr] = []
    node: Expr = e
    while isinstance(node, Binary) and node.op == op:
        rights.append(node.right)
        node = node.left
    return [node, *reversed(rights)]


def compile_expr(expr: Expr) -> str:
    """Python source for ``expr``: an expression over ``_rt`` and ``env``.

    Raises :class:`ExprCompileError` for nodes or operators other than the
    WorkflowSkill ones, and for expressions nested too deeply for Python.
    """
    try:
        return _expr(expr, 0)
    except RecursionError:
        raise _too_deep() from None


@functools.lru_cache(maxsize=4096)
def _code(source: str) -> CodeType:
    return compile(source, "<flowc expression>", "eval")


def compile_code(expr: Expr) -> CodeType:
    """``expr`` compiled to a code object (cached by its source text)."""
    source = compile_expr(expr)
    try:
        return _code(source)
    except (RecursionError, MemoryError):
        raise _too_deep() from None


_GLOBALS: dict[str, Any] = {"__builtins__": {}, RUNTIME_NAME: _runtime}


def evaluate(expr: Expr, env: dict) -> Any:
    """The value of ``expr`` in ``env`` (``{"inputs": ..., "steps": ...,
    "item"?: ..., "index"?: ..., "result"?: ...}``). A missing value is
    ``runtime.MISSING``; a run-time failure raises ``runtime.EvalError``."""
    return eval(compile_code(expr), _GLOBALS, {ENV_NAME: env})
