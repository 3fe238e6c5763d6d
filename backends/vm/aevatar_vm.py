"""aevatar programs on the VM: load, verify and run (docs/bytecode.md section 8).

An aevatar program is the VM's form of an aevatar workflow: the plan the
Python backend generates (:mod:`flowc.plan`), with every
step parameter and while condition compiled to a block of aevatar
expression code. Loading checks the framing and the body's shape, verifies
every block and the plan, and turns each expression into a closure over the
expression machine; running hands the plan to the aevatar kernel
(:mod:`routing_run`) that the Python backend uses too, so both backends
give the same run record.

In the container (docs/bytecode.md) an aevatar program is a ``kernel``
program with the sections ``consts``, ``names``, ``code`` (the blocks) and
``plan`` (``[roles, steps, edges]``: step rows with a field mask, the edges
flat, their fallthrough edges implied); the header holds the workflow's name.

Expressions are blocks of the VM's expression machine (:mod:`expr_vm`,
docs/bytecode.md section 9); the builtin keys share the names table.

Standard library only (plus expr_vm, routing_run, the kernel, drivers
and edges of flowc.runtime, and the VM's container reader); MicroPython-compatible.
``run`` drives the kernel with the sync driver; ``run_async`` and
``run_virtual`` with asyncio and a virtual clock (docs/runtime.md).
"""

# MicroPython style: %-formatting reads the same on both interpreters.
# ruff: noqa: UP031

try:
    from flowc.backends.vm import expr_aevatar as _xa
    from flowc.backends.vm import expr_vm as _x
    from flowc.backends.vm import sequential as _vm
    from flowc.backends.vm.sequential import VerifyError
    from flowc.runtime import drivers as _drivers
    from flowc.runtime import edges as _edges
    from flowc.runtime import routing_run as _k
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import drivers as _drivers
    import edges as _edges
    import expr_aevatar as _xa
    import expr_vm as _x
    import routing_run as _k
    import sequential as _vm
    from sequential import VerifyError

__all__ = ["Program", "load", "load_kernel"]

MAX_RETRIES = 1000

# Fields of a sub-step row and of a step row without its optional fields
# (docs/bytecode.md section 8.3); the step row's mask bits, and how many
# row values each stands for (format.py KERNEL_STEP_FIELDS).
SUB_ROW = 6
STEP_ROW = 8
ON_ERROR_ACTIONS = ("fail", "skip", "fallback")
RETRY, DEFAULT_OUTPUT, CONDITION, REGIONS, TIMEOUT = 1, 2, 4, 8, 16
_FIELD_COUNTS = (3, 1, 1, 1, 1)

# ================================================================ expressions

def _params(machine, pairs):
    """A step's parameters function: ``V -> [(name, value)...]``."""
    def params(variables):
        return [(key, machine.evaluate(block, 0, variables, ())) for key, block in pairs]
    return params


def _expression(machine, block):
    def expression(variables):
        return machine.evaluate(block, 0, variables, ())
    return expression


# ================================================================ loading

def _str(v, what):
    if type(v) is not str:
        raise VerifyError("%s must be a string" % what)
    return v


def _opt_str(v, what):
    if v is not None and type(v) is not str:
        raise VerifyError("%s must be a string or nil" % what)
    return v


def _list(v, what, size=None):
    if type(v) is not list or (size is not None and len(v) != size):
        raise VerifyError("%s must be an array%s" % (what, "" if size is None else " of %d" % size))
    return v


def _bounded(v, what, low, high):
    if type(v) is not int or v < low or v > high:
        raise VerifyError("%s must be an integer in [%d, %d]" % (what, low, high))
    return v


def _uint(v, what, high):
    if type(v) is not int or v < 0 or v > high:
        raise VerifyError("%s must be an integer in [0, %d]" % (what, high))
    return v


class Program:
    """A loaded, verified aevatar program; ``run(inputs, host)`` gives the run record."""

    def __init__(self, name, consts, names, blocks, plan):
        self.name = _str(name, "the workflow name")
        consts = _list(consts, "section consts")
        names = _list(names, "section names")
        blocks = _list(blocks, "section code")
        plan = _list(plan, "section plan ([roles, steps, edges])", 3)
        for c in consts:
            _str(c, "a constant")
        for n in names:
            _str(n, "a name")
        # the builtin keys are names (an aevatar program has no key table)
        decoded = _x.verify(blocks, len(consts), names, names, 0, _xa.PROFILE)
        self.blocks = blocks
        self.consts = consts
        self.names = names
        self.machine = _x.Machine(consts, names, names, decoded)
        self.roles = self._roles(plan[0])
        rows = _list(plan[1], "steps")
        ids = []
        seen = {}
        for i in range(len(rows)):
            row = _list(rows[i], "step %d" % i)
            if not row:
                raise VerifyError("step %d is an empty row" % i)
            sid = _str(row[0], "step %d's id" % i)
            if sid in seen:
                raise VerifyError("step id %r appears twice" % sid)
            seen[sid] = i
            ids.append(sid)
        self.steps = [self._step(rows[i]) for i in range(len(rows))]
        self.plan = {"model": "kernel", "name": self.name, "roles": self.roles, "nodes": self.steps,
                     "edges": _with_fallthrough(plan[2], ids)}

    def _roles(self, roles):
        if not isinstance(roles, dict):
            raise VerifyError("roles must be a map")
        for rid in roles:
            _str(rid, "a role id")
            config = roles[rid]
            if not isinstance(config, dict):
                raise VerifyError("role %r must be a map" % rid)
            for key in config:
                _str(key, "a setting name of role %r" % rid)
                v = config[key]
                if type(v) is list:
                    for item in v:
                        _str(item, "role %r setting %r" % (rid, key))
                else:
                    _str(v, "role %r setting %r" % (rid, key))
        return roles

    def _block(self, v, what):
        if type(v) is not int or v < 0 or v >= len(self.blocks):
            raise VerifyError("%s must be the index of a block" % what)
        return v

    def _params(self, v, what):
        """``[name, block...]`` -> the closure computing the parameters."""
        v = _list(v, what)
        if len(v) % 2:
            raise VerifyError("%s must be name, block pairs" % what)
        pairs = []
        for i in range(0, len(v), 2):
            pairs.append((_str(v[i], what + " name"), self._block(v[i + 1], what + " block")))
        return _params(self.machine, pairs)

    def _common(self, row, what):
        return {"id": row[0], "type": _str(row[1], what + " type"), "role": _opt_str(row[2], what + " role"),
                "params": self._params(row[3], what + " parameters"),
                "capability": _opt_str(row[4], what + " capability"), "name": _opt_str(row[5], what + " name")}

    def _step(self, row):
        """A step from ``[id, type, role, params, capability, name, on_error, mask, fields...]``."""
        what = "step %r" % row[0]
        if len(row) < STEP_ROW:
            raise VerifyError("%s: a step row has at least %d fields" % (what, STEP_ROW))
        mask = row[7]
        if type(mask) is not int or not 0 <= mask < 1 << len(_FIELD_COUNTS):
            raise VerifyError("%s field mask must be 0..%d" % (what, (1 << len(_FIELD_COUNTS)) - 1))
        size = STEP_ROW
        for bit in range(len(_FIELD_COUNTS)):
            if mask & (1 << bit):
                size += _FIELD_COUNTS[bit]
        if len(row) != size:
            raise VerifyError("%s: a row of field mask %d has %d fields, not %d" % (what, mask, size, len(row)))
        step = self._common(row, what)
        if type(row[6]) is not int or not 0 <= row[6] < len(ON_ERROR_ACTIONS):
            raise VerifyError("%s on_error must be an index into %s" % (what, ", ".join(ON_ERROR_ACTIONS)))
        step["on_error"] = ON_ERROR_ACTIONS[row[6]]
        return self._optional(step, row, mask, what)

    def _optional(self, step, row, mask, what):
        """The step's fields after on_error, from ``row[8:]`` (in the loaded plan retry is always there)."""
        at = STEP_ROW
        retry = None
        if mask & RETRY:
            retry = [row[at], row[at + 1], row[at + 2]]
            _uint(retry[0], what + " retry count", MAX_RETRIES)
            _uint(retry[1], what + " retry delay", 0x7FFFFFFF)
            if type(retry[2]) is not int or retry[2] not in (1, 2):
                raise VerifyError("%s retry backoff must be 1 (fixed) or 2 (exponential)" % what)
            at += 3
        step["retry"] = retry
        if mask & DEFAULT_OUTPUT:
            step["default_output"] = _str(row[at], what + " default output")
            at += 1
        if mask & CONDITION:
            step["condition"] = _expression(self.machine, self._block(row[at], what + " condition"))
            at += 1
        if mask & REGIONS:
            step["regions"] = self._regions(row[at], what)
            at += 1
        if mask & TIMEOUT:
            step["timeout_ms"] = _bounded(row[at], what + " timeout_ms", 100, 600000)
        return step

    def _regions(self, flat, what):
        """``[name, sub-step rows, edges...]`` -> ``[[name, {"nodes", "edges"}]...]``."""
        flat = _list(flat, what + " regions")
        if len(flat) % 3:
            raise VerifyError("%s regions must be name, sub-steps, edges triples" % what)
        regions = []
        for i in range(0, len(flat), 3):
            name = _str(flat[i], what + " region name")
            subs = []
            ids = []
            for sub in _list(flat[i + 1], "%s region %r" % (what, name)):
                sub = _list(sub, "%s region %r sub-step" % (what, name), SUB_ROW)
                ids.append(_str(sub[0], "%s region %r sub-step id" % (what, name)))
                subs.append(self._common(sub, "sub-step %r" % sub[0]))
            edges, why = _edges.unpack(flat[i + 2], ids)
            if why is not None:
                raise VerifyError("%s region %r: %s" % (what, name, why))
            regions.append([name, {"nodes": subs, "edges": edges}])
        return regions

    def new_run(self, inputs, max_instructions=None, max_iterations=None, max_host_calls=None, concurrent=False):
        """The run on the kernel, not started (a driver answers its requests);
        its expressions spend the run's instruction fuel."""
        r = _k.Run(self.plan, inputs, None, _k.MAX_STEPS, max_iterations, max_host_calls, concurrent,
                   max_instructions)
        self.machine.start_run(r.fuel)
        return r

    def run(self, inputs, host, max_instructions=None, max_iterations=None, max_host_calls=None):
        """Run the workflow with ``inputs`` ({"input": prompt, run parameters...})
        against ``host``; return the run record. Fuel: at most
        ``max_instructions`` expression instructions, ``max_iterations``
        step dispatches (sub-steps and retries included) and ``max_host_calls``
        host calls; past one the run fails."""
        # iterations and host calls are charged by the kernel, as on the Python backend
        return _k.drive_sync(self.new_run(inputs, max_instructions, max_iterations, max_host_calls), host)

    def run_async(self, inputs, host, max_instructions=None, max_iterations=None, max_host_calls=None,
                  concurrent=True):
        """A coroutine: the run driven by asyncio (see routing_run.run_async)."""
        from flowc.runtime.aio import drive_async  # CPython only: MicroPython has no such asyncio

        return drive_async(self.new_run(inputs, max_instructions, max_iterations, max_host_calls, concurrent), host)

    def run_virtual(self, inputs, script, max_instructions=None, max_iterations=None, max_host_calls=None,
                    concurrent=True):
        """The run on a virtual clock (see routing_run.run_virtual)."""
        host = script if hasattr(script, "answer") else _drivers.VirtualHost(script)
        r = self.new_run(inputs, max_instructions, max_iterations, max_host_calls, concurrent)
        return _drivers.drive_virtual(r, host)


def _with_fallthrough(flat, ids):
    """The plan's edges from section plan's (listed step by step, without
    ``fallthrough`` edges): each step's own edges, then, when none is a
    ``sequence`` edge and a step follows, its ``fallthrough`` edge to that step."""
    rows, why = _edges.unpack(flat, ids)
    if why is not None:
        raise VerifyError("the plan: " + why)
    out = []
    at = 0
    for i in range(len(ids)):
        sequenced = False
        while at < len(rows) and flat[4 * at] == i:
            if rows[at][2] == _edges.FALLTHROUGH:
                raise VerifyError("the plan: fallthrough edges are implied, not listed")
            sequenced = sequenced or rows[at][2] == _edges.SEQUENCE
            out.append(rows[at])
            at += 1
        if not sequenced and i + 1 < len(ids):
            out.append([ids[i], ids[i + 1], _edges.FALLTHROUGH, None])
    if at < len(rows):
        raise VerifyError("the plan: edges must be listed step by step, by their source")
    return out


def load(data):
    """Decode and verify an aevatar program; VerifyError when it does not load."""
    return _vm.guarded(_load, data)


def _load(data):
    model, name, table = _vm.open_container(data)
    if model != "kernel":
        raise VerifyError("a %s program: this loader runs kernel programs" % model)
    return load_kernel(data, name, table)


def load_kernel(data, name, table):
    """The :class:`Program` of an opened container (vm.open_container)."""
    section = _vm.read_section
    return Program(name, section(data, table, "consts"), section(data, table, "names"),
                   section(data, table, "code"), section(data, table, "plan"))
