"""Workflow text as it may be shown on a terminal.

Ids, names, messages, source lines and file names come from files flowc
did not write. Printed raw, an escape sequence in one (``\\x1b[2J``,
``\\x1b]0;title\\x07``, an 8-bit CSI ``\\x9b``) would drive the user's
terminal, a carriage return would overwrite what was printed, a line break
would forge a line of the listing (a finding, a step of a run), and
bidirectional-formatting characters would show text in another order than
it has. So every human-readable output (check's findings with their source
lines, run's readable record, disasm, graph text) passes workflow text
through :func:`shown`: those characters become visible escapes (``\\x1b``,
``\\u202e``) and everything else stays as it is. Lone surrogates, which no
terminal encoding can print, are escaped too. JSON output keeps its value
and escapes the same characters as JSON does (:func:`json_text`).
"""

from __future__ import annotations

import re

__all__ = ["json_text", "shown", "shown_lines"]

# C0 controls but tab, DEL, C1 controls, line/paragraph separators,
# bidirectional formatting (Trojan Source), lone surrogates.
_UNSAFE = "\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_ANY = re.compile(f"[{_UNSAFE}]")
_BUT_NEWLINE = re.compile(f"[{_UNSAFE.replace(chr(0x0a) + '-', chr(0x0b) + '-')}]")


def _escape(match: re.Match) -> str:
    ch = match.group()
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    o = ord(ch)
    return f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}"


def shown(text: object) -> str:
    """``text`` on one line, safe to print: control characters (line breaks
    included), separators, bidirectional formatting and lone surrogates as
    ``\\n``, ``\\r``, ``\\xNN`` or ``\\uNNNN``."""
    text = str(text)
    return _ANY.sub(_escape, text) if _ANY.search(text) else text


def shown_lines(text: object) -> str:
    """Like :func:`shown`, but ``\\n`` stays a line break (text whose
    lines flowc laid out)."""
    text = str(text)
    return _BUT_NEWLINE.sub(_escape, text) if _BUT_NEWLINE.search(text) else text


def json_text(text: str) -> str:
    """JSON text (``json.dumps`` with ``ensure_ascii=False``) with every
    character :func:`shown` escapes, and that JSON leaves raw (DEL, C1,
    separators, bidi formatting, lone surrogates), written as its ``\\uNNNN``
    escape: the same JSON value, safe on a terminal and as UTF-8. (They can
    only occur inside strings: JSON's own whitespace is spaces and ``\\n``.)"""
    return _BUT_NEWLINE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _BUT_NEWLINE.search(text) else text
