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


# CPython formats 17 digits exactly and maps non-ASCII case; MicroPython does neither.
_EXACT_FORMAT = f"{0.1:.17g}" == "0.10000000000000001"
_NATIVE_CASE = "\u03a3".lower() == "\u03c3"


class AevatarError(Exception):
    """An evaluation the engine cannot complete (it throws)."""

    def __init__(self, message):
        super().__init__(message)
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
    if _EXACT_FORMAT:
        return f"{x:.17g}".replace("e", "E")
    return g17(x)


def g17(x):
    """17 significant digits of the exact binary value of finite ``x``,
    rounded half to even, in .NET "G" layout; integer arithmetic only (for
    runtimes whose float formatting is not exact at 17 digits)."""
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign = "-" if x < 0 else ""
    m, e = math.frexp(abs(x))
    num = int(m * 9007199254740992)  # m * 2**53: exact
    e -= 53
    den = 1
    if e >= 0:
        num <<= e
    else:
        den <<= -e
    if num >= den:
        k = len(str(num // den)) - 1
    else:
        j = 1
        while num * 10 ** j < den:
            j += 1
        k = -j
    shift = 16 - k
    if shift >= 0:
        q, r = divmod(num * 10 ** shift, den)
        half = den
    else:
        q, r = divmod(num, den * 10 ** -shift)
        half = den * 10 ** -shift
    if 2 * r > half or (2 * r == half and q % 2 == 1):
        q += 1
    if q >= 10 ** 17:
        q //= 10
        k += 1
    digits = str(q)
    if k < -4 or k >= 17:
        mantissa = (digits[0] + "." + digits[1:]).rstrip("0").rstrip(".")
        exp = ("-" if k < 0 else "+") + ("0" + str(abs(k)) if abs(k) < 10 else str(abs(k)))
        return sign + mantissa + "E" + exp
    if k >= 0:
        text = digits[:k + 1] + "." + digits[k + 1:]
    else:
        text = "0." + "0" * (-k - 1) + digits
    return sign + text.rstrip("0").rstrip(".")


# Characters whose full case mapping has several characters but whose simple
# (invariant) mapping is one.
_SIMPLE = {("\u0130", 0): "i"}


def _case(s, up):
    out = []
    for ch in s:
        if ch < "\x80" or _NATIVE_CASE:
            m = ch.upper() if up else ch.lower()
            if len(m) != 1:
                m = _SIMPLE.get((ch, 1 if up else 0), ch)
        else:
            m = _SIMPLE.get((ch, 1 if up else 0)) or _table_case(ch, _UPPER_RUNS if up else _LOWER_RUNS)
        out.append(m)
    return "".join(out)


def _table_case(ch, runs):
    cp = ord(ch)
    if cp > 0xFFFF:
        return ch
    lo, hi = 0, len(runs) // 4 - 1
    while lo <= hi:   # binary search over the runs, sorted by first code point
        mid = (lo + hi) // 2
        first, last, step, delta = runs[4 * mid], runs[4 * mid + 1], runs[4 * mid + 2], runs[4 * mid + 3]
        if cp < first:
            hi = mid - 1
        elif cp > last:
            lo = mid + 1
        else:
            return chr(cp + delta) if (cp - first) % step == 0 else ch
    return ch


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


# Simple (1:1) case mappings of non-ASCII BMP characters, for runtimes whose str.lower/upper
# map ASCII only (MicroPython): flat (first, last, step, delta) runs, generated from CPython's
# Unicode tables (tests/test_aevatar_expressions.py checks them against str.lower/upper).
_LOWER_RUNS = (
    192, 214, 1, 32, 216, 222, 1, 32, 256, 302, 2, 1, 306, 310, 2, 1, 313, 327, 2, 1, 330, 374, 2, 1, 376,
    376, 1, -121, 377, 381, 2, 1, 385, 385, 1, 210, 386, 388, 2, 1, 390, 390, 1, 206, 391, 391, 1, 1, 393,
    394, 1, 205, 395, 395, 1, 1, 398, 398, 1, 79, 399, 399, 1, 202, 400, 400, 1, 203, 401, 401, 1, 1, 403,
    403, 1, 205, 404, 404, 1, 207, 406, 406, 1, 211, 407, 407, 1, 209, 408, 408, 1, 1, 412, 412, 1, 211,
    413, 413, 1, 213, 415, 415, 1, 214, 416, 420, 2, 1, 422, 422, 1, 218, 423, 423, 1, 1, 425, 425, 1, 218,
    428, 428, 1, 1, 430, 430, 1, 218, 431, 431, 1, 1, 433, 434, 1, 217, 435, 437, 2, 1, 439, 439, 1, 219,
    440, 440, 1, 1, 444, 444, 1, 1, 452, 452, 1, 2, 453, 453, 1, 1, 455, 455, 1, 2, 456, 456, 1, 1, 458,
    458, 1, 2, 459, 475, 2, 1, 478, 494, 2, 1, 497, 497, 1, 2, 498, 500, 2, 1, 502, 502, 1, -97, 503, 503,
    1, -56, 504, 542, 2, 1, 544, 544, 1, -130, 546, 562, 2, 1, 570, 570, 1, 10795, 571, 571, 1, 1, 573,
    573, 1, -163, 574, 574, 1, 10792, 577, 577, 1, 1, 579, 579, 1, -195, 580, 580, 1, 69, 581, 581, 1, 71,
    582, 590, 2, 1, 880, 882, 2, 1, 886, 886, 1, 1, 895, 895, 1, 116, 902, 902, 1, 38, 904, 906, 1, 37,
    908, 908, 1, 64, 910, 911, 1, 63, 913, 929, 1, 32, 931, 939, 1, 32, 975, 975, 1, 8, 984, 1006, 2, 1,
    1012, 1012, 1, -60, 1015, 1015, 1, 1, 1017, 1017, 1, -7, 1018, 1018, 1, 1, 1021, 1023, 1, -130, 1024,
    1039, 1, 80, 1040, 1071, 1, 32, 1120, 1152, 2, 1, 1162, 1214, 2, 1, 1216, 1216, 1, 15, 1217, 1229, 2,
    1, 1232, 1326, 2, 1, 1329, 1366, 1, 48, 4256, 4293, 1, 7264, 4295, 4295, 1, 7264, 4301, 4301, 1, 7264,
    5024, 5103, 1, 38864, 5104, 5109, 1, 8, 7312, 7354, 1, -3008, 7357, 7359, 1, -3008, 7680, 7828, 2, 1,
    7838, 7838, 1, -7615, 7840, 7934, 2, 1, 7944, 7951, 1, -8, 7960, 7965, 1, -8, 7976, 7983, 1, -8, 7992,
    7999, 1, -8, 8008, 8013, 1, -8, 8025, 8031, 2, -8, 8040, 8047, 1, -8, 8072, 8079, 1, -8, 8088, 8095, 1,
    -8, 8104, 8111, 1, -8, 8120, 8121, 1, -8, 8122, 8123, 1, -74, 8124, 8124, 1, -9, 8136, 8139, 1, -86,
    8140, 8140, 1, -9, 8152, 8153, 1, -8, 8154, 8155, 1, -100, 8168, 8169, 1, -8, 8170, 8171, 1, -112,
    8172, 8172, 1, -7, 8184, 8185, 1, -128, 8186, 8187, 1, -126, 8188, 8188, 1, -9, 8486, 8486, 1, -7517,
    8490, 8490, 1, -8383, 8491, 8491, 1, -8262, 8498, 8498, 1, 28, 8544, 8559, 1, 16, 8579, 8579, 1, 1,
    9398, 9423, 1, 26, 11264, 11311, 1, 48, 11360, 11360, 1, 1, 11362, 11362, 1, -10743, 11363, 11363, 1,
    -3814, 11364, 11364, 1, -10727, 11367, 11371, 2, 1, 11373, 11373, 1, -10780, 11374, 11374, 1, -10749,
    11375, 11375, 1, -10783, 11376, 11376, 1, -10782, 11378, 11378, 1, 1, 11381, 11381, 1, 1, 11390, 11391,
    1, -10815, 11392, 11490, 2, 1, 11499, 11501, 2, 1, 11506, 11506, 1, 1, 42560, 42604, 2, 1, 42624,
    42650, 2, 1, 42786, 42798, 2, 1, 42802, 42862, 2, 1, 42873, 42875, 2, 1, 42877, 42877, 1, -35332,
    42878, 42886, 2, 1, 42891, 42891, 1, 1, 42893, 42893, 1, -42280, 42896, 42898, 2, 1, 42902, 42920, 2,
    1, 42922, 42922, 1, -42308, 42923, 42923, 1, -42319, 42924, 42924, 1, -42315, 42925, 42925, 1, -42305,
    42926, 42926, 1, -42308, 42928, 42928, 1, -42258, 42929, 42929, 1, -42282, 42930, 42930, 1, -42261,
    42931, 42931, 1, 928, 42932, 42946, 2, 1, 42948, 42948, 1, -48, 42949, 42949, 1, -42307, 42950, 42950,
    1, -35384, 42951, 42953, 2, 1, 42960, 42960, 1, 1, 42966, 42968, 2, 1, 42997, 42997, 1, 1, 65313,
    65338, 1, 32,
)
_UPPER_RUNS = (
    181, 181, 1, 743, 224, 246, 1, -32, 248, 254, 1, -32, 255, 255, 1, 121, 257, 303, 2, -1, 305, 305, 1,
    -232, 307, 311, 2, -1, 314, 328, 2, -1, 331, 375, 2, -1, 378, 382, 2, -1, 383, 383, 1, -300, 384, 384,
    1, 195, 387, 389, 2, -1, 392, 392, 1, -1, 396, 396, 1, -1, 402, 402, 1, -1, 405, 405, 1, 97, 409, 409,
    1, -1, 410, 410, 1, 163, 414, 414, 1, 130, 417, 421, 2, -1, 424, 424, 1, -1, 429, 429, 1, -1, 432, 432,
    1, -1, 436, 438, 2, -1, 441, 441, 1, -1, 445, 445, 1, -1, 447, 447, 1, 56, 453, 453, 1, -1, 454, 454,
    1, -2, 456, 456, 1, -1, 457, 457, 1, -2, 459, 459, 1, -1, 460, 460, 1, -2, 462, 476, 2, -1, 477, 477,
    1, -79, 479, 495, 2, -1, 498, 498, 1, -1, 499, 499, 1, -2, 501, 501, 1, -1, 505, 543, 2, -1, 547, 563,
    2, -1, 572, 572, 1, -1, 575, 576, 1, 10815, 578, 578, 1, -1, 583, 591, 2, -1, 592, 592, 1, 10783, 593,
    593, 1, 10780, 594, 594, 1, 10782, 595, 595, 1, -210, 596, 596, 1, -206, 598, 599, 1, -205, 601, 601,
    1, -202, 603, 603, 1, -203, 604, 604, 1, 42319, 608, 608, 1, -205, 609, 609, 1, 42315, 611, 611, 1,
    -207, 613, 613, 1, 42280, 614, 614, 1, 42308, 616, 616, 1, -209, 617, 617, 1, -211, 618, 618, 1, 42308,
    619, 619, 1, 10743, 620, 620, 1, 42305, 623, 623, 1, -211, 625, 625, 1, 10749, 626, 626, 1, -213, 629,
    629, 1, -214, 637, 637, 1, 10727, 640, 640, 1, -218, 642, 642, 1, 42307, 643, 643, 1, -218, 647, 647,
    1, 42282, 648, 648, 1, -218, 649, 649, 1, -69, 650, 651, 1, -217, 652, 652, 1, -71, 658, 658, 1, -219,
    669, 669, 1, 42261, 670, 670, 1, 42258, 837, 837, 1, 84, 881, 883, 2, -1, 887, 887, 1, -1, 891, 893, 1,
    130, 940, 940, 1, -38, 941, 943, 1, -37, 945, 961, 1, -32, 962, 962, 1, -31, 963, 971, 1, -32, 972,
    972, 1, -64, 973, 974, 1, -63, 976, 976, 1, -62, 977, 977, 1, -57, 981, 981, 1, -47, 982, 982, 1, -54,
    983, 983, 1, -8, 985, 1007, 2, -1, 1008, 1008, 1, -86, 1009, 1009, 1, -80, 1010, 1010, 1, 7, 1011,
    1011, 1, -116, 1013, 1013, 1, -96, 1016, 1016, 1, -1, 1019, 1019, 1, -1, 1072, 1103, 1, -32, 1104,
    1119, 1, -80, 1121, 1153, 2, -1, 1163, 1215, 2, -1, 1218, 1230, 2, -1, 1231, 1231, 1, -15, 1233, 1327,
    2, -1, 1377, 1414, 1, -48, 4304, 4346, 1, 3008, 4349, 4351, 1, 3008, 5112, 5117, 1, -8, 7296, 7296, 1,
    -6254, 7297, 7297, 1, -6253, 7298, 7298, 1, -6244, 7299, 7300, 1, -6242, 7301, 7301, 1, -6243, 7302,
    7302, 1, -6236, 7303, 7303, 1, -6181, 7304, 7304, 1, 35266, 7545, 7545, 1, 35332, 7549, 7549, 1, 3814,
    7566, 7566, 1, 35384, 7681, 7829, 2, -1, 7835, 7835, 1, -59, 7841, 7935, 2, -1, 7936, 7943, 1, 8, 7952,
    7957, 1, 8, 7968, 7975, 1, 8, 7984, 7991, 1, 8, 8000, 8005, 1, 8, 8017, 8023, 2, 8, 8032, 8039, 1, 8,
    8048, 8049, 1, 74, 8050, 8053, 1, 86, 8054, 8055, 1, 100, 8056, 8057, 1, 128, 8058, 8059, 1, 112, 8060,
    8061, 1, 126, 8112, 8113, 1, 8, 8126, 8126, 1, -7205, 8144, 8145, 1, 8, 8160, 8161, 1, 8, 8165, 8165,
    1, 7, 8526, 8526, 1, -28, 8560, 8575, 1, -16, 8580, 8580, 1, -1, 9424, 9449, 1, -26, 11312, 11359, 1,
    -48, 11361, 11361, 1, -1, 11365, 11365, 1, -10795, 11366, 11366, 1, -10792, 11368, 11372, 2, -1, 11379,
    11379, 1, -1, 11382, 11382, 1, -1, 11393, 11491, 2, -1, 11500, 11502, 2, -1, 11507, 11507, 1, -1,
    11520, 11557, 1, -7264, 11559, 11559, 1, -7264, 11565, 11565, 1, -7264, 42561, 42605, 2, -1, 42625,
    42651, 2, -1, 42787, 42799, 2, -1, 42803, 42863, 2, -1, 42874, 42876, 2, -1, 42879, 42887, 2, -1,
    42892, 42892, 1, -1, 42897, 42899, 2, -1, 42900, 42900, 1, 48, 42903, 42921, 2, -1, 42933, 42947, 2,
    -1, 42952, 42954, 2, -1, 42961, 42961, 1, -1, 42967, 42969, 2, -1, 42998, 42998, 1, -1, 43859, 43859,
    1, -928, 43888, 43967, 1, -38864, 65345, 65370, 1, -32,
)
