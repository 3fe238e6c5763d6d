"""WorkflowSkill's builtins on the VM's expression machine (:mod:`expr_vm`):
the ``wfs.*`` keys call wfs_values' functions (the algorithms of
runtime/wfs.py, as wfs_values restates them; profile ``wfs``).
Importing this module registers them; a WorkflowSkill-only device holds
neither cel nor aevatar_text.

MicroPython-compatible: no typing, no f-strings.
"""

try:
    from flowc.backends.vm import expr_vm as _x
    from flowc.backends.vm import wfs_values as _w
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import expr_vm as _x
    import wfs_values as _w

PROFILE = "wfs"
# WorkflowSkill's roots: LOAD wfs of another name fails ("Unknown reference")
WFS_ROOTS = ("inputs", "steps", "item", "index", "result")


def _wfs_root(env, name):
    if name in WFS_ROOTS:
        return env.get(name, _w.MISSING)
    raise _w.EvalError("Unknown reference: $" + name)


def _wfs_template(parts):
    return "".join([_w.stringify(v) for v in parts])


def _wfs_object(pairs):
    # a later duplicate key replaces the value in place; keys as JavaScript strings
    obj = _w._Obj()
    for k, v in pairs:
        obj[k if type(k) is str else _w.to_string(k)] = v
    return obj


def _wfs_ne(a, b):
    return not _w.wfs_eq(a, b)


def _wfs_lt(a, b):
    return _w._to_number(a) < _w._to_number(b)


def _wfs_le(a, b):
    return _w._to_number(a) <= _w._to_number(b)


def _wfs_gt(a, b):
    return _w._to_number(a) > _w._to_number(b)


def _wfs_ge(a, b):
    return _w._to_number(a) >= _w._to_number(b)


def _wfs_and(a, b):
    return _w.wfs_truthy(a) and _w.wfs_truthy(b)


def _wfs_or(a, b):
    return _w.wfs_truthy(a) or _w.wfs_truthy(b)


def _wfs_not(a):
    return not _w.wfs_truthy(a)


# key -> row of expr_vm.BUILTINS
BUILTINS = {
    "wfs.eq": (_w.wfs_eq, 2, 2, -1, 0),
    "wfs.ne": (_wfs_ne, 2, 2, -1, 0),
    "wfs.lt": (_wfs_lt, 2, 2, -1, 0),
    "wfs.le": (_wfs_le, 2, 2, -1, 0),
    "wfs.gt": (_wfs_gt, 2, 2, -1, 0),
    "wfs.ge": (_wfs_ge, 2, 2, -1, 0),
    "wfs.contains": (_w.wfs_contains, 2, 2, -1, 0),
    "wfs.and": (_wfs_and, 2, 2, -1, 0),
    "wfs.or": (_wfs_or, 2, 2, -1, 0),
    "wfs.not": (_wfs_not, 1, 1, -1, 0),
}

_x.register(PROFILE, BUILTINS, {
    "load": {"wfs": _wfs_root}, "field": {"wfs": _w.get_field}, "index": {"wfs": _w.get_index},
    "test": {"js_boolean": _w.js_boolean, "wfs_truthy": _w.wfs_truthy}, "template": {"wfs": _wfs_template},
    "map": {"wfs": _wfs_object}})
