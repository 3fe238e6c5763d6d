"""WorkflowSkill's values: the algorithms of ``flowc.runtime.wfs``
(WorkflowSkill 0.5.0) restated without ``re`` so that MicroPython runs them,
and the VM's errors.

Both interpreters of WorkflowSkill bytecode import them: the sequential VM
(:mod:`flowc.backends.vm.sequential`) and the shared expression machine
(:mod:`flowc.backends.vm.expr_vm`), whose ``wfs.*`` builtins they are. A
module of its own so that neither of the two imports the other for them.
Standard library only; MicroPython-compatible.
"""

# MicroPython style on purpose: %-formatting, explicit `object` bases and
# `x != x` NaN tests read the same on both interpreters.
# ruff: noqa: UP004, UP031, PLR0124

import sys

try:
    from collections import OrderedDict as _OrderedDict
except ImportError:  # pragma: no cover
    _OrderedDict = dict

_MICRO = sys.implementation.name == "micropython"
# Objects must keep insertion order (JSON key order, "the first array input").
_Obj = _OrderedDict if _MICRO else dict

# ---------------------------------------------------------------- errors

class VMError(Exception):
    """Base of every error this module raises."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __str__(self):
        return self.message


class VerifyError(VMError):
    """The bytecode is malformed, of an unknown version, or fails verification."""


class EvalError(Exception):
    """An expression failed at run time (the reference's EvalError)."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class _StepError(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.message = message


class _Missing(object):
    __slots__ = ()

    def __repr__(self):
        return "MISSING"


MISSING = _Missing()
INF = float("inf")
NAN = float("nan")
_MAX_SAFE = 9007199254740992


# ================================================================ values
# The algorithms of flowc.runtime.wfs (WorkflowSkill 0.5.0).

def _num(v):
    if type(v) is int and (v > _MAX_SAFE or v < -_MAX_SAFE):
        return float(v)
    return v


def _is_array(v):
    return isinstance(v, (list, tuple))


def _array_index(name):
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
    if name == "length":
        return len(arr)
    i = _array_index(name)
    if 0 <= i < len(arr):
        return arr[i]
    return MISSING


def get_field(value, name):
    if isinstance(value, dict):
        return value.get(name, MISSING)
    if _is_array(value):
        return _array_prop(value, name)
    return MISSING


def get_index(value, idx):
    t = type(idx)
    if _is_array(value):
        if t is int:
            if 0 <= idx < len(value):
                return value[idx]
            return MISSING
        if t is float:
            if idx == idx and -1.0 < idx < len(value) and idx == int(idx):
                return value[int(idx)]
            return MISSING
        if t is str:
            return _array_prop(value, idx)
        return MISSING
    if isinstance(value, dict):
        if t is int or t is float:
            return value.get(number_to_string(idx), MISSING)
        if t is str:
            return value.get(idx, MISSING)
        return MISSING
    return MISSING


_JS_SPACE = ("\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
             "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
_RADIX = {"x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2}
_RADIX_DIGITS = {16: "0123456789abcdefABCDEF", 8: "01234567", 2: "01"}
_DIGITS = "0123456789"


def _decimal(s):
    """Does s match [+-]?(Infinity|([0-9]+.?[0-9]*|.[0-9]+)([eE][+-]?[0-9]+)?) in full?"""
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


def to_number(s):
    """JavaScript Number(s) for a string: NaN when it is not numeric."""
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
    if s[-1] == "y":
        return -INF if s[0] == "-" else INF
    return float(s)


def _to_number(v):
    t = type(v)
    if t is int or t is float:
        return _num(v)
    if t is bool:
        return 1 if v else 0
    if t is str:
        n = to_number(v)
        if n == n:
            return n
    return 0


def _shortest(x):
    """The shortest round-tripping digits of a finite non-zero float, as repr."""
    if not _MICRO:
        return repr(x)
    for p in range(17):
        s = ("%." + str(p) + "e") % x
        if float(s) == x:
            return s
    return repr(x)


def number_to_string(x):
    """JavaScript String(x) for a number."""
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
    n = len(ip) + exp
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


def wfs_eq(a, b):
    ta = type(a)
    tb = type(b)
    a_num = ta is int or ta is float
    b_num = tb is int or tb is float
    if a_num:
        if b_num:
            return _num(a) == _num(b)
        if tb is str:
            return to_number(b) == _num(a)
        return False
    if b_num:
        if ta is str:
            return to_number(a) == _num(b)
        return False
    if ta is str:
        return tb is str and a == b
    return a is b


def _same_value_zero(a, b):
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
    if _is_array(a):
        for item in a:
            if _same_value_zero(item, b):
                return True
        return False
    left = "" if a is None or a is MISSING else to_string(a)
    right = "" if b is None or b is MISSING else to_string(b)
    return right.lower() in left.lower()


def wfs_truthy(v):
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
    if v is None or v is MISSING:
        return False
    t = type(v)
    if t is bool:
        return v
    if t is int or t is float:
        return v == v and v != 0
    if t is str:
        return len(v) > 0
    return True


def to_string(v):
    """JavaScript String(v)."""
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int or t is float:
        return number_to_string(v)
    if v is None:
        return "null"
    if v is MISSING:
        return "undefined"
    if _is_array(v):
        return ",".join(["" if e is None or e is MISSING else to_string(e) for e in v])
    return "[object Object]"


def stringify(v):
    """A template placeholder's text (stringify wfs)."""
    if v is None or v is MISSING:
        return ""
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int or t is float:
        return number_to_string(v)
    return js_json(v)


_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t"}


def _json_string(s):
    plain = True
    for ch in s:
        if ch < " " or ch == '"' or ch == "\\" or "\ud7ff" < ch < "\ue000":
            plain = False
            break
    if plain:
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
    keys = list(obj)
    index_keys = []
    for k in keys:
        if type(k) is str and k and "0" <= k[0] <= "9":
            i = _array_index(k)
            if i >= 0:
                index_keys.append((i, k))
    if not index_keys:
        return keys
    index_keys.sort()
    first = [k for _, k in index_keys]
    taken = set(first)
    return first + [k for k in keys if k not in taken]


def js_json(v):
    """Compact JSON.stringify(v); None for a missing value."""
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
        return number_to_string(v)
    if _is_array(v):
        return "[" + ",".join([_json(e) for e in v]) + "]"
    if isinstance(v, dict):
        out = []
        for k in _js_keys(v):
            item = v[k]
            if item is MISSING:
                continue
            out.append(_json_string(k if type(k) is str else to_string(k)) + ":" + _json(item))
        return "{" + ",".join(out) + "}"
    raise EvalError("not a JSON value: " + type(v).__name__)


def to_json_value(v):
    """A value as plain JSON for the run record: a missing value is None at
    the top, a dropped key in objects and null in arrays."""
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


def _typeof(v):
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


# ---------------------------------------------------------------- declared types

# The declared types of CHECK_INPUTS and CHECK_OUTPUT, by code.
TYPES = ("string", "int", "float", "boolean", "array", "object")


def type_name(v):
    """The declared-type name a value has (runtime.type_name): string,
    boolean, int, float (a whole float is an int), array, object or null."""
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
    return t.__name__


def type_mismatch(v, kind):
    """None when v fits the declared type kind (null and missing fit every
    type; an int fits float), else the name of v's type."""
    if v is None or v is MISSING:
        return None
    name = type_name(v)
    if name == kind or (kind == "float" and name == "int"):
        return None
    return name


# ---------------------------------------------------------------- transforms

def transform_input(inputs):
    """The transform's input array: items, the first array input, [first
    input] unless it is null/missing, else []."""
    if not isinstance(inputs, dict):
        return []
    items = inputs.get("items", MISSING)
    if _is_array(items):
        return items
    for k in inputs:
        v = inputs[k]
        if _is_array(v):
            return v
    for k in inputs:
        v = inputs[k]
        if v is None or v is MISSING:
            return []
        return [v]
    return []


def _nested(item, path):
    v = item
    for name in path:
        if isinstance(v, dict):
            v = v.get(name, MISSING)
        elif _is_array(v):
            v = _array_prop(v, name)
        else:
            return MISSING
    return v


def _isascii(s):
    for ch in s:
        if ch > "\x7f":
            return False
    return True


if hasattr(str, "isascii"):
    _isascii = str.isascii  # the same test, in C
_NONE_TYPE = type(None)
_NUMBER_KINDS = {int, bool, float}


def _utf16(s):
    """A key ordering strings by UTF-16 code units, as JavaScript does."""
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
    if isinstance(v, dict):
        return "[object Object]"
    if _is_array(v):
        return to_string(v)
    return v


def _js_less(a, b):
    """JavaScript a < b for two values that are not null/missing."""
    a = _js_primitive(a)
    b = _js_primitive(b)
    if type(a) is str and type(b) is str:
        if _isascii(a) and _isascii(b):
            return a < b
        return _utf16(a) < _utf16(b)
    x = to_number(a) if type(a) is str else _num(a)
    y = to_number(b) if type(b) is str else _num(b)
    return x < y


class _JsOrder(object):
    __slots__ = ("desc", "v")

    def __init__(self, v, desc):
        self.v = v
        self.desc = desc

    def __lt__(self, other):
        if self.desc:
            return _js_less(other.v, self.v)
        return _js_less(self.v, other.v)


def _msort(xs, lt):
    """A stable merge sort by the strict order lt (MicroPython's sort is not stable)."""
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


def sort_items(items, path, desc):
    """The sort transform (runtime.wfs_sort): a stable sort of a copy of
    items by the value at the dotted path; null and missing go last."""
    if not _is_array(items):
        raise _StepError("sort input is not an array")
    if len(path) == 1:
        name = path[0]
        keys = [item.get(name, MISSING) if type(item) is _Obj else _nested(item, path) for item in items]
    else:
        keys = [_nested(item, path) for item in items]
    kinds = set(map(type, keys))
    nulls = []
    if _NONE_TYPE in kinds or _Missing in kinds:
        kept = []
        kept_keys = []
        for j in range(len(keys)):
            v = keys[j]
            if v is None or v is MISSING:
                nulls.append(items[j])
            else:
                kept.append(items[j])
                kept_keys.append(v)
        items = kept
        keys = kept_keys
        kinds.discard(_NONE_TYPE)
        kinds.discard(_Missing)
    if not kinds - _NUMBER_KINDS:
        mode = 0    # numbers and booleans: Python orders them as JavaScript does, but NaN
        if float in kinds:
            for v in keys:
                if v != v:
                    mode = 3
                    break
    elif len(kinds) == 1 and str in kinds:
        mode = 1
        for v in keys:
            if not _isascii(v):
                mode = 2
                break
    else:
        mode = 3
    if not _MICRO:
        if mode == 2:
            keys = [_utf16(v) for v in keys]
        elif mode == 3:
            keys = [_JsOrder(v, desc) for v in keys]
            desc = False    # the order objects compare flipped already
        order = sorted(range(len(keys)), key=keys.__getitem__, reverse=desc)
        out = [items[j] for j in order]
    else:
        keyed = list(zip(keys, items))
        if mode == 3:
            keyed = _msort(keyed, lambda x, y: _JsOrder(x[0], desc) < _JsOrder(y[0], desc))
        else:
            f = _utf16 if mode == 2 else (lambda v: v)
            keyed = [(f(pair[0]), pair[1]) for pair in keyed]
            if desc:
                keyed = _msort(keyed, lambda x, y: y[0] < x[0])
            else:
                keyed = _msort(keyed, lambda x, y: x[0] < y[0])
        out = [pair[1] for pair in keyed]
    out.extend(nulls)
    return out


def shape_outputs(value, keys):
    """Workflow outputs from one value by the declared keys: an object gives
    every key value[k] ?? null; missing gives {}; anything else goes to the
    first key."""
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
