"""aevatar programs on the VM: load, verify and run (docs/bytecode.md section 8).

An aevatar program is the VM's form of an aevatar workflow: the plan the
Python backend generates (:mod:`flowc.backends.aevatar_plan`), with every
step parameter and while condition compiled to a block of aevatar
expression code. Loading checks the framing and the body's shape, verifies
every block and the plan, and turns each expression into a closure over the
expression machine below; running hands the plan to the aevatar kernel
(:mod:`rt_aevatar_run`) that the Python backend uses too, so both backends
give the same run record.

File layout (msgpack): ``[b"WFAV", version, crc32(body), body]``; the body
is ``[name, consts, names, blocks, roles, steps]``.

Expression code is straight-line stack code (no jumps): an opcode byte,
then its operands as unsigned LEB128 varints.

===== ============== ======================================================
0x01  CONST c        push consts[c]                                   (+1)
0x02  VAR n          push the variable names[n] (rt_aevatar.var)       (+1)
0x03  VAR_CI n       the same, ignoring case (rt_aevatar.var_ci)       (+1)
0x04  CALL f k       k values -> FUNCTIONS[f](*values)             (1 - k)
0x05  LAZY f b k     push FUNCTIONS[f](thunk b, ..., thunk b+k-1)     (+1)
0x06  RETURN         end of the block; its value is the one value left
===== ============== ======================================================

A thunk evaluates its block when the function calls it (the engine stops
evaluating arguments early: ``and``, ``or``, the arithmetic, the
comparisons, ``if``). A LAZY names blocks after its own, so evaluation
always terminates.

Standard library only (plus rt_aevatar, rt_aevatar_run, the kernel and
drivers of flowc.runtime, and the VM's msgpack reader); MicroPython-compatible.
``run`` drives the kernel with the sync driver; ``run_async`` and
``run_virtual`` with asyncio and a virtual clock (docs/runtime.md).
"""

# MicroPython style: %-formatting reads the same on both interpreters.
# ruff: noqa: UP031

try:
    from flowc.backends.python import rt_aevatar as _rta
    from flowc.backends.python import rt_aevatar_run as _k
    from flowc.backends.vm.vm import VerifyError, VMError
    from flowc.backends.vm.vm import unpackb as _unpackb
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import rt_aevatar as _rta
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

__all__ = ["FORMAT_VERSION", "FUNCTIONS", "MAGIC", "OPCODES", "Program", "is_aevatar", "load", "split"]

MAGIC = b"WFAV"
FORMAT_VERSION = 1
SUPPORTED_VERSIONS = (1,)
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_STACK = 131072  # >= MAX_EXPR_DEPTH * (2 * MAX_EXPR_ITEMS + 1) of ir/limits.py (a test checks)
MAX_COUNT = 4096
MAX_LAZY_DEPTH = 64  # >= MAX_EXPR_DEPTH of ir/limits.py (a test checks)
MAX_RETRIES = 1000
DEFAULT_MAX_INSTRUCTIONS = 200000000

CONST = 0x01
VAR = 0x02
VAR_CI = 0x03
CALL = 0x04
LAZY = 0x05
RETURN = 0x06

# opcode -> (name, operand kinds); kinds: c const, n name, f function, b block, k count
OPCODES = {CONST: ("CONST", "c"), VAR: ("VAR", "n"), VAR_CI: ("VAR_CI", "n"), CALL: ("CALL", "fk"),
           LAZY: ("LAZY", "fbk"), RETURN: ("RETURN", "")}


def _if(test, then, otherwise):
    return then() if _rta.is_truthy(test()) else otherwise()


# code -> (name, helper, lazy, minimum arguments, maximum arguments or None)
FUNCTIONS = (
    ("template", _rta.template, False, 0, None),
    ("concat", _rta.concat, False, 0, None),
    ("isblank", _rta.isblank, False, 1, 1),
    ("length", _rta.length, False, 1, 1),
    ("not", _rta.not_, False, 1, 1),
    ("upper", _rta.upper, False, 1, 1),
    ("lower", _rta.lower, False, 1, 1),
    ("trim", _rta.trim, False, 1, 1),
    ("json", _rta.json, False, 1, 1),
    ("eq", _rta.eq, False, 2, 2),
    ("fail", _rta.fail, False, 1, 1),
    ("conditional_test", _rta.conditional_test, False, 2, 2),
    ("and", _rta.and_, True, 2, 2),
    ("or", _rta.or_, True, 2, 2),
    ("add", _rta.add, True, 0, None),
    ("sub", _rta.sub, True, 1, None),
    ("mul", _rta.mul, True, 0, None),
    ("div", _rta.div, True, 1, None),
    ("lt", _rta.lt, True, 2, 2),
    ("lte", _rta.lte, True, 2, 2),
    ("gt", _rta.gt, True, 2, 2),
    ("gte", _rta.gte, True, 2, 2),
    ("if", _if, True, 3, 3),
)
FUNCTION_CODES = {}
for _i in range(len(FUNCTIONS)):
    FUNCTION_CODES[FUNCTIONS[_i][0]] = _i

# Fields of a step row and of a sub-step row (docs/bytecode.md section 8).
STEP_ROW = 13
STEP_ROW_BEFORE_TIMEOUT = 12   # programs written before the timeout field still load
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


class _Fuel(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.message = message


# ================================================================ expression code

def decode(code):
    """[(pc, opcode, operands)] of a block, or VerifyError."""
    out = []
    p = 0
    n = len(code)
    while p < n:
        start = p
        op = code[p]
        p += 1
        spec = OPCODES.get(op)
        if spec is None:
            raise VerifyError("unknown opcode 0x%02x at %d" % (op, start))
        operands = []
        for _kind in spec[1]:
            value = 0
            shift = 0
            while True:
                if p >= n:
                    raise VerifyError("truncated instruction at %d" % start)
                b = code[p]
                p += 1
                value |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
                if shift >= 35:
                    raise VerifyError("a varint longer than 5 bytes at %d" % start)
            operands.append(value)
        out.append((start, op, operands))
    return out


def verify_block(index, code, nconsts, nnames, nblocks):
    """Check block ``index``: known opcodes, operands in range, functions of
    the right kind with an allowed number of arguments, LAZY blocks after
    this one, the stack never short and exactly one value at the final
    RETURN. Returns the decoded instructions."""
    ins = decode(code)
    if not ins or ins[-1][1] != RETURN:
        raise VerifyError("block %d does not end with RETURN" % index)
    depth = 0
    for pc, op, operands in ins:
        where = "block %d at %d" % (index, pc)
        if op == CONST:
            if operands[0] >= nconsts:
                raise VerifyError("%s: constant %d is out of range" % (where, operands[0]))
            depth += 1
        elif op == VAR or op == VAR_CI:
            if operands[0] >= nnames:
                raise VerifyError("%s: name %d is out of range" % (where, operands[0]))
            depth += 1
        elif op == CALL or op == LAZY:
            f = operands[0]
            count = operands[-1]
            if f >= len(FUNCTIONS):
                raise VerifyError("%s: function %d is unknown" % (where, f))
            name, _helper, lazy, low, high = FUNCTIONS[f]
            if lazy != (op == LAZY):
                raise VerifyError("%s: %s must be called with %s" % (where, name, "LAZY" if lazy else "CALL"))
            if count > MAX_COUNT or count < low or (high is not None and count > high):
                raise VerifyError("%s: %s with %d arguments" % (where, name, count))
            if op == CALL:
                if depth < count:
                    raise VerifyError("%s: stack underflow" % where)
                depth = depth - count + 1
            else:
                first = operands[1]
                if first <= index or first + count > nblocks:
                    raise VerifyError("%s: LAZY blocks %d..%d must follow block %d and exist"
                                      % (where, first, first + count - 1, index))
                depth += 1
        elif pc != ins[-1][0]:
            raise VerifyError("%s: RETURN before the end of the block" % where)
        elif depth != 1:
            raise VerifyError("%s: RETURN with %d values on the stack" % (where, depth))
        if depth > MAX_STACK:
            raise VerifyError("%s: stack overflow" % where)
    return ins


class Machine:
    """Evaluates verified blocks. Fuel: a block costs its number of
    instructions when it starts (the kernel, rt_aevatar_run, charges an
    iteration per step dispatch and counts host calls)."""

    def __init__(self, consts, names, decoded):
        self.code = []
        for ins in decoded:
            out = []
            for _pc, op, operands in ins:
                if op == CONST:
                    out.append((op, consts[operands[0]], 0, 0))
                elif op == VAR or op == VAR_CI:
                    out.append((op, names[operands[0]], 0, 0))
                elif op == CALL:
                    out.append((op, FUNCTIONS[operands[0]][1], operands[1], 0))
                elif op == LAZY:
                    out.append((op, FUNCTIONS[operands[0]][1], operands[1], operands[2]))
                else:
                    out.append((op, None, 0, 0))
            self.code.append(out)
        self.reset(None)

    def reset(self, max_instructions):
        self.max_instructions = DEFAULT_MAX_INSTRUCTIONS if max_instructions is None else max_instructions
        self.left = self.max_instructions

    def evaluate(self, block, variables):
        code = self.code[block]
        self.left -= len(code)
        if self.left < 0:
            raise _Fuel("fuel exhausted: more than %d instructions" % self.max_instructions)
        stack = []
        for op, a, b, c in code:
            if op == CONST:
                stack.append(a)
            elif op == VAR:
                stack.append(_rta.var(variables, a))
            elif op == VAR_CI:
                stack.append(_rta.var_ci(variables, a))
            elif op == CALL:
                if b:
                    args = stack[len(stack) - b:]
                    del stack[len(stack) - b:]
                    stack.append(a(*args))
                else:
                    stack.append(a())
            elif op == LAZY:
                stack.append(a(*[self._thunk(b + i, variables) for i in range(c)]))
            else:
                return stack[-1]
        return stack[-1]  # pragma: no cover - verified blocks end with RETURN

    def _thunk(self, block, variables):
        def thunk():
            return self.evaluate(block, variables)
        return thunk

    def params(self, pairs):
        """A step's parameters function: ``V -> [(name, value)...]``."""
        def params(variables):
            return [(key, self.evaluate(block, variables)) for key, block in pairs]
        return params

    def expression(self, block):
        def expression(variables):
            return self.evaluate(block, variables)
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
        decoded = []
        for i in range(len(blocks)):
            if type(blocks[i]) is not bytes:
                raise VerifyError("block %d must be msgpack bin" % i)
            decoded.append(verify_block(i, blocks[i], len(consts), len(names), len(blocks)))
        # LAZY nesting depth (blocks only name later blocks: compute from the end);
        # a block is the argument of at most one LAZY, so this is linear
        depth = [0] * len(decoded)
        named = [False] * len(decoded)
        for i in range(len(decoded) - 1, -1, -1):
            d = 0
            for _pc, op, operands in decoded[i]:
                if op == LAZY:
                    for j in range(operands[1], operands[1] + operands[2]):
                        if named[j]:
                            raise VerifyError("block %d is the argument of two LAZY instructions" % j)
                        named[j] = True
                        d = max(d, depth[j] + 1)
            if d > MAX_LAZY_DEPTH:
                raise VerifyError("block %d nests LAZY deeper than %d" % (i, MAX_LAZY_DEPTH))
            depth[i] = d
        self.blocks = blocks
        self.consts = consts
        self.names = names
        self.machine = Machine(consts, names, decoded)
        self.roles = self._roles(body[4])
        rows = list(_list(body[5], "steps"))
        ids = {}
        for i in range(len(rows)):
            row = rows[i]
            if type(row) is list and len(row) == STEP_ROW_BEFORE_TIMEOUT:
                row = rows[i] = row + [None]
            row = _list(row, "step %d" % i, STEP_ROW)
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
        return self.machine.params(pairs)

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
            step["condition"] = self.machine.expression(self._block(row[10], what + " condition"))
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
        if row[12] is not None:
            step["timeout_ms"] = _bounded(row[12], what + " timeout_ms", 100, 600000)
        return step

    def new_run(self, inputs, max_instructions=None, max_iterations=None, max_host_calls=None, concurrent=False):
        """The run on the kernel, not started (a driver answers its requests)."""
        self.machine.reset(max_instructions)
        return _k.Run(self.plan, inputs, None, _k.MAX_STEPS, max_iterations, max_host_calls, concurrent, (_Fuel,))

    def run(self, inputs, host, max_instructions=None, max_iterations=None, max_host_calls=None):
        """Run the workflow with ``inputs`` ({"input": prompt, run parameters...})
        against ``host``; return the run record. Fuel: at most
        ``max_instructions`` expression instructions, ``max_iterations``
        step dispatches (sub-steps and retries included) and ``max_host_calls``
        host calls; past one the run fails."""
        self.machine.reset(max_instructions)
        # iterations and host calls are charged by the kernel, as on the Python backend
        r = _k.Run(self.plan, inputs, None, _k.MAX_STEPS, max_iterations, max_host_calls, False, (_Fuel,))
        return _k.drive_sync(r, host)

    def run_async(self, inputs, host, max_instructions=None, max_iterations=None, max_host_calls=None,
                  concurrent=True):
        """A coroutine: the run driven by asyncio (see rt_aevatar_run.run_async)."""
        self.machine.reset(max_instructions)
        return _k.run_async(self.plan, inputs, host, _k.MAX_STEPS, max_iterations, max_host_calls,
                            concurrent, (_Fuel,))

    def run_virtual(self, inputs, script, max_instructions=None, max_iterations=None, max_host_calls=None,
                    concurrent=True):
        """The run on a virtual clock (see rt_aevatar_run.run_virtual)."""
        self.machine.reset(max_instructions)
        return _k.run_virtual(self.plan, inputs, script, _k.MAX_STEPS, max_iterations, max_host_calls,
                              concurrent, (_Fuel,))


def load(data):
    """Decode and verify an aevatar program; VerifyError when it does not load."""
    try:
        return Program(_unpackb(split(data)))
    except VMError:
        raise
    except Exception as exc:  # noqa: BLE001 - malformed input must not escape as anything else
        raise VerifyError("malformed aevatar program: " + type(exc).__name__ + ": " + str(exc))
