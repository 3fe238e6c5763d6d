"""IR expressions with CEL keys -> CEL text, and instruction templates.

The inverse of compiler/instruction/cel.py and templates.py: the text
printed here parses back to the same tree (modulo spans). Parentheses are
added where CEL's precedence needs them and nowhere else.
"""

from __future__ import annotations

import itertools
import json
import math
import re

from flowc.ir import expr as E
from flowc.ir.workflow import Workflow
from flowc.runtime.cel import EXT_DISPATCH
from flowc.translation.report import Untranslatable

__all__ = ["cel", "cel_lines", "inputs_schema", "template"]

_BINARY = {
    "cel.or": ("||", 2), "cel.and": ("&&", 3),
    "cel.lt": ("<", 4), "cel.le": ("<=", 4), "cel.gt": (">", 4), "cel.ge": (">=", 4), "cel.eq": ("==", 4),
    "cel.ne": ("!=", 4), "cel.in": ("in", 4),
    "cel.add": ("+", 5), "cel.sub": ("-", 5),
    "cel.mul": ("*", 6), "cel.div": ("/", 6), "cel.mod": ("%", 6),
}
# Binding strength: ternary 1, || 2, && 3, relations 4, + - 5, * / % 6, unary 7, member 8, primary 9.
_GLOBAL = {"cel.size": "size", "cel.int": "int", "cel.uint": "uint", "cel.double": "double",
           "cel.string": "string", "cel.bytes": "bytes", "cel.bool": "bool", "cel.dyn": "dyn",
           "cel.type": "type", "cel.duration": "duration", "cel.timestamp": "timestamp"}
_METHOD = {"cel.contains": "contains", "cel.startsWith": "startsWith", "cel.endsWith": "endsWith",
           "cel.matches": "matches"}
# The extension libraries: `cel.math.greatest` prints as `math.greatest(...)`,
# `cel.charAt` as the method `.charAt(...)`.
_GLOBAL.update({key: key[4:] for key in EXT_DISPATCH if "." in key[4:]})
_METHOD.update({key: key[4:] for key in EXT_DISPATCH if "." not in key[4:]})
_METHOD.update({"cel." + name: name for name in (
    "getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getHours",
    "getMinutes", "getSeconds", "getMilliseconds")})
_MACRO = {"cel.all": "all", "cel.exists": "exists", "cel.exists_one": "exists_one", "cel.map": "map",
          "cel.filter": "filter"}
# two-variable comprehensions: their Lambdas have two parameters
_MACRO2 = {"cel.all2": "all", "cel.exists2": "exists", "cel.exists_one2": "existsOne",
           "cel.transformList": "transformList", "cel.transformMap": "transformMap",
           "cel.transformMapEntry": "transformMapEntry"}
_RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
    "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
})
_IDENT = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*\Z")
_ESC_IDENT = re.compile(r"[_a-zA-Z0-9.\-/ ]+\Z")  # what a backtick-quoted field may hold


def _field(name: str) -> str | None:
    """``name`` as a selected field: plain, or backtick-quoted; None when
    CEL cannot select it."""
    if _IDENT.match(name) and name not in _RESERVED:
        return name
    if _ESC_IDENT.match(name):
        return f"`{name}`"
    return None


def _level(e: E.Expr) -> int:
    if isinstance(e, E.Conditional):
        return 1
    if isinstance(e, E.Binary):
        if e.op in ("cel.select", "cel.index"):
            return 8
        return _BINARY.get(e.op, ("", 9))[1]
    if isinstance(e, E.Unary):
        return 7
    if isinstance(e, E.Literal) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool) \
            and (e.value < 0 or (isinstance(e.value, float) and math.copysign(1, e.value) < 0)):
        return 7  # a negative literal prints with its sign
    return 9


def cel(e: E.Expr) -> str:
    """CEL text for ``e``."""
    if isinstance(e, E.Literal):
        return literal(e)
    if isinstance(e, E.Ref):
        return ref(e)
    if isinstance(e, E.Unary):
        symbol = {"cel.not": "!", "cel.neg": "-"}.get(e.op)
        if symbol is None:
            raise Untranslatable(f"operator {e.op} has no CEL spelling", e.span)
        inner = _wrap(e.operand, 8)
        if symbol == "-" and (inner.startswith("-") or (
                isinstance(e.operand, E.Literal) and isinstance(e.operand.value, (int, float))
                and not isinstance(e.operand.value, bool))):
            inner = f"({inner})"  # `-5` would read as the constant -5
        return symbol + inner
    if isinstance(e, E.Binary):
        if e.op == "cel.select":
            name = _field(e.right.value) if isinstance(e.right, E.Literal) \
                and isinstance(e.right.value, str) else None
            if name is None:
                raise Untranslatable("a field selection by a computed name has no CEL spelling", e.span)
            return f"{_wrap(e.left, 8)}.{name}"
        if e.op == "cel.index":
            return f"{_wrap(e.left, 8)}[{cel(e.right)}]"
        spec = _BINARY.get(e.op)
        if spec is None:
            raise Untranslatable(f"operator {e.op} has no CEL spelling", e.span)
        symbol, level = spec
        return f"{_wrap(e.left, level)} {symbol} {_wrap(e.right, level + 1)}"
    if isinstance(e, E.Conditional):
        if e.op != "cel.ternary":
            raise Untranslatable(f"conditional {e.op} has no CEL spelling", e.span)
        return f"{_wrap(e.test, 2)} ? {_wrap(e.then, 2)} : {cel(e.otherwise)}"
    if isinstance(e, E.ListExpr):
        return "[" + ", ".join(cel(i) for i in e.items) + "]"
    if isinstance(e, E.MapExpr):
        return "{" + ", ".join(f"{cel(m.key)}: {cel(m.value)}" for m in e.entries) + "}"
    if isinstance(e, E.Call):
        return _call(e)
    raise Untranslatable(f"{type(e).__name__} has no CEL expression form", e.span)


def _wrap(e: E.Expr, at_least: int) -> str:
    text = cel(e)
    return text if _level(e) >= at_least else f"({text})"


def _call(e: E.Call) -> str:
    args = e.args
    if e.func in _GLOBAL:
        return _GLOBAL[e.func] + "(" + ", ".join(cel(a) for a in args) + ")"
    if e.func in _METHOD and args:
        return f"{_wrap(args[0], 8)}.{_METHOD[e.func]}(" + ", ".join(cel(a) for a in args[1:]) + ")"
    if e.func == "cel.has" and len(args) == 1:
        return f"has({cel(args[0])})"
    if e.func == "cel.bind" and len(args) == 2 and isinstance(args[1], E.Lambda) and len(args[1].params) == 1:
        return f"cel.bind({args[1].params[0]}, {cel(args[0])}, {cel(args[1].body)})"
    if e.func in _MACRO and len(args) >= 2 and all(isinstance(a, E.Lambda) for a in args[1:]):
        var = args[1].params[0] if args[1].params else "x"
        bodies = [cel(a.body) for a in args[1:]]
        return f"{_wrap(args[0], 8)}.{_MACRO[e.func]}({var}, " + ", ".join(bodies) + ")"
    if _macro2(e):
        bodies = [cel(a.body) for a in args[1:]]
        variables = ", ".join(args[1].params)
        return f"{_wrap(args[0], 8)}.{_MACRO2[e.func]}({variables}, " + ", ".join(bodies) + ")"
    if e.func == "cel.unbound" and args and isinstance(args[0], E.Literal) and isinstance(args[0].value, str):
        name = args[0].value
        rest = args[1:]
        if name == "has" and rest:  # a method call: has() itself is a macro
            return f"{_wrap(rest[0], 8)}.has(" + ", ".join(cel(a) for a in rest[1:]) + ")"
        return name + "(" + ", ".join(cel(a) for a in rest) + ")"
    raise Untranslatable(f"function {e.func} has no CEL spelling", e.span)


# ------------------------------------------------------------------ layout
# A long expression is laid out over several lines so a person can read it:
# a conditional as its test, then `? then` and `: otherwise` on their own
# lines; an `&&`/`||` chain one operand a line; a list or map literal, or a
# call's arguments, one a line. Every part that is broken keeps its lines in
# its own column, so the layout shows the tree. Only white space between
# tokens changes (CEL reads a line break as a space), so the text parses to
# the same tree as the one-line form, and literals (strings included) are
# never split. The layout depends on the expression alone, never on where
# the field sits in the document: the same tree always gives the same text.
LIMIT = 88  # an expression (with its prefix) longer than this is broken
STEP = 2  # the indentation of a broken part's lines under its first


def cel_lines(e: E.Expr, lead: int = 0) -> list[str]:
    """``e`` as lines of CEL: one line when ``lead`` characters (a prefix
    such as ``CEL: ``) and the one-line form fit in :data:`LIMIT`, else
    broken at its top-level structure. Later lines are indented relative
    to the start of the first line's prefix."""
    return _layout(e, lead)


def _layout(e: E.Expr, col: int) -> list[str]:
    """The lines of ``e`` starting at column ``col``; later lines are
    indented relative to ``col``."""
    flat = cel(e)
    if col + len(flat) <= LIMIT:
        return [flat]
    if isinstance(e, E.Conditional) and e.op == "cel.ternary":
        return _conditional(e, col)
    if isinstance(e, E.Binary) and e.op in _BINARY:
        return _chain(e, col)
    if isinstance(e, E.Binary) and e.op in ("cel.select", "cel.index"):
        suffix = flat[len(_wrap(e.left, 8)):]  # `.name` or `[index]`, kept whole
        lines = _wrap_lines(e.left, 8, col)
        return [*lines[:-1], lines[-1] + suffix]
    if isinstance(e, E.ListExpr) and e.items:
        return _entries("[", [("", i) for i in e.items], "]", col)
    if isinstance(e, E.MapExpr) and e.entries:
        return _entries("{", [(cel(m.key) + ": ", m.value) for m in e.entries], "}", col)
    if isinstance(e, E.Unary) and e.op == "cel.not":
        return _prefixed("!", _wrap_lines(e.operand, 8, col + 1))
    if isinstance(e, E.Call):
        return _call_lines(e, col, flat)
    return [flat]


def _wrap_lines(e: E.Expr, at_least: int, col: int) -> list[str]:
    """As :func:`_wrap`: in parentheses where CEL's precedence needs them."""
    if _level(e) >= at_least:
        return _layout(e, col)
    lines = _prefixed("(", _layout(e, col + 1))
    lines[-1] += ")"
    return lines


def _prefixed(prefix: str, lines: list[str]) -> list[str]:
    """``prefix`` before ``lines``, whose later lines move under the first."""
    return [prefix + lines[0], *_indented(lines[1:], len(prefix))]


def _indented(lines: list[str], by: int) -> list[str]:
    return [" " * by + ln for ln in lines]


def _hung(e: E.Expr, lines: list[str]) -> list[str]:
    """The lines of a conditional's test or a chain's first operand: when
    that is itself a broken chain, its operators hang deeper than the ones
    that follow, so `a && b || c` or `a && b ? c : d` does not read as one
    chain. (A bracketed form needs no such help: its lines close it.)"""
    if isinstance(e, E.Binary) and e.op in _BINARY:
        return [lines[0], *_indented(lines[1:], STEP)]
    return lines


def _conditional(e: E.Conditional, col: int) -> list[str]:
    test = _hung(e.test, _wrap_lines(e.test, 2, col))
    then = _prefixed("? ", _wrap_lines(e.then, 2, col + STEP + 2))
    otherwise = _prefixed(": ", _layout(e.otherwise, col + STEP + 2))
    return [*test, *_indented(then, STEP), *_indented(otherwise, STEP)]


def _chain(e: E.Binary, col: int) -> list[str]:
    """``a && b && c``, ``a + b - c``: the operators of one precedence along
    the left-nested spine, one operand a line."""
    level = _BINARY[e.op][1]
    rights: list[tuple[str, E.Expr]] = []
    left: E.Expr = e
    while isinstance(left, E.Binary) and _BINARY.get(left.op, ("", 0))[1] == level:
        rights.append((_BINARY[left.op][0], left.right))
        left = left.left
    lines = _hung(left, _wrap_lines(left, level, col))
    for symbol, right in reversed(rights):
        prefix = symbol + " "
        more = _wrap_lines(right, level + 1, col + STEP + len(prefix))
        lines += _indented(_prefixed(prefix, more), STEP)
    return lines


def _entries(opener: str, entries: list[tuple[str, E.Expr]], closer: str, col: int) -> list[str]:
    """A list or map literal: one entry (``head`` and value) a line."""
    lines = [opener]
    for n, (head, value) in enumerate(entries):
        # A value's later lines hang under its key, not after it: a key can be long.
        value_lines = _layout(value, col + STEP + len(head))
        entry = [head + value_lines[0], *_indented(value_lines[1:], STEP if head else 0)]
        if n < len(entries) - 1:
            entry[-1] += ","
        lines += _indented(entry, STEP)
    return [*lines, closer]


def _macro2(e: E.Call) -> bool:
    """A two-variable comprehension whose Lambdas share their two variables."""
    lambdas = e.args[1:]
    return e.func in _MACRO2 and len(lambdas) >= 1 and all(
        isinstance(a, E.Lambda) and len(a.params) == 2 and a.params == lambdas[0].params for a in lambdas)


def _call_lines(e: E.Call, col: int, flat: str) -> list[str]:
    """A call whose receiver or arguments are long: the receiver laid out,
    then the arguments, one a line when they do not fit after it."""
    args = list(e.args)
    if e.func in _GLOBAL:
        return _applied(None, _GLOBAL[e.func] + "(", None, args, col)
    if e.func == "cel.has" and len(args) == 1:
        return _applied(None, "has(", None, args, col)
    if e.func in _METHOD and args:
        return _applied(_wrap_lines(args[0], 8, col), f".{_METHOD[e.func]}(", None, args[1:], col)
    if e.func in _MACRO and len(args) >= 2 and all(isinstance(a, E.Lambda) for a in args[1:]):
        var = args[1].params[0] if args[1].params else "x"
        return _applied(_wrap_lines(args[0], 8, col), f".{_MACRO[e.func]}({var},", var,
                        [a.body for a in args[1:]], col)
    if _macro2(e):
        variables = ", ".join(args[1].params)
        return _applied(_wrap_lines(args[0], 8, col), f".{_MACRO2[e.func]}({variables},", variables,
                        [a.body for a in args[1:]], col)
    if e.func == "cel.unbound" and args and isinstance(args[0], E.Literal) and isinstance(args[0].value, str):
        name, rest = args[0].value, args[1:]
        if name == "has" and rest:  # a method call, as in cel()
            return _applied(_wrap_lines(rest[0], 8, col), ".has(", None, rest[1:], col)
        return _applied(None, name + "(", None, rest, col)
    return [flat]


def _applied(receiver: list[str] | None, head: str, var: str | None, args: list[E.Expr],
             col: int) -> list[str]:
    """``receiver``, ``head``, the arguments and ``)``: on one line when they
    fit after the receiver, else one argument a line under the head (a
    macro's variable stays in the head: ``.all(x,``)."""
    start = receiver or [""]
    one_line = head + (" " if var is not None else "") + ", ".join(cel(a) for a in args) + ")"
    if not args or col + len(start[-1]) + len(one_line) <= LIMIT or _unbreakable(args):
        return [*start[:-1], start[-1] + one_line]
    # The arguments hang under the line that opens them.
    opening = start[-1] + head
    pad = len(opening) - len(opening.lstrip(" "))
    lines = [*start[:-1], opening]
    for n, arg in enumerate(args):
        entry = _layout(arg, col + pad + STEP)
        if n < len(args) - 1:
            entry[-1] += ","
        lines += _indented(entry, pad + STEP)
    return [*lines, " " * pad + ")"]


def _unbreakable(args: list[E.Expr]) -> bool:
    """One literal argument: a line of its own would be as long."""
    return len(args) == 1 and isinstance(args[0], (E.Literal, E.Ref))


def ref(e: E.Ref) -> str:
    if not _IDENT.match(e.root) or e.root in _RESERVED:
        raise Untranslatable(f"the name {e.root!r} cannot be written in CEL", e.span)
    out = [e.root]
    for seg in e.path:
        if isinstance(seg, E.Field):
            name = _field(seg.name)
            if name is None:
                raise Untranslatable(f"the field name {seg.name!r} cannot be selected in CEL", seg.span)
            out.append("." + name)
        else:
            out.append("[" + cel(seg.index) + "]")
    return "".join(out)


def string(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or ch in "\u2028\u2029\ufeff":
            out.append(f"\\u{ord(ch):04x}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            raise Untranslatable("a lone surrogate has no CEL spelling")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def literal(e: E.Literal) -> str:
    v, kind = e.value, e.kind
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if kind == "bytes" and isinstance(v, str):
        return 'b"' + "".join(f"\\x{b:02x}" for b in bytes.fromhex(v)) + '"'
    if isinstance(v, str):
        return string(v)
    if kind == "uint" and isinstance(v, int):
        return f"{v}u"
    if isinstance(v, int) and kind != "float":
        return str(v)
    if isinstance(v, (int, float)):
        return _double(float(v))
    if isinstance(v, list):
        return "[" + ", ".join(literal(E.Literal(i)) for i in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{string(k)}: {literal(E.Literal(x))}" for k, x in v.items()) + "}"
    raise Untranslatable(f"the constant {v!r} has no CEL spelling", e.span)


def _double(v: float) -> str:
    if math.isnan(v):
        raise Untranslatable("NaN has no CEL literal")
    if math.isinf(v):
        return "-1e999" if v < 0 else "1e999"
    text = repr(v)
    if "e" not in text and "." not in text:
        text += ".0"
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exp = text.split("e")
        text = f"{mantissa}.0e{exp}"
    return text


# ------------------------------------------------------------------ templates
_SEGMENT = re.compile(r"[A-Za-z0-9_$@-]+\Z")
_ROOT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def path(e: E.Ref) -> str:
    """A placeholder path: dotted when every segment allows it, else a JSON pointer."""
    if not _ROOT.match(e.root):
        raise Untranslatable(f"the name {e.root!r} cannot start a template path", e.span)
    segs: list[str] = []
    dotted = True
    for seg in e.path:
        if isinstance(seg, E.Field):
            if seg.name.isdigit() and seg.name.isascii():
                raise Untranslatable(f"the field {seg.name!r} reads as an index in a template path", seg.span)
            if not _SEGMENT.match(seg.name):
                dotted = False
            segs.append(seg.name)
        elif isinstance(seg.index, E.Literal) and isinstance(seg.index.value, int) \
                and not isinstance(seg.index.value, bool) and seg.index.value >= 0:
            segs.append(str(seg.index.value))
        else:
            raise Untranslatable("a computed index has no template path form", seg.span)
    if dotted:
        return ".".join([e.root, *segs])
    if any(s == "" for s in segs):
        raise Untranslatable("an empty field name has no template path form", e.span)
    return "/" + "/".join(s.replace("~", "~0").replace("/", "~1") for s in [e.root, *segs])


def placeholder(e: E.Expr) -> str:
    if isinstance(e, E.Ref):
        return "{{ " + path(e) + " }}"
    if isinstance(e, E.Call) and e.func == "tmpl.default" and len(e.args) == 2 \
            and isinstance(e.args[0], E.Ref) and isinstance(e.args[1], E.Literal):
        default = json.dumps(e.args[1].value, ensure_ascii=False)
        if "}}" in default or "|" in path(e.args[0]):
            raise Untranslatable("this template default has no template form", e.span)
        return "{{ " + path(e.args[0]) + " | " + default + " }}"
    raise Untranslatable(f"{type(e).__name__} cannot be a template placeholder (only paths can)", e.span)


def template(e: E.Template) -> str:
    if e.stringify != "json":
        raise Untranslatable(f"a template with {e.stringify} stringification has no instruction form", e.span)
    out = []
    for part in e.parts:
        if isinstance(part, E.Literal) and isinstance(part.value, str):
            if "{{" in part.value:
                raise Untranslatable("literal `{{` in a template has no instruction spelling", part.span)
            out.append(part.value)
        else:
            out.append(placeholder(part))
    text = "".join(out)
    for a, b in itertools.pairwise(out):
        if a.endswith("{") and b.startswith("{{"):
            raise Untranslatable("a `{` right before a placeholder has no instruction spelling", e.span)
    return text


_SCHEMA_TYPES = {"string": "string", "int": "integer", "float": "number", "bool": "boolean", "array": "array",
                 "object": "object"}


def inputs_schema(wf: Workflow, nullable: bool = False) -> dict:
    """The workflow's inputs as the JSON schema of dialect 3's
    ``inputs.schema``; ``nullable``: each type also admits null (as
    WorkflowSkill lets null stand for a value of every declared type)."""
    props = {}
    for p in wf.inputs:
        prop: dict = {}
        name = _SCHEMA_TYPES.get(p.type.kind)
        if name is not None:
            prop["type"] = [name, "null"] if nullable else name
        if p.description:
            prop["description"] = p.description
        if p.has_default:
            prop["default"] = p.default
        props[p.name] = prop
    return {"type": "object", "properties": props}
