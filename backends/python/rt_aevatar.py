"""Run-time support for aevatar expressions: the ``aevatar.*`` meanings.

Generated code imports this module as ``_rta``. It uses the standard
library only (``unicodedata`` when present), no flowc module and no
typing at run time, so the file runs wherever it is copied, MicroPython
included (there, character classes beyond Latin-1 fall back to a smaller
table: see :func:`_json_escaped`).

Every value is a ``str``. The rules are the aevatar engine's
(WorkflowExpressionEvaluator, a C# class): .NET ``char.IsWhiteSpace`` white
space, ``double.TryParse(NumberStyles.Float, InvariantCulture)`` numbers
printed with "G17", invariant 1:1 case mapping, UTF-16 lengths, and
``JsonEncodedText`` with ``UnsafeRelaxedJsonEscaping``. Functions never
raise: a problem is returned as text, as the engine does. The one
exception is :func:`fail` (a lone quote character read as a literal, which
throws in the engine too).

Lazy functions (``and_``, ``or_``, the arithmetic and comparisons) take
zero-argument callables, because the engine stops evaluating arguments
early and an unevaluated argument must not fail.
"""

import math

try:
    import unicodedata as _ud
except ImportError:  # MicroPython
    _ud = None

__all__ = [
    "WHITESPACE", "AevatarError", "add", "and_", "concat", "conditional_test", "div", "eq", "fail",
    "format_number", "gt", "gte", "is_blank", "is_truthy", "isblank", "json", "length", "lower", "lt",
    "lte", "mul", "not_", "or_", "sub", "template", "trim", "try_parse_bool", "try_parse_double",
    "upper", "var", "var_ci",
]

# char.IsWhiteSpace
WHITESPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
              "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
# NumberStyles.AllowLeadingWhite / AllowTrailingWhite
_NUMBER_WHITE = "\t\n\x0b\x0c\r "
_DIGITS = "0123456789"
_INF = float("inf")


class AevatarError(Exception):
    """An evaluation the engine cannot complete (it throws)."""

    def __init__(self, message):
        Exception.__init__(self, message)
        self.message = message


# ---------------------------------------------------------------- .NET strings
def trim(s):
    """String.Trim()."""
    start = 0
    end = len(s)
    while start < end and s[start] in WHITESPACE:
        start += 1
    while end > start and s[end - 1] in WHITESPACE:
        end -= 1
    return s[start:end]


def is_blank(s):
    """string.IsNullOrWhiteSpace."""
    for ch in s:
        if ch not in WHITESPACE:
            return False
    return True


def _scan_number(s):
    """The float text of ``s`` if double.TryParse's number syntax accepts it."""
    n = len(s)
    i = 0
    while i < n and s[i] in _NUMBER_WHITE:
        i += 1
    start = i
    if i < n and s[i] in "+-":
        i += 1
    digits = 0
    while i < n and s[i] in _DIGITS:
        i += 1
        digits += 1
    if i < n and s[i] == ".":
        i += 1
        while i < n and s[i] in _DIGITS:
            i += 1
            digits += 1
    if digits == 0:
        return None
    if i < n and s[i] in "eE":
        j = i + 1
        if j < n and s[j] in "+-":
            j += 1
        k = j
        while k < n and s[k] in _DIGITS:
            k += 1
        if k == j:
            return None
        i = k
    end = i
    while i < n and s[i] in _NUMBER_WHITE:
        i += 1
    while i < n and s[i] == "\0":
        i += 1
    if i != n:
        return None
    return s[start:end]


def try_parse_double(s):
    """double.TryParse(s, NumberStyles.Float, CultureInfo.InvariantCulture): a float or None."""
    body = _scan_number(s)
    if body is not None:
        return float(body)
    t = trim(s).lower()
    if t == "infinity" or t == "+infinity":
        return _INF
    if t == "-infinity":
        return -_INF
    if t == "nan" or t == "+nan" or t == "-nan":
        return float("nan")
    return None


def try_parse_bool(s):
    """bool.TryParse: True, False or None (case-insensitive; white space and NULs trimmed)."""
    t = s
    strip = WHITESPACE + "\0"
    start = 0
    end = len(t)
    while start < end and t[start] in strip:
        start += 1
    while end > start and t[end - 1] in strip:
        end -= 1
    t = t[start:end].lower()
    if t == "true":
        return True
    if t == "false":
        return False
    return None


def is_truthy(s):
    """The evaluator's IsTruthy (TRUTHINESS aevatar_truthy)."""
    if is_blank(s):
        return False
    flag = try_parse_bool(s)
    if flag is not None:
        return flag
    number = try_parse_double(s)
    if number is not None:
        return abs(number) >= 1e-9
    return True


def format_number(x):
    """double.ToString("G17", CultureInfo.InvariantCulture)."""
    if math.isnan(x):
        return "NaN"
    if x == _INF:
        return "Infinity"
    if x == -_INF:
        return "-Infinity"
    return f"{x:.17g}".replace("e", "E")


# Characters whose full case mapping has several characters but whose simple
# (invariant) mapping is one.
_SIMPLE = {("\u0130", 0): "i"}


def _case(s, up):
    out = []
    for ch in s:
        m = ch.upper() if up else ch.lower()
        if len(m) != 1:
            m = _SIMPLE.get((ch, 1 if up else 0), ch)
        out.append(m)
    return "".join(out)


def _utf16_length(s):
    n = 0
    for ch in s:
        n += 2 if ord(ch) > 0xFFFF else 1
    return n


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                  "\t": "\\t"}


def _json_escaped(ch):
    """Does JavaScriptEncoder.UnsafeRelaxedJsonEscaping escape this BMP character?"""
    o = ord(ch)
    if o < 0x20 or 0x7F <= o <= 0xA0:
        return True
    if o < 0x7F:
        return False
    if _ud is None:
        return o in (0x2028, 0x2029, 0xFEFF) or 0xD800 <= o <= 0xF8FF
    cat = _ud.category(ch)
    # Only defined, non-control, non-format, non-separator characters pass
    # (U+0020 is the one space that does).
    return cat in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs")


def _json(s):
    out = []
    for ch in s:
        short = _SHORT_ESCAPES.get(ch)
        if short is not None:
            out.append(short)
            continue
        o = ord(ch)
        if o > 0xFFFF:
            o -= 0x10000
            out.append(f"\\u{0xD800 + (o >> 10):04X}\\u{0xDC00 + (o & 0x3FF):04X}")
        elif _json_escaped(ch):
            out.append(f"\\u{o:04X}")
        else:
            out.append(ch)
    return "".join(out)


# ---------------------------------------------------------------- references
def _fallback(key):
    if try_parse_double(key) is not None:
        return key
    if try_parse_bool(key) is not None:
        return _case(key, False)
    return ""


def var(variables, key):
    """A variable (ordinal lookup); when absent, the key itself if it is a
    number, the key lower-cased if it is true/false, else ''."""
    value = variables.get(key)
    if value is not None:
        return value
    return _fallback(key)


def var_ci(variables, key):
    """:func:`var` with OrdinalIgnoreCase lookup (while and foreach contexts)."""
    value = variables.get(key)
    if value is not None:
        return value
    folded = _case(key, True)
    for k in variables:
        if len(k) == len(key) and _case(k, True) == folded:
            return variables[k]
    return _fallback(key)


def template(*parts):
    return "".join(parts)


# ---------------------------------------------------------------- functions
def concat(*args):
    return "".join(args)


def isblank(a):
    return "true" if is_blank(a) else "false"


def length(a):
    return str(_utf16_length(a))


def not_(a):
    return "false" if is_truthy(a) else "true"


def and_(fa, fb):
    return "true" if is_truthy(fa()) and is_truthy(fb()) else "false"


def or_(fa, fb):
    return "true" if is_truthy(fa()) or is_truthy(fb()) else "false"


def upper(a):
    return _case(a, True)


def lower(a):
    return _case(a, False)


def json(a):
    return _json(a)


def add(*thunks):
    total = 0.0
    for f in thunks:
        n = try_parse_double(f())
        if n is None:
            return "[add: non-numeric argument]"
        total += n
    return format_number(total)


def sub(*thunks):
    first = try_parse_double(thunks[0]())
    if first is None:
        return "[sub: non-numeric argument]"
    if len(thunks) == 1:
        return format_number(-first)
    for f in thunks[1:]:
        n = try_parse_double(f())
        if n is None:
            return "[sub: non-numeric argument]"
        first -= n
    return format_number(first)


def mul(*thunks):
    product = 1.0
    for f in thunks:
        n = try_parse_double(f())
        if n is None:
            return "[mul: non-numeric argument]"
        product *= n
    return format_number(product)


_EPSILON = 5e-324  # double.Epsilon: the smallest subnormal


def div(*thunks):
    result = try_parse_double(thunks[0]())
    if result is None:
        return "[div: non-numeric argument]"
    for f in thunks[1:]:
        n = try_parse_double(f())
        if n is None:
            return "[div: non-numeric argument]"
        if abs(n) < _EPSILON:
            return "[div: division by zero]"
        try:
            result /= n
        except OverflowError:
            result = _INF if (result > 0) == (n > 0) else -_INF
    return format_number(result)


def eq(a, b):
    left = try_parse_double(a)
    right = try_parse_double(b) if left is not None else None
    if left is not None and right is not None:
        return "true" if abs(left - right) < 1e-9 else "false"
    return "true" if a == b else "false"


def _compare(name, fa, fb, test):
    left = try_parse_double(fa())
    if left is None:
        return "[" + name + ": non-numeric argument]"
    right = try_parse_double(fb())
    if right is None:
        return "[" + name + ": non-numeric argument]"
    return "true" if test(left, right) else "false"


def lt(fa, fb):
    return _compare("lt", fa, fb, lambda a, b: a < b)


def lte(fa, fb):
    return _compare("lte", fa, fb, lambda a, b: a <= b)


def gt(fa, fb):
    return _compare("gt", fa, fb, lambda a, b: a > b)


def gte(fa, fb):
    return _compare("gte", fa, fb, lambda a, b: a >= b)


def fail(message):
    raise AevatarError(message)


# ---------------------------------------------------------------- primitives
def _contains_ignore_case(haystack, needle):
    return _case(needle, True) in _case(haystack, True)


def conditional_test(condition, input_text):
    """The conditional primitive's test: a bool literal or '1'/'0' decides;
    otherwise whether the input contains the condition (ignoring case)."""
    flag = try_parse_bool(condition)
    if flag is None:
        if condition == "1":
            flag = True
        elif condition == "0":
            flag = False
        else:
            flag = _contains_ignore_case(input_text, condition)
    return "true" if flag else "false"
