"""WorkflowSkill's values: the expression semantics of the reference runtime.

Generated code reaches these functions as ``_rt.<name>`` through
:mod:`flowc.runtime.sequence_run`, which imports them all; the expression
compiler of the Python backend evaluates over this module, and the VM
(the ``wfs.*`` builtins of :mod:`flowc.backends.vm.expr_wfs`, the steps of
:mod:`flowc.backends.vm.plan_steps`) runs on it too: one set of rules for
both backends. Plain functions over plain values, standard library only and
MicroPython-compatible (no ``re``: MicroPython's lacks what the rules need;
no typing at run time); where MicroPython differs (``repr`` of a float is
not the shortest, the sort is not stable, no ``str.isascii``, no UTF-16
codec) a branch says so.

Values are JSON-shaped Python values: ``None`` (JavaScript null), ``bool``,
``int`` and ``float`` (both are JavaScript numbers: ``1 == 1.0``; ints beyond
2**53 behave as the nearest double), ``str``, ``list`` (a tuple is read as an
array too) and ``dict`` (objects). :data:`MISSING` is JavaScript
``undefined``: a missing value, distinct from ``None``.

Every rule below is the reference runtime's (WorkflowSkill 0.5.0,
runtime/src/expression); the IR's operator keys (``wfs.eq`` ...) name them.
"""

# MicroPython style on purpose: %-formatting, explicit `object` bases and
# `x != x` NaN tests read the same on both interpreters.
# ruff: noqa: UP004, UP031, PLR0124

import sys

try:
    from collections import OrderedDict as _OrderedDict
except ImportError:  # pragma: no cover
    _OrderedDict = dict

__all__ = [
    "INF",
    "MAX_SLEEP_MS",
    "MISSING",
    "NAN",
    "EvalError",
    "compact",
    "env_root",
    "error_message",
    "js_boolean",
    "js_json",
    "js_number_to_string",
    "js_to_number",
    "js_to_string",
    "js_typeof",
    "key_or_null",
    "retry_sleep",
    "shape_outputs",
    "to_json_value",
    "to_number",
    "transform_items",
    "type_mismatch",
    "type_name",
    "unknown_ref",
    "wfs_all",
    "wfs_and",
    "wfs_any",
    "wfs_contains",
    "wfs_eq",
    "wfs_ge",
    "wfs_get_field",
    "wfs_get_fields",
    "wfs_get_index",
    "wfs_gt",
    "wfs_le",
    "wfs_lt",
    "wfs_ne",
    "wfs_not",
    "wfs_or",
    "wfs_sort",
    "wfs_stringify",
    "wfs_template",
    "wfs_truthy",
    "whole_ms",
]


_MICRO = sys.implementation.name == "micropython"
# A JSON object the rules build: insertion order is JSON key order (and "the
# first array input"); MicroPython's dict does not keep it.
_Obj = _OrderedDict if _MICRO else dict


class _Missing(object):
    """The type of :data:`MISSING` (JavaScript ``undefined``)."""

    __slots__ = ()

    def __repr__(self):
        return "MISSING"

    def __reduce__(self):
        return "MISSING"


MISSING = _Missing()

INF = float("inf")
NAN = float("nan")

# Integers beyond this magnitude are not exact JavaScript numbers.
_MAX_SAFE = 9007199254740992  # 2**53


class EvalError(Exception):
    """An expression failed at run time (the reference's EvalError)."""

    def __init__(self, message):
        Exception.__init__(self, message)
        self.message = message


# --- the environment ---------------------------------------------------------

def env_root(env, name):
    """The value of root ``$name`` in ``env`` (a dict with the keys inputs,
    steps, item, index, result); an absent key is MISSING."""
    return env.get(name, MISSING)


def unknown_ref(name):
    """A reference to a root the language doesn't have fails when evaluated."""
    raise EvalError("Unknown reference: $" + name)


def error_message(exc):
    """The message an exception contributes to the run record."""
    message = getattr(exc, "message", None)
    if type(message) is not str:
        message = str(exc)
    return message or type(exc).__name__


# The longest sleep a run asks the host for: flowc.ir.limits.MAX_DURATION_MS
# (a copy: the runtime imports no other flowc module; a test keeps them equal).
MAX_SLEEP_MS = 2147483647


def retry_sleep(delay, backoff, attempt):
    """The sleep before retry ``attempt`` (1-based): ``delay * backoff **
    (attempt - 1)``, at most MAX_SLEEP_MS. Both factors are within their
    limits, but their product is not: at a million retries it overflowed
    (OverflowError on CPython, inf on MicroPython, then Infinity in the run
    record)."""
    if delay <= 0:
        return 0
    try:
        ms = delay * backoff ** (attempt - 1)
    except OverflowError:
        return MAX_SLEEP_MS
    return min(ms, MAX_SLEEP_MS)


def whole_ms(ms):
    """A millisecond count as an int when it is whole (JSON writes 100, not 100.0)."""
    if type(ms) is float and ms == ms and ms not in (INF, -INF) and ms == int(ms):
        return int(ms)
    return ms


# --- kinds of values ---------------------------------------------------------

def _is_number(v):
    t = type(v)
    return t is int or t is float


def _is_array(v):
    return isinstance(v, (list, tuple))


def _num(v):
    """A JS number's Python value: ints beyond 2**53 become the nearest double."""
    if type(v) is int and (v > _MAX_SAFE or v < -_MAX_SAFE):
        return float(v)
    return v


# --- property and index access -------------------------------------------------

def _array_index(name):
    """``name`` as an array index if it is a canonical one ("0", "12"), else -1."""
    n = len(name)
    if n == 0 or n > 15:
        return -1
    if name[0] == "0":
        return 0 if n == 1 else -1
    for ch in name:
        if ch < "0" or ch > "9":
            return -1
    return int(name)


def _array_prop(arr, name):
    """``arr[name]`` for a string key: an element, ``length``, else MISSING."""
    if name == "length":
        return len(arr)
    i = _array_index(name)
    if 0 <= i < len(arr):
        return arr[i]
    return MISSING


def wfs_get_field(value, name):
    """``value.name``: MISSING on null/missing; ``.length`` counts arrays only;
    objects return their key (``length`` included); other values MISSING."""
    if isinstance(value, dict):
        return value.get(name, MISSING)
    if _is_array(value):
        return _array_prop(value, name)
    return MISSING


def wfs_get_fields(value, names):
    """``value.a.b.c`` for ``names == ('a', 'b', 'c')``."""
    for name in names:
        if isinstance(value, dict):
            value = value.get(name, MISSING)
        elif _is_array(value):
            value = _array_prop(value, name)
        else:
            return MISSING
    return value


def wfs_get_index(value, idx):
    """``value[idx]``: arrays take numbers (negative or fractional -> MISSING)
    and string keys ("1", "length"); objects are indexed by ``String(idx)``;
    anything else is MISSING."""
    t = type(idx)
    if _is_array(value):
        if t is int:
            if 0 <= idx < len(value):
                return value[idx]
            return MISSING
        if t is float:
            if -1.0 < idx < len(value) and idx == int(idx):
                return value[int(idx)]
            return MISSING
        if t is str:
            return _array_prop(value, idx)
        return MISSING
    if isinstance(value, dict):
        if t is int or t is float:
            return value.get(js_number_to_string(idx), MISSING)
        if t is str:
            return value.get(idx, MISSING)
        return MISSING
    return MISSING


# --- numbers -----------------------------------------------------------------

# JavaScript's WhiteSpace and LineTerminator characters (String.prototype.trim,
# Number(string)).
_JS_SPACE = ("\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
             "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")

_RADIX = {"x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2}
_RADIX_DIGITS = {16: "0123456789abcdefABCDEF", 8: "01234567", 2: "01"}
_DIGITS = "0123456789"


def _decimal(s):
    """Does ``s`` match ``[+-]?(Infinity|([0-9]+.?[0-9]*|.[0-9]+)([eE][+-]?[0-9]+)?)``
    in full? (By hand: MicroPython's ``re`` has no such matching.)"""
    i = 0
    n = len(s)
    if i < n and s[i] in "+-":
        i += 1
    if s[i:] == "Infinity":
        return True
    ip = 0
    while i < n and s[i] in _DIGITS:
        i += 1
        ip += 1
    fp = 0
    if i < n and s[i] == ".":
        i += 1
        while i < n and s[i] in _DIGITS:
            i += 1
            fp += 1
    if ip == 0 and fp == 0:
        return False
    if i < n and s[i] in "eE":
        i += 1
        if i < n and s[i] in "+-":
            i += 1
        ed = 0
        while i < n and s[i] in _DIGITS:
            i += 1
            ed += 1
        if ed == 0:
            return False
    return i == n


def js_to_number(s):
    """JavaScript ``Number(s)`` for a string: NaN when it is not numeric."""
    s = s.strip(_JS_SPACE)
    if not s:
        return 0
    if len(s) > 2 and s[0] == "0" and s[1] in _RADIX:
        radix = _RADIX[s[1]]
        digits = _RADIX_DIGITS[radix]
        for ch in s[2:]:
            if ch not in digits:
                return NAN
        return float(int(s[2:], radix))
    if not _decimal(s):
        return NAN
    if s[-1] == "y":  # [+-]Infinity
        return -INF if s[0] == "-" else INF
    return float(s)


def to_number(v):
    """The reference's toNumber: numbers as is, numeric strings by Number(),
    other strings 0, booleans 1/0, everything else 0."""
    t = type(v)
    if t is int:
        return v if -_MAX_SAFE <= v <= _MAX_SAFE else float(v)
    if t is float:
        return v
    if t is bool:
        return 1 if v else 0
    if t is str:
        n = js_to_number(v)
        if n == n:  # not NaN
            return n
    return 0


_to_number = to_number


def js_number_to_string(x):
    """JavaScript ``String(x)`` for a number: ``1``, ``1.5``, ``1e+21``,
    ``1e-7``, ``-0`` -> ``0``, ``NaN``, ``Infinity``."""
    if type(x) is int:
        if -_MAX_SAFE <= x <= _MAX_SAFE:
            return str(x)
        x = float(x)
    if x != x:
        return "NaN"
    if x == INF:
        return "Infinity"
    if x == -INF:
        return "-Infinity"
    if x == 0:
        return "0"
    r = _shortest(x)
    sign = ""
    if r[0] == "-":
        sign = "-"
        r = r[1:]
    exp = 0
    if "e" in r:
        r, e = r.split("e")
        exp = int(e)
    if "." in r:
        ip, fp = r.split(".")
    else:
        ip, fp = r, ""
    digits = ip + fp
    n = len(ip) + exp  # the decimal point sits after n digits
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    es = ("e+" if e >= 0 else "e-") + str(abs(e))
    if k == 1:
        return sign + digits + es
    return sign + digits[0] + "." + digits[1:] + es


def _shortest(x):
    """The shortest digits that round-trip a finite non-zero float, as
    JavaScript's (CPython's repr; MicroPython's repr is not the shortest)."""
    if not _MICRO:
        return repr(x)
    for p in range(17):
        s = ("%." + str(p) + "e") % x
        if float(s) == x:
            return s
        # a tie rounded to even may miss x where the digit above or below hits it
        mantissa, e = s.split("e")
        sign = "-" if mantissa[0] == "-" else ""
        digits = mantissa.lstrip("-").replace(".", "")
        for step in (1, -1):
            t = str(int(digits) + step)
            near = sign + t[0] + "." + t[1:] + "e" + str(int(e) + len(t) - len(digits))
            if float(near) == x:
                return near
    return repr(x)


# --- equality and comparison ---------------------------------------------------

def wfs_eq(a, b):
    """``==``: strict equality (objects by identity, ``1 == true`` is false,
    null is not missing); a number against a string compares the number with
    Number(string) when that is not NaN."""
    ta = type(a)
    tb = type(b)
    if ta is str and tb is str:  # the commonest case first
        return a == b
    a_num = ta is int or ta is float
    b_num = tb is int or tb is float
    if a_num:
        if b_num:
            return _num(a) == _num(b)
        if tb is str:
            n = js_to_number(b)
            return n == _num(a)
        return False
    if b_num:
        if ta is str:
            n = js_to_number(a)
            return n == _num(b)
        return False
    if ta is str:
        return tb is str and a == b
    # null, missing, booleans (singletons), arrays and objects (identity)
    return a is b


def wfs_ne(a, b):
    """``!=``: the exact negation of ``==``."""
    return not wfs_eq(a, b)


def _plain_numbers(a, b):
    """Are a and b both their own toNumber (floats, or ints that are exact
    JavaScript numbers)? Then Python compares them as JavaScript does."""
    ta = type(a)
    tb = type(b)
    return ((ta is float or (ta is int and -_MAX_SAFE <= a <= _MAX_SAFE))
            and (tb is float or (tb is int and -_MAX_SAFE <= b <= _MAX_SAFE)))


def wfs_lt(a, b):
    if _plain_numbers(a, b):
        return a < b
    return to_number(a) < to_number(b)


def wfs_le(a, b):
    if _plain_numbers(a, b):
        return a <= b
    return to_number(a) <= to_number(b)


def wfs_gt(a, b):
    if _plain_numbers(a, b):
        return a > b
    return to_number(a) > to_number(b)


def wfs_ge(a, b):
    if _plain_numbers(a, b):
        return a >= b
    return to_number(a) >= to_number(b)


def _same_value_zero(a, b):
    """JavaScript SameValueZero (Array.prototype.includes): no coercion,
    NaN equals NaN, objects by identity."""
    ta = type(a)
    tb = type(b)
    if ta is int or ta is float:
        if tb is int or tb is float:
            a = _num(a)
            b = _num(b)
            return a == b or (a != a and b != b)
        return False
    if ta is str:
        return tb is str and a == b
    return a is b


def wfs_contains(a, b):
    """``contains``: an array left side tests membership with no coercion;
    otherwise a case-insensitive substring test of ``String(x ?? '')``."""
    if _is_array(a):
        for item in a:
            if _same_value_zero(item, b):
                return True
        return False
    left = "" if a is None or a is MISSING else js_to_string(a)
    right = "" if b is None or b is MISSING else js_to_string(b)
    return right.lower() in left.lower()


# --- truthiness ----------------------------------------------------------------

def wfs_truthy(v):
    """The reference's isTruthy (operands of ``!``, ``&&``, ``||``): false for
    null, missing, false, 0, '' and []; objects and NaN are true."""
    if v is None or v is MISSING:
        return False
    t = type(v)
    if t is bool:
        return v
    if t is int or t is float:
        return v != 0
    if t is str:
        return len(v) > 0
    if _is_array(v):
        return len(v) > 0
    return True


def js_boolean(v):
    """JavaScript ``Boolean(v)`` (guards, conditionals, filters): false for
    null, missing, false, 0, NaN and ''; [] and {} are true."""
    t = type(v)
    if t is bool:
        return v
    if v is None or v is MISSING:
        return False
    if t is int or t is float:
        return v == v and v != 0
    if t is str:
        return len(v) > 0
    return True


def wfs_not(v):
    return not wfs_truthy(v)


def wfs_and(a, b):
    """``&&``: both sides are evaluated; the result is a boolean."""
    return wfs_truthy(a) and wfs_truthy(b)


def wfs_or(a, b):
    """``||``: both sides are evaluated; the result is a boolean."""
    return wfs_truthy(a) or wfs_truthy(b)


def wfs_all(values):
    """``a && b && c`` over already evaluated operands."""
    result = True
    for v in values:
        if not wfs_truthy(v):
            result = False
    return result


def wfs_any(values):
    """``a || b || c`` over already evaluated operands."""
    result = False
    for v in values:
        if wfs_truthy(v):
            result = True
    return result


# --- strings -------------------------------------------------------------------

def js_to_string(v):
    """JavaScript ``String(v)``: arrays join their elements with ','
    (null and missing elements are ''), objects are '[object Object]'."""
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int or t is float:
        return js_number_to_string(v)
    if v is None:
        return "null"
    if v is MISSING:
        return "undefined"
    if _is_array(v):
        return ",".join(["" if e is None or e is MISSING else js_to_string(e) for e in v])
    return "[object Object]"


def wfs_stringify(v):
    """How a placeholder's value becomes text (STRINGIFY['wfs']): null and
    missing are '', strings as is, numbers and booleans by String(), arrays
    and objects as compact JSON.stringify."""
    if v is None or v is MISSING:
        return ""
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int or t is float:
        return js_number_to_string(v)
    return js_json(v)


def wfs_template(parts):
    """A ``${...}`` template: the parts (literal strings and placeholder
    values, in order) stringified and joined."""
    return "".join([wfs_stringify(p) for p in parts])


# --- JSON ----------------------------------------------------------------------

_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t"}


def _json_plain(s):
    """Does ``s`` need no escape in JSON? (min and max run in C on both
    interpreters; a character at or above U+D800 takes the slow path. The
    bound is written U+D7FF: a lone surrogate in the source can't be frozen
    into MicroPython firmware.)"""
    return not s or (min(s) >= " " and max(s) <= "\ud7ff" and '"' not in s and "\\" not in s)


def _json_string(s):
    if _json_plain(s):
        return '"' + s + '"'
    out = []
    for ch in s:
        if ch < " " or ch == '"' or ch == "\\" or "\ud7ff" < ch < "\ue000":
            short = _JSON_SHORT.get(ch)
            out.append(short if short is not None else "\\u%04x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _js_keys(obj):
    """An object's keys in JavaScript order: array-index keys first, ascending,
    then the others in insertion order."""
    keys = list(obj)
    index_keys = []
    for k in keys:
        if type(k) is str and k and "0" <= k[0] <= "9":
            i = _array_index(k)
            if 0 <= i < 4294967295:  # 2**32 - 1 is not an array index
                index_keys.append((i, k))
    if not index_keys:
        return keys
    index_keys.sort()
    first = [k for _, k in index_keys]
    taken = set(first)
    return first + [k for k in keys if k not in taken]


def js_json(v):
    """Compact ``JSON.stringify(v)`` with JavaScript number formatting.
    Inside objects a missing value drops the key; inside arrays it is null.
    A missing top-level value gives None (JSON.stringify's undefined)."""
    if v is MISSING:
        return None
    return _json(v)


def _json(v):
    if v is None or v is MISSING:
        return "null"
    t = type(v)
    if t is str:
        return _json_string(v)
    if t is bool:
        return "true" if v else "false"
    if t is int or t is float:
        if t is float and (v != v or v == INF or v == -INF):
            return "null"
        return js_number_to_string(v)
    if _is_array(v):
        return "[" + ",".join([_json(e) for e in v]) + "]"
    if isinstance(v, dict):
        out = []
        for k in _js_keys(v):
            item = v[k]
            if item is MISSING:
                continue
            out.append(_json_string(k if type(k) is str else js_to_string(k)) + ":" + _json(item))
        return "{" + ",".join(out) + "}"
    raise EvalError("not a JSON value: " + type(v).__name__)


def to_json_value(v):
    """``v`` as a plain JSON value for run records: a missing value is None
    at the top level, a dropped key inside objects and null inside arrays
    (as JSON.stringify writes it)."""
    if v is MISSING:
        return None
    if isinstance(v, dict):
        out = _Obj()
        for k in v:
            item = v[k]
            if item is not MISSING:
                out[k] = to_json_value(item)
        return out
    if _is_array(v):
        return [to_json_value(e) for e in v]
    return v


def js_typeof(v):
    """JavaScript ``typeof`` of a value (null is "object")."""
    if v is MISSING:
        return "undefined"
    t = type(v)
    if t is bool:
        return "boolean"
    if t is int or t is float:
        return "number"
    if t is str:
        return "string"
    return "object"


# --- declared types (WorkflowSkill names) ---------------------------------------

def type_name(v):
    """The declared-type name a value has: string, boolean, int, float,
    array, object or null (a whole float is an int: JSON can't tell)."""
    if v is None or v is MISSING:
        return "null"
    t = type(v)
    if t is str:
        return "string"
    if t is bool:
        return "boolean"
    if t is int:
        return "int"
    if t is float:
        return "int" if (v == v and v != INF and v != -INF and v == int(v)) else "float"
    if _is_array(v):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def type_mismatch(v, kind):
    """None when ``v`` fits the declared type ``kind``, else the name of its
    type. Null and missing fit every type (a skipped step's output, an
    absent field); an int fits float."""
    if v is None or v is MISSING:
        return None
    name = type_name(v)
    if name == kind or (kind == "float" and name == "int"):
        return None
    return name


# --- transforms -------------------------------------------------------------------

def transform_items(args):
    """The array a transform works on: ``items`` if it is an array, else
    the first array-valued input, else the first input wrapped in an array
    when it is not null, else []."""
    if not isinstance(args, dict):
        return []
    items = args.get("items", MISSING)
    if _is_array(items):
        return items
    for v in args.values():
        if _is_array(v):
            return v
    for v in args.values():
        if v is None or v is MISSING:
            return []
        return [v]
    return []


def compact(obj):
    """``obj`` without the keys whose value is MISSING (JavaScript keeps
    them as undefined, and every JSON form drops them); anything but an
    object as it is."""
    if not isinstance(obj, dict):
        return obj
    for v in obj.values():
        if v is MISSING:
            out = _Obj()
            for k in obj:
                x = obj[k]
                if x is not MISSING:
                    out[k] = x
            return out
    return obj


def key_or_null(obj, key):
    """``obj[key] ?? null`` for a plain object; null for anything else
    (an output read from a step's raw result or the last step's output)."""
    if isinstance(obj, dict):
        v = obj.get(key)
        return None if v is MISSING else v
    return None


def shape_outputs(value, keys):
    """Workflow outputs from one value by the declared ``keys``: an object
    gives every key ``value[k] ?? null``; missing gives {}; any other value
    goes to the first key."""
    out = _Obj()
    if not keys:
        return out
    if isinstance(value, dict):
        for k in keys:
            v = value.get(k)
            out[k] = None if v is MISSING else v
        return out
    if value is MISSING:
        return out
    out[keys[0]] = value
    return out


# --- sort -----------------------------------------------------------------------

def _isascii(s):
    for ch in s:
        if ch > "\x7f":
            return False
    return True


if hasattr(str, "isascii"):
    _isascii = str.isascii  # the same test, in C (MicroPython has none)


def _utf16(s):
    """A key that orders strings by UTF-16 code units, as JavaScript does
    (Python orders by code points: they differ above U+FFFF)."""
    if not _MICRO:
        return s.encode("utf-16-be", "surrogatepass")
    units = []
    for ch in s:
        o = ord(ch)
        if o < 0x10000:
            units.append(o)
        else:
            o -= 0x10000
            units.append(0xD800 + (o >> 10))
            units.append(0xDC00 + (o & 0x3FF))
    return units


def _js_primitive(v):
    """ToPrimitive for the values a sort key can be (never null/missing)."""
    if isinstance(v, dict):
        return "[object Object]"
    if _is_array(v):
        return js_to_string(v)
    return v


def _js_less(a, b):
    """JavaScript ``a < b`` for two values that are not null/missing."""
    a = _js_primitive(a)
    b = _js_primitive(b)
    if type(a) is str and type(b) is str:
        if _isascii(a) and _isascii(b):
            return a < b
        return _utf16(a) < _utf16(b)
    x = js_to_number(a) if type(a) is str else _num(a)
    y = js_to_number(b) if type(b) is str else _num(b)
    return x < y  # NaN compares false both ways, as in JavaScript


class _JsOrder(object):
    """A sort key ordering by the reference's comparator (``<`` then ``>``),
    flipped for descending sorts."""

    __slots__ = ("desc", "v")

    def __init__(self, v, desc):
        self.v = v
        self.desc = desc

    def __lt__(self, other):
        if self.desc:
            return _js_less(other.v, self.v)
        return _js_less(self.v, other.v)


_NUMBER_TYPES = {int, float, bool}
_NONE_TYPE = type(None)


def _itemgetter(name):
    return lambda item: item[name]


try:
    from operator import itemgetter as _itemgetter  # the C version where there is one
except ImportError:  # pragma: no cover - MicroPython
    pass


def wfs_sort(items, path, descending=False):
    """The sort transform: a stable sort of a copy of ``items`` by the value
    at the dotted ``path`` (a tuple of names). Null and missing values go
    last in both directions; numbers compare numerically, strings by UTF-16
    code units, mixed values by JavaScript's ``<``."""
    if not _is_array(items):
        raise EvalError("sort input is not an array")
    name = path[0] if len(path) == 1 else None
    all_dicts = set(map(type, items)) == {dict}
    keys = None
    if name is not None and all_dicts:
        try:  # every item holds the key: read them all in C
            keys = list(map(_itemgetter(name), items))
        except KeyError:
            keys = None
    if keys is None and name is not None:
        keys = [item.get(name) if type(item) is dict else wfs_get_fields(item, path) for item in items]
    elif keys is None:
        keys = [wfs_get_fields(item, path) for item in items]
    kinds = set(map(type, keys))
    nulls = []
    if _NONE_TYPE in kinds or _Missing in kinds:
        kept = []
        kept_keys = []
        for item, k in zip(items, keys):
            if k is None or k is MISSING:
                nulls.append(item)
            else:
                kept.append(item)
                kept_keys.append(k)
        items = kept
        keys = kept_keys
        kinds.discard(_NONE_TYPE)
        kinds.discard(_Missing)
    js_order = False  # True: the keys need JavaScript's comparator
    if not kinds - _NUMBER_TYPES:  # Python orders numbers and booleans as JavaScript does, but NaN
        js_order = float in kinds and not all(k == k for k in keys)
    elif kinds == {str}:
        if not all(_isascii(k) for k in keys):
            keys = [_utf16(k) for k in keys]
            name = None  # the items' own values are not the keys
    else:
        js_order = True
    if _MICRO:  # MicroPython's sort is not stable
        out = _stable_sort(items, keys, js_order, descending)
    elif not js_order and name is not None and all_dicts:
        out = sorted(items, key=_itemgetter(name), reverse=descending)
    else:
        if js_order:
            keys = [_JsOrder(k, descending) for k in keys]
            descending = False  # the order objects compare flipped already
        order = sorted(range(len(keys)), key=keys.__getitem__, reverse=descending)
        out = [items[i] for i in order]
    out.extend(nulls)
    return out


def _stable_sort(items, keys, js_order, descending):
    """``items`` in the order of their ``keys``, stable (a merge sort)."""
    if js_order:
        if descending:
            def lt(x, y):
                return _js_less(y[0], x[0])
        else:
            def lt(x, y):
                return _js_less(x[0], y[0])
    elif descending:
        def lt(x, y):
            return y[0] < x[0]
    else:
        def lt(x, y):
            return x[0] < y[0]
    return [pair[1] for pair in _msort(list(zip(keys, items)), lt)]


def _msort(xs, lt):
    """A stable merge sort by the strict order ``lt``."""
    n = len(xs)
    if n <= 1:
        return list(xs)
    left = _msort(xs[:n // 2], lt)
    right = _msort(xs[n // 2:], lt)
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        if lt(right[j], left[i]):
            out.append(right[j])
            j += 1
        else:
            out.append(left[i])
            i += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out
