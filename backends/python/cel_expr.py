"""CEL IR expressions -> Python source over :mod:`flowc.runtime.cel`.

The generated text is a Python expression that names two things only:
``_c`` (the module :mod:`flowc.runtime.cel`) and ``env`` (a dict of the expression's
variables: ``inputs``, ``steps``, ``vars``, ``item`` ...). Macro variables
become parameters of Python lambdas (``_v0``, ``_v1`` ...), so a macro
variable shadows a variable of the same name, as in CEL.

Every ``cel.*`` operator and function key is one call of a :mod:`flowc.runtime.cel`
helper; ``&&``, ``||``, the ternary, ``has`` and the macros are the lazy
ones (thunks or Python's own conditional expression). Nothing from the
source reaches the generated text except through ``repr()`` of a plain
``str``/``int``/``float``/``bool``/``None`` value (by the base type's
``__repr__``); names, operators and functions are chosen from the fixed
tables below, and an unknown key is refused at compile time.

Templates of the instruction dialect (``Template(stringify="json")``,
``tmpl.default``) compile here too: their placeholders are paths that
resolve like CEL selections.
"""

from __future__ import annotations

import functools
from typing import Any

from flowc.backends.python import pysource
from flowc.ir.expr import (
    Binary,
    Call,
    Conditional,
    Expr,
    Field,
    Index,
    Lambda,
    ListExpr,
    Literal,
    MapExpr,
    Ref,
    Template,
    Unary,
)
from flowc.runtime import cel

__all__ = [
    "ENV_NAME",
    "RUNTIME_NAME",
    "CelCompileError",
    "compile_cel",
    "compile_cel_function",
    "compile_cel_lambda",
    "evaluate_cel",
]

RUNTIME_NAME = "_c"
ENV_NAME = "env"

_BINARY = {
    "cel.eq": "eq", "cel.ne": "ne", "cel.lt": "lt", "cel.le": "le", "cel.gt": "gt", "cel.ge": "ge",
    "cel.add": "add", "cel.sub": "sub", "cel.mul": "mul", "cel.div": "div", "cel.mod": "mod",
    "cel.in": "in_", "cel.index": "index",
}
_LAZY_BINARY = {"cel.and": "and_", "cel.or": "or_"}
_UNARY = {"cel.neg": "neg", "cel.not": "not_"}
_FUNCTIONS = {
    "cel.size": "size", "cel.contains": "contains", "cel.startsWith": "starts_with",
    "cel.endsWith": "ends_with", "cel.matches": "matches", "cel.int": "to_int", "cel.uint": "to_uint",
    "cel.double": "to_double", "cel.string": "to_string", "cel.bytes": "to_bytes", "cel.bool": "to_bool",
    "cel.dyn": "dyn", "cel.type": "type_of", "cel.duration": "duration", "cel.timestamp": "timestamp",
    "cel.getFullYear": "get_full_year", "cel.getMonth": "get_month", "cel.getDate": "get_date",
    "cel.getDayOfMonth": "get_day_of_month", "cel.getDayOfWeek": "get_day_of_week",
    "cel.getDayOfYear": "get_day_of_year", "cel.getHours": "get_hours", "cel.getMinutes": "get_minutes",
    "cel.getSeconds": "get_seconds", "cel.getMilliseconds": "get_milliseconds",
}
# the extension libraries' functions (strings, math, base64): every one a plain cel helper
_FUNCTIONS.update({key: fn.__name__ for key, fn in cel.EXT_DISPATCH.items()})
_MACROS = {"cel.all": "all_", "cel.exists": "exists", "cel.exists_one": "exists_one",
           "cel.filter": "filter_"}
# two-variable comprehensions: key -> (cel helper, whether a filter Lambda may precede the body)
_MACROS2 = {"cel.all2": ("all2", False), "cel.exists2": ("exists2", False),
            "cel.exists_one2": ("exists_one2", False), "cel.transformList": ("transform_list", True),
            "cel.transformMap": ("transform_map", True),
            "cel.transformMapEntry": ("transform_map_entry", True)}
_STRINGIFY = {"json": "template_json"}

# Python's parser refuses more than 200 nested brackets in one expression.
_MAX_BRACKETS = 190


class CelCompileError(Exception):
    """The expression can't be compiled (an unknown key, a constant that is
    not plain data, or nesting too deep for Python)."""


def _too_deep() -> CelCompileError:
    return CelCompileError("expression is nested too deeply to compile")


def _const(value: Any) -> str:
    """Python source for a plain constant (see pysource.const)."""
    try:
        return pysource.const(value, RUNTIME_NAME)
    except pysource.NotAConstant as exc:
        raise CelCompileError(str(exc)) from None


def _data(value: Any, depth: int) -> str:
    """Source building a fresh copy of JSON-shaped data (YAML values)."""
    if depth >= _MAX_BRACKETS:
        raise _too_deep()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_data(v, depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise CelCompileError(f"object key is not a string or integer: {type(k).__name__}")
            items.append(_const(k) + ": " + _data(v, depth + 1))
        return "{" + ", ".join(items) + "}"
    return _const(value)


class _Compiler:
    def __init__(self) -> None:
        self.counter = 0

    def fresh(self) -> str:
        name = f"_v{self.counter}"
        self.counter += 1
        return name

    def expr(self, e: Expr, scope: dict[str, str], depth: int) -> str:
        if depth >= _MAX_BRACKETS:
            raise _too_deep()
        c = RUNTIME_NAME
        if isinstance(e, Literal):
            return self.literal(e, depth)
        if isinstance(e, Ref):
            return self.ref(e, scope, depth)
        if isinstance(e, Binary):
            if e.op in _LAZY_BINARY:
                left = self.expr(e.left, scope, depth + 2)
                right = self.expr(e.right, scope, depth + 2)
                return f"{c}.{_LAZY_BINARY[e.op]}(lambda: {left}, lambda: {right})"
            if e.op == "cel.select":
                if not (isinstance(e.right, Literal) and isinstance(e.right.value, str)):
                    raise CelCompileError("cel.select needs a field name")
                return f"{c}.select({self.expr(e.left, scope, depth + 1)}, {_const(e.right.value)})"
            fn = _BINARY.get(e.op)
            if fn is None:
                raise CelCompileError(f"unsupported operator: {e.op!r}")
            return f"{c}.{fn}({self.expr(e.left, scope, depth + 1)}, {self.expr(e.right, scope, depth + 1)})"
        if isinstance(e, Unary):
            fn = _UNARY.get(e.op)
            if fn is None:
                raise CelCompileError(f"unsupported operator: {e.op!r}")
            return f"{c}.{fn}({self.expr(e.operand, scope, depth + 1)})"
        if isinstance(e, Conditional):
            if e.op != "cel.ternary":
                raise CelCompileError(f"unsupported conditional: {e.op!r}")
            test = self.expr(e.test, scope, depth + 2)
            then = self.expr(e.then, scope, depth + 1)
            other = self.expr(e.otherwise, scope, depth + 1)
            return f"({then} if {c}.test({test}) else {other})"
        if isinstance(e, Call):
            return self.call(e, scope, depth)
        if isinstance(e, ListExpr):
            return "[" + ", ".join(self.expr(x, scope, depth + 1) for x in e.items) + "]"
        if isinstance(e, MapExpr):
            pairs = "".join(f"({self.expr(en.key, scope, depth + 3)}, {self.expr(en.value, scope, depth + 3)}), "
                            for en in e.entries)
            return f"{c}.make_map(({pairs}))"
        if isinstance(e, Template):
            fn = _STRINGIFY.get(e.stringify)
            if fn is None:
                raise CelCompileError(f"unsupported stringify rule: {e.stringify!r}")
            if e.typed_whole:
                if len(e.parts) != 1:
                    raise CelCompileError("a typed_whole template has exactly one part")
                return self.expr(e.parts[0], scope, depth)
            return f"{c}.{fn}(({''.join(self.expr(p, scope, depth + 2) + ', ' for p in e.parts)}))"
        if isinstance(e, Lambda):
            raise CelCompileError("a Lambda is only valid as a macro argument")
        raise CelCompileError(f"unsupported expression: {type(e).__name__}")

    def literal(self, e: Literal, depth: int) -> str:
        c = RUNTIME_NAME
        kind, value = e.kind, e.value
        if kind == "uint":
            if not isinstance(value, int) or isinstance(value, bool):
                raise CelCompileError("a uint literal holds an integer")
            return f"{c}.UInt({_const(value)})"
        if kind == "bytes":
            if not isinstance(value, str):
                raise CelCompileError("a bytes literal holds hex text")
            try:
                bytes.fromhex(value)
            except ValueError:
                raise CelCompileError("a bytes literal holds hex text") from None
            return f"{c}.hexbytes({_const(value)})"
        if kind == "float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        return _data(value, depth)

    def ref(self, e: Ref, scope: dict[str, str], depth: int) -> str:
        c = RUNTIME_NAME
        if not isinstance(e.root, str):
            raise CelCompileError("reference root is not a string")
        if depth + len(e.path) + 3 >= _MAX_BRACKETS:
            raise _too_deep()
        lead = 0  # the selections a qualified variable name may take in (a.b.c bound as "a.b")
        while e.root not in scope and lead < len(e.path) and isinstance(e.path[lead], Field) \
                and isinstance(e.path[lead].name, str):
            lead += 1
        root = _const(e.root)
        if e.root in scope:
            code = scope[e.root]
        elif lead:
            # The variable itself when the environment has it (inline: the usual
            # case costs no call), else the longest qualified name (cel.qvar).
            fast = f"{ENV_NAME}[{root}]"
            for seg in e.path[:lead]:
                fast = f"{c}.select({fast}, {_const(seg.name)})"
            names = ", ".join(_const(seg.name) for seg in e.path[:lead])
            code = f"({fast} if {root} in {ENV_NAME} else {c}.qvar({ENV_NAME}, {root}, ({names},)))"
        else:
            code = f"{c}.var({ENV_NAME}, {root})"
        for j, seg in enumerate(e.path):
            if j < lead:
                continue
            if isinstance(seg, Field):
                if not isinstance(seg.name, str):
                    raise CelCompileError("field name is not a string")
                code = f"{c}.select({code}, {_const(seg.name)})"
            elif isinstance(seg, Index):
                inner = depth + len(e.path) - j
                code = f"{c}.index({code}, {self.expr(seg.index, scope, inner)})"
            else:
                raise CelCompileError(f"unsupported path segment: {type(seg).__name__}")
        return code

    def lam(self, e: Expr, scope: dict[str, str], depth: int) -> str:
        if not isinstance(e, Lambda) or len(e.params) != 1 or not isinstance(e.params[0], str):
            raise CelCompileError("a macro takes a one-parameter Lambda")
        name = self.fresh()
        inner = dict(scope)
        inner[e.params[0]] = name
        return f"lambda {name}: {self.expr(e.body, inner, depth + 1)}"

    def lam2(self, e: Expr, scope: dict[str, str], depth: int) -> str:
        if not isinstance(e, Lambda) or len(e.params) != 2 or not all(isinstance(p, str) for p in e.params):
            raise CelCompileError("a two-variable comprehension takes two-parameter Lambdas")
        first, second = self.fresh(), self.fresh()
        inner = dict(scope)
        inner[e.params[0]] = first
        inner[e.params[1]] = second
        return f"lambda {first}, {second}: {self.expr(e.body, inner, depth + 1)}"

    def call(self, e: Call, scope: dict[str, str], depth: int) -> str:
        c = RUNTIME_NAME
        f = e.func
        if f in _MACROS2:
            fn, filtered = _MACROS2[f]
            if len(e.args) == 2 or (filtered and len(e.args) == 3):
                target = self.expr(e.args[0], scope, depth + 1)
                body = self.lam2(e.args[-1], scope, depth + 1)
                pred = f", {self.lam2(e.args[1], scope, depth + 1)}" if len(e.args) == 3 else ""
                return f"{c}.{fn}({target}, {body}{pred})"
            lambdas = "one or two Lambdas" if filtered else "a Lambda"
            raise CelCompileError(f"{f} takes a target and {lambdas}")
        if f in _FUNCTIONS:
            args = ", ".join(self.expr(a, scope, depth + 1) for a in e.args)
            return f"{c}.{_FUNCTIONS[f]}({args})"
        if f in _MACROS:
            if len(e.args) != 2:
                raise CelCompileError(f"{f} takes a target and a Lambda")
            return f"{c}.{_MACROS[f]}({self.expr(e.args[0], scope, depth + 1)}, " \
                   f"{self.lam(e.args[1], scope, depth + 1)})"
        if f == "cel.map":
            if len(e.args) == 2:
                return f"{c}.map_({self.expr(e.args[0], scope, depth + 1)}, {self.lam(e.args[1], scope, depth + 1)})"
            if len(e.args) == 3:
                return (f"{c}.map3({self.expr(e.args[0], scope, depth + 1)}, "
                        f"{self.lam(e.args[1], scope, depth + 1)}, {self.lam(e.args[2], scope, depth + 1)})")
            raise CelCompileError("cel.map takes a target and one or two Lambdas")
        if f == "cel.has":
            if len(e.args) != 1:
                raise CelCompileError("cel.has takes one selection")
            arg = e.args[0]
            if isinstance(arg, Ref) and arg.path and isinstance(arg.path[-1], Field):
                target = Ref(arg.root, arg.path[:-1], arg.span)
                return f"{c}.has({self.ref(target, scope, depth + 1)}, {_const(arg.path[-1].name)})"
            if isinstance(arg, Binary) and arg.op == "cel.select" and isinstance(arg.right, Literal) \
                    and isinstance(arg.right.value, str):
                return f"{c}.has({self.expr(arg.left, scope, depth + 1)}, {_const(arg.right.value)})"
            raise CelCompileError("cel.has needs a field selection")
        if f == "cel.bind":
            if len(e.args) != 2:
                raise CelCompileError("cel.bind takes a value and a Lambda")
            value = self.expr(e.args[0], scope, depth + 1)
            return f"{c}.bind({value}, {self.lam(e.args[1], scope, depth + 1)})"
        if f == "tmpl.default":
            if len(e.args) != 2:
                raise CelCompileError("tmpl.default takes a path and a default")
            return f"{c}.default(lambda: {self.expr(e.args[0], scope, depth + 2)}, " \
                   f"{self.expr(e.args[1], scope, depth + 1)})"
        if f == "cel.unbound":
            args = ", ".join(self.expr(a, scope, depth + 1) for a in e.args)
            return f"{c}.unbound({args})"
        raise CelCompileError(f"unsupported function: {f!r}")


def compile_cel(expr: Expr) -> str:
    """Python source for a CEL (or instruction template) expression: an
    expression over ``_c`` and ``env``."""
    try:
        return _Compiler().expr(expr, {}, 0)
    except RecursionError:
        raise _too_deep() from None


def compile_cel_lambda(lam: Lambda) -> str:
    """Python source of ``lambda env, <params>: <body>`` for an element
    expression (map/filter/reduce ``expr``, batch ``by``): the Lambda's
    parameters become the function's, after ``env``."""
    if not isinstance(lam, Lambda) or not all(isinstance(p, str) for p in lam.params):
        raise CelCompileError("an element expression is a Lambda")
    compiler = _Compiler()
    names = [compiler.fresh() for _ in lam.params]
    scope = dict(zip(lam.params, names, strict=True))
    try:
        body = compiler.expr(lam.body, scope, 1)
    except RecursionError:
        raise _too_deep() from None
    return f"lambda {ENV_NAME}, {', '.join(names)}: ({body})"


_GLOBALS: dict[str, Any] = {"__builtins__": {}, RUNTIME_NAME: cel}


@functools.lru_cache(maxsize=4096)
def _function(source: str):
    return eval(compile(f"lambda {ENV_NAME}: ({source})", "<flowc cel>", "eval"), _GLOBALS)


def compile_cel_function(expr: Expr):
    """``expr`` as a Python function of ``env`` (cached by its source)."""
    source = compile_cel(expr)
    try:
        return _function(source)
    except (RecursionError, MemoryError, SyntaxError):
        raise _too_deep() from None


def evaluate_cel(expr: Expr, env: dict) -> Any:
    """The value of ``expr`` with the variables ``env``; a failure raises
    ``cel.CelError``."""
    return compile_cel_function(expr)(env)
