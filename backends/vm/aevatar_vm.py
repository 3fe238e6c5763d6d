"""aevatar programs on the VM: load, verify and run (docs/bytecode.md section 8).

An aevatar program is the VM's form of an aevatar workflow: the plan the
Python backend generates (:mod:`flowc.backends.aevatar_plan`), with every
step parameter and while condition compiled to a block of aevatar
expression code. Loading checks the framing and the body's shape, verifies
every block and the plan, and turns each expression into a closure over the
expression machine; running hands the plan to the aevatar kernel
(:mod:`rt_aevatar_run`) that the Python backend uses too, so both backends
give the same run record.

File layout (msgpack): ``[b"WFAV", version, crc32(body), body]``; the body
is ``[name, consts, names, blocks, roles, steps]``.

Expressions are blocks of the VM's expression machine (:mod:`expr_vm`,
docs/bytecode.md section 9); the builtin keys share the names table.

Standard library only (plus expr_vm, rt_aevatar_run, the kernel and
drivers of flowc.runtime, and the VM's msgpack reader); MicroPython-compatible.
``run`` drives the kernel with the sync driver; ``run_async`` and
``run_virtual`` with asyncio and a virtual clock (docs/runtime.md).
"""

# MicroPython style: %-formatting reads the same on both interpreters.
# ruff: noqa: UP031

try:
    from flowc.backends.python import rt_aevatar_run as _k
    from flowc.backends.vm import expr_vm as _x
    from flowc.backends.vm.vm import VerifyError, VMError
    from flowc.backends.vm.vm import unpackb as _unpackb
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import expr_vm as _x
    import rt_aevatar_run as _k

    from vm import VerifyError, VMError
    from vm import unpackb as _unpackb

try:
    from zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - MicroPython
    try:
        from binascii import crc32 as _crc32
    except ImportError:
        _crc32 = None

__all__ = ["FORMAT_VERSION", "MAGIC", "Program", "is_aevatar", "load", "split"]

MAGIC = b"WFAV"
FORMAT_VERSION = 2
SUPPORTED_VERSIONS = (2,)
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_RETRIES = 1000

# Fields of a step row and of a sub-step row (docs/bytecode.md section 8).
STEP_ROW = 12
SUB_ROW = 6
ON_ERROR_ACTIONS = ("fail", "skip", "fallback")

_CRC_TABLE = []


def _crc(data):
    """CRC-32 of ``data`` (zlib's), in pure Python where the library has none."""
    if _crc32 is not None:
        return _crc32(data) & 0xFFFFFFFF
    if not _CRC_TABLE:
        for n in range(256):
            c = n
            for _ in range(8):
                c = (0xEDB88320 ^ (c >> 1)) if c & 1 else (c >> 1)
            _CRC_TABLE.append(c)
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


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

def split(data):
    """The body bytes of an aevatar program, after the magic, version and checksum checks."""
    if not isinstance(data, (bytes, bytearray)):
        raise VerifyError("an aevatar program must be bytes")
    if len(data) > MAX_FILE_BYTES:
        raise VerifyError("the program of %d bytes exceeds the limit of %d" % (len(data), MAX_FILE_BYTES))
    if not is_aevatar(data):
        raise VerifyError("not a flowc aevatar program (bad magic)")
    top = _unpackb(bytes(data))
    if type(top) is not list or len(top) != 4 or top[0] != MAGIC:
        raise VerifyError("the file must be an array of 4: magic, version, checksum, body")
    if type(top[1]) is not int or top[1] not in SUPPORTED_VERSIONS:
        raise VerifyError("unsupported aevatar program format version %r (this VM runs %s)"
                          % (top[1], ", ".join([str(v) for v in SUPPORTED_VERSIONS])))
    body = top[3]
    if type(body) is not bytes:
        raise VerifyError("the body must be msgpack bin")
    if type(top[2]) is not int or top[2] != _crc(body):
        raise VerifyError("checksum mismatch: the body is corrupt")
    return body


def is_aevatar(data):
    return isinstance(data, (bytes, bytearray)) and len(data) >= 7 and bytes(data[0:3]) == b"\x94\xc4\x04" \
        and bytes(data[3:7]) == MAGIC


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


def _uint(v, what, high):
    if type(v) is not int or v < 0 or v > high:
        raise VerifyError("%s must be an integer in [0, %d]" % (what, high))
    return v


class Program:
    """A loaded, verified aevatar program; ``run(inputs, host)`` gives the run record."""

    def __init__(self, body):
        body = _list(body, "the body", 6)
        self.name = _str(body[0], "the workflow name")
        consts = _list(body[1], "consts")
        names = _list(body[2], "names")
        blocks = _list(body[3], "blocks")
        for c in consts:
            _str(c, "a constant")
        for n in names:
            _str(n, "a name")
        # the builtin keys are names (an aevatar program has no key table)
        decoded = _x.verify(blocks, len(consts), names, names, 0, "aevatar")
        self.blocks = blocks
        self.consts = consts
        self.names = names
        self.machine = _x.Machine(consts, names, names, decoded)
        self.roles = self._roles(body[4])
        rows = _list(body[5], "steps")
        ids = {}
        for i in range(len(rows)):
            row = _list(rows[i], "step %d" % i, STEP_ROW)
            sid = _str(row[0], "step %d's id" % i)
            if sid in ids:
                raise VerifyError("step id %r appears twice" % sid)
            ids[sid] = i
        self.steps = [self._step(rows[i], i, ids) for i in range(len(rows))]
        self.plan = {"name": self.name, "roles": self.roles, "steps": self.steps}

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
        pairs = []
        for pair in _list(v, what):
            pair = _list(pair, what + " entry", 2)
            pairs.append((_str(pair[0], what + " name"), self._block(pair[1], what + " block")))
        return _params(self.machine, pairs)

    def _common(self, row, what):
        return {"id": row[0], "type": _str(row[1], what + " type"), "role": _opt_str(row[2], what + " role"),
                "params": self._params(row[3], what + " parameters"),
                "capability": _opt_str(row[4], what + " capability"), "name": _opt_str(row[5], what + " name")}

    def _step(self, row, i, ids):
        what = "step %r" % row[0]
        step = self._common(row, what)

        def target(v, field):
            v = _opt_str(v, what + " " + field)
            if v is not None and v not in ids:
                raise VerifyError("%s %s names %r, which is not a step" % (what, field, v))
            return v

        step["next"] = target(row[6], "next")
        branches = []
        for pair in _list(row[7], what + " branches"):
            pair = _list(pair, what + " branch", 2)
            branches.append([_str(pair[0], what + " branch key"), target(pair[1], "branch")])
            if branches[-1][1] is None:
                raise VerifyError("%s branch %r has no target" % (what, pair[0]))
        step["branches"] = branches
        retry = row[8]
        if retry is not None:
            retry = _list(retry, what + " retry", 3)
            _uint(retry[0], what + " retry count", MAX_RETRIES)
            _uint(retry[1], what + " retry delay", 0x7FFFFFFF)
            if type(retry[2]) is not int or retry[2] not in (1, 2):
                raise VerifyError("%s retry backoff must be 1 (fixed) or 2 (exponential)" % what)
        step["retry"] = retry
        on_error = row[9]
        if on_error is not None:
            on_error = _list(on_error, what + " on_error", 3)
            if type(on_error[0]) is not str or on_error[0] not in ON_ERROR_ACTIONS:
                raise VerifyError("%s on_error action must be one of %s" % (what, ", ".join(ON_ERROR_ACTIONS)))
            target(on_error[1], "fallback")
            _opt_str(on_error[2], what + " default output")
        step["on_error"] = on_error
        if row[10] is not None:
            step["condition"] = _expression(self.machine, self._block(row[10], what + " condition"))
        if row[11] is not None:
            regions = row[11]
            if not isinstance(regions, dict):
                raise VerifyError("%s regions must be a map" % what)
            out = {}
            for name in regions:
                _str(name, what + " region name")
                subs = []
                for sub in _list(regions[name], "%s region %r" % (what, name)):
                    sub = _list(sub, "%s region %r sub-step" % (what, name), SUB_ROW)
                    _str(sub[0], "%s region %r sub-step id" % (what, name))
                    subs.append(self._common(sub, "sub-step %r" % sub[0]))
                out[name] = subs
            step["regions"] = out
        return step

    def run(self, inputs, host, max_instructions=None, max_iterations=None, max_host_calls=None):
        """Run the workflow with ``inputs`` ({"input": prompt, run parameters...})
        against ``host``; return the run record. Fuel: at most
        ``max_instructions`` expression instructions, ``max_iterations``
        step dispatches (sub-steps and retries included) and ``max_host_calls``
        host calls; past one the run fails."""
        self.machine.start_run(max_instructions)
        # iterations and host calls are charged by the kernel, as on the Python backend
        r = _k.Run(self.plan, inputs, None, _k.MAX_STEPS, max_iterations, max_host_calls, False, (_x.FuelExhausted,))
        return _k.drive_sync(r, host)

    def run_async(self, inputs, host, max_instructions=None, max_iterations=None, max_host_calls=None,
                  concurrent=True):
        """A coroutine: the run driven by asyncio (see rt_aevatar_run.run_async)."""
        self.machine.start_run(max_instructions)
        return _k.run_async(self.plan, inputs, host, _k.MAX_STEPS, max_iterations, max_host_calls,
                            concurrent, (_x.FuelExhausted,))

    def run_virtual(self, inputs, script, max_instructions=None, max_iterations=None, max_host_calls=None,
                    concurrent=True):
        """The run on a virtual clock (see rt_aevatar_run.run_virtual)."""
        self.machine.start_run(max_instructions)
        return _k.run_virtual(self.plan, inputs, script, _k.MAX_STEPS, max_iterations, max_host_calls,
                              concurrent, (_x.FuelExhausted,))


def load(data):
    """Decode and verify an aevatar program; VerifyError when it does not load."""
    try:
        return Program(_unpackb(split(data)))
    except VMError:
        raise
    except Exception as exc:  # noqa: BLE001 - malformed input must not escape as anything else
        raise VerifyError("malformed aevatar program: " + type(exc).__name__ + ": " + str(exc))
