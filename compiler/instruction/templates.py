"""``{{ path }}`` templates of the instruction dialect -> IR.

- ``{{ steps.fetch.output.items.0 }}`` (dotted; digit segments index
  arrays) and ``{{ /steps/fetch/output }}`` (JSON pointer) become ``Ref``
  paths; whitespace inside the braces is allowed. As in agentd, a dotted
  path splits on ``.`` only: ``{{ memory.content/queue }}`` reads the key
  ``content/queue`` (the one ``memory.set`` wrote).
- A string that is exactly one placeholder keeps the value's type
  (``Template(typed_whole=True)``); otherwise the parts are interpolated
  under stringify ``json`` (strings raw, null as ``''``, the rest as JSON).
- ``{{ path | default }}`` -> ``Call("tmpl.default", (Ref, Literal))``: the
  default is JSON when it parses as JSON, else the text itself.
- ``{{secret:NAME}}``, ``{{secret-file:PATH}}`` and ``{{config.*}}`` stay
  literal text (the host resolves them when it loads the workflow). A
  config reference is one only when written ``{{config.`` with no space
  after the braces (agentd looks for that literal text); ``{{ config.x }}``
  is an ordinary placeholder whose root ``config`` the front end reports.
"""

from __future__ import annotations

import json
import re

from flowc.ir import expr as E
from flowc.ir.span import NO_SPAN, Span

__all__ = ["TemplateError", "has_placeholder", "parse_template"]

_OPEN = "{{"
_CLOSE = "}}"
_PASSTHROUGH = re.compile(r"^(\s*secret:|\s*secret-file:|config\.)")
_ROOT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class TemplateError(Exception):
    def __init__(self, message: str, span: Span = NO_SPAN) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


def has_placeholder(text: str) -> bool:
    return _OPEN in text


def parse_template(text: str, origin: Span = NO_SPAN, exact: bool = True) -> E.Expr:
    """The IR of a templated string: a ``Literal`` when it has no
    placeholder, else a ``Template(stringify="json")``."""
    where = _Where(origin, exact and origin.known)
    parts: list[E.Expr] = []
    literal: list[str] = []
    literal_start = 0
    pos = 0
    placeholders = 0
    while True:
        start = text.find(_OPEN, pos)
        if start < 0:
            literal.append(text[pos:])
            break
        end = text.find(_CLOSE, start + 2)
        if end < 0:
            raise TemplateError("`{{` is not closed by `}}`", where.at(start, start + 2))
        inner = text[start + 2:end]
        if _PASSTHROUGH.match(inner):
            literal.append(text[pos:end + 2])
            pos = end + 2
            continue
        literal.append(text[pos:start])
        if "".join(literal):
            parts.append(E.Literal("".join(literal), "string", where.at(literal_start, start)))
        literal = []
        parts.append(_placeholder(inner, start + 2, where))
        placeholders += 1
        pos = end + 2
        literal_start = pos
    tail = "".join(literal)
    if placeholders == 0:
        return E.Literal(text, "string", origin)
    if tail:
        parts.append(E.Literal(tail, "string", where.at(literal_start, len(text))))
    whole = where.at(0, len(text))
    typed = placeholders == 1 and len(parts) == 1
    return E.Template(tuple(parts), "json", typed, whole)


class _Where:
    """Spans of offsets inside the template text."""

    def __init__(self, origin: Span, exact: bool) -> None:
        self.origin = origin
        self.exact = exact

    def at(self, start: int, end: int) -> Span:
        if not self.exact:
            return self.origin
        o = self.origin
        return Span(o.file, o.line, o.col + start, o.line, o.col + end)


def _placeholder(inner: str, offset: int, where: _Where) -> E.Expr:
    path_text, bar, default_text = inner.partition("|")
    lead = len(path_text) - len(path_text.lstrip())
    path = path_text.strip()
    span = where.at(offset + lead, offset + lead + len(path))
    if not path:
        raise TemplateError("empty placeholder `{{ }}`", where.at(offset - 2, offset + len(inner) + 2))
    ref = _path(path, span)
    if not bar:
        return ref
    default = default_text.strip()
    try:
        value = json.loads(default)
    except ValueError:
        value = default
    dspan = where.at(offset + len(path_text) + 1, offset + len(inner))
    whole = where.at(offset + lead, offset + len(inner))
    return E.Call("tmpl.default", (ref, E.Literal(value, "auto", dspan)), whole)


def _path(path: str, span: Span) -> E.Ref:
    if path.startswith("/"):
        segments = [s.replace("~1", "/").replace("~0", "~") for s in path[1:].split("/")]
    else:
        segments = path.split(".")
    if not segments or not _ROOT.match(segments[0]):
        raise TemplateError(f"a placeholder path starts with a name (inputs, steps, vars ...), "
                            f"not {segments[0]!r}", span)
    out: list[E.Segment] = []
    for seg in segments[1:]:
        # Any text between dots is a key (agentd looks each one up as it is);
        # only an empty one can never match.
        if seg == "":
            raise TemplateError(f"invalid path {path!r}", span)
        # A number segment is an index; one of more than 18 digits indexes
        # no array (and is not given to int()), so it stays a key.
        if seg.isdigit() and seg.isascii() and len(seg) <= 18:
            out.append(E.Index(E.Literal(int(seg), "int", span), span))
        else:
            out.append(E.Field(seg, span))
    return E.Ref(segments[0], tuple(out), span)
