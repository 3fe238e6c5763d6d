"""WorkflowSkill ``$``-expressions and value strings -> IR expressions.

Two entry points, matching the reference runtime's two ways of reading text:

- :func:`parse_expression` for bare expressions (``condition``, ``each``,
  ``where``, map ``expression`` values, an exit ``output`` string): the
  reference's ``resolveExpression``.
- :func:`parse_value` for value strings (step input/output ``value``,
  workflow output ``value``, exit-output object values): the reference's
  ``resolveValue`` (``$$`` escape, ``${...}`` template, ``$`` expression or
  literal).

The grammar is ``grammar/workflowskill.lark`` (LALR, context-free lexer).
Lark builds its table once, with an inline transformer, so parsing makes IR
nodes directly, without a parse tree (see "the parser" below). Lex and parse
errors raise
:class:`ExpressionError` with the reference's message and a span on the
offending character; flowc reports them at compile time (the reference
reports them when the expression is first evaluated).
"""

from __future__ import annotations

import bisect
import re
import threading
from typing import Any

import attrs
import lark
from flowc.grammar import grammar_text, parser_options
from flowc.ir.expr import Binary, Expr, Field, Index, Literal, Ref, Template, Unary
from flowc.ir.span import Span
from lark.parsers.lalr_analysis import Shift as _SHIFT

__all__ = ["BINARY_OPS", "ExpressionError", "literal", "parse_expression", "parse_value"]


class ExpressionError(Exception):
    """A WorkflowSkill expression that doesn't lex or parse.

    ``message`` is the reference runtime's message; ``span`` is where in the
    source file the offending character or token is; ``kind`` is the
    reference's error class (``LexError`` or ``ParseExprError``) and
    ``position`` its position field: the character offset in the text the
    reference lexed (for a template placeholder that is ``'$' + body``).
    """

    def __init__(self, message: str, span: Span, kind: str = "ParseExprError", position: int = 0,
                 plain: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.kind = kind
        self.position = position
        # The same problem in flowc's own words, for findings (``message``
        # stays the reference's, for `flowc eval` and the conformance tests).
        self.plain = plain or message


# Token type -> IR operator key.
BINARY_OPS: dict[str, str] = {
    "EQ": "wfs.eq",
    "NEQ": "wfs.ne",
    "LT": "wfs.lt",
    "LTE": "wfs.le",
    "GT": "wfs.gt",
    "GTE": "wfs.ge",
    "CONTAINS": "wfs.contains",
    "AND": "wfs.and",
    "OR": "wfs.or",
}

# A `.NUMBER` postfix is a property access with the number's text as the key.
# When that text is a canonical array index the IR says Index(n), which reads
# the same element or key; other texts ("01", "-1", "1.", "1.5") stay Fields.
_CANONICAL_INDEX = re.compile(r"(?:0|[1-9][0-9]{0,14})\Z")
_STRING_ESCAPE = re.compile(r"\\([\s\S])")
_MAX_SAFE = 2**53


class _Locator:
    """Maps offsets in the lexed text to source lines and columns.

    The lexed text is either the source text itself or, for a template
    placeholder, ``'$' + body``: its offset 0 is the ``$`` of ``${`` at
    ``dollar`` in the source text and offset k >= 1 is source offset
    ``k + shift`` (``shift = dollar + 1`` skips the ``{``).
    """

    __slots__ = ("col", "dollar", "file", "line", "shift", "starts")

    def __init__(self, origin: Span, source: str, dollar: int = 0, shift: int = 0):
        self.file = origin.file
        self.line = origin.line
        self.col = origin.col
        self.starts = None
        if "\n" in source:
            self.starts = [0] + [m.end() for m in re.finditer("\n", source)]
        self.dollar = dollar
        self.shift = shift

    def placeholder(self, dollar: int) -> _Locator:
        loc = object.__new__(_Locator)
        loc.file, loc.line, loc.col, loc.starts = self.file, self.line, self.col, self.starts
        loc.dollar = dollar
        loc.shift = dollar + 1
        return loc

    def source_offset(self, k: int) -> int:
        return self.dollar if k == 0 else k + self.shift

    def at(self, off: int) -> tuple[int, int]:
        """(line, col) of source offset ``off``."""
        if self.starts is None:
            return self.line, self.col + off
        i = bisect.bisect_right(self.starts, off) - 1
        if i == 0:
            return self.line, self.col + off
        return self.line + i, off - self.starts[i] + 1

    def source_span(self, start: int, end: int) -> Span:
        """The span of source offsets [start, end)."""
        if self.starts is None:
            return Span(self.file, self.line, self.col + start, self.line, self.col + end)
        line, col = self.at(start)
        end_line, end_col = self.at(end)
        return Span(self.file, line, col, end_line, end_col)

    def span(self, start: int, end: int) -> Span:
        """The span of lexed-text offsets [start, end)."""
        if self.starts is None:
            # Fast path: one line.
            base = self.col + self.shift
            col = self.col + self.dollar if start == 0 else base + start
            end_col = self.col + self.dollar if end == 0 else base + end
            return Span(self.file, self.line, col, self.line, end_col)
        return self.source_span(self.source_offset(start), self.source_offset(end))


def _cover(a: Span, b: Span) -> Span:
    return Span(a.file, a.line, a.col, b.end_line, b.end_col)


class _Builder(lark.Transformer):
    """Makes IR nodes while the LALR parser reduces (an inline transformer).

    ``loc`` is set before each parse, under the engine's lock.
    """

    loc: _Locator

    def _tok(self, tok: _Tok) -> Span:
        return self.loc.span(tok.start_pos, tok.end_pos)

    def binary(self, c: list) -> Expr:
        left, op, right = c
        return Binary(BINARY_OPS[op.type], left, right, _cover(left.span, right.span))

    def not_(self, c: list) -> Expr:
        tok, operand = c
        return Unary("wfs.not", operand, _cover(self._tok(tok), operand.span))

    def paren(self, c: list) -> Expr:
        lpar, inner, rpar = c
        # The node, with its span widened to the parentheses.
        return attrs.evolve(inner, span=self.loc.span(lpar.start_pos, rpar.end_pos))

    def number(self, c: list) -> Expr:
        (tok,) = c
        return _number_literal(tok.value, self._tok(tok))

    def string(self, c: list) -> Expr:
        (tok,) = c
        return Literal(_unquote(tok.value), "string", self._tok(tok))

    def true_(self, c: list) -> Expr:
        return Literal(True, "bool", self._tok(c[0]))

    def false_(self, c: list) -> Expr:
        return Literal(False, "bool", self._tok(c[0]))

    def null(self, c: list) -> Expr:
        return Literal(None, "null", self._tok(c[0]))

    def field(self, c: list) -> Field | Index:
        _dot, tok = c
        span = self._tok(tok)
        if tok.type == "DOLLAR_REF":
            # `$a.$b` reads property "b" (the token's value has no `$`).
            return Field(tok.value[1:], span)
        if tok.type == "NUMBER" and _CANONICAL_INDEX.match(tok.value):
            return Index(Literal(int(tok.value), "int", span), span)
        return Field(tok.value, span)

    def index(self, c: list) -> Index:
        lbr, inner, rbr = c
        return Index(inner, self.loc.span(lbr.start_pos, rbr.end_pos))

    def ref(self, c: list) -> Ref:
        tok = c[0]
        path = tuple(c[1:])
        span = self._tok(tok)
        if path:
            span = _cover(span, path[-1].span)
        return Ref(tok.value[1:], path, span)


def _unquote(text: str) -> str:
    body = text[1:-1]
    if "\\" in body:
        body = _STRING_ESCAPE.sub(r"\1", body)
    return body


def _number_literal(text: str, span: Span) -> Literal:
    """A NUMBER token as the reference reads it (parseFloat when it has a '.',
    else parseInt). WorkflowSkill numbers are doubles: an integer beyond 2**53
    is kept as the double the reference would hold."""
    if "." in text:
        return Literal(float(text), "float", span)
    if len(text) <= 16:
        value = int(text)
        if -_MAX_SAFE <= value <= _MAX_SAFE:
            return Literal(value, "int", span)
    # The nearest double (Infinity past its range), as parseInt gives.
    return Literal(float(text), "float", span)


# --- the parser ----------------------------------------------------------------
#
# Lark builds the LALR(1) table and the callbacks (with the inline transformer
# below) from grammar/workflowskill.lark, once. Parsing then runs a small
# table-driven loop over a token list from one master regex of the grammar's
# terminals, in the order and with the keyword rule of lark's basic lexer.
# That is the same parse as ``Lark.parse`` (a test checks it on the corpus)
# at about half the cost, and it lexes the whole text first, as the
# reference does, so a lex error anywhere wins over a parse error.


class _Tok:
    """A token: the type is the grammar's terminal name (``$END`` at the end)."""

    __slots__ = ("end_pos", "start_pos", "type", "value")

    def __init__(self, type: str, value: str, start_pos: int, end_pos: int):
        self.type = type
        self.value = value
        self.start_pos = start_pos
        self.end_pos = end_pos

    def __repr__(self) -> str:
        return f"_Tok({self.type}, {self.value!r}, {self.start_pos})"


class _Reject(Exception):
    """The parse table has no action for token ``index`` of the token list."""

    def __init__(self, index: int):
        self.index = index


class _Engine:
    def __init__(self) -> None:
        self.builder = _Builder()
        options = parser_options("workflowskill")
        # Spans come from token offsets; lark's position propagation is for
        # trees, which the inline transformer doesn't build.
        options["propagate_positions"] = False
        self.lark = lark.Lark(grammar_text("workflowskill"), transformer=self.builder, **options)
        self.lock = threading.Lock()
        self._build_lexer()
        lalr = self.lark.parser.parser  # the LALR parser
        table = lalr._parse_table
        callbacks = lalr.parser.callbacks
        # The table with plain-str keys: state -> symbol -> (True, next state)
        # for a shift or goto, (False, (size, callback, rule name)) for a reduce.
        self.states: dict[int, dict[str, tuple[bool, Any]]] = {
            state: {
                str(symbol): (True, arg) if action is _SHIFT
                else (False, (len(arg.expansion), callbacks[arg], str(arg.origin.name)))
                for symbol, (action, arg) in actions.items()
            }
            for state, actions in table.states.items()
        }
        self.start_state = table.start_states["start"]
        self.end_state = table.end_states["start"]

    def _build_lexer(self) -> None:
        terminals = list(self.lark.terminals)
        self.ignore = frozenset(self.lark.ignore_tokens)
        # lark's basic lexer: a string terminal that a regex terminal matches
        # whole is a keyword: the regex's match of it is retyped.
        self.keywords: dict[str, dict[str, str]] = {}
        embedded = set()
        for retok in terminals:
            if retok.pattern.type != "re":
                continue
            regex = re.compile(retok.pattern.to_regexp())
            for strtok in terminals:
                if strtok.pattern.type != "str" or strtok.priority != retok.priority:
                    continue
                word = strtok.pattern.value
                if regex.fullmatch(word):
                    self.keywords.setdefault(retok.name, {})[word] = strtok.name
                    embedded.add(strtok.name)
        terminals = [t for t in terminals if t.name not in embedded]
        terminals.sort(key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
        self.master = re.compile("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in terminals))

    def tokens(self, text: str, loc: _Locator) -> list[_Tok]:
        """All tokens of ``text`` and a final ``$END``; a lex error raises."""
        out = []
        pos = 0
        n = len(text)
        match = self.master.match
        ignore = self.ignore
        keywords = self.keywords
        while pos < n:
            m = match(text, pos)
            if m is None:
                raise _lex_error(text, pos, loc)
            kind = m.lastgroup
            end = m.end()
            if kind not in ignore:
                value = m.group()
                kw = keywords.get(kind)
                if kw is not None:
                    kind = kw.get(value, kind)
                out.append(_Tok(kind, value, pos, end))
            pos = end
        out.append(_Tok("$END", "", n, n))
        return out

    def run(self, tokens: list[_Tok]) -> Expr:
        """The LALR loop (lark's ParserState.feed_token) over ``tokens``."""
        states = self.states
        end_state = self.end_state
        state_stack = [self.start_state]
        value_stack: list = []
        last = len(tokens) - 1
        for i, tok in enumerate(tokens):
            ttype = tok.type
            while True:
                action = states[state_stack[-1]].get(ttype)
                if action is None:
                    raise _Reject(i)
                shift, arg = action
                if shift:
                    state_stack.append(arg)
                    value_stack.append(tok)
                    break
                size, callback, origin = arg
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value_stack.append(callback(children))
                state_stack.append(states[state_stack[-1]][origin][1])
                if i == last and state_stack[-1] == end_state:
                    return value_stack[-1]
        raise AssertionError("the LALR loop ended without accepting")  # pragma: no cover

    def parse(self, text: str, loc: _Locator) -> Expr:
        tokens = self.tokens(text, loc)
        try:
            with self.lock:
                self.builder.loc = loc
                return self.run(tokens)
        except _Reject as r:
            raise _parse_error(tokens, r.index, loc) from None

    def parse_with_lark(self, text: str, loc: _Locator) -> Expr:
        """The same parse through ``Lark.parse`` (for tests)."""
        try:
            with self.lock:
                self.builder.loc = loc
                return self.lark.parse(text)
        except lark.UnexpectedCharacters as e:
            raise _lex_error(text, e.pos_in_stream, loc) from None
        except lark.UnexpectedToken:
            # Reported as the table-driven parse reports it.
            tokens = self.tokens(text, loc)
            try:
                self.run(tokens)
            except _Reject as r:
                raise _parse_error(tokens, r.index, loc) from None
            raise



_ENGINE: _Engine | None = None
_ENGINE_LOCK = threading.Lock()


def _engine() -> _Engine:
    global _ENGINE
    if _ENGINE is None:
        with _ENGINE_LOCK:
            if _ENGINE is None:
                _ENGINE = _Engine()
    return _ENGINE


# --- errors ---------------------------------------------------------------------

# After these tokens (or at the start) the parser wants an operand.
_WANTS_OPERAND = frozenset({None, "LPAREN", "LBRACKET", "NOT", "EQ", "NEQ", "GT", "GTE", "LT", "LTE",
                            "CONTAINS", "AND", "OR"})


def _token_type(tok: _Tok) -> str:
    if tok.type in ("TRUE", "FALSE"):
        return "BOOLEAN"
    if tok.type == "$END":
        return "EOF"
    return tok.type


def _token_value(tok: _Tok) -> str:
    if tok.type == "DOLLAR_REF":
        return tok.value[1:]
    if tok.type == "STRING":
        return _unquote(tok.value)
    return tok.value


def _lex_error(text: str, pos: int, loc: _Locator) -> ExpressionError:
    ch = text[pos]
    if ch == "$":
        message = "Expected identifier after $"
        plain = "`$` must be followed by a name, such as $inputs, $steps or $item"
    elif ch in "\"'":
        message = "Unterminated string literal"
        plain = f"the string that starts here has no closing {ch}"
    else:
        message = f"Unexpected character: {ch}"
        plain = f"{ascii(ch) if not ch.isprintable() else repr(ch)} cannot appear in an expression"
    return ExpressionError(message, loc.span(pos, pos + 1), "LexError", pos, plain)


# How findings name a token: what the reader wrote, not the lexer's name for it.
_TOKEN_WORDS = {"EQ": "`==`", "NEQ": "`!=`", "GT": "`>`", "GTE": "`>=`", "LT": "`<`", "LTE": "`<=`",
                "AND": "`&&`", "OR": "`||`", "NOT": "`!`", "LPAREN": "`(`", "RPAREN": "`)`",
                "LBRACKET": "`[`", "RBRACKET": "`]`", "DOT": "`.`", "CONTAINS": "`contains`"}


def _describe(kind: str, value: str) -> str:
    if kind == "EOF":
        return "the end of the expression"
    if kind in _TOKEN_WORDS:
        return _TOKEN_WORDS[kind]
    if kind == "DOLLAR_REF":
        return f"the reference ${value}"
    if kind == "STRING":
        return f"the string {value!r}"
    if kind == "NUMBER":
        return f"the number {value}"
    if kind in ("BOOLEAN", "NULL"):
        return f"`{value}`"
    if kind == "IDENTIFIER":
        return f"the bare word {value!r} (a reference starts with $, a string needs quotes)"
    return repr(value)


def _parse_error(tokens: list[_Tok], index: int, loc: _Locator) -> ExpressionError:
    """The reference's message for the token its recursive descent rejects
    (an LL(1) parser and the LALR(1) table reject the same token).

    What the reference says depends on what it was reading: an operand
    (at the start, after an operator, `(`, `[` or `!`), a property name
    (after `.`), or, after a complete operand, the closing bracket of the
    innermost open `(` / `[`, or the end of the text.
    """
    prev = None
    open_brackets: list[str] = []
    for tok in tokens[:index]:
        if tok.type in ("LPAREN", "LBRACKET"):
            open_brackets.append(tok.type)
        elif tok.type in ("RPAREN", "RBRACKET") and open_brackets:
            open_brackets.pop()
        prev = tok.type
    bad = tokens[index]
    kind, value = _token_type(bad), _token_value(bad)
    found = _describe(kind, value)
    if prev in _WANTS_OPERAND:
        message = f'Unexpected token: {kind} ("{value}")'
        if kind == "EOF":
            plain = "the expression ends where a value was expected" + (
                f" (after {_TOKEN_WORDS[prev]})" if prev in _TOKEN_WORDS else "")
        else:
            plain = f"expected a value, found {found}"
    elif prev == "DOT":
        message = f"Expected property name after '.', got {kind}"
        plain = f"expected a property name after `.`, found {found}"
    elif open_brackets:
        closer = "RPAREN" if open_brackets[-1] == "LPAREN" else "RBRACKET"
        message = f'Expected {closer} but got {kind} ("{value}")'
        plain = f"expected {_TOKEN_WORDS[closer]} to close the {_TOKEN_WORDS[open_brackets[-1]]}, found {found}"
    else:
        message = f'Unexpected token after expression: {kind} ("{value}")'
        plain = f"the expression is complete before {found}; an operator (==, &&, ...) may be missing"
    return ExpressionError(message, loc.span(bad.start_pos, bad.end_pos), "ParseExprError", bad.start_pos,
                           plain)


def _parse(text: str, loc: _Locator) -> Expr:
    return _engine().parse(text, loc)


# --- entry points -----------------------------------------------------------------

def parse_expression(text: str, origin: Span) -> Expr:
    """A bare ``$``-expression (condition, each, where, map expression value,
    exit output string) as an IR expression.

    ``origin`` is where ``text`` starts in the source file. Node spans are
    offsets from it; after a newline in ``text`` columns restart at 1.
    Raises :class:`ExpressionError` when the text doesn't lex or parse.
    """
    return _parse(text, _Locator(origin, text))


_CONTAINS_TEMPLATE = re.compile(r"\$\{[^}]+\}")
_WHOLE_TEMPLATE = re.compile(r"\$\{([^}]+)\}\Z")
_TEMPLATE_PART = re.compile(r"\$\$\{|\$\{([^}]+)\}")


def parse_value(text: str, origin: Span) -> Expr:
    """A value string (step input / step output / workflow output ``value``,
    exit-output object value) as an IR expression, by the reference's
    resolveValue rules:

    - ``$$...``: the rest of the string, literally (no templating at all);
    - contains ``${...}``: a Template (stringify "wfs"); exactly one
      placeholder and nothing else keeps the value's type (``typed_whole``).
      Each placeholder body is read as ``'$' + body``; ``$${`` is a literal
      ``${``;
    - starts with ``$``: an expression;
    - anything else: a literal string.
    """
    loc = _Locator(origin, text)
    whole = loc.source_span(0, len(text))
    if text.startswith("$$"):
        return Literal(text[1:], "string", whole)
    if _CONTAINS_TEMPLATE.search(text):
        return _parse_template(text, loc, whole)
    if text.startswith("$"):
        return _parse(text, loc)
    return Literal(text, "string", whole)


def _parse_template(text: str, loc: _Locator, whole: Span) -> Expr:
    m = _WHOLE_TEMPLATE.match(text)
    if m:
        expr = _parse("$" + m.group(1), loc.placeholder(0))
        return Template((expr,), "wfs", True, whole)
    parts: list[Expr] = []
    pending: list[str] = []  # literal text since the last placeholder
    pending_start = 0
    last = 0
    for m in _TEMPLATE_PART.finditer(text):
        pending.append(text[last:m.start()])
        last = m.end()
        if m.group(1) is None:  # `$${` is a literal `${`
            pending.append("${")
            continue
        literal_text = "".join(pending)
        if literal_text:
            parts.append(Literal(literal_text, "string", loc.source_span(pending_start, m.start())))
        pending = []
        pending_start = m.end()
        parts.append(_parse("$" + m.group(1), loc.placeholder(m.start())))
    pending.append(text[last:])
    literal_text = "".join(pending)
    if not parts:
        # Only `$${` escapes matched: the result is a plain string.
        return Literal(literal_text, "string", whole)
    if literal_text:
        parts.append(Literal(literal_text, "string", loc.source_span(pending_start, len(text))))
    return Template(tuple(parts), "wfs", False, whole)


def literal(value: Any, span: Span) -> Literal:
    """A Literal for a non-string YAML value (returned as is by resolveValue),
    with its kind: null, bool, int, float, string, list or object."""
    if value is None:
        kind = "null"
    elif isinstance(value, bool):
        kind = "bool"
    elif isinstance(value, int):
        kind = "int"
    elif isinstance(value, float):
        kind = "float"
    elif isinstance(value, str):
        kind = "string"
    elif isinstance(value, (list, tuple)):
        kind = "list"
    elif isinstance(value, dict):
        kind = "object"
    else:
        raise TypeError(f"not a YAML value: {type(value).__name__}")
    return Literal(value, kind, span)
