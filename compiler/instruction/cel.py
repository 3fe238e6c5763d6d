"""CEL text -> IR expressions, with a span for every node.

The grammar is ``grammar/cel.lark`` (the cel-spec grammar without message
construction). Operators lower to ``Binary``/``Unary`` with ``cel.*`` keys,
the ternary to ``Conditional("cel.ternary")``, functions and methods to
``Call`` with the receiver first, and the macros (``has``, ``all``,
``exists``, ``exists_one``, ``map``, ``filter``) to ``Call`` with a
``Lambda``; the two-variable comprehensions (``all``/``exists``/
``existsOne`` with two variables, ``transformList``, ``transformMap``,
``transformMapEntry``) to ``Call`` with two-parameter Lambdas, and
``cel.bind(x, init, body)`` to ``Call("cel.bind", (init, Lambda))``. The
extension libraries' functions (``math.greatest``, ``base64.encode``,
``strings.quote``; string methods such as ``split``) and the timestamp
accessors (``getHours`` ...) are ``Call`` s like the standard functions.
Identifiers and selections on them become ``Ref`` paths (a backtick-quoted
field, ``m.`content-type```, is a field like any other); selection and
indexing of any other value become ``cel.select`` / ``cel.index``.

Parsing never looks at variables or function tables beyond the names
below: an identifier the workflow does not define, or a function CEL does
not define, still lowers (a function to ``Call("cel.unbound", (name,
args...))``, which fails when evaluated, as in cel-spec's unchecked mode).
:func:`check_names` reports both, so a workflow gets them as findings.
"""

from __future__ import annotations

import lark
from flowc.compiler.numbers import shown
from flowc.grammar import load_parser
from flowc.ir import expr as E
from flowc.ir.diagnostics import Diagnostic, error
from flowc.ir.limits import MAX_EXPR_DEPTH
from flowc.ir.span import NO_SPAN, Span

__all__ = ["EXT_FUNCTIONS", "EXT_METHODS", "GLOBAL_FUNCTIONS", "MACROS", "MACROS2", "METHODS", "RESERVED",
           "TIME_METHODS", "CelSyntaxError", "check_names", "parse_cel"]

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1

# name -> (IR key, number of arguments)
GLOBAL_FUNCTIONS: dict[str, tuple[str, int]] = {
    "size": ("cel.size", 1),
    "int": ("cel.int", 1),
    "uint": ("cel.uint", 1),
    "double": ("cel.double", 1),
    "string": ("cel.string", 1),
    "bytes": ("cel.bytes", 1),
    "bool": ("cel.bool", 1),
    "dyn": ("cel.dyn", 1),
    "type": ("cel.type", 1),
    "duration": ("cel.duration", 1),
    "timestamp": ("cel.timestamp", 1),
    "matches": ("cel.matches", 2),
}
# method name -> (IR key, number of arguments including the receiver)
METHODS: dict[str, tuple[str, int]] = {
    "size": ("cel.size", 1),
    "contains": ("cel.contains", 2),
    "startsWith": ("cel.startsWith", 2),
    "endsWith": ("cel.endsWith", 2),
    "matches": ("cel.matches", 2),
}
# timestamp and duration accessors: method name -> IR key; the receiver and
# an optional time zone (a timestamp's only).
TIME_METHODS: dict[str, str] = {
    name: "cel." + name for name in (
        "getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
        "getHours", "getMinutes", "getSeconds", "getMilliseconds")
}
# cel-go's extension libraries (ext.Strings, ext.Math, ext.Encoders; cel-spec's
# *_ext conformance files). String methods: name -> (IR key, allowed numbers
# of arguments including the receiver).
EXT_METHODS: dict[str, tuple[str, tuple[int, ...]]] = {
    "charAt": ("cel.charAt", (2,)), "indexOf": ("cel.indexOf", (2, 3)),
    "lastIndexOf": ("cel.lastIndexOf", (2, 3)), "lowerAscii": ("cel.lowerAscii", (1,)),
    "upperAscii": ("cel.upperAscii", (1,)), "replace": ("cel.replace", (3, 4)),
    "split": ("cel.split", (2, 3)), "substring": ("cel.substring", (2, 3)), "trim": ("cel.trim", (1,)),
    "join": ("cel.join", (1, 2)), "reverse": ("cel.reverse", (1,)), "format": ("cel.format", (2,)),
}
# Namespaced functions: qualified name -> (IR key, allowed numbers of
# arguments; () for one or more).
EXT_FUNCTIONS: dict[str, tuple[str, tuple[int, ...]]] = {
    "strings.quote": ("cel.strings.quote", (1,)),
    "base64.encode": ("cel.base64.encode", (1,)), "base64.decode": ("cel.base64.decode", (1,)),
    "math.greatest": ("cel.math.greatest", ()), "math.least": ("cel.math.least", ()),
    **{f"math.{name}": (f"cel.math.{name}", (1,)) for name in (
        "ceil", "floor", "round", "trunc", "abs", "sign", "isNaN", "isInf", "isFinite", "bitNot")},
    **{f"math.{name}": (f"cel.math.{name}", (2,)) for name in (
        "bitAnd", "bitOr", "bitXor", "bitShiftLeft", "bitShiftRight")},
}
# comprehension macros: name -> (IR key, allowed numbers of macro arguments)
MACROS: dict[str, tuple[str, tuple[int, ...]]] = {
    "all": ("cel.all", (2,)),
    "exists": ("cel.exists", (2,)),
    "exists_one": ("cel.exists_one", (2,)),
    "map": ("cel.map", (2, 3)),
    "filter": ("cel.filter", (2,)),
}
# two-variable comprehensions (cel-spec macros2; cel-go ext.TwoVarComprehensions):
# name -> (IR key, allowed numbers of macro arguments). The first two
# arguments name the variables (index and value of a list, key and value
# of a map); every Lambda has both as its parameters. With four arguments
# the transforms take a filter Lambda before the transform.
MACROS2: dict[str, tuple[str, tuple[int, ...]]] = {
    "all": ("cel.all2", (3,)),
    "exists": ("cel.exists2", (3,)),
    "existsOne": ("cel.exists_one2", (3,)),
    "exists_one": ("cel.exists_one2", (3,)),
    "transformList": ("cel.transformList", (3, 4)),
    "transformMap": ("cel.transformMap", (3, 4)),
    "transformMapEntry": ("cel.transformMapEntry", (3, 4)),
}
# Words CEL reserves; none can name a variable or a function.
RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
    "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
})

_BINARY = {
    "or_": "cel.or", "and_": "cel.and",
    "lt": "cel.lt", "le": "cel.le", "gt": "cel.gt", "ge": "cel.ge", "eq": "cel.eq", "ne": "cel.ne",
    "in_": "cel.in", "add": "cel.add", "sub": "cel.sub", "mul": "cel.mul", "div": "cel.div",
    "mod": "cel.mod",
}
_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?",
}
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"


_TOO_DEEP = f"the expression nests deeper than {MAX_EXPR_DEPTH} levels"
# Significant digits an int64/uint64 literal can have, per base: longer
# digit strings are out of range without being converted (no bignums, and
# no 4,300-digit limit of int() to hit).
_MAX_DIGITS = {10: 20, 16: 16}


def _int_text(text: str, limit: int, message: str, span: Span) -> int:
    """A CEL integer literal's digits (decimal or 0x hex) as an int at most
    ``limit``; beyond it, ``message`` as a LIM103 finding."""
    base = 16 if text[:2] in ("0x", "0X") else 10
    digits = (text[2:] if base == 16 else text).lstrip("0")
    if len(digits) > _MAX_DIGITS[base]:
        raise CelSyntaxError(message, span, "LIM103")
    value = int(digits or "0", base)
    if value > limit:
        raise CelSyntaxError(message, span, "LIM103")
    return value


class CelSyntaxError(Exception):
    """The text is not CEL (or not the subset flowc compiles)."""

    def __init__(self, message: str, span: Span = NO_SPAN, code: str = "CEL201") -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.code = code  # CEL201 (syntax); LIM101 / LIM103 for a limit of flowc's


def parse_cel(text: str, origin: Span = NO_SPAN, exact: bool = True) -> E.Expr:
    """Parse CEL ``text`` into an IR expression.

    ``origin`` is where the text starts in its file. With ``exact`` (the
    text is the scalar's characters one for one), every node gets its own
    span; otherwise every node gets ``origin`` (block scalars, quoted
    scalars with escapes).
    """
    builder = _Builder(text, origin, exact)
    try:
        tree = load_parser("cel").parse(text)
    except lark.exceptions.UnexpectedCharacters as exc:
        raise CelSyntaxError(f"unexpected character {text[exc.pos_in_stream]!r}",
                             builder.point(exc.line, exc.column)) from None
    except lark.exceptions.UnexpectedToken as exc:
        token = exc.token
        if token.type == "$END":
            raise CelSyntaxError(_early_end(text, exc.expected), builder.end()) from None
        raise CelSyntaxError(f"unexpected {token.value!r}", builder.token(token)) from None
    except lark.exceptions.UnexpectedEOF as exc:
        raise CelSyntaxError(_early_end(text, exc.expected), builder.end()) from None
    except RecursionError:
        raise CelSyntaxError(_TOO_DEEP, origin, "LIM101") from None
    try:
        return builder.build(tree)
    except RecursionError:
        raise CelSyntaxError(_TOO_DEEP, origin, "LIM101") from None


_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _early_end(text: str, expected) -> str:
    """What is missing when the text ends too early, in plain words."""
    if set(expected) <= {"IDENT", "ESC_IDENT"}:
        return "the expression ends where a field name was expected (after `.`)"
    opened = _innermost_open(text)
    if opened is not None and not {"IDENT", "INT"} <= set(expected):
        return f"the expression ends before the `{opened}` is closed with `{_CLOSERS[opened]}`"
    return "the expression ends where a value was expected"


def _innermost_open(text: str) -> str | None:
    """The innermost bracket left open, outside string literals (a rough
    scan: enough to name what is missing)."""
    stack: list[str] = []
    quote = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is not None:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in _CLOSERS:
            stack.append(ch)
        elif ch in ")]}" and stack:
            stack.pop()
        i += 1
    return stack[-1] if stack else None


def check_names(expr: E.Expr, roots: frozenset[str] | set[str] | None) -> list[Diagnostic]:
    """Findings for names a compiled CEL expression uses but nothing defines:
    calls of unknown functions (``CEL202``) and, when ``roots`` is given,
    variables outside ``roots`` and the enclosing macros' variables
    (``CEL203``)."""
    out: list[Diagnostic] = []

    def visit(node: E.Expr, bound: frozenset[str]) -> None:
        if isinstance(node, E.Call) and node.func == "cel.unbound":
            name = node.args[0].value if node.args and isinstance(node.args[0], E.Literal) else "?"
            out.append(error("CEL202", f"unknown function or wrong number of arguments: {name}",
                             node.span))
        if isinstance(node, E.Ref) and roots is not None and node.root not in roots \
                and node.root not in bound:
            out.append(error("CEL203", f"undeclared reference to {node.root!r}", node.span))
        if isinstance(node, E.Lambda):
            bound = bound | frozenset(node.params)
        for child in node.children():
            visit(child, bound)

    visit(expr, frozenset())
    return out


class _Builder:
    def __init__(self, text: str, origin: Span, exact: bool) -> None:
        self.text = text
        self.origin = origin
        self.exact = exact and origin.known

    # ------------------------------------------------------------ spans
    def _pos(self, line: int, col: int) -> tuple[int, int]:
        o = self.origin
        if line == 1:
            return o.line, o.col + col - 1
        return o.line + line - 1, col

    def span(self, line, col, end_line, end_col) -> Span:
        if not self.exact or line is None:
            return self.origin
        l1, c1 = self._pos(line, col)
        l2, c2 = self._pos(end_line, end_col)
        return Span(self.origin.file, l1, c1, l2, c2)

    def point(self, line: int, col: int) -> Span:
        return self.span(line, col, line, col + 1)

    def end(self) -> Span:
        lines = self.text.split("\n")
        return self.point(len(lines), len(lines[-1]) + 1)

    def token(self, tok: lark.Token) -> Span:
        return self.span(tok.line, tok.column, tok.end_line, tok.end_column)

    def meta(self, tree: lark.Tree) -> Span:
        m = tree.meta
        if getattr(m, "empty", True):
            return self.origin
        return self.span(m.line, m.column, m.end_line, m.end_column)

    # ------------------------------------------------------------ tree -> IR
    def build(self, tree) -> E.Expr:
        if isinstance(tree, lark.Token):  # pragma: no cover - the grammar wraps every token
            raise CelSyntaxError(f"unexpected {tree.value!r}", self.token(tree))
        rule = tree.data
        span = self.meta(tree)
        kids = tree.children
        if rule in _BINARY:
            return E.Binary(_BINARY[rule], self.build(kids[0]), self.build(kids[1]), span)
        handler = getattr(self, "_" + rule, None)
        if handler is None:  # pragma: no cover - every rule of cel.lark has a handler
            raise CelSyntaxError(f"unsupported construct {rule}", span)
        return handler(kids, span)

    def _paren(self, kids, span):
        return self.build(kids[0])

    def _ternary(self, kids, span):
        return E.Conditional("cel.ternary", self.build(kids[0]), self.build(kids[1]),
                             self.build(kids[2]), span)

    def _not_(self, kids, span):
        operand = self.build(kids[-1])
        for tok in reversed(kids[:-1]):
            operand = E.Unary("cel.not", operand, self.token(tok).cover(operand.span))
        return operand

    def _neg(self, kids, span):
        target = kids[-1]
        signs = kids[:-1]
        if isinstance(target, lark.Tree) and target.data in ("int_lit", "float_lit"):
            # A negative numeric literal is one constant (-9223372036854775808 is an int).
            last = signs[-1]
            operand = self._number(target, negative=True, span=self.token(last).cover(self.meta(target)))
            signs = signs[:-1]
        else:
            operand = self.build(target)
        for tok in reversed(signs):
            operand = E.Unary("cel.neg", operand, self.token(tok).cover(operand.span))
        return operand

    def _number(self, tree: lark.Tree, negative: bool, span: Span) -> E.Literal:
        text = tree.children[0].value
        if tree.data == "float_lit":
            value = float(text)
            return E.Literal(-value if negative else value, "float", span)
        # -9223372036854775808 is a literal of its own (cel-spec): the
        # magnitude may be one more than INT64_MAX when it is negated.
        value = _int_text(text, -INT64_MIN if negative else INT64_MAX,
                          f"integer literal {'-' if negative else ''}{shown(text)} is out of the int64 range",
                          span)
        return E.Literal(-value if negative else value, "int", span)

    def _int_lit(self, kids, span):
        return self._number(lark.Tree("int_lit", kids), negative=False, span=span)

    def _float_lit(self, kids, span):
        return self._number(lark.Tree("float_lit", kids), negative=False, span=span)

    def _uint_lit(self, kids, span):
        value = _int_text(kids[0].value[:-1], UINT64_MAX,
                          f"unsigned integer literal {shown(kids[0].value)} is out of the uint64 range", span)
        return E.Literal(value, "uint", span)

    def _string_lit(self, kids, span):
        return E.Literal(_decode(kids[0].value, False, span), "string", span)

    def _bytes_lit(self, kids, span):
        data = _decode(kids[0].value[1:], True, span)
        return E.Literal(data.hex(), "bytes", span)

    def _true_lit(self, kids, span):
        return E.Literal(True, "bool", span)

    def _false_lit(self, kids, span):
        return E.Literal(False, "bool", span)

    def _null_lit(self, kids, span):
        return E.Literal(None, "null", span)

    def _empty_list(self, kids, span):
        return E.ListExpr((), span)

    def _list(self, kids, span):
        return E.ListExpr(tuple(self.build(k) for k in _flatten(kids[0], "args")), span)

    def _empty_map(self, kids, span):
        return E.MapExpr((), span)

    def _map(self, kids, span):
        entries = []
        for entry in _flatten(kids[0], "entries"):
            key, value = entry.children
            entries.append(E.MapEntry(self.build(key), self.build(value), self.meta(entry)))
        return E.MapExpr(tuple(entries), span)

    def _ident_name(self, tok: lark.Token) -> str:
        name = tok.value
        if name in RESERVED:
            raise CelSyntaxError(f"reserved word {name!r} cannot be used as a name", self.token(tok))
        return name

    def _ident(self, kids, span):
        return E.Ref(self._ident_name(kids[0]), (), span)

    def _root_ident(self, kids, span):
        return E.Ref(self._ident_name(kids[0]), (), span)

    def _select(self, kids, span):
        target = self.build(kids[0])
        name = kids[1].value
        if kids[1].type == "ESC_IDENT":
            name = name[1:-1]  # `content-type` selects the field named content-type
        field = E.Field(name, self.token(kids[1]))
        if isinstance(target, E.Ref):
            return E.Ref(target.root, target.path + (field,), span)
        return E.Binary("cel.select", target, E.Literal(name, "string", field.span), span)

    def _index(self, kids, span):
        target = self.build(kids[0])
        index = self.build(kids[1])
        if isinstance(target, E.Ref):
            return E.Ref(target.root, target.path + (E.Index(index, index.span),), span)
        return E.Binary("cel.index", target, index, span)

    def _args(self, node) -> list:
        return [] if node is None else list(_flatten(node, "args"))

    def _call(self, kids, span):
        name = self._ident_name(kids[0])
        args = self._args(kids[1])
        if name == "has":
            return self._has(args, span)
        known = GLOBAL_FUNCTIONS.get(name)
        built = tuple(self.build(a) for a in args)
        if known is None or known[1] != len(built):
            return E.Call("cel.unbound", (E.Literal(name, "string", self.token(kids[0])),) + built, span)
        return E.Call(known[0], built, span)

    def _root_call(self, kids, span):
        return self._call(kids, span)

    def _has(self, args, span):
        if len(args) != 1:
            raise CelSyntaxError("has() takes exactly one argument", span)
        arg = self.build(args[0])
        if isinstance(arg, E.Ref) and arg.path and isinstance(arg.path[-1], E.Field):
            return E.Call("cel.has", (arg,), span)
        if isinstance(arg, E.Binary) and arg.op == "cel.select":
            return E.Call("cel.has", (arg,), span)
        raise CelSyntaxError("invalid argument to has(): it must be a field selection such as a.b",
                             arg.span)

    def _method(self, kids, span):
        target_tree, name_tok, args_node = kids
        name = name_tok.value
        args = self._args(args_node)
        if isinstance(target_tree, lark.Tree) and target_tree.data == "ident":
            qualified = f"{target_tree.children[0].value}.{name}"
            if qualified == "cel.bind" and len(args) == 3:
                return self._bind(args, span)
            if qualified in EXT_FUNCTIONS:
                key, counts = EXT_FUNCTIONS[qualified]
                built = tuple(self.build(a) for a in args)
                if (len(built) in counts) if counts else built:
                    return E.Call(key, built, span)
                return E.Call("cel.unbound", (E.Literal(qualified, "string", span),) + built, span)
        if name in MACROS:
            key, counts = MACROS[name]
            if len(args) in counts:
                return self._macro(key, target_tree, args, span)
        if name in MACROS2:
            key, counts = MACROS2[name]
            if len(args) in counts:
                return self._macro2(key, target_tree, args, span)
        target = self.build(target_tree)
        built = tuple(self.build(a) for a in args)
        known = METHODS.get(name)
        if name in TIME_METHODS and len(built) <= 1:
            known = (TIME_METHODS[name], len(built) + 1)
        if name in EXT_METHODS and len(built) + 1 in EXT_METHODS[name][1]:
            known = (EXT_METHODS[name][0], len(built) + 1)
        if known is None or known[1] != len(built) + 1:
            return E.Call("cel.unbound", (E.Literal(name, "string", self.token(name_tok)), target) + built,
                          span)
        return E.Call(known[0], (target,) + built, span)

    def _macro(self, key, target_tree, args, span):
        target = self.build(target_tree)
        var = self._macro_var(args[0], span, "first")
        lambdas = tuple(E.Lambda((var,), self.build(body), self.meta(body)) for body in args[1:])
        return E.Call(key, (target,) + lambdas, span)

    def _bind(self, args, span):
        """``cel.bind(x, init, body)``: ``Call("cel.bind", (init, Lambda((x,), body)))``."""
        var = self._macro_var(args[0], span, "first")
        return E.Call("cel.bind", (self.build(args[1]), E.Lambda((var,), self.build(args[2]),
                                                                 self.meta(args[2]))), span)

    def _macro2(self, key, target_tree, args, span):
        target = self.build(target_tree)
        first = self._macro_var(args[0], span, "first")
        second = self._macro_var(args[1], span, "second")
        if first == second:
            raise CelSyntaxError(f"the two variables of a comprehension must differ: {first!r}",
                                 self.meta(args[1]))
        lambdas = tuple(E.Lambda((first, second), self.build(body), self.meta(body)) for body in args[2:])
        return E.Call(key, (target,) + lambdas, span)

    def _macro_var(self, var_tree, span, which: str) -> str:
        if not (isinstance(var_tree, lark.Tree) and var_tree.data == "ident"):
            raise CelSyntaxError(f"the {which} argument of a comprehension macro must be a simple name",
                                 self.meta(var_tree) if isinstance(var_tree, lark.Tree) else span)
        return self._ident_name(var_tree.children[0])


def _flatten(tree: lark.Tree, rule: str) -> list:
    """The items of a left-recursive list rule (``args``, ``entries``)."""
    items = []
    node = tree
    while isinstance(node, lark.Tree) and node.data == rule:
        if len(node.children) == 1:
            items.append(node.children[0])
            break
        items.append(node.children[1])
        node = node.children[0]
    items.reverse()
    return items


def _decode(token: str, as_bytes: bool, span: Span):
    """The value of a string token (quotes, raw prefix and escapes): a str,
    or bytes for a bytes literal (whose text is UTF-8 encoded)."""
    raw = token[0] in "rR"
    if raw:
        token = token[1:]
    quote = token[:3] if token[:3] in ('"""', "'''") else token[0]
    body = token[len(quote):-len(quote)]
    if raw:
        return body.encode("utf-8") if as_bytes else body
    out = bytearray() if as_bytes else []
    i, n = 0, len(body)

    def emit_text(s: str) -> None:
        if as_bytes:
            out.extend(s.encode("utf-8"))
        else:
            out.append(s)

    while i < n:
        ch = body[i]
        if ch != "\\":
            emit_text(ch)
            i += 1
            continue
        if i + 1 >= n:
            raise CelSyntaxError("a string ends with a lone backslash", span)
        esc = body[i + 1]
        if esc in _SIMPLE_ESCAPES:
            emit_text(_SIMPLE_ESCAPES[esc])
            i += 2
        elif esc in "xX":
            digits = body[i + 2:i + 4]
            if len(digits) != 2 or any(c not in _HEX for c in digits):
                raise CelSyntaxError("\\x needs two hex digits", span)
            _emit_code(out, int(digits, 16), as_bytes, span)
            i += 4
        elif esc in _OCTAL:
            digits = body[i + 1:i + 4]
            if len(digits) != 3 or any(c not in _OCTAL for c in digits) or digits[0] > "3":
                raise CelSyntaxError("an octal escape needs three digits (\\000 to \\377)", span)
            _emit_code(out, int(digits, 8), as_bytes, span)
            i += 4
        elif esc in "uU":
            width = 4 if esc == "u" else 8
            digits = body[i + 2:i + 2 + width]
            if len(digits) != width or any(c not in _HEX for c in digits):
                raise CelSyntaxError(f"\\{esc} needs {width} hex digits", span)
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise CelSyntaxError(f"\\{esc}{digits} is not a Unicode scalar value", span)
            if as_bytes:
                out.extend(chr(code).encode("utf-8"))
            else:
                out.append(chr(code))
            i += 2 + width
        else:
            raise CelSyntaxError(f"unknown escape \\{esc}", span)
    return bytes(out) if as_bytes else "".join(out)


def _emit_code(out, code: int, as_bytes: bool, span: Span) -> None:
    """An \\x or octal escape: a raw byte in bytes, a code point in strings."""
    if as_bytes:
        out.append(code)
    else:
        out.append(chr(code))
