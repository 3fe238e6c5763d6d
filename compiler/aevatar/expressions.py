"""aevatar parameter values and expressions -> IR expressions.

The engine evaluates text, not a tree: ``Evaluate(template, variables)``
replaces each ``${...}`` placeholder, ``EvaluateExpression(text)`` tries
the function form ``name(args)`` and otherwise resolves a variable, and
call arguments are split by a quote/parenthesis scanner. What is a call,
where an argument ends and what is a literal depends only on the text, so
flowc decides all of it at compile time, with the three entry rules of
grammar/aevatar.lark, and keeps only what depends on the variables for run
time:

- a quoted leaf ``'x'`` / ``"x"`` is a :class:`Literal`;
- any other leaf is a reference: ``input`` -> ``Ref("input")``,
  ``steps.<id>.<f>...`` -> ``Ref("steps", (id, f, ...))``, anything else
  ``Ref("vars", (key,))`` (the ``variables.`` prefix is stripped). The
  engine looks the flat dotted key up, and when it is absent returns the
  key itself if it parses as a number, the key lower-cased if it parses as
  a bool, else ``""``; that fallback depends on the key alone, so it is part
  of the reference's meaning (STRINGIFY ``aevatar``), not of the tree;
- a call of a known function is a ``Call("aevatar.<name>")`` (``if`` is a
  ``Conditional("aevatar.if")``) with the arguments the engine evaluates;
  arguments it ignores are dropped, and a call whose result is fixed by the
  argument count or an unknown name is the :class:`Literal` text the engine
  produces (``"[if: requires 3 args]"``, ``"[unknown function: foo]"``);
- a lone quote character (which makes the engine throw when, and only
  when, it is evaluated) is ``Call("aevatar.fail")``.

Findings (unknown functions, wrong argument counts, a lone quote, text
that looks like a literal or a call but is read as a variable name) go to
the sink with spans into the source file where the scalar's columns map
one to one, else with the scalar's span.
"""

from __future__ import annotations

import functools

import lark
from flowc.compiler.aevatar import dotnet
from flowc.compiler.suggest import did_you_mean
from flowc.grammar import grammar_text, parser_options
from flowc.ir.diagnostics import DiagnosticSink
from flowc.ir.expr import Call, Conditional, Expr, Field, Literal, Ref, Template
from flowc.ir.limits import MAX_EXPR_DEPTH
from flowc.ir.span import NO_SPAN, Span

__all__ = ["FUNCTIONS", "LONE_QUOTE_MESSAGE", "Locator", "Lowering", "leaf_ref", "parser"]

# name -> (minimum arguments, arguments evaluated (None: all), text when too few)
FUNCTIONS: dict[str, tuple[int, int | None, str | None]] = {
    "if": (3, 3, "[if: requires 3 args]"),
    "concat": (1, None, None),
    "isblank": (1, 1, None),
    "length": (1, 1, None),
    "not": (1, 1, None),
    "and": (2, 2, "false"),
    "or": (2, 2, "false"),
    "upper": (1, 1, None),
    "lower": (1, 1, None),
    "trim": (1, 1, None),
    "json": (1, 1, None),
    "add": (1, None, None),
    "sub": (1, None, None),
    "mul": (1, None, None),
    "div": (2, None, "[div: requires 2 args]"),
    "eq": (2, 2, "false"),
    "lt": (2, 2, "[lt: requires 2 args]"),
    "lte": (2, 2, "[lte: requires 2 args]"),
    "gt": (2, 2, "[gt: requires 2 args]"),
    "gte": (2, 2, "[gte: requires 2 args]"),
}

LONE_QUOTE_MESSAGE = ("a lone quote character is read as a quoted literal with no closing quote "
                      "(the engine throws ArgumentOutOfRangeException)")


@functools.cache
def parser() -> lark.Lark:
    return lark.Lark(grammar_text("aevatar"), **parser_options("aevatar"))


class Locator:
    """Source spans of offsets in a parameter's text. ``base`` is the span of
    the scalar; ``col0`` the column of the text's first character when the
    text maps one to one onto a single source line, else None (then every
    sub-span is the whole scalar)."""

    __slots__ = ("base", "col0")

    def __init__(self, base: Span, col0: int | None = None) -> None:
        self.base = base
        self.col0 = col0

    def span(self, start: int, end: int) -> Span:
        if self.col0 is None or not self.base.known:
            return self.base
        col = self.col0 + start
        return Span(self.base.file, self.base.line, col, self.base.line, max(col + 1, self.col0 + end))


# Calls one placeholder may nest: with the step's map of parameters and the
# template around them and the innermost argument (a variable is a reference
# with one path segment: two levels), that is MAX_EXPR_DEPTH levels
# (compiler/analyze/limits.py). Deeper paths are left to that check.
_MAX_CALLS = MAX_EXPR_DEPTH - 4


def paren_depth(text: str) -> int:
    """The deepest nesting of parentheses outside quotes, as the engine's
    argument scanner counts them (a quote runs to the same quote character)."""
    depth = deepest = 0
    quote = None
    for ch in text:
        if quote is not None:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")" and depth:
            depth -= 1
    return deepest


def leaf_ref(key: str, span: Span = NO_SPAN) -> Ref:
    """The reference a variable key lowers to."""
    if key == "input":
        return Ref("input", (), span)
    if key.startswith("steps."):
        return Ref("steps", tuple(Field(part, span) for part in key[len("steps."):].split(".")), span)
    return Ref("vars", (Field(key, span),), span)


def _trimmed(text: str, offset: int) -> tuple[str, int]:
    start = 0
    while start < len(text) and text[start] in dotnet.WHITESPACE:
        start += 1
    return dotnet.trim(text), offset + start


class Lowering:
    """Lowers the texts of one parameter (or one while condition)."""

    def __init__(self, sink: DiagnosticSink | None, loc: Locator, where: str = "") -> None:
        self.sink = sink
        self.loc = loc
        self.where = where
        # Calls open around the one being lowered. Each level re-reads its
        # argument text, so the depth limit is also what keeps lowering
        # linear (at most MAX_EXPR_DEPTH passes over the text).
        self.depth = 0

    # ------------------------------------------------------------ entries
    def template(self, text: str) -> Expr:
        """``Evaluate(text)``: a parameter value."""
        whole = self.loc.base
        if "${" not in text:
            return Literal(text, "string", whole)
        tree = parser().parse(text, start="template")
        parts: list[Expr] = []
        buf: list[str] = []
        buf_start = 0
        for tok in tree.children:
            if tok.type == "PLACEHOLDER":
                if buf:
                    parts.append(Literal("".join(buf), "string", self.loc.span(buf_start, tok.start_pos)))
                    buf = []
                inner, off = _trimmed(tok.value[2:-1], tok.start_pos + 2)
                parts.append(self.expression(inner, off))
                buf_start = tok.end_pos
            else:
                if not buf:
                    buf_start = tok.start_pos
                buf.append("${" if tok.type == "ESCAPE" else tok.value)
        if buf:
            parts.append(Literal("".join(buf), "string", self.loc.span(buf_start, len(text))))
        if not any(not isinstance(p, Literal) for p in parts):
            return Literal("".join(p.value for p in parts), "string", whole)
        return Template(tuple(parts), "aevatar", False, whole)

    def expression(self, text: str, offset: int = 0) -> Expr:
        """``EvaluateExpression(text)``: no trimming of its own."""
        span = self.loc.span(offset, offset + len(text))
        if dotnet.is_blank(text):
            return Literal("", "string", span)
        if self.depth == 0 and paren_depth(text) > _MAX_CALLS:
            # One linear scan instead of lowering level by level (each
            # level parses the rest of the text again).
            self._error("LIM101", f"the expression nests deeper than {MAX_EXPR_DEPTH} levels", span,
                        "split it into steps, or name parts of it")
            return Literal("", "string", span)
        call = self._call_form(text)
        if call is not None:
            name, args_text, args_off = call
            return self._call(name, args_text, offset + args_off, span, offset)
        return self._leaf(text, offset, span)

    # ------------------------------------------------------------ pieces
    def _call_form(self, text: str) -> tuple[str, str, int] | None:
        if "(" not in text or not text.rstrip("\n").endswith(")"):
            return None
        try:
            tree = parser().parse(text, start="call")
        except lark.exceptions.LarkError:
            return None
        name, args = tree.children[0], tree.children[2]
        if not all(dotnet.is_word_char(ch) for ch in name.value):
            return None
        return name.value, args.value, args.start_pos

    def split_args(self, text: str) -> list[tuple[str, int]]:
        """SplitArgs: the trimmed argument pieces with their offsets in ``text``."""
        tree = parser().parse(text, start="args")
        cuts = [tok.start_pos for tok in tree.children if isinstance(tok, lark.Token)]
        pieces = []
        start = 0
        for cut in cuts:
            pieces.append(_trimmed(text[start:cut], start))
            start = cut + 1
        if start < len(text):
            pieces.append(_trimmed(text[start:], start))
        return pieces

    def _call(self, name: str, args_text: str, args_off: int, span: Span, offset: int) -> Expr:
        fname = dotnet.lower_invariant(name)
        name_span = self.loc.span(offset, offset + len(name))
        spec = FUNCTIONS.get(fname)
        if spec is None:
            hint = did_you_mean(fname, FUNCTIONS)
            self._warn("AEV201", f"unknown function {name!r}: the engine inserts the text "
                       f"'[unknown function: {fname}]'", name_span, *([hint] if hint else []))
            return Literal(f"[unknown function: {fname}]", "string", span)
        if self.depth >= _MAX_CALLS:
            self._error("LIM101", f"the expression nests deeper than {MAX_EXPR_DEPTH} levels", span,
                        "split it into steps, or name parts of it")
            return Literal("", "string", span)
        pieces = [(text, args_off + off) for text, off in self.split_args(args_text)]
        minimum, used, short = spec
        if len(pieces) < minimum:
            self._warn("AEV203", f"{fname}() needs {minimum} arguments, not {len(pieces)}: the engine "
                       f"inserts {short!r}", span)
            return Literal(short or "", "string", span)
        if used is not None and len(pieces) > used:
            self._warn("AEV203", f"{fname}() uses {used} argument{'s' if used > 1 else ''}; the engine "
                       f"ignores the other {len(pieces) - used} (they are not evaluated)", span)
            pieces = pieces[:used]
        self.depth += 1
        try:
            args = tuple(self.expression(text, off) for text, off in pieces)
        finally:
            self.depth -= 1
        if fname == "if":
            return Conditional("aevatar.if", args[0], args[1], args[2], span)
        return Call(f"aevatar.{fname}", args, span)

    def _leaf(self, text: str, offset: int, span: Span) -> Expr:
        first, last = text[0], text[-1]
        if (first == "'" and last == "'") or (first == '"' and last == '"'):
            if len(text) == 1:
                self._error("AEV202", LONE_QUOTE_MESSAGE, span)
                return Call("aevatar.fail", (Literal(
                    "ArgumentOutOfRangeException: a lone quote character cannot be read as a literal",
                    "string", span),), span)
            return Literal(text[1:-1], "string", span)
        if first in "'\"":
            self._warn("AEV204", f"{text!r} starts with a quote but does not end with the same one, so "
                       "the engine reads it as a variable name (usually empty)", span,
                       "a quote inside an argument cannot be escaped; use the other quote character")
        elif any(ch in "()," for ch in text) or any(ch in dotnet.WHITESPACE for ch in text):
            self._warn("AEV205", f"{text!r} is not a function call, so the engine reads it as a variable "
                       "name (usually empty)", span,
                       "a call is name(arguments) with at least one character between the parentheses")
        key = text[len("variables."):] if dotnet.equals_ignore_case(text[:len("variables.")], "variables.") \
            else text
        return leaf_ref(key, span)

    # ------------------------------------------------------------ findings
    def _warn(self, code: str, message: str, span: Span, *notes: str) -> None:
        if self.sink is not None:
            self.sink.warning(code, self.where + message, span, *notes)

    def _error(self, code: str, message: str, span: Span, *notes: str) -> None:
        if self.sink is not None:
            self.sink.error(code, self.where + message, span, *notes)
