"""Aevatar's builtins on the VM's expression machine (:mod:`expr_vm`): the
``aevatar.*`` keys call aevatar_text's functions (profile ``aevatar``).
Importing this module registers them, so only a device that runs aevatar
workflows holds aevatar_text.

MicroPython-compatible: no typing, no f-strings.
"""

try:
    from flowc.backends.vm import expr_vm as _x
    from flowc.runtime import aevatar_text as _a
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import aevatar_text as _a
    import expr_vm as _x

PROFILE = "aevatar"


def _aevatar_template(parts):
    return "".join(parts)


# key -> row of expr_vm.BUILTINS
BUILTINS = {
    "aevatar.concat": (_a.concat, 0, -1, -1, 0),
    "aevatar.isblank": (_a.isblank, 1, 1, -1, 0),
    "aevatar.length": (_a.length, 1, 1, -1, 0),
    "aevatar.not": (_a.not_, 1, 1, -1, 0),
    "aevatar.upper": (_a.upper, 1, 1, -1, 0),
    "aevatar.lower": (_a.lower, 1, 1, -1, 0),
    "aevatar.trim": (_a.trim, 1, 1, -1, 0),
    "aevatar.json": (_a.json, 1, 1, -1, 0),
    "aevatar.eq": (_a.eq, 2, 2, -1, 0),
    "aevatar.fail": (_a.fail, 1, 1, -1, 0),
    "aevatar.conditional_test": (_a.conditional_test, 2, 2, -1, 0),
    "aevatar.and": (_a.and_, 2, 2, 0, 0),
    "aevatar.or": (_a.or_, 2, 2, 0, 0),
    "aevatar.add": (_a.add, 0, -1, 0, 0),
    "aevatar.sub": (_a.sub, 1, -1, 0, 0),
    "aevatar.mul": (_a.mul, 0, -1, 0, 0),
    "aevatar.div": (_a.div, 1, -1, 0, 0),
    "aevatar.lt": (_a.lt, 2, 2, 0, 0),
    "aevatar.lte": (_a.lte, 2, 2, 0, 0),
    "aevatar.gt": (_a.gt, 2, 2, 0, 0),
    "aevatar.gte": (_a.gte, 2, 2, 0, 0),
}

_x.register(PROFILE, BUILTINS, {
    "load": {"flat_keys": _a.var, "flat_keys_ci": _a.var_ci}, "test": {"aevatar_truthy": _a.is_truthy},
    "template": {"aevatar": _aevatar_template}})
