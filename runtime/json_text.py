"""JSON text as CPython's json module writes and reads it, on any Python.

:func:`json_dumps` gives ``json.dumps(value, ensure_ascii=False)`` (compact
separators, or ``indent``), floats in their shortest round-trip form
(:func:`float_repr`), ``NaN`` / ``Infinity`` as CPython spells them;
:func:`json_loads` parses what ``json.loads`` parses, objects in their key
order. MicroPython's json module neither keeps key order nor takes
``ensure_ascii``, so the aevatar step loop (:mod:`flowc.runtime.routing_run`)
reads and writes JSON here when it runs there.

Standard library only, no typing at run time (MicroPython-compatible).
"""

import math as _math
import sys as _sys

try:
    from collections import OrderedDict as _OrderedDict
except ImportError:  # pragma: no cover
    _OrderedDict = dict

_MICRO = _sys.implementation.name == "micropython"
# An object whose key order shows: a dict, or an OrderedDict where dicts are unordered.
_Obj = _OrderedDict if _MICRO else dict

__all__ = ["float_repr", "json_dumps", "json_loads"]


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _json_str(s):
    out = ['"']
    start = 0
    for i in range(len(s)):
        ch = s[i]
        if ch == '"' or ch == "\\" or ch < " ":
            out.append(s[start:i])
            esc = _ESCAPES.get(ch)
            out.append(esc if esc is not None else f"\\u{ord(ch):04x}")
            start = i + 1
    out.append(s[start:])
    out.append('"')
    return "".join(out)


_INF = float("inf")


def _float_text(x):
    if x != x:  # noqa: PLR0124 - NaN
        return "NaN"
    if x in (_INF, -_INF):
        return "Infinity" if x > 0 else "-Infinity"
    return float_repr(x)


def _shortest_digits(x):
    """(digits, decpt) of the shortest decimal that reads back as finite
    x > 0 (the closest one of that length), by exact integer arithmetic:
    x = 0.digits * 10**decpt."""
    m, e = _math.frexp(x)
    mant = int(m * 9007199254740992)  # m * 2**53, exact
    e -= 53
    if e < -1074:  # subnormal: drop the zero low bits
        mant >>= -1074 - e
        e = -1074
    # x = num / den, and the decimals in [lo / den, hi / den] read back as x (the
    # ends too when mant is even: ties go to even); units of a quarter ulp
    high = 2
    low = 1 if (mant == 4503599627370496 and e > -1074) else 2
    if e >= 0:
        num = (4 * mant) << e
        lo = (4 * mant - low) << e
        hi = (4 * mant + high) << e
        den = 4
    else:
        num = 4 * mant
        lo = 4 * mant - low
        hi = 4 * mant + high
        den = 4 << -e
    inclusive = mant % 2 == 0
    # decimal exponent k: 10**(k-1) <= x < 10**k
    if num >= den:
        k = len(str(num // den))
    else:
        k = 0
        while num * 10 ** (1 - k) < den:
            k -= 1
    for n in range(1, 18):
        q = n - k  # candidate d * 10**-q with n digits
        if q >= 0:
            scaled_num = num * 10 ** q
            scaled_den = den
        else:
            scaled_num = num
            scaled_den = den * 10 ** -q
        d = scaled_num // scaled_den
        best = None
        for cand in (d, d + 1):
            if cand <= 0:
                continue
            # cand * 10**-q against [lo, hi] / den
            if q >= 0:
                c_num = cand * den
                l_num = lo * 10 ** q
                h_num = hi * 10 ** q
            else:
                c_num = cand * den * 10 ** -q
                l_num = lo
                h_num = hi
            inside = (l_num <= c_num <= h_num) if inclusive else (l_num < c_num < h_num)
            if not inside:
                continue
            dist = abs(c_num - (num * 10 ** q if q >= 0 else num))
            if best is None or dist < best[0] or (dist == best[0] and cand % 2 == 0):
                best = (dist, cand)
        if best is not None:
            digits = str(best[1])
            decpt = len(digits) - q
            stripped = digits.rstrip("0")
            return stripped, decpt
    digits = str(d)  # pragma: no cover - 17 digits always read back
    return digits.rstrip("0"), len(digits) - q


def float_repr(x):
    """repr(x) of a finite float (CPython's shortest round-trip form),
    exact on runtimes whose own formatting is not."""
    if not _MICRO:
        return repr(x)
    if x == 0:
        return "-0.0" if _math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    digits, decpt = _shortest_digits(-x if x < 0 else x)
    n = len(digits)
    if -4 < decpt <= 16:
        if decpt <= 0:
            return sign + "0." + "0" * -decpt + digits
        if decpt >= n:
            return sign + digits + "0" * (decpt - n) + ".0"
        return sign + digits[:decpt] + "." + digits[decpt:]
    exp = decpt - 1
    mantissa = digits[0] + ("." + digits[1:] if n > 1 else "")
    return sign + mantissa + ("e-" if exp < 0 else "e+") + f"{abs(exp):02d}"


def _key_text(k):
    if isinstance(k, str):
        return k
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, int):
        return str(k)
    if isinstance(k, float):
        return _float_text(k)
    raise TypeError("keys must be str, int, float, bool or None, not " + type(k).__name__)


def _scalar(v):
    """The JSON text of a value that is not a non-empty array or object."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return _json_str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float_text(v)
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, (list, tuple)):
        return "[]"
    raise TypeError("Object of type " + type(v).__name__ + " is not JSON serializable")


def json_dumps(value, indent=None):
    """json.dumps(value, ensure_ascii=False) with separators (",", ":"), or
    with ``indent`` (then (",", ": ")), in plain Python: objects keep their
    order, and nesting is not bounded by the interpreter's stack."""
    out = []
    stack = []  # [container, its keys (None for an array), next position, level]
    v = value
    level = 0
    while True:
        if isinstance(v, dict) and v:
            out.append("{")
            stack.append([v, list(v), 0, level])
        elif isinstance(v, (list, tuple)) and v:
            out.append("[")
            stack.append([v, None, 0, level])
        else:
            out.append(_scalar(v))
        while stack:
            frame = stack[-1]
            container, keys, at, lvl = frame
            if at < (len(keys) if keys is not None else len(container)):
                if at:
                    out.append(",")
                if indent is not None:
                    out.append("\n" + " " * (indent * (lvl + 1)))
                if keys is not None:
                    out.append(_json_str(_key_text(keys[at])))
                    out.append(":" if indent is None else ": ")
                    v = container[keys[at]]
                else:
                    v = container[at]
                frame[2] = at + 1
                level = lvl + 1
                break
            stack.pop()
            if indent is not None:
                out.append("\n" + " " * (indent * lvl))
            out.append("}" if keys is not None else "]")
        else:
            return "".join(out)


_JSON_WS = " \t\n\r"
_JSON_CONST = (("true", True), ("false", False), ("null", None), ("NaN", float("nan")),
               ("Infinity", _INF), ("-Infinity", -_INF))
_UNESCAPE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = "0123456789abcdefABCDEF"


def _json_fail(what, i):
    raise ValueError(what + ": char " + str(i))


def _json_ws(s, i):
    n = len(s)
    while i < n and s[i] in _JSON_WS:
        i += 1
    return i


def _json_hex4(s, i):
    h = s[i:i + 4]
    if len(h) != 4 or not all(c in _HEX for c in h):
        _json_fail("Invalid \\uXXXX escape", i)
    return int(h, 16)


def _json_string(s, i):
    """The string whose opening quote is at i - 1, and the position after it."""
    n = len(s)
    out = []
    start = i
    begin = i - 1
    while True:
        if i >= n:
            _json_fail("Unterminated string starting at", begin)
        ch = s[i]
        if ch == '"':
            out.append(s[start:i])
            return "".join(out), i + 1
        if ch == "\\":
            out.append(s[start:i])
            if i + 1 >= n:
                _json_fail("Unterminated string starting at", begin)
            esc = s[i + 1]
            if esc == "u":
                code = _json_hex4(s, i + 2)
                i += 6
                if 0xD800 <= code <= 0xDBFF and s[i:i + 2] == "\\u":
                    low = _json_hex4(s, i + 2)
                    if 0xDC00 <= low <= 0xDFFF:
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                out.append(chr(code))
            else:
                plain = _UNESCAPE.get(esc)
                if plain is None:
                    _json_fail("Invalid \\escape", i)
                out.append(plain)
                i += 2
            start = i
            continue
        if ch < " ":
            _json_fail("Invalid control character at", i)
        i += 1


def _json_number(s, i):
    n = len(s)
    j = i
    if j < n and s[j] == "-":
        j += 1
    if j < n and s[j] == "0":
        j += 1
    elif j < n and "1" <= s[j] <= "9":
        while j < n and "0" <= s[j] <= "9":
            j += 1
    else:
        _json_fail("Expecting value", i)
    is_float = False
    if j + 1 < n and s[j] == "." and "0" <= s[j + 1] <= "9":
        is_float = True
        j += 2
        while j < n and "0" <= s[j] <= "9":
            j += 1
    if j < n and s[j] in "eE":
        k = j + 1
        if k < n and s[k] in "+-":
            k += 1
        if k < n and "0" <= s[k] <= "9":
            while k < n and "0" <= s[k] <= "9":
                k += 1
            is_float = True
            j = k
    text = s[i:j]
    return (float(text) if is_float else int(text)), j


def _json_key(s, i):
    i = _json_ws(s, i)
    if i >= len(s) or s[i] != '"':
        _json_fail("Expecting property name enclosed in double quotes", i)
    key, i = _json_string(s, i + 1)
    i = _json_ws(s, i)
    if i >= len(s) or s[i] != ":":
        _json_fail("Expecting ':' delimiter", i)
    return key, i + 1


def json_loads(text):
    """json.loads(text) in plain Python: objects keep their key order, and
    nesting is not bounded by the interpreter's stack; ValueError when the
    text is not JSON."""
    if not isinstance(text, str):
        raise TypeError("the JSON text must be str")
    if text.startswith("\ufeff"):
        raise ValueError("Unexpected UTF-8 BOM")
    s = text
    n = len(s)
    stack = []  # [open container, the key its next value goes to (None for an array)]
    i = 0
    while True:
        i = _json_ws(s, i)
        if i >= n:
            _json_fail("Expecting value", i)
        ch = s[i]
        if ch == "{":
            j = _json_ws(s, i + 1)
            if j < n and s[j] == "}":
                value, i = _Obj(), j + 1
            else:
                key, i = _json_key(s, i + 1)
                stack.append([_Obj(), key])
                continue
        elif ch == "[":
            j = _json_ws(s, i + 1)
            if j < n and s[j] == "]":
                value, i = [], j + 1
            else:
                stack.append([[], None])
                i += 1
                continue
        elif ch == '"':
            value, i = _json_string(s, i + 1)
        else:
            for word, constant in _JSON_CONST:
                if s.startswith(word, i):
                    value, i = constant, i + len(word)
                    break
            else:
                value, i = _json_number(s, i)
        # a value is complete: add it to the open containers, closing the finished ones
        while stack:
            frame = stack[-1]
            container, key = frame
            if key is None:
                container.append(value)
            else:
                container[key] = value
            i = _json_ws(s, i)
            if i < n and s[i] == ",":
                if key is None:
                    i += 1
                else:
                    frame[1], i = _json_key(s, i + 1)
                break
            if i < n and s[i] == ("]" if key is None else "}"):
                stack.pop()
                value, i = container, i + 1
                continue
            _json_fail("Expecting ',' delimiter", i)
        else:
            i = _json_ws(s, i)
            if i != n:
                _json_fail("Extra data", i)
            return value
