"""The VM's CEL machine: verifies and runs CEL bytecode blocks.

CEL expressions of a dataflow program (the instruction dialect) compile to
small stack-code blocks (:mod:`flowc.backends.vm.cel_assemble`). This
module is the machine that runs them: standard library only plus
:mod:`rt_cel` (the CEL value semantics shared with the Python backend),
MicroPython-compatible, and fuel-bounded.

Code is a byte string: an opcode byte, then its operands as unsigned LEB128
varints. One *expression* is a root block with its number of parameters
and of frame slots; macro bodies are further blocks that share the frame
of the expression that calls them (a macro variable is a slot).

Opcodes (stack effect):

===== ================== ===================================================
0x01  CONST k            push consts[k]                                 (+1)
0x02  VAR n              push the variable names[n] of the environment  (+1)
0x03  LOCAL s            push frame slot s                              (+1)
0x04  SELECT n           v -> v.names[n]                               (0)
0x05  INDEX              v i -> v[i]                                    (-1)
0x06  OP k c             c arguments -> rt_cel key keys[k]            (1-c)
0x07  HAS n              v -> has(v.names[n])                           (0)
0x08  LIST c             c values -> a list                            (1-c)
0x09  MAP c              c key/value pairs -> a map                   (1-2c)
0x0A  TEMPLATE c         c parts -> interpolated text                 (1-c)
0x0B  JUMP t             continue at t                                  (0)
0x0C  JUMP_IF_NOT t      v -> ; continue at t when v is false (a non-bool is an error) (-1)
0x0D  TRY t              errors until END_TRY: drop to this depth, push the error, go to t (0; +1 at t)
0x0E  END_TRY            leave the innermost TRY                        (0)
0x0F  JUMP_FALSE_KEEP t  continue at t when the top is false (kept)     (0)
0x10  JUMP_TRUE_KEEP t   continue at t when the top is true (kept)      (0)
0x11  AND2               a b -> a && b over values or errors            (-1)
0x12  OR2                a b -> a || b over values or errors            (-1)
0x13  POP                drop the top                                   (-1)
0x14  MACRO k b s        target -> macro keys[k] with block b, the variable in slot s (0)
0x15  MAP3 b1 b2 s       target -> target.map(x, b1, b2) (filter b1, map b2) (0)
0x16  RETURN             end the block; its value is the top (depth 1)
0x17  MACRO2 k b s       target -> two-variable macro keys[k] with block b, the
                         variables in slots s and s+1                   (0)
0x18  MACRO2F k b1 b2 s  target -> two-variable transform keys[k] with filter
                         block b1 and body block b2, slots s and s+1    (0)
===== ================== ===================================================
"""

# MicroPython style: %-formatting reads the same on both interpreters.
# ruff: noqa: UP031

try:
    from flowc.backends.python import rt_cel as _c
    from flowc.backends.python import rt_dag as _d
    from flowc.backends.vm.vm import VMError as _VMError
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import rt_cel as _c
    import rt_dag as _d

    from vm import VMError as _VMError

CONST = 0x01
VAR = 0x02
LOCAL = 0x03
SELECT = 0x04
INDEX = 0x05
OP = 0x06
HAS = 0x07
LIST = 0x08
MAP = 0x09
TEMPLATE = 0x0A
JUMP = 0x0B
JUMP_IF_NOT = 0x0C
TRY = 0x0D
END_TRY = 0x0E
JUMP_FALSE_KEEP = 0x0F
JUMP_TRUE_KEEP = 0x10
AND2 = 0x11
OR2 = 0x12
POP = 0x13
MACRO = 0x14
MAP3 = 0x15
RETURN = 0x16
MACRO2 = 0x17
MACRO2F = 0x18

# opcode -> (name, operand kinds); kinds: c const, n name, s slot, k key, b block, t target, i count
OPCODES = {
    CONST: ("CONST", "c"), VAR: ("VAR", "n"), LOCAL: ("LOCAL", "s"), SELECT: ("SELECT", "n"),
    INDEX: ("INDEX", ""), OP: ("OP", "ki"), HAS: ("HAS", "n"), LIST: ("LIST", "i"), MAP: ("MAP", "i"),
    TEMPLATE: ("TEMPLATE", "i"), JUMP: ("JUMP", "t"), JUMP_IF_NOT: ("JUMP_IF_NOT", "t"), TRY: ("TRY", "t"),
    END_TRY: ("END_TRY", ""), JUMP_FALSE_KEEP: ("JUMP_FALSE_KEEP", "t"),
    JUMP_TRUE_KEEP: ("JUMP_TRUE_KEEP", "t"), AND2: ("AND2", ""), OR2: ("OR2", ""), POP: ("POP", ""),
    MACRO: ("MACRO", "kbs"), MAP3: ("MAP3", "bbs"), RETURN: ("RETURN", ""),
    MACRO2: ("MACRO2", "kbs"), MACRO2F: ("MACRO2F", "kbbs"),
}

# The rt_cel keys OP may name (strict: every argument evaluated first).
OP_KEYS = ("cel.eq", "cel.ne", "cel.lt", "cel.le", "cel.gt", "cel.ge", "cel.add", "cel.sub", "cel.mul",
           "cel.div", "cel.mod", "cel.in", "cel.neg", "cel.not", "cel.size", "cel.contains",
           "cel.startsWith", "cel.endsWith", "cel.matches", "cel.int", "cel.uint", "cel.double",
           "cel.string", "cel.bytes", "cel.bool", "cel.dyn", "cel.type", "cel.duration", "cel.timestamp",
           "cel.unbound", "cel.getFullYear", "cel.getMonth", "cel.getDate", "cel.getDayOfMonth",
           "cel.getDayOfWeek", "cel.getDayOfYear", "cel.getHours", "cel.getMinutes", "cel.getSeconds",
           "cel.getMilliseconds") + tuple(_c.EXT_DISPATCH)
MACRO_KEYS = ("cel.all", "cel.exists", "cel.exists_one", "cel.map", "cel.filter", "cel.bind")
_MACRO_FUNCS = {"cel.all": _c.all_, "cel.exists": _c.exists, "cel.exists_one": _c.exists_one,
                "cel.map": _c.map_, "cel.filter": _c.filter_, "cel.bind": _c.bind}
# Two-variable comprehensions (MACRO2); the transforms also take a filter (MACRO2F).
MACRO2_KEYS = ("cel.all2", "cel.exists2", "cel.exists_one2", "cel.transformList", "cel.transformMap",
               "cel.transformMapEntry")
MACRO2F_KEYS = ("cel.transformList", "cel.transformMap", "cel.transformMapEntry")
_MACRO2_FUNCS = {"cel.all2": _c.all2, "cel.exists2": _c.exists2, "cel.exists_one2": _c.exists_one2,
                 "cel.transformList": _c.transform_list, "cel.transformMap": _c.transform_map,
                 "cel.transformMapEntry": _c.transform_map_entry}

DEFAULT_FUEL = 10000000   # instructions per evaluation of one expression, outside a run
DEFAULT_MAX_INSTRUCTIONS = 200000000   # instructions per run (vm.DEFAULT_MAX_INSTRUCTIONS)
MAX_STACK = 131072  # >= MAX_EXPR_DEPTH * (2 * MAX_EXPR_ITEMS + 1) of ir/limits.py (a test checks)


class CelVMError(_VMError):
    """CEL bytecode or a dataflow program that does not verify."""


class FuelExhausted(_d.OutOfFuel):
    """Out of instructions. In a run, the run fails (rt_dag.OutOfFuel);
    no step policy catches it."""

    def __init__(self, limit):
        super().__init__("fuel exhausted: more than " + str(limit) + " instructions")
        self.message = "fuel exhausted: more than " + str(limit) + " instructions"


def read_varint(code, p):
    shift = 0
    value = 0
    while True:
        if p >= len(code):
            raise CelVMError("truncated instruction")
        b = code[p]
        p += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, p
        shift += 7
        if shift > 63:
            raise CelVMError("varint too long")


def decode(code):
    """[(pc, opcode, operands, next pc)] of a block, or CelVMError."""
    out = []
    p = 0
    while p < len(code):
        start = p
        op = code[p]
        p += 1
        spec = OPCODES.get(op)
        if spec is None:
            raise CelVMError("unknown opcode 0x%02x at %d" % (op, start))
        operands = []
        for _kind in spec[1]:
            v, p = read_varint(code, p)
            operands.append(v)
        out.append((start, op, operands, p))
    return out


_EFFECT = {CONST: 1, VAR: 1, LOCAL: 1, SELECT: 0, INDEX: -1, HAS: 0, JUMP: 0, JUMP_IF_NOT: -1, TRY: 0,
           END_TRY: 0, JUMP_FALSE_KEEP: 0, JUMP_TRUE_KEEP: 0, AND2: -1, OR2: -1, POP: -1, MACRO: 0, MAP3: 0,
           MACRO2: 0, MACRO2F: 0}


def verify_block(code, sizes, nslots):
    """Check one block: known opcodes, operands in range, jumps to
    instruction starts, the stack depth the same on every path into an
    instruction and exactly 1 at RETURN. ``sizes`` gives the sizes of the
    tables (consts, names, keys, blocks)."""
    ins = decode(code)
    if not ins or ins[-1][1] != RETURN:
        raise CelVMError("a block must end with RETURN")
    index = {}
    for i in range(len(ins)):
        index[ins[i][0]] = i
    limits = {"c": sizes["consts"], "n": sizes["names"], "k": sizes["keys"], "b": sizes["blocks"],
              "s": nslots}
    for pc, op, operands, _nxt in ins:
        kinds = OPCODES[op][1]
        for kind, v in zip(kinds, operands):
            if kind in limits and v >= limits[kind]:
                raise CelVMError("operand %d of %s at %d is out of range" % (v, OPCODES[op][0], pc))
            if kind == "t" and v not in index:
                raise CelVMError("jump to %d is not an instruction start" % v)
        if op == OP and OP_KEYS.count(sizes["key_names"][operands[0]]) == 0:
            raise CelVMError("OP names a key that is not a strict CEL function")
        if op == MACRO and MACRO_KEYS.count(sizes["key_names"][operands[0]]) == 0:
            raise CelVMError("MACRO names a key that is not a CEL macro")
        if op == MACRO2 and MACRO2_KEYS.count(sizes["key_names"][operands[0]]) == 0:
            raise CelVMError("MACRO2 names a key that is not a two-variable CEL macro")
        if op == MACRO2F and MACRO2F_KEYS.count(sizes["key_names"][operands[0]]) == 0:
            raise CelVMError("MACRO2F names a key that is not a two-variable CEL transform")
        if (op == MACRO2 or op == MACRO2F) and operands[-1] + 1 >= nslots:
            raise CelVMError("the second variable slot of %s at %d is out of range" % (OPCODES[op][0], pc))
    depth = [None] * len(ins)
    work = [(0, 0)]
    while work:
        i, d = work.pop()
        if i >= len(ins):
            raise CelVMError("control runs off the end of the block")
        if depth[i] is not None:
            if depth[i] != d:
                raise CelVMError("inconsistent stack depth at %d" % ins[i][0])
            continue
        depth[i] = d
        pc, op, operands, _nxt = ins[i]
        if op == RETURN:
            if d != 1:
                raise CelVMError("RETURN with %d values on the stack" % d)
            continue
        if op == OP:
            need, after = operands[1], d - operands[1] + 1
        elif op in (LIST, TEMPLATE):
            need, after = operands[0], d - operands[0] + 1
        elif op == MAP:
            need, after = 2 * operands[0], d - 2 * operands[0] + 1
        else:
            eff = _EFFECT[op]
            need = {INDEX: 2, AND2: 2, OR2: 2, SELECT: 1, HAS: 1, JUMP_IF_NOT: 1, POP: 1, MACRO: 1, MAP3: 1,
                    MACRO2: 1, MACRO2F: 1, JUMP_FALSE_KEEP: 1, JUMP_TRUE_KEEP: 1}.get(op, 0)
            after = d + eff
        if d < need:
            raise CelVMError("stack underflow at %d" % pc)
        if after > MAX_STACK:
            raise CelVMError("stack overflow at %d" % pc)
        if op == JUMP:
            work.append((index[operands[0]], after))
            continue
        if op in (JUMP_IF_NOT, JUMP_FALSE_KEEP, JUMP_TRUE_KEEP):
            work.append((index[operands[0]], after))
        if op == TRY:
            work.append((index[operands[0]], d + 1))
        work.append((i + 1, after))


class Machine:
    """Runs the blocks of one program (verified beforehand by :func:`verify_block`).

    At load every instruction is turned into a tuple ``(opcode, a, b, c)``
    with its operands resolved: the constant itself, the name, the rt_cel
    function, the instruction index a jump lands on. The loop keeps the fuel
    in a local and writes it back around macro bodies, which run nested.
    """

    def __init__(self, consts, names, keys, blocks, fuel=DEFAULT_FUEL):
        self.consts = consts
        self.names = names
        self.keys = keys
        self.blocks = blocks
        self.fuel = fuel
        self.left = fuel
        self.per_run = False  # within a run, the fuel is the run's, not one evaluation's
        self.code = [self._resolve(decode(b)) for b in blocks]

    def start_run(self, max_instructions):
        """From now on every evaluation spends the run's fuel."""
        self.saved_fuel = self.fuel
        self.fuel = DEFAULT_MAX_INSTRUCTIONS if max_instructions is None else max_instructions
        self.left = self.fuel
        self.per_run = True

    def end_run(self):
        self.fuel = self.saved_fuel
        self.per_run = False

    def _resolve(self, ins):
        index = {}
        for i in range(len(ins)):
            index[ins[i][0]] = i
        out = []
        for _pc, op, operands, _nxt in ins:
            a = b = c = None
            if op == CONST:
                a = self.consts[operands[0]]
            elif op in (VAR, SELECT, HAS):
                a = self.names[operands[0]]
            elif op == OP:
                a, b = _c.DISPATCH[self.keys[operands[0]]], operands[1]
            elif op in (JUMP, JUMP_IF_NOT, TRY, JUMP_FALSE_KEEP, JUMP_TRUE_KEEP):
                a = index[operands[0]]
            elif op == MACRO:
                a, b, c = _MACRO_FUNCS[self.keys[operands[0]]], operands[1], operands[2]
            elif op == MAP3:
                a, b, c = operands[0], operands[1], operands[2]
            elif op == MACRO2:
                a, b, c = _MACRO2_FUNCS[self.keys[operands[0]]], (operands[1],), operands[2]
            elif op == MACRO2F:
                a, b, c = _MACRO2_FUNCS[self.keys[operands[0]]], (operands[2], operands[1]), operands[3]
            elif operands:
                a = operands[0]
            out.append((op, a, b, c))
        return out

    def evaluate(self, block, nslots, env, args):
        """The value of root block ``block`` with ``args`` in its first slots."""
        frame = [None] * nslots
        for i in range(len(args)):
            frame[i] = args[i]
        if not self.per_run:
            self.left = self.fuel
        return self.run(block, env, frame)

    def run(self, block, env, frame):
        code = self.code[block]
        stack = []
        push = stack.append
        handlers = []
        i = 0
        left = self.left
        while True:
            try:
                while True:
                    left -= 1
                    if left < 0:
                        raise FuelExhausted(self.fuel)
                    op, a, b, c = code[i]
                    i += 1
                    if op == VAR:
                        try:
                            push(env[a])
                        except KeyError:
                            v, i = self._qualified(code, i, env, a)
                            push(v)
                    elif op == SELECT:
                        stack[-1] = _c.select(stack[-1], a)
                    elif op == CONST:
                        push(a)
                    elif op == OP:
                        if b == 2:
                            y = stack.pop()
                            stack[-1] = a(stack[-1], y)
                        elif b == 1:
                            stack[-1] = a(stack[-1])
                        else:
                            args = stack[len(stack) - b:]
                            del stack[len(stack) - b:]
                            push(a(*args))
                    elif op == LOCAL:
                        push(frame[a])
                    elif op == RETURN:
                        self.left = left
                        return stack[-1]
                    elif op == INDEX:
                        key = stack.pop()
                        stack[-1] = _c.index(stack[-1], key)
                    elif op == TRY:
                        handlers.append((a, len(stack)))
                    elif op == END_TRY:
                        handlers.pop()
                    elif op == JUMP:
                        i = a
                    elif op == JUMP_IF_NOT:
                        if not _c.test(stack.pop()):
                            i = a
                    elif op == JUMP_FALSE_KEEP:
                        if stack[-1] is False:
                            i = a
                    elif op == JUMP_TRUE_KEEP:
                        if stack[-1] is True:
                            i = a
                    elif op == AND2:
                        y = stack.pop()
                        stack[-1] = _c.and_values(stack[-1], y)
                    elif op == OR2:
                        y = stack.pop()
                        stack[-1] = _c.or_values(stack[-1], y)
                    elif op == HAS:
                        stack[-1] = _c.has(stack[-1], a)
                    elif op == LIST:
                        items = stack[len(stack) - a:]
                        del stack[len(stack) - a:]
                        push(items)
                    elif op == MAP:
                        n = a * 2
                        flat = stack[len(stack) - n:]
                        del stack[len(stack) - n:]
                        push(_c.make_map([(flat[j], flat[j + 1]) for j in range(0, n, 2)]))
                    elif op == TEMPLATE:
                        parts = stack[len(stack) - a:]
                        del stack[len(stack) - a:]
                        push(_c.template_json(parts))
                    elif op == POP:
                        stack.pop()
                    elif op == MACRO:
                        self.left = left
                        stack[-1] = a(stack[-1], self._body(b, c, env, frame))
                        left = self.left
                    elif op == MACRO2 or op == MACRO2F:
                        # b: (body block,) or (body block, filter block)
                        self.left = left
                        bodies = [self._body2(blk, c, env, frame) for blk in b]
                        stack[-1] = a(stack[-1], *bodies)
                        left = self.left
                    else:  # MAP3
                        self.left = left
                        stack[-1] = _c.map3(stack[-1], self._body(a, c, env, frame), self._body(b, c, env, frame))
                        left = self.left
            except _c.CelError as e:
                # A macro body that failed has already spent its fuel in self.left.
                left = min(left, self.left)
                if not handlers:
                    self.left = left
                    raise
                target, depth = handlers.pop()
                del stack[depth:]
                push(e)
                i = target

    def _qualified(self, code, i, env, name):
        """A variable missing from ``env``: the longest qualified name
        ``name.f1...fk`` bound in it, where the SELECTs that follow the VAR
        at ``i`` give the fields; (value, the instruction after the SELECTs
        it took in). Else the plain variable lookup (a type name or an error)."""
        fields = []
        j = i
        while j < len(code) and code[j][0] == SELECT:
            fields.append(code[j][1])
            j += 1
        v, taken = _c.qualified(env, name, fields)
        return v, i + taken

    def _body(self, block, slot, env, frame):
        def body(x):
            frame[slot] = x
            return self.run(block, env, frame)
        return body

    def _body2(self, block, slot, env, frame):
        def body(k, v):
            frame[slot] = k
            frame[slot + 1] = v
            return self.run(block, env, frame)
        return body
