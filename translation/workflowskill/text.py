"""IR expressions with WorkflowSkill keys -> WorkflowSkill text.

The inverse of compiler/workflowskill/expressions.py: for every expression
that front end produces, the text printed here parses back to the same
tree (modulo spans). Three forms, as the reference runtime reads them:

- :func:`expression`: a bare ``$``-expression (``condition``, ``each``,
  ``where``, map ``expression`` values, an exit ``output`` string);
- :func:`value`: a ``value`` field: a literal (``$$`` escapes a leading
  ``$``; ``$${`` a literal ``${``), a ``$``-expression or a ``${...}``
  template; non-string literals are YAML values;
- :func:`template`: ``${...}`` templates.

Only WorkflowSkill keys print; anything else raises
:class:`~flowc.translation.report.Untranslatable` (the emitter rewrites
other dialects' keys before printing).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from flowc.ir import expr as E
from flowc.translation.report import Untranslatable

__all__ = ["expression", "literal_string", "template", "value"]

BINARY = {
    "wfs.eq": "==", "wfs.ne": "!=", "wfs.lt": "<", "wfs.le": "<=", "wfs.gt": ">", "wfs.ge": ">=",
    "wfs.contains": "contains", "wfs.and": "&&", "wfs.or": "||",
}
# Binding strength: || 1, && 2, comparisons 3 (non-associative), ! 4, atoms 5.
_LEVEL = {"wfs.or": 1, "wfs.and": 2}
_KEYWORDS = frozenset({"true", "false", "null", "contains"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LETTERS = re.compile(r"[A-Za-z_]+\Z")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]*)?\Z")
_CANONICAL_INDEX = re.compile(r"(?:0|[1-9][0-9]{0,14})\Z")
_PLACEHOLDER = re.compile(r"\$\{[^}]+\}")


def _level(e: E.Expr) -> int:
    if isinstance(e, E.Binary):
        return _LEVEL.get(e.op, 3)
    if isinstance(e, E.Unary):
        return 4
    return 5


def expression(e: E.Expr) -> str:
    """A bare expression's text."""
    if isinstance(e, E.Ref):
        return ref(e)
    if isinstance(e, E.Literal):
        return literal(e)
    if isinstance(e, E.Unary):
        if e.op != "wfs.not":
            raise Untranslatable(f"operator {e.op} has no WorkflowSkill spelling", e.span)
        return "!" + _wrap(e.operand, 4)
    if isinstance(e, E.Binary):
        symbol = BINARY.get(e.op)
        if symbol is None:
            raise Untranslatable(f"operator {e.op} has no WorkflowSkill spelling", e.span)
        level = _LEVEL.get(e.op, 3)
        if level == 3:  # non-associative: both sides at unary level or above
            return f"{_wrap(e.left, 4)} {symbol} {_wrap(e.right, 4)}"
        return f"{_wrap(e.left, level)} {symbol} {_wrap(e.right, level + 1)}"
    raise Untranslatable(f"{_describe(e)} has no WorkflowSkill expression form", e.span)


def _wrap(e: E.Expr, at_least: int) -> str:
    text = expression(e)
    return text if _level(e) >= at_least else f"({text})"


def _describe(e: E.Expr) -> str:
    if isinstance(e, E.Call):
        return f"function {e.func}"
    if isinstance(e, E.Conditional):
        return f"conditional {e.op}"
    return {"Lambda": "a lambda", "ListExpr": "a list expression", "MapExpr": "an object expression",
            "Template": "a template"}.get(type(e).__name__, type(e).__name__)


def ref(e: E.Ref) -> str:
    if not _LETTERS.match(e.root):
        raise Untranslatable(f"reference root {e.root!r} has no WorkflowSkill spelling", e.span)
    out = ["$", e.root]
    for i, seg in enumerate(e.path):
        if isinstance(seg, E.Field):
            out.append(_field(seg.name, last=i == len(e.path) - 1))
        else:
            out.append("[" + expression(seg.index) + "]")
    return "".join(out)


def _field(name: str, last: bool) -> str:
    if _IDENT.match(name) and name not in _KEYWORDS:
        return "." + name
    if _LETTERS.match(name):
        return ".$" + name  # `$a.$null` reads the property "null"
    if _NUMBER.match(name) and (last or not name.endswith(".")):
        return "." + name  # `.01`, `.-1`, `.1.5` are property names
    return "[" + _string(name) + "]"


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def literal(e: E.Literal) -> str:
    v = e.value
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str) and e.kind in ("string", "auto"):
        return _string(v)
    if isinstance(v, int) and e.kind in ("int", "auto", "float"):
        return str(v) if e.kind != "float" else str(v) + ".0"
    if isinstance(v, float) and e.kind in ("float", "auto"):
        return number(v)
    raise Untranslatable(f"the constant {v!r} ({e.kind}) has no WorkflowSkill expression form", e.span)


def number(v: float) -> str:
    """A float as the NUMBER token the reference reads back as the same double."""
    if math.isnan(v):
        raise Untranslatable("NaN has no WorkflowSkill spelling")
    if math.isinf(v):
        return ("-" if v < 0 else "") + "1" + "0" * 400  # parseInt overflows to Infinity
    text = repr(v)
    if "e" in text:
        text = format(Decimal(text), "f")
    if "." not in text:
        text += ".0"
    return text


# ------------------------------------------------------------------ values
def literal_string(text: str) -> str:
    """The value-field text the reference resolves to exactly ``text``."""
    if text.startswith("$"):
        return "$" + text  # `$$...`: the rest, with no templating at all
    if _PLACEHOLDER.search(text):
        return text.replace("${", "$${")
    return text


def template(e: E.Template) -> str:
    if e.stringify != "wfs":
        raise Untranslatable(f"a template with {e.stringify} stringification has no WorkflowSkill form",
                             e.span)
    out = []
    for i, part in enumerate(e.parts):
        if isinstance(part, E.Literal) and isinstance(part.value, str):
            if part.value.endswith("$") and i + 1 < len(e.parts):
                # `$${` would read as an escaped `${`, not as `$` and a placeholder.
                raise Untranslatable("a `$` right before a placeholder has no WorkflowSkill spelling",
                                     e.span)
            out.append(part.value.replace("${", "$${"))
            continue
        body = expression(part)
        if not body.startswith("$") or "}" in body:
            raise Untranslatable("this template placeholder has no WorkflowSkill spelling", part.span)
        out.append("${" + body[1:] + "}")
    text = "".join(out)
    whole = len(e.parts) == 1 and not isinstance(e.parts[0], E.Literal)
    if whole != e.typed_whole:
        raise Untranslatable("a whole-string placeholder that is stringified has no WorkflowSkill form",
                             e.span)
    if text.startswith("$$"):
        # A leading `$$` turns the whole string into a literal.
        raise Untranslatable("a template starting with `$$` or `${` text has no WorkflowSkill spelling",
                             e.span)
    return text


def value(e: E.Expr):
    """A ``value`` field: the YAML value (a string of text, or a plain
    non-string value for non-string literals)."""
    if isinstance(e, E.Literal):
        if isinstance(e.value, str) and e.kind in ("string", "auto"):
            return literal_string(e.value)
        return e.value
    if isinstance(e, E.Template):
        return template(e)
    text = expression(e)
    if not text.startswith("$"):
        raise Untranslatable("a value expression must start with a `$` reference in WorkflowSkill", e.span)
    return text
