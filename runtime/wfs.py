"""WorkflowSkill's values: the expression semantics of the reference runtime.

Generated code reaches these functions as ``_rt.<name>`` through
:mod:`flowc.runtime.sequence_run`, which imports them all; the expression
compiler of the Python backend evaluates over this module. It uses the
standard library only: plain functions over plain values (no classes beyond
two small ones, no typing at run time), so a MicroPython-compatible VM can
share them (the VM restates them in ``backends/vm/wfs_values.py``).

Values are JSON-shaped Python values: ``None`` (JavaScript null), ``bool``,
``int`` and ``float`` (both are JavaScript numbers: ``1 == 1.0``; ints beyond
2**53 behave as the nearest double), ``str``, ``list`` (a tuple is read as an
array too) and ``dict`` (objects). :data:`MISSING` is JavaScript
``undefined``: a missing value, distinct from ``None``.

Every rule below is the reference runtime's (WorkflowSkill 0.5.0,
runtime/src/expression); the IR's operator keys (``wfs.eq`` ...) name them.
"""

import math
import re

__all__ = [
    "INF",
    "MISSING",
    "NAN",
    "EvalError",
    "env_root",
    "js_boolean",
    "js_json",
    "js_number_to_string",
    "js_to_number",
    "js_to_string",
    "to_json_value",
    "to_number",
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
    "wfs_stringify",
    "wfs_template",
    "wfs_truthy",
]


class _Missing:
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

_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)$")
_RADIX = {"x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2}
_RADIX_DIGITS = {16: "0123456789abcdefABCDEF", 8: "01234567", 2: "01"}


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
    if _DECIMAL.match(s) is None:
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
        if not math.isnan(n):
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
    if math.isnan(x):
        return "NaN"
    if x == INF:
        return "Infinity"
    if x == -INF:
        return "-Infinity"
    if x == 0:
        return "0"
    r = repr(x)  # the shortest digits that round-trip, as JavaScript's
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
            return a == b or (math.isnan(a) and math.isnan(b))
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
        return v != 0 and not math.isnan(v)
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
        return ",".join("" if e is None or e is MISSING else js_to_string(e) for e in v)
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

_JSON_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')
_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t"}


def _json_escape_char(m):
    ch = m.group(0)
    short = _JSON_SHORT.get(ch)
    if short is not None:
        return short
    return "\\u" + f"{ord(ch):04x}"


def _json_string(s):
    if _JSON_ESCAPE.search(s) is None:
        return '"' + s + '"'
    return '"' + _JSON_ESCAPE.sub(_json_escape_char, s) + '"'


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
        if t is float and (math.isnan(v) or math.isinf(v)):
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
    raise TypeError("not a JSON value: " + type(v).__name__)


def to_json_value(v):
    """``v`` as a plain JSON value for run records: a missing value is None
    at the top level, a dropped key inside objects and null inside arrays
    (as JSON.stringify writes it)."""
    if v is MISSING:
        return None
    if isinstance(v, dict):
        out = {}
        for k in v:
            item = v[k]
            if item is not MISSING:
                out[k] = to_json_value(item)
        return out
    if _is_array(v):
        return [to_json_value(e) for e in v]
    return v
