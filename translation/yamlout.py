"""Deterministic, safe block-style YAML text for the translation emitters.

The emitters build plain data (dicts in the order the keys should appear,
lists, str/int/float/bool/None) with a few markers, and :func:`dump` turns
it into text:

- :class:`Flow` asks for flow style (``[a, b]``, ``{ type: string }``)
  when the whole value fits on the line and holds scalars only (short
  lists of scalars get it without asking);
- :class:`Spaced` puts a blank line between the entries of a mapping or the
  items of a list (top-level sections, steps);
- :class:`Comment` as a mapping key or a list item is a ``# ...`` line.

Strings are written plain only when every YAML reader gives back the same
string: never when YAML 1.2 (the core schema flowc reads with) or YAML 1.1
(PyYAML and many other tools) would read another type (``yes``, ``on``,
``010``, ``1e3``, ``null``, ``2024-01-01``), never with a leading indicator
(``$ { [ * & ! % @ | > ' " # - ? : ,`` or a backtick), never with ``: ``
or `` #`` inside, surrounding spaces or characters that are not printable.
Otherwise they are single-quoted (when that needs no escape and the text
holds a quote or a backslash) or double-quoted with escapes. Multi-line
text is a literal block (``|`` or ``|-``). Text holding a Markdown fence
(three backticks) is double-quoted with every backtick escaped (``\x60``),
so YAML written into a SKILL.md can't open or close its ```workflow block.
Comment text can't end its comment line. The same data always gives the
same bytes.
"""

from __future__ import annotations

import math
import re
from typing import Any

import attrs
import yaml

__all__ = ["Comment", "Flow", "Spaced", "dump", "is_block_safe", "is_plain_safe", "scalar"]

INDENT = 2
WIDTH = 100
FLOW_LIST_ITEMS = 8  # lists of at most this many scalars go on one line when they fit


@attrs.frozen
class Comment:
    """A ``# text`` line (a mapping key, whose value is ignored, or a list item)."""

    text: str


class Flow:
    """Prefer flow style for this mapping or list when it fits on one line."""

    __slots__ = ("value",)

    def __init__(self, value: dict | list) -> None:
        self.value = value


class Spaced:
    """A blank line between the entries of this mapping or list."""

    __slots__ = ("value",)

    def __init__(self, value: dict | list) -> None:
        self.value = value


# --------------------------------------------------------------- scalars
_RESOLVER_11 = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"
_CORE_OTHER = re.compile(
    r"(~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))\Z")
# Characters YAML allows unescaped (c-printable), minus the ones YAML 1.1
# reads as line breaks and the byte order mark.
_NOT_PRINTABLE = re.compile("[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
                            "\U00010000-\U0010ffff]")
_LEADING_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`$=~")
_FLOW_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_ ./+-]*\Z")


def _other_type(text: str) -> bool:
    """Would a YAML 1.1 or 1.2 reader resolve this plain text to a non-string?"""
    if _CORE_OTHER.match(text):
        return True
    return _RESOLVER_11.resolve(yaml.ScalarNode, text, (True, False)) != _STR_TAG


def is_plain_safe(text: str, flow: bool = False) -> bool:
    """Can ``text`` be written as a plain scalar (in flow context with ``flow``)?"""
    if not text or text[0] in _LEADING_INDICATORS or text[0].isspace() or text[-1].isspace():
        return False
    if _FENCE in text:
        return False
    if _NOT_PRINTABLE.search(text) or "\n" in text or "\t" in text:
        return False
    if ": " in text or " #" in text or text.endswith(":") or text.startswith("..."):
        return False
    if flow and not _FLOW_PLAIN.match(text):
        return False  # YAML 1.1 readers are fussy inside [ ] and { }
    return not _other_type(text)


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0",
            "\x07": "\\a", "\x08": "\\b", "\x0b": "\\v", "\x0c": "\\f", "\x1b": "\\e",
            "\x85": "\\N", "\xa0": "\\_", "\u2028": "\\L", "\u2029": "\\P"}


_FENCE = "```"


def _double_quoted(text: str) -> str:
    out = ['"']
    fence = _FENCE in text
    for ch in text:
        esc = "\\x60" if fence and ch == "`" else _ESCAPES.get(ch)
        if esc is None and _NOT_PRINTABLE.match(ch):
            o = ord(ch)
            esc = f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"
        out.append(esc if esc is not None else ch)
    out.append('"')
    return "".join(out)


_COMMENT_BREAKS = re.compile("\r\n|[\n\r\x85\u2028\u2029]")


def _escaped(match: re.Match) -> str:
    """A character YAML does not allow unescaped, as ``\\xNN`` / ``\\uNNNN`` text."""
    o = ord(match.group())
    return f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"


def _single_quotable(text: str) -> bool:
    return not _NOT_PRINTABLE.search(text) and "\n" not in text and _FENCE not in text


def quoted(text: str) -> str:
    """``text`` quoted: single quotes when it holds a quote or a backslash and
    needs no escape, else double quotes."""
    if ("\\" in text or '"' in text) and _single_quotable(text):
        return "'" + text.replace("'", "''") + "'"
    return _double_quoted(text)


def _float_text(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exp = text.split("e")
        text = f"{mantissa}.0e{exp}"
    return text


def scalar(value: Any, flow: bool = False) -> str:
    """One scalar as YAML text (never a block scalar)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, str):
        return value if is_plain_safe(value, flow) else quoted(value)
    raise TypeError(f"not a YAML scalar: {type(value).__name__}")


def _block_literal(text: str) -> bool:
    """Can ``text`` be a literal block scalar (``|``)?"""
    # Not with two or more final line breaks: "keep" chomping (|+) would
    # also keep any blank line that follows the block.
    return "\n" in text and text.strip() != "" and not _NOT_PRINTABLE.search(text) and "\r" not in text \
        and not text.endswith("\n\n") and _FENCE not in text


def is_block_safe(text: str) -> bool:
    """Is multi-line ``text`` written as a literal block (not a quoted scalar)?"""
    return _block_literal(text)


def _literal_lines(text: str, indent: int) -> list[str]:
    """The header indicator and the lines of a literal block holding ``text``."""
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    chomp = "-" if trailing == 0 else ""
    lines = body.split("\n")
    # The indentation is detected from the first line with a non-space
    # character; say it explicitly when that line starts with a space or a
    # tab (a reader takes a tab there for indentation, which YAML forbids)
    # or a blank line before it holds spaces.
    needs_indicator = False
    for ln in lines:
        if ln.strip(" "):
            needs_indicator = ln.startswith((" ", "\t"))
            break
        if ln:
            needs_indicator = True
            break
    header = "|" + (str(INDENT) if needs_indicator else "") + chomp
    pad = " " * indent
    out = [pad + ln if ln else "" for ln in lines]
    return [header, *out]


# --------------------------------------------------------------- structure
def _unwrap(value: Any) -> tuple[Any, bool, bool]:
    flow = spaced = False
    while isinstance(value, (Flow, Spaced)):
        if isinstance(value, Flow):
            flow = True
        else:
            spaced = True
        value = value.value
    return value, flow, spaced


def _flow_text(value: Any) -> str | None:
    """The flow form of a mapping or list of scalars, or None."""
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if isinstance(k, Comment) or isinstance(v, (dict, list, Flow, Spaced)):
                return None
            parts.append(f"{scalar(k, flow=True)}: {scalar(v, flow=True)}")
        return "{ " + ", ".join(parts) + " }" if parts else "{}"
    if isinstance(value, list):
        parts = []
        for v in value:
            if isinstance(v, (Comment, dict, list, Flow, Spaced)):
                return None
            parts.append(scalar(v, flow=True))
        return "[" + ", ".join(parts) + "]"
    return None


def _is_collection(value: Any) -> bool:
    inner, _, _ = _unwrap(value)
    return isinstance(inner, (dict, list)) and len(inner) > 0


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def value_after_key(self, prefix: str, value: Any, indent: int) -> None:
        """``prefix`` is ``key:`` or ``-`` already indented; write the value."""
        inner, flow, spaced = _unwrap(value)
        if isinstance(inner, (dict, list)):
            if not inner:
                self.lines.append(f"{prefix} {'{}' if isinstance(inner, dict) else '[]'}")
                return
            if flow or (isinstance(inner, list) and len(inner) <= FLOW_LIST_ITEMS):
                # Short lists of scalars read best on one line: [a, b].
                text = _flow_text(inner)
                if text is not None and len(prefix) + 1 + len(text) <= WIDTH:
                    self.lines.append(f"{prefix} {text}")
                    return
            self.lines.append(prefix)
            self.collection(inner, indent + INDENT, spaced)
            return
        if isinstance(inner, str) and _block_literal(inner):
            header, *body = _literal_lines(inner, indent + INDENT)
            self.lines.append(f"{prefix} {header}")
            self.lines.extend(body)
            return
        self.lines.append(f"{prefix} {scalar(inner)}")

    def collection(self, value: dict | list, indent: int, spaced: bool) -> None:
        pad = " " * indent
        first = True
        if isinstance(value, dict):
            for key, item in value.items():
                if spaced and not first:
                    self.lines.append("")
                first = False
                if isinstance(key, Comment):
                    self.comment(key, pad)
                    continue
                if not isinstance(key, str):
                    raise TypeError(f"mapping keys must be strings, not {type(key).__name__}")
                self.value_after_key(f"{pad}{scalar(key)}:", item, indent)
            return
        for item in value:
            if spaced and not first:
                self.lines.append("")
            first = False
            if isinstance(item, Comment):
                self.comment(item, pad)
                continue
            inner, flow, item_spaced = _unwrap(item)
            if isinstance(inner, dict) and inner and not (flow and self._fits_flow(inner, pad)):
                self.map_in_list(inner, indent, item_spaced)
            elif isinstance(inner, list) and inner and not (flow and self._fits_flow(inner, pad)):
                self.lines.append(f"{pad}-")
                self.collection(inner, indent + INDENT, item_spaced)
            else:
                self.value_after_key(f"{pad}-", item, indent)

    def _fits_flow(self, value, pad: str) -> bool:
        text = _flow_text(value)
        return text is not None and len(pad) + 2 + len(text) <= WIDTH

    def map_in_list(self, value: dict, indent: int, spaced: bool) -> None:
        """A mapping as a list item: its first key on the dash line (comment
        lines that lead the mapping go above the dash)."""
        start = len(self.lines)
        self.collection(value, indent + INDENT, spaced)
        inner_pad = " " * (indent + INDENT)
        i = start
        while i < len(self.lines) and self.lines[i].startswith(inner_pad + "#"):
            self.lines[i] = " " * indent + self.lines[i][len(inner_pad):]
            i += 1
        if i < len(self.lines) and self.lines[i].startswith(inner_pad) and self.lines[i][len(inner_pad):]:
            self.lines[i] = " " * indent + "- " + self.lines[i][len(inner_pad):]
        else:
            self.lines.insert(i, " " * indent + "-")

    def comment(self, comment: Comment, pad: str) -> None:
        # Every line break a YAML 1.1 or 1.2 reader knows starts a new
        # comment line, and characters YAML does not allow are escaped:
        # comment text can never end the comment.
        for line in _COMMENT_BREAKS.split(comment.text):
            line = _NOT_PRINTABLE.sub(_escaped, line)
            self.lines.append(f"{pad}# {line}".rstrip())


def dump(data: Any) -> str:
    """``data`` (a mapping, usually) as a YAML document, ending in a newline."""
    inner, _flow, spaced = _unwrap(data)
    w = _Writer()
    if isinstance(inner, (dict, list)) and inner:
        w.collection(inner, 0, spaced)
    elif isinstance(inner, (dict, list)):
        w.lines.append("{}" if isinstance(inner, dict) else "[]")
    elif isinstance(inner, str) and _block_literal(inner):
        header, *body = _literal_lines(inner, INDENT)
        w.lines.append(header)
        w.lines.extend(body)
    else:
        w.lines.append(scalar(inner))
    return "\n".join(w.lines) + "\n"
