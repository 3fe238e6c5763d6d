"""IR expressions with aevatar keys -> aevatar parameter text.

The inverse of compiler/aevatar/expressions.py. The engine reads text, not
a tree: a parameter value is a template (literal text, ``$${`` escapes and
``${...}`` placeholders), a placeholder holds an expression, an expression
is a call ``name(arg, ...)`` or a leaf (a quoted literal, ``input``,
``steps.<id>.<field>...`` or a variable name). The text printed here is
read back as the same tree (modulo spans).
"""

from __future__ import annotations

import re

from flowc.ir import expr as E
from flowc.translation.aevatar.flags import PROFILE
from flowc.translation.report import Untranslatable

__all__ = ["expression", "template"]

_CALL_NAME = {  # IR key -> the spelling the engine reads (case-insensitive there)
    key: key[len("aevatar."):] for key in (
        "aevatar.concat", "aevatar.isblank", "aevatar.length", "aevatar.not", "aevatar.and", "aevatar.or",
        "aevatar.upper", "aevatar.lower", "aevatar.trim", "aevatar.json", "aevatar.add", "aevatar.sub",
        "aevatar.mul", "aevatar.div", "aevatar.eq", "aevatar.lt", "aevatar.lte", "aevatar.gt", "aevatar.gte",
    )
}
_SAFE_LEAF = re.compile(r"[^\s(),'\"}]+\Z")


def template(e: E.Expr) -> str:
    """A parameter value's text."""
    if isinstance(e, E.Literal):
        if not isinstance(e.value, str):
            raise Untranslatable(f"the constant {e.value!r} is not text, and aevatar parameters are text",
                                 e.span)
        return e.value.replace("${", "$${")
    if not isinstance(e, E.Template) or e.stringify != PROFILE.stringify:
        return "${" + expression(e) + "}"
    out = []
    for i, part in enumerate(e.parts):
        if isinstance(part, E.Literal) and isinstance(part.value, str):
            if part.value.endswith("$") and i + 1 < len(e.parts):
                raise Untranslatable("a `$` right before a placeholder has no aevatar spelling", e.span)
            out.append(part.value.replace("${", "$${"))
        else:
            out.append("${" + expression(part) + "}")
    return "".join(out)


def expression(e: E.Expr, argument: bool = False) -> str:
    """An expression's text (inside ``${...}``, or a call argument)."""
    text = _expression(e, argument)
    if "}" in text:
        raise Untranslatable("a `}` inside a placeholder has no aevatar spelling (the placeholder would "
                             "end there)", e.span)
    return text


def _expression(e: E.Expr, argument: bool) -> str:
    if isinstance(e, E.Literal):
        if not isinstance(e.value, str):
            raise Untranslatable(f"the constant {e.value!r} is not text, and aevatar values are text", e.span)
        return quote(e.value, e)
    if isinstance(e, E.Ref):
        return leaf(e, argument)
    if isinstance(e, E.Conditional) and e.op == "aevatar.if":
        return "if(" + ", ".join(_expression(a, True) for a in (e.test, e.then, e.otherwise)) + ")"
    if isinstance(e, E.Call):
        if e.func == "aevatar.fail":
            return "'"
        name = _CALL_NAME.get(e.func)
        if name is None or not e.args:
            raise Untranslatable(f"function {e.func} has no aevatar spelling", e.span)
        return name + "(" + ", ".join(_expression(a, True) for a in e.args) + ")"
    raise Untranslatable(f"{type(e).__name__} {getattr(e, 'op', getattr(e, 'func', ''))} has no aevatar "
                         "expression form", e.span)


def quote(text: str, e: E.Expr | None = None) -> str:
    if "'" not in text:
        return "'" + text + "'"
    if '"' not in text:
        return '"' + text + '"'
    raise Untranslatable("text holding both quote characters has no aevatar literal form",
                         e.span if e is not None else None)


def leaf(e: E.Ref, argument: bool) -> str:
    if e.root == "input" and not e.path:
        return "input"
    if e.root == "steps" and e.path and all(isinstance(s, E.Field) for s in e.path):
        text = "steps." + ".".join(s.name for s in e.path)
    elif e.root == "vars" and len(e.path) == 1 and isinstance(e.path[0], E.Field):
        key = e.path[0].name
        if key == "input" or key.startswith("steps.") or not key:
            raise Untranslatable(f"variable {key!r} has no aevatar spelling", e.span)
        text = key
    else:
        raise Untranslatable(f"reference {e.root} with this path has no aevatar spelling", e.span)
    if not _SAFE_LEAF.match(text) or (text.endswith(")") and "(" in text):
        raise Untranslatable(f"the variable name {text!r} cannot be written in an aevatar expression",
                             e.span)
    return text
