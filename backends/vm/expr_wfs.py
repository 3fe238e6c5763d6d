"""WorkflowSkill's builtins on the VM's expression machine (:mod:`expr_vm`):
the ``wfs.*`` keys call flowc.runtime.wfs's functions, the ones generated
modules run on (profile ``wfs``). Importing this module registers them; a
WorkflowSkill-only device holds neither cel nor aevatar_text.

MicroPython-compatible: no typing, no f-strings.
"""

try:
    from flowc.backends.vm import expr_vm as _x
    from flowc.runtime import wfs as _w
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import expr_vm as _x
    import wfs as _w

PROFILE = "wfs"
# WorkflowSkill's roots: LOAD wfs of another name fails ("Unknown reference")
WFS_ROOTS = ("inputs", "steps", "item", "index", "result")
# The run's final value the workflow outputs are made of: an exit step's
# output when one ended the run, else the last top-level step's output. No
# source names it (a reference is `$` and an identifier): only the VM's
# finish code reads it.
STATE_ROOT = "@final"


def _wfs_root(env, name):
    if name in WFS_ROOTS or name == STATE_ROOT:
        return env.get(name, _w.MISSING)
    raise _w.EvalError("Unknown reference: $" + name)


def _wfs_object(pairs):
    # a later duplicate key replaces the value in place; keys as JavaScript strings
    obj = _w._Obj()
    for k, v in pairs:
        obj[k if type(k) is str else _w.js_to_string(k)] = v
    return obj


def _wfs_binding(pairs):
    # a binding's object literal: as _wfs_object, without the keys whose value is missing (wfs.compact)
    return _w.compact(_wfs_object(pairs))


# key -> row of expr_vm.BUILTINS
BUILTINS = {
    "wfs.eq": (_w.wfs_eq, 2, 2, -1, 0),
    "wfs.ne": (_w.wfs_ne, 2, 2, -1, 0),
    "wfs.lt": (_w.wfs_lt, 2, 2, -1, 0),
    "wfs.le": (_w.wfs_le, 2, 2, -1, 0),
    "wfs.gt": (_w.wfs_gt, 2, 2, -1, 0),
    "wfs.ge": (_w.wfs_ge, 2, 2, -1, 0),
    "wfs.contains": (_w.wfs_contains, 2, 2, -1, 0),
    "wfs.and": (_w.wfs_and, 2, 2, -1, 0),
    "wfs.or": (_w.wfs_or, 2, 2, -1, 0),
    "wfs.not": (_w.wfs_not, 1, 1, -1, 0),
    # the outputs' rules: an object binding's missing values (the map rule
    # wfs_compact builds an object literal so at once), an output without a value
    "wfs.compact": (_w.compact, 1, 1, -1, 0),
    "wfs.pick": (_w.key_or_null, 2, 2, -1, 0),
}

_x.register(PROFILE, BUILTINS, {
    "load": {"wfs": _wfs_root}, "field": {"wfs": _w.wfs_get_field}, "index": {"wfs": _w.wfs_get_index},
    "test": {"js_boolean": _w.js_boolean, "wfs_truthy": _w.wfs_truthy}, "template": {"wfs": _w.wfs_template},
    "map": {"wfs": _wfs_object, "wfs_compact": _wfs_binding}})
