""".NET string rules the aevatar engine relies on, for compile-time use.

The engine is C#: its "white space" is ``char.IsWhiteSpace``, its case
mapping is the invariant 1:1 simple mapping, its numbers are
``double.TryParse(NumberStyles.Float, InvariantCulture)`` and its regex
``\\w`` is ``[\\p{L}\\p{Mn}\\p{Nd}\\p{Pc}]``. Python's built-ins differ on
each (``str.strip`` removes U+001C..U+001F, ``'ß'.upper()`` is ``'SS'``,
``float('inf')`` parses, ``re`` ``\\w`` matches ``'²'``). The run-time
helpers (runtime/aevatar_text.py) carry their own copy of these rules,
because generated code must not import the compiler; a test checks that
the two agree.
"""

from __future__ import annotations

import re
import unicodedata

# char.IsWhiteSpace: Zs, Zl, Zp and U+0009..U+000D, U+0085.
WHITESPACE = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000")
_NUMBER_WHITE = "\t\n\v\f\r "
_NUMBER = re.compile(r"[\t\n\v\f\r ]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[\t\n\v\f\r ]*\0*\Z")


def trim(text: str) -> str:
    """String.Trim()."""
    start, end = 0, len(text)
    while start < end and text[start] in WHITESPACE:
        start += 1
    while end > start and text[end - 1] in WHITESPACE:
        end -= 1
    return text[start:end]


def is_blank(text: str) -> bool:
    """string.IsNullOrWhiteSpace."""
    return all(ch in WHITESPACE for ch in text)


def is_word_char(ch: str) -> bool:
    """.NET regex \\w: letters, non-spacing marks, decimal digits, connector punctuation."""
    cat = unicodedata.category(ch)
    return cat[0] == "L" or cat in ("Mn", "Nd", "Pc")


def _map_chars(text: str, upper: bool) -> str:
    out = []
    for ch in text:
        mapped = ch.upper() if upper else ch.lower()
        # Keep only 1:1 mappings (the invariant culture's simple case mapping).
        out.append(mapped if len(mapped) == 1 else _SPECIAL_SIMPLE.get((ch, upper), ch))
    return "".join(out)


# Characters whose full mapping has several characters but whose simple
# mapping is a single one.
_SPECIAL_SIMPLE = {("\u0130", False): "i"}


def upper_invariant(text: str) -> str:
    return _map_chars(text, True)


def lower_invariant(text: str) -> str:
    return _map_chars(text, False)


def equals_ignore_case(a: str, b: str) -> bool:
    """StringComparison.OrdinalIgnoreCase."""
    return len(a) == len(b) and upper_invariant(a) == upper_invariant(b)


def try_parse_double(text: str) -> float | None:
    """double.TryParse(s, NumberStyles.Float, CultureInfo.InvariantCulture):
    optional ASCII white space, a sign, digits with one optional '.', an
    optional exponent, optional ASCII white space, then only NUL characters;
    or Infinity / -Infinity / NaN in any case."""
    m = _NUMBER.match(text)
    if m is not None:
        return float(m.group(1))
    special = trim(text).lower()
    if special in ("infinity", "+infinity"):
        return float("inf")
    if special == "-infinity":
        return float("-inf")
    if special in ("nan", "+nan", "-nan"):
        return float("nan")
    return None


def try_parse_bool(text: str) -> bool | None:
    """bool.TryParse: 'true'/'false' in any case, white space and NULs trimmed."""
    body = text.strip("".join(WHITESPACE) + "\0").lower()
    if body == "true":
        return True
    if body == "false":
        return False
    return None


def is_truthy(text: str) -> bool:
    """The evaluator's IsTruthy."""
    if is_blank(text):
        return False
    flag = try_parse_bool(text)
    if flag is not None:
        return flag
    number = try_parse_double(text)
    if number is not None:
        return abs(number) >= 1e-9
    return True


def try_parse_int(text: str) -> int | None:
    """int.TryParse (NumberStyles.Integer): optional white space and sign, ASCII digits, int32.
    Out of the int32 range it fails, as .NET's does; the digits are counted
    before they are converted (no 4,300-digit ``int()`` limit to hit)."""
    body = text.strip(_NUMBER_WHITE)
    if not re.fullmatch(r"[+-]?[0-9]+", body):
        return None
    digits = body.lstrip("+-").lstrip("0")
    if len(digits) > 10:  # int32 has at most 10 digits
        return None
    value = int(body)
    return value if -2**31 <= value < 2**31 else None
