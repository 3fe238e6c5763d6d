"""Run-time support for compiled CEL (the instruction dialect's expressions).

Generated code imports this module as ``_c``; the VM calls the same
functions through :data:`DISPATCH`. It uses the standard library only
(``re``, ``math``, ``binascii``; regular expressions from workflows go to
:mod:`nfa`, which uses RE2 when it is installed) and no other flowc module, and it sticks to what
MicroPython implements: no typing at run time, no dataclasses, small
classes with plain attributes.

Values
------
CEL type    Python value
---------   ------------------------------------------------------------
int         ``int`` (int64: results outside the range are overflow errors)
uint        :class:`UInt` (uint64)
double      ``float``
bool        ``bool``
string      ``str``
bytes       ``bytes``
null        ``None``
list        ``list`` (a ``tuple`` is read as a list too)
map         ``dict`` (keys: str, int, UInt, bool)
type        :class:`CelType`
duration    :class:`Duration` (construction, comparison, string)
timestamp   :class:`Timestamp` (construction, comparison, string)

Errors are :class:`CelError` exceptions. ``&&``, ``||`` and the
``all``/``exists`` macros absorb them as cel-spec requires: ``false &&
<error>`` is ``false`` in either order, ``true || <error>`` is ``true``.
The helpers taking already-evaluated operands (``and_values``,
``or_values``) accept a CelError instance in place of a value, so an
evaluator that catches errors itself (the VM) gets the same answers.
"""

import binascii
import math
import re

try:
    from flowc.runtime import nfa as _rx
except ImportError:  # copied next to the VM (MicroPython)
    import nfa as _rx

INT64_MIN = -9223372036854775808
INT64_MAX = 9223372036854775807
UINT64_MAX = 18446744073709551615
# The doubles just outside the int64 / uint64 ranges (2**63 and 2**64 are exact).
_D_INT64_MIN = -9223372036854775808.0
_D_INT64_MAX = 9223372036854775808.0
_D_UINT64_MAX = 18446744073709551616.0

NAN = float("nan")
INF = float("inf")


class CelError(Exception):
    """A CEL evaluation error (a value in cel-spec; raised here)."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __repr__(self):
        return "CelError(" + repr(self.message) + ")"


class UInt:
    """A CEL uint64. Hashes and compares equal to the int of the same value,
    so a map keyed by ``1`` is found by ``1u`` (cel-spec's numeric key
    equality); CEL's own rules are in :func:`eq` and :func:`compare`."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __hash__(self):
        return hash(self.v)

    def __eq__(self, other):
        if type(other) is UInt:
            return self.v == other.v
        if type(other) is int or type(other) is float:
            return self.v == other
        return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __repr__(self):
        return "UInt(" + str(self.v) + ")"


class CelType:
    """A CEL type value (what ``type(x)`` returns, and what ``int`` names)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return type(other) is CelType and other.name == self.name

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("type", self.name))

    def __repr__(self):
        return "CelType(" + self.name + ")"


class Duration:
    """A google.protobuf.Duration as whole nanoseconds."""

    __slots__ = ("nanos",)

    def __init__(self, nanos):
        self.nanos = nanos

    def __eq__(self, other):
        return type(other) is Duration and other.nanos == self.nanos

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("duration", self.nanos))

    def __repr__(self):
        return "Duration(" + str(self.nanos) + ")"


class Timestamp:
    """A google.protobuf.Timestamp as whole nanoseconds since the Unix epoch (UTC)."""

    __slots__ = ("nanos",)

    def __init__(self, nanos):
        self.nanos = nanos

    def __eq__(self, other):
        return type(other) is Timestamp and other.nanos == self.nanos

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("timestamp", self.nanos))

    def __repr__(self):
        return "Timestamp(" + str(self.nanos) + ")"


TYPE_NAMES = ("int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type",
              "google.protobuf.Duration", "google.protobuf.Timestamp")
TYPES = {}
for _n in TYPE_NAMES:
    TYPES[_n] = CelType(_n)
del _n


def no_overload(name="operation", *values):
    """The error for an operator or function applied to the wrong kinds."""
    if values:
        kinds = ", ".join(type_name(v) for v in values)
        return CelError("no such overload: " + name + "(" + kinds + ")")
    return CelError("no such overload: " + name)


def type_name(v):
    """The CEL type name of a value."""
    t = type(v)
    if v is None:
        return "null_type"
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is UInt:
        return "uint"
    if t is float:
        return "double"
    if t is str:
        return "string"
    if t is bytes:
        return "bytes"
    if t is list or t is tuple:
        return "list"
    if isinstance(v, dict):
        return "map"
    if t is CelType:
        return "type"
    if t is Duration:
        return "google.protobuf.Duration"
    if t is Timestamp:
        return "google.protobuf.Timestamp"
    return "unknown"


def _is_num(v):
    t = type(v)
    return t is int or t is float or t is UInt


def _int_result(v):
    if v < INT64_MIN or v > INT64_MAX:
        raise CelError("integer overflow")
    return v


def _uint_result(v):
    if v < 0 or v > UINT64_MAX:
        raise CelError("unsigned integer overflow")
    return UInt(v)


# --- constants --------------------------------------------------------------

def hexbytes(text):
    """A bytes constant from its hex form (how the IR stores bytes literals)."""
    return binascii.unhexlify(text)


def uint(v):
    """A uint constant."""
    return UInt(v)


# --- variables and selection -----------------------------------------------------

def var(env, name):
    """The value of variable ``name``; a type name when no variable has it."""
    try:
        return env[name]
    except KeyError:
        pass
    t = TYPES.get(name)
    if t is not None:
        return t
    raise CelError("undeclared reference to '" + name + "'")


def qvar(env, name, fields):
    """``name.fields[0].fields[1]...`` where ``name`` may be missing from
    ``env`` because the environment binds qualified names (cel-spec:
    ``a.b.c`` resolves to a variable named ``a.b.c``, else to field ``c`` of
    a variable ``a.b``, the longest name first). A variable ``name`` itself
    always wins, so the usual environments pay one lookup."""
    try:
        v = env[name]
        rest = 0
    except KeyError:
        v, rest = qualified(env, name, fields)
    for j in range(rest, len(fields)):
        v = select(v, fields[j])
    return v


def qualified(env, name, fields):
    """(value, number of ``fields`` it consumed) of the longest qualified
    name ``name.f1...fk`` bound in ``env``; else the plain ``var`` (or its error)."""
    for k in range(len(fields), 0, -1):
        qname = name + "." + ".".join(fields[:k])
        if qname in env:
            return env[qname], k
    return var(env, name), 0


def _map_find(m, key):
    """(found, value) for CEL map lookup: string keys directly; numbers by
    numeric value across int/uint/double; bools only as bools."""
    tk = type(key)
    if tk is str:
        if key in m:
            return True, m[key]
        return False, None
    if tk is bool:
        for k in m:
            if type(k) is bool and k == key:
                return True, m[k]
        return False, None
    if tk is int or tk is UInt or tk is float:
        for k in m:
            if type(k) is not bool and _is_num(k) and _num_cmp(k, key) == 0:
                return True, m[k]
        return False, None
    raise CelError("unsupported map key type: " + type_name(key))


def select(value, name):
    """``value.name``: a map field (a missing key is an error)."""
    if isinstance(value, dict):
        try:
            return value[name]
        except KeyError:
            raise CelError("no such key: " + name)
    raise CelError("no such field '" + name + "' on " + type_name(value))


def index(value, key):
    """``value[key]``: a list element or a map value."""
    t = type(value)
    if t is list or t is tuple:
        tk = type(key)
        if tk is int:
            i = key
        elif tk is UInt:
            i = key.v
        elif tk is float:
            if math.isnan(key) or math.isinf(key) or key != int(key):
                raise CelError("invalid_argument: list index " + repr(key) + " is not an integer")
            i = int(key)
        else:
            raise CelError("invalid_argument: no such overload: list index of type " + type_name(key))
        if i < 0 or i >= len(value):
            raise CelError("invalid_argument: index out of bounds: " + str(i))
        return value[i]
    if isinstance(value, dict):
        found, v = _map_find(value, key)
        if found:
            return v
        raise CelError("no such key: " + _show(key))
    raise no_overload("_[_]", value, key)


def has(value, name):
    """``has(value.name)``: whether the map has the key. The compiler only
    ever passes a field name; a program whose bytes say otherwise (the VM
    runs what verifies) gets CEL's error, not Python's."""
    if not isinstance(value, dict):
        raise no_overload("has", value)
    if type(name) is not str:
        raise no_overload("has", value, name)
    return name in value


def _show(v):
    if type(v) is str:
        return v
    return to_text(v)


# --- equality and ordering ---------------------------------------------------------

def _num_cmp(a, b):
    """-1, 0, 1 for numbers of any CEL kind, or None when a NaN is involved."""
    ta, tb = type(a), type(b)
    if ta is float:
        if tb is float:
            if math.isnan(a) or math.isnan(b):
                return None
            return (a > b) - (a < b)
        return _cmp_double_int(a, b.v if tb is UInt else b, tb is UInt)
    if tb is float:
        r = _cmp_double_int(b, a.v if ta is UInt else a, ta is UInt)
        return None if r is None else -r
    x = a.v if ta is UInt else a
    y = b.v if tb is UInt else b
    return (x > y) - (x < y)


def _cmp_double_int(d, i, unsigned):
    """Compare a double with an int or uint the way cel-go does: a double
    beyond the integer type's range is smaller or larger than every value
    of it; inside the range the integer converts to double."""
    if math.isnan(d):
        return None
    if unsigned:
        if d < 0:
            return -1
        if d > _D_UINT64_MAX:
            return 1
    else:
        if d < _D_INT64_MIN:
            return -1
        if d > _D_INT64_MAX:
            return 1
    fi = float(i)
    return (d > fi) - (d < fi)


def eq(a, b):
    """CEL ``==``."""
    ta = type(a)
    if ta is type(b) and (ta is str or ta is int):   # the common case first
        return a == b
    if a is None or b is None:
        return a is None and b is None
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if _is_num(a):
        if not _is_num(b):
            return False
        return _num_cmp(a, b) == 0
    if ta is str:
        return tb is str and a == b
    if ta is bytes:
        return tb is bytes and a == b
    if ta is list or ta is tuple:
        if not (tb is list or tb is tuple) or len(a) != len(b):
            return False
        for i in range(len(a)):
            if not eq(a[i], b[i]):
                return False
        return True
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for k in a:
            found, v = _map_find(b, k)
            if not found or not eq(a[k], v):
                return False
        return True
    return ta is tb and a == b


def ne(a, b):
    return not eq(a, b)


def compare(a, b, op="_<_"):
    """-1, 0 or 1; None when a NaN makes the values unordered; an error for
    kinds CEL does not order."""
    ta, tb = type(a), type(b)
    if ta is tb and (ta is int or ta is str):   # the common case first
        return (a > b) - (a < b)
    if ta is bool and tb is bool:
        return (a > b) - (a < b)
    if ta is not bool and tb is not bool and _is_num(a) and _is_num(b):
        return _num_cmp(a, b)
    if ta is str and tb is str:
        return (a > b) - (a < b)
    if ta is bytes and tb is bytes:
        return (a > b) - (a < b)
    if (ta is Duration and tb is Duration) or (ta is Timestamp and tb is Timestamp):
        return (a.nanos > b.nanos) - (a.nanos < b.nanos)
    raise no_overload(op, a, b)


def lt(a, b):
    c = compare(a, b, "_<_")
    return c is not None and c < 0


def le(a, b):
    c = compare(a, b, "_<=_")
    return c is not None and c <= 0


def gt(a, b):
    c = compare(a, b, "_>_")
    return c is not None and c > 0


def ge(a, b):
    c = compare(a, b, "_>=_")
    return c is not None and c >= 0


def in_(x, container):
    """``x in container``: list membership by ``==``, or map key presence."""
    t = type(container)
    if t is list or t is tuple:
        if _fuel is not None:
            # A scan, paid like the elements a comprehension visits: inside
            # one over the same list the work is quadratic.
            _fuel(len(container))
        for item in container:
            if eq(x, item):
                return True
        return False
    if isinstance(container, dict):
        tx = type(x)
        if not (tx is str or tx is bool or _is_num(x)):
            return False
        return _map_find(container, x)[0]
    raise no_overload("@in", x, container)


# --- arithmetic -------------------------------------------------------------------

def add(a, b):
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return _int_result(a + b)
    if ta is float and tb is float:
        return a + b
    if ta is UInt and tb is UInt:
        return _uint_result(a.v + b.v)
    if ta is str and tb is str:
        return a + b
    if ta is bytes and tb is bytes:
        return a + b
    if (ta is list or ta is tuple) and (tb is list or tb is tuple):
        return list(a) + list(b)
    if ta is Duration and tb is Duration:
        return _duration(a.nanos + b.nanos)
    if ta is Timestamp and tb is Duration:
        return _timestamp(a.nanos + b.nanos)
    if ta is Duration and tb is Timestamp:
        return _timestamp(a.nanos + b.nanos)
    raise no_overload("_+_", a, b)


def sub(a, b):
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return _int_result(a - b)
    if ta is float and tb is float:
        return a - b
    if ta is UInt and tb is UInt:
        return _uint_result(a.v - b.v)
    if ta is Duration and tb is Duration:
        return _duration(a.nanos - b.nanos)
    if ta is Timestamp and tb is Timestamp:
        return _duration(a.nanos - b.nanos)
    if ta is Timestamp and tb is Duration:
        return _timestamp(a.nanos - b.nanos)
    raise no_overload("_-_", a, b)


def mul(a, b):
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return _int_result(a * b)
    if ta is float and tb is float:
        return a * b
    if ta is UInt and tb is UInt:
        return _uint_result(a.v * b.v)
    raise no_overload("_*_", a, b)


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def div(a, b):
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if b == 0:
            raise CelError("division by zero")
        return _int_result(_trunc_div(a, b))
    if ta is UInt and tb is UInt:
        if b.v == 0:
            raise CelError("division by zero")
        return UInt(a.v // b.v)
    if ta is float and tb is float:
        if b == 0.0:
            if math.isnan(a) or a == 0.0:
                return NAN
            negative = (a < 0) != (math.copysign(1.0, b) < 0)
            return -INF if negative else INF
        return a / b
    raise no_overload("_/_", a, b)


def mod(a, b):
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if b == 0:
            raise CelError("modulus by zero")
        if a == INT64_MIN and b == -1:
            raise CelError("integer overflow")
        return a - b * _trunc_div(a, b)
    if ta is UInt and tb is UInt:
        if b.v == 0:
            raise CelError("modulus by zero")
        return UInt(a.v % b.v)
    raise no_overload("_%_", a, b)


def neg(a):
    t = type(a)
    if t is int:
        return _int_result(-a)
    if t is float:
        return -a
    if t is Duration:
        return Duration(-a.nanos)
    raise no_overload("-_", a)


def not_(a):
    if type(a) is bool:
        return not a
    raise no_overload("!_", a)


# --- logic: error-absorbing && and ||, the ternary test ------------------------------

def and_values(a, b):
    """``a && b`` over evaluated operands, either of which may be a CelError."""
    if a is False or b is False:
        return False
    if a is True and b is True:
        return True
    if isinstance(a, CelError):
        raise a
    if isinstance(b, CelError):
        raise b
    raise no_overload("_&&_", a, b)


def or_values(a, b):
    """``a || b`` over evaluated operands, either of which may be a CelError."""
    if a is True or b is True:
        return True
    if a is False and b is False:
        return False
    if isinstance(a, CelError):
        raise a
    if isinstance(b, CelError):
        raise b
    raise no_overload("_||_", a, b)


def attempt(thunk):
    """The value of ``thunk()``, or the CelError it raised."""
    try:
        return thunk()
    except CelError as e:
        return e


def and_(left, right):
    """Lazy ``&&``: ``left`` and ``right`` are thunks; ``right`` runs unless
    ``left`` is false."""
    a = attempt(left)
    if a is False:
        return False
    return and_values(a, attempt(right))


def or_(left, right):
    """Lazy ``||``: ``right`` runs unless ``left`` is true."""
    a = attempt(left)
    if a is True:
        return True
    return or_values(a, attempt(right))


def test(value):
    """A condition (ternary test, guard, filter): a bool, else an error."""
    if value is True or value is False:
        return value
    raise CelError("no matching overload: a condition must be a bool, not " + type_name(value))


# --- functions ------------------------------------------------------------------------

def size(v):
    t = type(v)
    if t is str or t is bytes or t is list or t is tuple or isinstance(v, dict):
        return len(v)
    raise no_overload("size", v)


def contains(s, sub_):
    if type(s) is str and type(sub_) is str:
        return sub_ in s
    raise no_overload("contains", s, sub_)


def starts_with(s, prefix):
    if type(s) is str and type(prefix) is str:
        return s.startswith(prefix)
    raise no_overload("startsWith", s, prefix)


def ends_with(s, suffix):
    if type(s) is str and type(suffix) is str:
        return s.endswith(suffix)
    raise no_overload("endsWith", s, suffix)


def matches(s, pattern):
    """RE2 ``matches``: the pattern matches somewhere in the string, in time
    linear in the string (RE2 where installed, else nfa's automaton;
    never Python's backtracking ``re``)."""
    if type(s) is not str or type(pattern) is not str:
        raise no_overload("matches", s, pattern)
    try:
        return _rx.search(pattern, s)
    except _rx.RegexError as e:
        raise CelError("invalid regular expression: " + str(e))


def unbound(name, *args):
    raise CelError("unbound function: " + name)


# --- conversions -----------------------------------------------------------------------

# Python's `$` also matches before a final line break ("12\n"), which CEL
# rejects; MicroPython's re has no `\Z`, so _whole() checks the end itself.
_INT_TEXT = re.compile(r"^[+-]?[0-9]+$")
_FLOAT_TEXT = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")


def _whole(pattern, text):
    return pattern.match(text) is not None and not text.endswith("\n")


def to_int(v):
    t = type(v)
    if t is int:
        return v
    if t is UInt:
        if v.v > INT64_MAX:
            raise CelError("range error: uint out of int range")
        return v.v
    if t is float:
        # cel-spec: (minInt, maxInt), both ends excluded, so -2**63 as a double fails too.
        if math.isnan(v) or not (_D_INT64_MIN < v < _D_INT64_MAX):
            raise CelError("range error: double out of int range")
        return int(v)
    if t is str:
        if not _whole(_INT_TEXT, v):
            raise CelError("cannot convert " + repr(v) + " to int")
        return _int_result(int(v))
    if t is Timestamp:
        return _floor_div(v.nanos, 1000000000)
    if t is bool:
        raise no_overload("int", v)
    raise no_overload("int", v)


def _floor_div(a, b):
    return a // b


def to_uint(v):
    t = type(v)
    if t is UInt:
        return v
    if t is int:
        if v < 0:
            raise CelError("range error: int out of uint range")
        return UInt(v)
    if t is float:
        if math.isnan(v) or not (-1.0 < v < _D_UINT64_MAX):
            raise CelError("range error: double out of uint range")
        return UInt(int(v))
    if t is str:
        if not _whole(_INT_TEXT, v) or v[0] == "-":
            raise CelError("cannot convert " + repr(v) + " to uint")
        return _uint_result(int(v))
    raise no_overload("uint", v)


def to_double(v):
    t = type(v)
    if t is float:
        return v
    if t is int:
        return float(v)
    if t is UInt:
        return float(v.v)
    if t is str:
        low = v.lower()
        if low in ("nan", "+nan", "-nan"):
            return NAN
        if low in ("inf", "+inf", "infinity", "+infinity"):
            return INF
        if low in ("-inf", "-infinity"):
            return -INF
        if not _whole(_FLOAT_TEXT, v):
            raise CelError("cannot convert " + repr(v) + " to double")
        return float(v)
    raise no_overload("double", v)


def to_string(v):
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is UInt:
        return str(v.v)
    if t is float:
        return format_double(v)
    if t is bytes:
        try:
            return v.decode("utf-8")
        except UnicodeError:
            raise CelError("invalid UTF-8 in bytes to string conversion")
    if t is Duration:
        return _format_duration(v.nanos)
    if t is Timestamp:
        return _format_timestamp(v.nanos)
    if t is CelType:
        return v.name
    raise no_overload("string", v)


def to_bytes(v):
    t = type(v)
    if t is bytes:
        return v
    if t is str:
        return v.encode("utf-8")
    raise no_overload("bytes", v)


_TRUE_TEXT = ("1", "t", "T", "true", "TRUE", "True")
_FALSE_TEXT = ("0", "f", "F", "false", "FALSE", "False")


def to_bool(v):
    t = type(v)
    if t is bool:
        return v
    if t is str:
        if v in _TRUE_TEXT:
            return True
        if v in _FALSE_TEXT:
            return False
        raise CelError("cannot convert " + repr(v) + " to bool")
    raise no_overload("bool", v)


def dyn(v):
    return v


def type_of(v):
    name = type_name(v)
    t = TYPES.get(name)
    if t is None:
        raise CelError("unknown type")
    return t


_DURATION_UNITS = (("h", 3600000000000), ("ms", 1000000), ("us", 1000), ("\u00b5s", 1000),
                   ("ns", 1), ("m", 60000000000), ("s", 1000000000))
_DURATION_PART = re.compile(r"^([0-9]+(\.[0-9]*)?|\.[0-9]+)(h|ms|us|\u00b5s|ns|m|s)")


def duration(v):
    """A Duration from Go-style text (``1h2m3.5s``, ``-1.5s``, ``0``)."""
    t = type(v)
    if t is Duration:
        return v
    if t is not str:
        raise no_overload("duration", v)
    text = v
    sign = 1
    if text[:1] in ("+", "-"):
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if text == "0":
        return Duration(0)
    if not text:
        raise CelError("invalid duration " + repr(v))
    total = 0
    while text:
        m = _DURATION_PART.match(text)
        if m is None:
            raise CelError("invalid duration " + repr(v))
        number, unit = m.group(1), m.group(3)
        scale = 1
        for name, ns in _DURATION_UNITS:
            if name == unit:
                scale = ns
        if "." in number:
            whole, frac = number.split(".")
            total += int(whole or "0") * scale
            if frac:
                total += int(frac) * scale // (10 ** len(frac))
        else:
            total += int(number) * scale
        text = text[len(m.group(0)):]
    return _duration(total * sign)


def _duration(nanos):
    """A Duration, or a range error: cel-spec limits durations to one int64
    of nanoseconds (about 292 years)."""
    if nanos < INT64_MIN or nanos > INT64_MAX:
        raise CelError("duration out of range")
    return Duration(nanos)


def _timestamp(nanos):
    """A Timestamp, or a range error outside 0001-01-01 .. 9999-12-31T23:59:59.999999999Z."""
    if nanos < _TS_MIN * 1000000000 or nanos >= (_TS_MAX + 1) * 1000000000:
        raise CelError("timestamp out of range")
    return Timestamp(nanos)


def _format_duration(nanos):
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    secs, frac = nanos // 1000000000, nanos % 1000000000
    if frac == 0:
        return sign + str(secs) + "s"
    digits = str(1000000000 + frac)[1:].rstrip("0")
    return sign + str(secs) + "." + digits + "s"


def _days_from_civil(y, m, d):
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z):
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


_RFC3339 = re.compile(r"^([0-9][0-9][0-9][0-9])-([0-9][0-9])-([0-9][0-9])[Tt]([0-9][0-9]):([0-9][0-9]):"
                      r"([0-9][0-9])(\.[0-9]+)?([Zz]|[+-][0-9][0-9]:[0-9][0-9])$")
_TS_MIN = -62135596800  # 0001-01-01T00:00:00Z
_TS_MAX = 253402300799  # 9999-12-31T23:59:59Z


def timestamp(v):
    """A Timestamp from RFC 3339 text or from seconds since the epoch."""
    t = type(v)
    if t is Timestamp:
        return v
    if t is int:
        secs = v
        nanos = v * 1000000000
    elif t is str:
        m = _RFC3339.match(v)
        if m is None:
            raise CelError("invalid timestamp " + repr(v))
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
        hh, mm, ss = int(m.group(4)), int(m.group(5)), int(m.group(6))
        secs = _days_from_civil(y, mo, d) * 86400 + hh * 3600 + mm * 60 + ss
        zone = m.group(8)
        if zone not in ("Z", "z"):
            offset = int(zone[1:3]) * 3600 + int(zone[4:6]) * 60
            secs -= offset if zone[0] == "+" else -offset
        frac = m.group(7)
        nanos = secs * 1000000000
        if frac:
            digits = (frac[1:] + "000000000")[:9]
            nanos += int(digits)
    else:
        raise no_overload("timestamp", v)
    if secs < _TS_MIN or secs > _TS_MAX:
        raise CelError("timestamp out of range")
    return Timestamp(nanos)


def _format_timestamp(nanos):
    secs, frac = nanos // 1000000000, nanos % 1000000000
    days, rem = secs // 86400, secs % 86400
    y, m, d = _civil_from_days(days)
    text = (_pad(y, 4) + "-" + _pad(m, 2) + "-" + _pad(d, 2) + "T" + _pad(rem // 3600, 2) + ":"
            + _pad(rem % 3600 // 60, 2) + ":" + _pad(rem % 60, 2))
    if frac:
        text += "." + str(1000000000 + frac)[1:].rstrip("0")
    return text + "Z"


# --- timestamp and duration accessors (getFullYear() ... getMilliseconds()) --------------

_FIXED_TZ = re.compile(r"^([+-]?)([0-9][0-9]):([0-9][0-9])$")


def _tz_offset(tz, secs):
    """Seconds east of UTC of time zone ``tz`` at ``secs`` since the epoch:
    UTC, a fixed offset (``+11:00``, ``-02:30``, ``02:00``), or an IANA
    name, which needs the host's time-zone database (``zoneinfo``; there is
    none on MicroPython, where a name is an error)."""
    if type(tz) is not str:
        raise no_overload("time zone", tz)
    m = _FIXED_TZ.match(tz)
    if m is not None:
        offset = int(m.group(2)) * 3600 + int(m.group(3)) * 60
        return -offset if m.group(1) == "-" else offset
    if tz == "UTC":
        return 0
    try:
        import datetime
        import zoneinfo
    except ImportError:
        raise CelError("unknown time zone " + repr(tz) + " (no time-zone database)") from None
    try:
        zone = zoneinfo.ZoneInfo(tz)
    except (KeyError, ValueError, OSError):
        raise CelError("unknown time zone " + repr(tz)) from None
    return int(datetime.datetime.fromtimestamp(secs, tz=zone).utcoffset().total_seconds())


def _local(v, tz, name):
    """(days since the epoch, seconds of the day) of timestamp ``v`` in ``tz``."""
    if type(v) is not Timestamp:
        raise no_overload(name, v)
    secs = v.nanos // 1000000000
    if tz is not None:
        secs += _tz_offset(tz, secs)
    return secs // 86400, secs % 86400


def _duration_part(v, tz, name, unit):
    if type(v) is not Duration or tz is not None:
        raise no_overload(name, v)
    return _trunc_div(v.nanos, unit)


def get_full_year(v, tz=None):
    return _civil_from_days(_local(v, tz, "getFullYear")[0])[0]


def get_month(v, tz=None):
    """The month, 0 for January."""
    return _civil_from_days(_local(v, tz, "getMonth")[0])[1] - 1


def get_date(v, tz=None):
    """The day of the month, from 1."""
    return _civil_from_days(_local(v, tz, "getDate")[0])[2]


def get_day_of_month(v, tz=None):
    """The day of the month, from 0."""
    return _civil_from_days(_local(v, tz, "getDayOfMonth")[0])[2] - 1


def get_day_of_week(v, tz=None):
    """The day of the week, 0 for Sunday (1970-01-01 was a Thursday)."""
    return (_local(v, tz, "getDayOfWeek")[0] + 4) % 7


def get_day_of_year(v, tz=None):
    """The day of the year, from 0."""
    days = _local(v, tz, "getDayOfYear")[0]
    return days - _days_from_civil(_civil_from_days(days)[0], 1, 1)


def get_hours(v, tz=None):
    if type(v) is Duration:
        return _duration_part(v, tz, "getHours", 3600000000000)
    return _local(v, tz, "getHours")[1] // 3600


def get_minutes(v, tz=None):
    if type(v) is Duration:
        return _duration_part(v, tz, "getMinutes", 60000000000)
    return _local(v, tz, "getMinutes")[1] % 3600 // 60


def get_seconds(v, tz=None):
    if type(v) is Duration:
        return _duration_part(v, tz, "getSeconds", 1000000000)
    return _local(v, tz, "getSeconds")[1] % 60


def get_milliseconds(v, tz=None):
    """The milliseconds within the second (of a duration: its whole
    milliseconds modulo 1000, signed)."""
    if type(v) is Duration:
        ms = _duration_part(v, tz, "getMilliseconds", 1000000)
        return ms - 1000 * _trunc_div(ms, 1000)
    _local(v, tz, "getMilliseconds")  # checks the type and the zone
    return v.nanos % 1000000000 // 1000000


def _pad(n, width):
    text = str(n)
    return "0" * (width - len(text)) + text


def format_double(d):
    """A double as cel-go's string() writes it (Go's ``%g``: the shortest
    digits that round-trip, in exponent form from 1e+06 and below 1e-04):
    ``1``, ``1.5``, ``100000``, ``1.234567e+06``, ``1e-05``."""
    if math.isnan(d):
        return "NaN"
    if d == INF:
        return "+Inf"
    if d == -INF:
        return "-Inf"
    text = repr(d)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    if "e" in text or "E" in text:
        mant, exp = text.lower().split("e")
        exp = int(exp)
    else:
        mant, exp = text, 0
    if "." in mant:
        whole, frac = mant.split(".")
    else:
        whole, frac = mant, ""
    digits = (whole + frac).lstrip("0")
    point = len(whole) + exp  # position of the decimal point within whole+frac
    lead = len(whole + frac) - len((whole + frac).lstrip("0"))
    point -= lead
    digits = digits.rstrip("0")
    if not digits:
        return sign + "0"
    x = point - 1  # decimal exponent of the first digit
    if x < -4 or x >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return sign + body + ("e-" if x < 0 else "e+") + _pad(abs(x), 2)
    if point <= 0:
        return sign + "0." + "0" * (-point) + digits
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return sign + digits[:point] + "." + digits[point:]


# --- macros ----------------------------------------------------------------------------

# Fuel: a comprehension charges the elements it will visit before it visits
# them, so nested macros cannot multiply a run's work beyond its iteration
# budget (``[..].map(a, [..].map(b, ...))``). ``_fuel`` is the charging
# function of the run in progress (dataflow_run installs it), None outside a run.
_fuel = None


def set_fuel(charge):
    """Make ``charge(n)`` pay for the next comprehensions (None: free);
    returns the charge it replaces, to be put back afterwards."""
    global _fuel
    previous = _fuel
    _fuel = charge
    return previous


def _range(target, name):
    t = type(target)
    if t is list or t is tuple:
        if _fuel is not None:
            _fuel(len(target))
        return target
    if isinstance(target, dict):
        if _fuel is not None:
            _fuel(len(target))
        return list(target.keys())
    raise no_overload(name, target)


def _all(items, pred):
    """false wins over errors; else the first error; else true."""
    err = None
    for x in items:
        try:
            r = pred(x)
        except CelError as e:
            if err is None:
                err = e
            continue
        if r is False:
            return False
        if r is not True and err is None:
            err = no_overload("_&&_", r)
    if err is not None:
        raise err
    return True


def _exists(items, pred):
    """true wins over errors; else the first error; else false."""
    err = None
    for x in items:
        try:
            r = pred(x)
        except CelError as e:
            if err is None:
                err = e
            continue
        if r is True:
            return True
        if r is not False and err is None:
            err = no_overload("_||_", r)
    if err is not None:
        raise err
    return False


def _exists_one(items, pred):
    """exactly one item satisfies; errors propagate."""
    count = 0
    for x in items:
        if test(pred(x)):
            count += 1
    return count == 1


def all_(target, pred):
    """``target.all(x, pred)``."""
    return _all(_range(target, "all"), pred)


def exists(target, pred):
    """``target.exists(x, pred)``."""
    return _exists(_range(target, "exists"), pred)


def exists_one(target, pred):
    """``target.exists_one(x, pred)``."""
    return _exists_one(_range(target, "exists_one"), pred)


def map_(target, fn, pred=None):
    """``target.map(x, fn)`` or ``target.map(x, pred, fn)``."""
    out = []
    for x in _range(target, "map"):
        if pred is not None and not test(pred(x)):
            continue
        out.append(fn(x))
    return out


def map3(target, pred, fn):
    return map_(target, fn, pred)


def filter_(target, pred):
    out = []
    for x in _range(target, "filter"):
        if test(pred(x)):
            out.append(x)
    return out


# --- extension libraries (cel-go ext: strings, math, encoders, bindings) -------------------
# Functions of cel-spec's *_ext conformance files. Strings index by code point.

def _need(name, *pairs):
    """Raise no_overload unless every (value, type) pair matches."""
    for v, t in pairs:
        if type(v) is not t:
            raise no_overload(name, *[p[0] for p in pairs])


def _index_error(i):
    return CelError("index out of range: " + str(i))


def char_at(s, i):
    _need("charAt", (s, str), (i, int))
    if i < 0 or i > len(s):
        raise _index_error(i)
    return s[i:i + 1]


def index_of(s, sub, offset=0):
    _need("indexOf", (s, str), (sub, str), (offset, int))
    if offset < 0 or offset > len(s):
        raise _index_error(offset)
    return s.find(sub, offset)


def last_index_of(s, sub, offset=None):
    if offset is None:
        _need("lastIndexOf", (s, str), (sub, str))
        return s.rfind(sub)
    _need("lastIndexOf", (s, str), (sub, str), (offset, int))
    if offset < 0 or offset > len(s):
        raise _index_error(offset)
    return s.rfind(sub, 0, offset + len(sub))


def _ascii_case(s, name, low, high, shift):
    _need(name, (s, str))
    out = []
    for ch in s:
        out.append(chr(ord(ch) + shift) if low <= ch <= high else ch)
    return "".join(out)


def lower_ascii(s):
    return _ascii_case(s, "lowerAscii", "A", "Z", 32)


def upper_ascii(s):
    return _ascii_case(s, "upperAscii", "a", "z", -32)


def replace(s, old, new, n=-1):
    _need("replace", (s, str), (old, str), (new, str), (n, int))
    if n < 0:
        return s.replace(old, new)
    return s.replace(old, new, n)


def split(s, sep, n=-1):
    _need("split", (s, str), (sep, str), (n, int))
    if n == 0:
        return []
    if sep == "":  # every code point, the last piece holding the rest
        parts = list(s)
        if 0 < n < len(parts):
            parts = parts[:n - 1] + ["".join(parts[n - 1:])]
        return parts
    return s.split(sep) if n < 0 else s.split(sep, n - 1)


def substring(s, start, end=None):
    if end is None:
        _need("substring", (s, str), (start, int))
        end = len(s)
    else:
        _need("substring", (s, str), (start, int), (end, int))
    if start < 0 or start > len(s):
        raise _index_error(start)
    if end < 0 or end > len(s):
        raise _index_error(end)
    if end < start:
        raise CelError("invalid substring range. start: " + str(start) + ", end: " + str(end))
    return s[start:end]


# Go's unicode.IsSpace: what trim() removes (not U+180E or the zero-width spaces).
_SPACE = "\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008" \
         "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def trim(s):
    _need("trim", (s, str))
    return s.strip(_SPACE)


def join(items, sep=""):
    if type(items) is not list and type(items) is not tuple or type(sep) is not str:
        raise no_overload("join", items, sep)
    for x in items:
        if type(x) is not str:
            raise no_overload("join", x)
    return sep.join(items)


def reverse(s):
    _need("reverse", (s, str))
    return "".join(reversed(list(s)))


_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                  "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def quote(s):
    """``strings.quote(s)``: a double-quoted CEL string literal of ``s``."""
    _need("strings.quote", (s, str))
    out = ['"']
    for ch in s:
        esc = _QUOTE_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append("\\x" + "0123456789abcdef"[ord(ch) >> 4] + "0123456789abcdef"[ord(ch) & 15])
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _format_special(v):
    """NaN and the infinities as format() writes them, else None."""
    if type(v) is float and (math.isnan(v) or math.isinf(v)):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    return None


def _format_s(v):
    t = type(v)
    if t is list or t is tuple:
        return "[" + ", ".join([_format_s(x) for x in v]) + "]"
    if isinstance(v, dict):
        items = sorted([(_format_s(k), _format_s(v[k])) for k in v])
        return "{" + ", ".join([k + ": " + x for k, x in items]) + "}"
    if v is None:
        return "null"
    if t is float:
        return _format_special(v) or format_double(v)
    if t in (str, bool, int, UInt, bytes, Duration, Timestamp, CelType):
        return to_string(v)
    raise CelError("error during formatting: string clause can only be used on strings, bools, bytes, "
                   "ints, doubles, maps, lists, types, durations, and timestamps, was given "
                   + type_name(v))


def _format_clause(verb, precision, v):
    t = type(v)
    special = _format_special(v)
    if verb == "s":
        return _format_s(v)
    if verb == "d":
        if special is not None:
            return special
        if t is int or t is UInt:
            return to_string(v)
        raise CelError("error during formatting: decimal clause can only be used on integers, was given "
                       + type_name(v))
    if verb == "f" or verb == "e":
        if special is not None:
            return special
        if t is int or t is UInt or t is float:
            d = float(v.v) if t is UInt else float(v)
            return ("%." + str(6 if precision is None else precision) + verb) % d
        what = "fixed-point" if verb == "f" else "scientific"
        raise CelError("error during formatting: " + what + " clause can only be used on doubles, was "
                       "given " + type_name(v))
    if verb == "b":
        if t is bool:
            return "1" if v else "0"
        if t is int or t is UInt:
            n = v.v if t is UInt else v
            return ("-" if n < 0 else "") + _digits(abs(n), 2)
        raise CelError("error during formatting: only integers and bools can be formatted as binary, "
                       "was given " + type_name(v))
    if verb == "o":
        if t is int or t is UInt:
            n = v.v if t is UInt else v
            return ("-" if n < 0 else "") + _digits(abs(n), 8)
        raise CelError("error during formatting: octal clause can only be used on integers, was given "
                       + type_name(v))
    # x / X
    if t is int or t is UInt:
        n = v.v if t is UInt else v
        text = ("-" if n < 0 else "") + _digits(abs(n), 16)
    elif t is str or t is bytes:
        data = v.encode("utf-8") if t is str else v
        text = binascii.hexlify(data).decode()
    else:
        raise CelError("error during formatting: only integers, byte buffers, and strings can be "
                       "formatted as hex, was given " + type_name(v))
    return text.upper() if verb == "X" else text


def _digits(n, base):
    if n == 0:
        return "0"
    out = []
    while n:
        out.append("0123456789abcdef"[n % base])
        n //= base
    out.reverse()
    return "".join(out)


def format_(s, args):
    """``s.format(list)``: cel-go's %s %d %f %e %b %o %x %X (``%.3f``: a
    precision) and ``%%``."""
    if type(s) is not str or (type(args) is not list and type(args) is not tuple):
        raise no_overload("format", s, args)
    out = []
    i = 0
    used = 0
    n = len(s)
    while i < n:
        ch = s[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        i += 1
        if i < n and s[i] == "%":
            out.append("%")
            i += 1
            continue
        precision = None
        if i < n and s[i] == ".":
            j = i + 1
            while j < n and "0" <= s[j] <= "9":
                j += 1
            precision = int(s[i + 1:j] or "0")
            i = j
        verb = s[i] if i < n else ""
        if verb == "" or verb not in "sdfeboxX":
            raise CelError("could not parse formatting clause: unrecognized formatting clause \""
                           + verb + "\"")
        i += 1
        if used >= len(args):
            raise CelError("index " + str(used) + " out of range")
        out.append(_format_clause(verb, precision, args[used]))
        used += 1
    return "".join(out)


def base64_encode(b):
    _need("base64.encode", (b, bytes))
    return binascii.b2a_base64(b).decode().rstrip("\n")


def base64_decode(s):
    _need("base64.decode", (s, str))
    text = s + "=" * (-len(s) % 4)  # padding is optional
    try:
        return bytes(binascii.a2b_base64(text.encode()))
    except ValueError:  # binascii.Error is one (and MicroPython has no binascii.Error)
        raise CelError("invalid base64 text") from None


def _extreme(name, args, want):
    values = args
    if len(args) == 1 and (type(args[0]) is list or type(args[0]) is tuple):
        values = args[0]
    if not values:
        raise CelError(name + "(): no values")
    best = None
    for v in values:
        if type(v) is bool or not _is_num(v):
            raise no_overload(name, v)
        if best is None or _num_cmp(v, best) == want:
            best = v
    return best


def math_greatest(*args):
    return _extreme("math.greatest", args, 1)


def math_least(*args):
    return _extreme("math.least", args, -1)


def _double_only(name, v):
    if type(v) is not float:
        raise no_overload(name, v)
    return v


def _integral(name, v, fn):
    d = _double_only(name, v)
    if math.isnan(d) or math.isinf(d):
        return d
    return float(fn(d))


def math_ceil(v):
    return _integral("math.ceil", v, math.ceil)


def math_floor(v):
    return _integral("math.floor", v, math.floor)


def math_trunc(v):
    return _integral("math.trunc", v, math.trunc)


def math_round(v):
    """Half away from zero."""
    return _integral("math.round", v, lambda d: math.floor(d + 0.5) if d >= 0 else -math.floor(-d + 0.5))


def math_abs(v):
    t = type(v)
    if t is int:
        return _int_result(-v) if v < 0 else v
    if t is UInt:
        return v
    if t is float:
        return abs(v)
    raise no_overload("math.abs", v)


def math_sign(v):
    t = type(v)
    if t is int:
        return (v > 0) - (v < 0)
    if t is UInt:
        return UInt(1 if v.v else 0)
    if t is float:
        if math.isnan(v):
            return v
        return 1.0 if v > 0 else (-1.0 if v < 0 else 0.0)
    raise no_overload("math.sign", v)


def math_is_nan(v):
    return math.isnan(_double_only("math.isNaN", v))


def math_is_inf(v):
    return math.isinf(_double_only("math.isInf", v))


def math_is_finite(v):
    d = _double_only("math.isFinite", v)
    return not (math.isnan(d) or math.isinf(d))


_MASK64 = 0xFFFFFFFFFFFFFFFF


def _signed(n):
    n &= _MASK64
    return n - (1 << 64) if n > INT64_MAX else n


def _bits(name, a, b, op):
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return _signed(op(a, b))
    if ta is UInt and tb is UInt:
        return UInt(op(a.v, b.v) & _MASK64)
    raise no_overload(name, a, b)


def math_bit_and(a, b):
    return _bits("math.bitAnd", a, b, lambda x, y: x & y)


def math_bit_or(a, b):
    return _bits("math.bitOr", a, b, lambda x, y: x | y)


def math_bit_xor(a, b):
    return _bits("math.bitXor", a, b, lambda x, y: x ^ y)


def math_bit_not(a):
    if type(a) is int:
        return ~a
    if type(a) is UInt:
        return UInt(~a.v & _MASK64)
    raise no_overload("math.bitNot", a)


def _shift(name, a, n, left):
    ta = type(a)
    if (ta is not int and ta is not UInt) or type(n) is not int:
        raise no_overload(name, a, n)
    if n < 0:
        raise CelError(name + "(): negative offset " + str(n))
    bits = (a.v if ta is UInt else a) & _MASK64
    bits = 0 if n >= 64 else ((bits << n) & _MASK64 if left else bits >> n)  # a logical shift
    return UInt(bits) if ta is UInt else _signed(bits)


def math_bit_shift_left(a, n):
    return _shift("math.bitShiftLeft", a, n, True)


def math_bit_shift_right(a, n):
    return _shift("math.bitShiftRight", a, n, False)


def bind(value, body):
    """``cel.bind(x, value, body)``: ``body`` with ``x`` bound to ``value``."""
    return body(value)


# IR key -> helper, for the extension functions (strict: every argument evaluated first).
EXT_DISPATCH = {
    "cel.charAt": char_at, "cel.indexOf": index_of, "cel.lastIndexOf": last_index_of,
    "cel.lowerAscii": lower_ascii, "cel.upperAscii": upper_ascii, "cel.replace": replace,
    "cel.split": split, "cel.substring": substring, "cel.trim": trim, "cel.join": join,
    "cel.reverse": reverse, "cel.format": format_, "cel.strings.quote": quote,
    "cel.base64.encode": base64_encode, "cel.base64.decode": base64_decode,
    "cel.math.greatest": math_greatest, "cel.math.least": math_least, "cel.math.ceil": math_ceil,
    "cel.math.floor": math_floor, "cel.math.round": math_round, "cel.math.trunc": math_trunc,
    "cel.math.abs": math_abs, "cel.math.sign": math_sign, "cel.math.isNaN": math_is_nan,
    "cel.math.isInf": math_is_inf, "cel.math.isFinite": math_is_finite,
    "cel.math.bitAnd": math_bit_and, "cel.math.bitOr": math_bit_or, "cel.math.bitXor": math_bit_xor,
    "cel.math.bitNot": math_bit_not, "cel.math.bitShiftLeft": math_bit_shift_left,
    "cel.math.bitShiftRight": math_bit_shift_right,
}


# --- two-variable comprehensions (cel-spec macros2) -------------------------------------
# The body takes two arguments: (index, value) of a list, (key, value) of a map.

def _pairs(target, name):
    t = type(target)
    if _fuel is not None and (t is list or t is tuple or isinstance(target, dict)):
        _fuel(len(target))
    if t is list or t is tuple:
        return [(i, target[i]) for i in range(len(target))]
    if isinstance(target, dict):
        return [(k, target[k]) for k in target]
    raise no_overload(name, target)


def _spread(pred):
    """A body of two variables, called with one (index or key, value) pair."""
    return lambda pair: pred(pair[0], pair[1])


def all2(target, pred):
    """``target.all(k, v, pred)``: as ``all``, over (index or key, value)."""
    return _all(_pairs(target, "all"), _spread(pred))


def exists2(target, pred):
    """``target.exists(k, v, pred)``: as ``exists``, over (index or key, value)."""
    return _exists(_pairs(target, "exists"), _spread(pred))


def exists_one2(target, pred):
    """``target.existsOne(k, v, pred)``: exactly one pair satisfies; errors propagate."""
    return _exists_one(_pairs(target, "existsOne"), _spread(pred))


def transform_list(target, fn, pred=None):
    """``target.transformList(k, v, [pred,] fn)``: the list of ``fn`` over the
    pairs that pass ``pred``."""
    out = []
    for k, v in _pairs(target, "transformList"):
        if pred is not None and not test(pred(k, v)):
            continue
        out.append(fn(k, v))
    return out


def transform_map(target, fn, pred=None):
    """``target.transformMap(k, v, [pred,] fn)``: the map from each passing
    index or key to ``fn`` of its pair."""
    out = {}
    for k, v in _pairs(target, "transformMap"):
        if pred is not None and not test(pred(k, v)):
            continue
        out[k] = fn(k, v)  # the keys of one list or map: no bool can meet an equal number
    return out


def transform_map_entry(target, fn, pred=None):
    """``target.transformMapEntry(k, v, [pred,] fn)``: the union of the maps
    ``fn`` returns for the passing pairs; a key given twice is an error."""
    out = {}
    for k, v in _pairs(target, "transformMapEntry"):
        if pred is not None and not test(pred(k, v)):
            continue
        entry = fn(k, v)
        if not isinstance(entry, dict):
            raise no_overload("transformMapEntry", entry)
        for ek in entry:
            if _map_find(out, ek)[0]:
                raise CelError("insert failed: key " + _show(ek) + " already exists")
            _no_bool_clash(out, ek)
            out[ek] = entry[ek]
    return out


# --- building values ----------------------------------------------------------------------

def make_map(pairs):
    """A map literal from (key, value) pairs; keys must be int, uint, bool or
    string, and unique."""
    out = {}
    for k, v in pairs:
        tk = type(k)
        if not (tk is str or tk is int or tk is UInt or tk is bool):
            raise CelError("unsupported map key type: " + type_name(k))
        if (k in out) if tk is str else _map_find(out, k)[0]:
            raise CelError("duplicate map key: " + _show(k))
        _no_bool_clash(out, k)
        out[k] = v
    return out


def _no_bool_clash(out, k):
    """A map is a dict, where true and 1 (false and 0) are one key: a map that
    would need both is an error rather than a map that lost an entry."""
    if type(k) is not str and k in out:
        raise CelError("a map cannot hold both " + _show(k) + " and an equal bool or number as keys")


# --- templates (instruction `{{ path }}`) ------------------------------------------------

def default(thunk, fallback):
    """``{{ path | default }}``: the path's value, or ``fallback`` when the
    path does not resolve."""
    try:
        return thunk()
    except CelError:
        return fallback


def template_json(parts):
    """Interpolate: strings as they are, null as '', anything else as JSON."""
    out = []
    for p in parts:
        if type(p) is str:
            out.append(p)
        elif p is None:
            pass
        else:
            out.append(to_json_text(p))
    return "".join(out)


# --- JSON --------------------------------------------------------------------------------

def to_json(v):
    """A CEL value as plain JSON data: uint as a number, bytes as base64
    text, NaN and infinities as the strings "NaN", "Infinity", "-Infinity"
    (proto3 JSON), durations and timestamps as their strings, types as
    their names."""
    t = type(v)
    if v is None or t is bool or t is int or t is str:
        return v
    if t is float:
        if math.isnan(v):
            return "NaN"
        if v == INF:
            return "Infinity"
        if v == -INF:
            return "-Infinity"
        return v
    if t is UInt:
        return v.v
    if t is bytes:
        return binascii.b2a_base64(v).decode("ascii").strip()
    if t is list or t is tuple:
        return [to_json(x) for x in v]
    if isinstance(v, dict):
        out = {}
        for k in v:
            out[_json_key(k)] = to_json(v[k])
        return out
    if t is Duration or t is Timestamp or t is CelType:
        return to_string(v)
    raise CelError("value has no JSON form: " + type_name(v))


def _json_key(k):
    t = type(k)
    if t is str:
        return k
    if t is bool:
        return "true" if k else "false"
    if t is UInt:
        return str(k.v)
    return str(k)


_JSON_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _json_string(s):
    # whole-string replaces, not a list of characters: a device's heap needs
    # room for the result only (a long text's list of characters took tens of KiB)
    if '"' in s or "\\" in s:
        s = s.replace("\\", "\\\\").replace('"', '\\"')
    if s and min(s) < " ":
        for ch in sorted(set(s)):
            if ch < " ":
                s = s.replace(ch, _JSON_CONTROL.get(ch) or "\\u" + _pad(hex(ord(ch))[2:], 4))
    return '"' + s + '"'


def to_json_text(v):
    """Compact JSON text of a CEL value (keys in insertion order)."""
    out = []
    _dump(to_json(v), out)
    return "".join(out)


def _dump(j, out):
    # one flat list of pieces joined once: nested joins held a copy of the
    # text per level, which a device's fragmented heap had no room for
    # (an aevatar record of 4 KB of text needed 100 KiB of heap)
    t = type(j)
    if j is None:
        out.append("null")
    elif t is bool:
        out.append("true" if j else "false")
    elif t is int:
        out.append(str(j))
    elif t is float:
        out.append(str(int(j)) + ".0" if j == int(j) and abs(j) < 1e16 else repr(j))
    elif t is str:
        out.append(_json_string(j))
    elif t is list:
        out.append("[")
        for i, x in enumerate(j):
            if i:
                out.append(",")
            _dump(x, out)
        out.append("]")
    elif isinstance(j, dict):
        out.append("{")
        first = True
        for k in j:
            if not first:
                out.append(",")
            first = False
            out.append(_json_string(k))
            out.append(":")
            _dump(j[k], out)
        out.append("}")
    else:
        out.append(_json_string(str(j)))


def to_text(v):
    """A value as text for messages."""
    try:
        return to_json_text(v)
    except CelError:
        return type_name(v)


# --- the table the VM dispatches through ------------------------------------------------
# Semantics key -> function over evaluated arguments. Lazy keys (cel.and,
# cel.or, cel.ternary, cel.has, the macros, tmpl.default) are listed with
# the helpers that take thunks or evaluated-or-error operands.
DISPATCH = {
    "cel.eq": eq, "cel.ne": ne, "cel.lt": lt, "cel.le": le, "cel.gt": gt, "cel.ge": ge,
    "cel.add": add, "cel.sub": sub, "cel.mul": mul, "cel.div": div, "cel.mod": mod,
    "cel.in": in_, "cel.index": index, "cel.select": select, "cel.neg": neg, "cel.not": not_,
    "cel.and": and_values, "cel.or": or_values, "cel.ternary": test,
    "cel.size": size, "cel.contains": contains, "cel.startsWith": starts_with,
    "cel.endsWith": ends_with, "cel.matches": matches,
    "cel.int": to_int, "cel.uint": to_uint, "cel.double": to_double, "cel.string": to_string,
    "cel.bytes": to_bytes, "cel.bool": to_bool, "cel.dyn": dyn, "cel.type": type_of,
    "cel.duration": duration, "cel.timestamp": timestamp, "cel.unbound": unbound,
    "cel.has": has, "cel.all": all_, "cel.exists": exists, "cel.exists_one": exists_one,
    "cel.map": map_, "cel.filter": filter_, "tmpl.default": default,
    "cel.all2": all2, "cel.exists2": exists2, "cel.exists_one2": exists_one2,
    "cel.transformList": transform_list, "cel.transformMap": transform_map,
    "cel.transformMapEntry": transform_map_entry,
    "cel.getFullYear": get_full_year, "cel.getMonth": get_month, "cel.getDate": get_date,
    "cel.getDayOfMonth": get_day_of_month, "cel.getDayOfWeek": get_day_of_week,
    "cel.getDayOfYear": get_day_of_year, "cel.getHours": get_hours, "cel.getMinutes": get_minutes,
    "cel.getSeconds": get_seconds, "cel.getMilliseconds": get_milliseconds,
    "cel.bind": bind,
}
DISPATCH.update(EXT_DISPATCH)
