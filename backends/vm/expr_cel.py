"""CEL's builtins on the VM's expression machine (:mod:`expr_vm`): the
``cel.*`` keys call cel's functions, the programs of the instruction
dialect (profile ``cel``). Importing this module registers them, so only a
device that runs CEL holds cel.

MicroPython-compatible: no typing, no f-strings.
"""

try:
    from flowc.backends.vm import expr_vm as _x
    from flowc.runtime import cel as _c
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import cel as _c
    import expr_vm as _x

PROFILE = "cel"


def decode_const(encoded):
    """A constant of a CEL program's pool: a value that is no array as it
    is (bin: bytes), else [tag, value] (docs/bytecode.md section 9)."""
    if type(encoded) is not list:
        return encoded
    if len(encoded) != 2 or encoded[0] not in ("v", "u", "b"):
        raise _x.VerifyError("an array constant must be [tag, value]")
    tag, value = encoded
    if tag == "u":
        if type(value) is not int or value < 0:
            raise _x.VerifyError("a uint constant must be a non-negative integer")
        return _c.UInt(value)
    if tag == "b" and type(value) is not bytes:
        raise _x.VerifyError("a bytes constant must be msgpack bin")
    return value


def _cel_map(target, fn, fn2=None):
    # map(x, f) or map(x, filter, f)
    if fn2 is None:
        return _c.map_(target, fn)
    return _c.map3(target, fn, fn2)


def _two(f):
    # the two-variable transforms take (target, body[, filter]); the IR has (target, [filter,] body)
    def call(target, first, second=None):
        if second is None:
            return f(target, first)
        return f(target, second, first)
    return call


# key -> row of expr_vm.BUILTINS
BUILTINS = {
    "cel.unbound": (_c.unbound, 1, -1, -1, 0),
    "cel.math.greatest": (_c.math_greatest, 0, -1, -1, 0),
    "cel.math.least": (_c.math_least, 0, -1, -1, 0),
    "cel.has": (_c.has, 2, 2, -1, 0),
    "cel.and": (_c.and_values, 2, 2, -1, 0),
    "cel.or": (_c.or_values, 2, 2, -1, 0),
    "cel.all": (_c.all_, 2, 2, 1, 1),
    "cel.exists": (_c.exists, 2, 2, 1, 1),
    "cel.exists_one": (_c.exists_one, 2, 2, 1, 1),
    "cel.filter": (_c.filter_, 2, 2, 1, 1),
    "cel.bind": (_c.bind, 2, 2, 1, 1),
    "cel.map": (_cel_map, 2, 3, 1, 1),
    "cel.all2": (_c.all2, 2, 2, 1, 2),
    "cel.exists2": (_c.exists2, 2, 2, 1, 2),
    "cel.exists_one2": (_c.exists_one2, 2, 2, 1, 2),
    "cel.transformList": (_two(_c.transform_list), 2, 3, 1, 2),
    "cel.transformMap": (_two(_c.transform_map), 2, 3, 1, 2),
    "cel.transformMapEntry": (_two(_c.transform_map_entry), 2, 3, 1, 2),
}
# CEL's strict operators and functions: every argument a value
for _key, _arity in (
        ("cel.eq", 2), ("cel.ne", 2), ("cel.lt", 2), ("cel.le", 2), ("cel.gt", 2), ("cel.ge", 2),
        ("cel.add", 2), ("cel.sub", 2), ("cel.mul", 2), ("cel.div", 2), ("cel.mod", 2), ("cel.in", 2),
        ("cel.neg", 1), ("cel.not", 1), ("cel.size", 1), ("cel.contains", 2), ("cel.startsWith", 2),
        ("cel.endsWith", 2), ("cel.matches", 2), ("cel.int", 1), ("cel.uint", 1), ("cel.double", 1),
        ("cel.string", 1), ("cel.bytes", 1), ("cel.bool", 1), ("cel.dyn", 1), ("cel.type", 1),
        ("cel.duration", 1), ("cel.timestamp", 1), ("cel.charAt", 2), ("cel.lowerAscii", 1),
        ("cel.upperAscii", 1), ("cel.trim", 1), ("cel.reverse", 1), ("cel.format", 2),
        ("cel.strings.quote", 1), ("cel.base64.encode", 1), ("cel.base64.decode", 1), ("cel.math.ceil", 1),
        ("cel.math.floor", 1), ("cel.math.round", 1), ("cel.math.trunc", 1), ("cel.math.abs", 1),
        ("cel.math.sign", 1), ("cel.math.isNaN", 1), ("cel.math.isInf", 1), ("cel.math.isFinite", 1),
        ("cel.math.bitAnd", 2), ("cel.math.bitOr", 2), ("cel.math.bitXor", 2), ("cel.math.bitNot", 1),
        ("cel.math.bitShiftLeft", 2), ("cel.math.bitShiftRight", 2)):
    BUILTINS[_key] = (_c.DISPATCH[_key], _arity, _arity, -1, 0)
# an optional last argument (a time zone, a start, a count, a separator)
for _key, _arity in (
        ("cel.getFullYear", 1), ("cel.getMonth", 1), ("cel.getDate", 1), ("cel.getDayOfMonth", 1),
        ("cel.getDayOfWeek", 1), ("cel.getDayOfYear", 1), ("cel.getHours", 1), ("cel.getMinutes", 1),
        ("cel.getSeconds", 1), ("cel.getMilliseconds", 1), ("cel.indexOf", 2), ("cel.lastIndexOf", 2),
        ("cel.replace", 3), ("cel.split", 2), ("cel.substring", 2), ("cel.join", 1)):
    BUILTINS[_key] = (_c.DISPATCH[_key], _arity, _arity + 1, -1, 0)
del _key, _arity

_x.register(PROFILE, BUILTINS, {
    "field": {"cel": _c.select}, "index": {"cel": _c.index}, "test": {"cel_bool": _c.test},
    "template": {"json": _c.template_json}, "map": {"cel": _c.make_map},
    "caught": _c.CelError, "qualified": _c.qualified})
