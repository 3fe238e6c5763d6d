"""The VM's expression machine: one instruction set for the expressions of
every dialect (docs/bytecode.md section 9).

A program's expressions are *blocks* of stack code. An opcode byte is
followed by its operands, each an unsigned LEB128 varint of at most 5 bytes.
Where the dialects differ, an operand names the rule by the name the IR's
DialectProfile uses (``ACCESS``, ``TRUTHINESS``, ``STRINGIFY``, ``MAPS``),
and functions are called by the IR's semantic key (``cel.size``,
``aevatar.concat``) through :data:`BUILTINS`, which maps each key to the
dialect's runtime function (cel, aevatar_text, and WorkflowSkill's
value functions, flowc.runtime.wfs): the algorithms the Python backend's generated
code runs. Each dialect's builtins and rule functions live beside its
runtime (expr_cel, expr_aevatar, expr_wfs) and :func:`register` at import:
the loader of a dialect imports its own, so a device holds only the runtimes
of the dialects it runs. A program may call only the builtins registered for
its profile; the verifier refuses any other key.

Functions that take unevaluated arguments (CEL's comprehensions, aevatar's
arithmetic and and/or) get *lambdas*: ``LAMBDA b s p`` makes a closure that
stores its p arguments in frame slots s..s+p-1 and evaluates block b. A
lambda is only ever an argument of the CALL right after it, so no lambda is
a value; a block's lambdas name later blocks, so evaluation always ends.

Standard library only (plus the run's fuel, flowc.runtime.fuel, and errors.py's VerifyError);
MicroPython-compatible; fuel-bounded: every instruction executed
costs one unit.
"""

# MicroPython style: %-formatting reads the same on both interpreters.
# ruff: noqa: UP031

try:
    from flowc.backends.vm.errors import VerifyError
    from flowc.runtime.fuel import DEFAULT_MAX_INSTRUCTIONS, OutOfFuel, exhausted
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    from errors import VerifyError
    from fuel import DEFAULT_MAX_INSTRUCTIONS, OutOfFuel, exhausted  # noqa: F401

CONST = 0x01
LOAD = 0x02
LOCAL = 0x03
FIELD = 0x04
INDEX = 0x05
CALL = 0x06
LIST = 0x07
MAP = 0x08
TEMPLATE = 0x09
JUMP = 0x0A
JUMP_IF_NOT = 0x0B
JUMP_IF_FALSE_KEEP = 0x0C
JUMP_IF_TRUE_KEEP = 0x0D
TRY = 0x0E
END_TRY = 0x0F
POP = 0x10
LAMBDA = 0x11
RETURN = 0x12

# opcode -> (name, operand kinds); kinds: c const, a access rule, n name,
# s slot, k key, i count, y stringify rule, m map rule, t target,
# h truthiness rule, b block, p parameter count
OPCODES = {
    CONST: ("CONST", "c"), LOAD: ("LOAD", "an"), LOCAL: ("LOCAL", "s"), FIELD: ("FIELD", "an"),
    INDEX: ("INDEX", "a"), CALL: ("CALL", "ki"), LIST: ("LIST", "i"), MAP: ("MAP", "mi"),
    TEMPLATE: ("TEMPLATE", "yi"), JUMP: ("JUMP", "t"), JUMP_IF_NOT: ("JUMP_IF_NOT", "ht"),
    JUMP_IF_FALSE_KEEP: ("JUMP_IF_FALSE_KEEP", "t"), JUMP_IF_TRUE_KEEP: ("JUMP_IF_TRUE_KEEP", "t"),
    TRY: ("TRY", "t"), END_TRY: ("END_TRY", ""), POP: ("POP", ""), LAMBDA: ("LAMBDA", "bsp"),
    RETURN: ("RETURN", ""),
}

# LOAD and FIELD write their two operands as one varint, name << ACCESS_BITS
# | access rule (the access rule in the low bits; a name index below 32 in one byte).
PACKED_OPS = (LOAD, FIELD)
ACCESS_BITS = 2

# The rules an operand names, by position (the names are DialectProfile's).
ACCESS = ("cel", "flat_keys", "flat_keys_ci", "wfs")
TRUTHINESS = ("cel_bool", "aevatar_truthy", "js_boolean", "wfs_truthy")
STRINGIFY = ("json", "aevatar", "wfs")
MAPS = ("cel", "wfs", "wfs_compact")
# which access rules FIELD and INDEX have (LOAD has all of ACCESS)
FIELD_ACCESS = ("cel", "wfs")

# What a program's code may use: its dialect's builtins (by the key's first
# part), rules and opcodes. An aevatar program's values stay strings (its
# kernel reads nothing else); a dataflow program's stay CEL values.
_ALL_OPS = (CONST, LOAD, LOCAL, FIELD, INDEX, CALL, LIST, MAP, TEMPLATE, JUMP, JUMP_IF_NOT, JUMP_IF_FALSE_KEEP,
            JUMP_IF_TRUE_KEEP, TRY, END_TRY, POP, LAMBDA, RETURN)
PROFILES = {
    "cel": {"ops": _ALL_OPS, "keys": ("cel",), "a": ("cel",), "h": ("cel_bool",), "y": ("json",),
            "m": ("cel",), "builtins": {}},
    "aevatar": {"ops": (CONST, LOAD, CALL, TEMPLATE, JUMP, JUMP_IF_NOT, LAMBDA, RETURN), "keys": ("aevatar",),
                "a": ("flat_keys", "flat_keys_ci"), "h": ("aevatar_truthy",), "y": ("aevatar",), "m": (), "builtins": {}},
    "wfs": {"ops": (CONST, LOAD, FIELD, INDEX, CALL, LIST, MAP, TEMPLATE, JUMP, JUMP_IF_NOT, RETURN),
            "keys": ("wfs",), "a": ("wfs",), "h": ("js_boolean", "wfs_truthy"), "y": ("wfs",), "m": ("wfs", "wfs_compact"), "builtins": {}},
}

DEFAULT_FUEL = 10000000   # instructions per evaluation of one expression, outside a run
MAX_STACK = 131072  # >= MAX_EXPR_DEPTH * (2 * MAX_EXPR_ITEMS + 1) of ir/limits.py (a test checks)
MAX_COUNT = 131072  # the count of CALL, LIST, MAP and TEMPLATE
MAX_LAMBDA_DEPTH = 64  # >= MAX_EXPR_DEPTH of ir/limits.py (a test checks)
MAX_TRY_DEPTH = 256   # TRY regions open at once


# key -> (function, fewest arguments, most arguments or -1 for any, first
# lambda argument or -1, parameters of each lambda). Arguments from the
# first lambda one on are LAMBDAs; the others are values. Empty until a
# dialect's builtins module (expr_cel, expr_aevatar, expr_wfs) registers its
# keys: a device that runs one dialect holds that dialect's runtime alone.
BUILTINS = {}


class _NoError(Exception):
    """What TRY catches until a dialect with TRY (CEL) registers its error."""


_Caught = _NoError
_qualified_name = None   # LOAD cel of a missing name: cel.qualified, once CEL is registered


def register(profile, table, rules):
    """Make ``table`` (key -> builtin row, as :data:`BUILTINS`) the builtins
    of programs of ``profile`` (a key of PROFILES) and install the functions
    of the rules the dialect owns. ``rules`` maps "load", "field", "index",
    "test", "template" and "map" to {rule name: function}; "caught" is the
    error class TRY catches, "qualified" CEL's qualified-name lookup."""
    global _Caught, _qualified_name
    for key in table:
        if key.split(".")[0] not in PROFILES[profile]["keys"]:
            raise ValueError("builtin " + key + " is not of " + profile)
    for key in table:
        BUILTINS[key] = table[key]
    PROFILES[profile]["builtins"] = table
    for kind in rules:
        if kind == "caught":
            _Caught = rules[kind]
        elif kind == "qualified":
            _qualified_name = rules[kind]
        else:
            names, slots = _RUN_RULES[kind]
            for name in rules[kind]:
                slots[names.index(name)] = rules[kind][name]


# ================================================================ decoding and verification

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
        packed = op == LOAD or op == FIELD
        for _kind in spec[1][:1] if packed else spec[1]:
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
        if packed:
            operands = [value & 3, value >> ACCESS_BITS]
        out.append((start, op, operands))
    return out


_RULES = {"a": ACCESS, "h": TRUTHINESS, "y": STRINGIFY, "m": MAPS}


def _check_operands(index, ins, sizes, keys, nslots, targets, profile):
    """Operands in range: the pools, the rules (those of the profile), the
    builtins and their arguments, the slots and blocks of lambdas, jumps on
    instruction starts."""
    limits = {"c": sizes[0], "n": sizes[1], "k": sizes[2], "s": nslots, "i": MAX_COUNT + 1}
    for i in range(len(ins)):
        pc, op, operands = ins[i]
        name, kinds = OPCODES[op]
        if op not in profile["ops"]:
            raise VerifyError("block %d at %d: %s is not an instruction of this program" % (index, pc, name))
        for j in range(len(kinds)):
            kind = kinds[j]
            v = operands[j]
            if kind in limits and v >= limits[kind] and op != LAMBDA:
                raise VerifyError("block %d at %d: operand %d of %s is out of range" % (index, pc, v, name))
            if kind in _RULES and (v >= len(_RULES[kind]) or _RULES[kind][v] not in profile[kind]):
                raise VerifyError("block %d at %d: %s names no rule %d of this program" % (index, pc, name, v))
            if kind == "t" and v not in targets:
                raise VerifyError("block %d at %d: jump to %d is not an instruction start" % (index, pc, v))
        if (op == FIELD or op == INDEX) and ACCESS[operands[0]] not in FIELD_ACCESS:
            raise VerifyError("block %d at %d: %s has no access rule %s" % (index, pc, name, ACCESS[operands[0]]))
        if op == LAMBDA:
            if operands[0] <= index or operands[0] >= sizes[3]:
                raise VerifyError("block %d at %d: a LAMBDA names block %d, not a later one"
                                  % (index, pc, operands[0]))
            if operands[1] + operands[2] > nslots:
                raise VerifyError("block %d at %d: LAMBDA slots out of range" % (index, pc))
        if op == CALL:
            _check_call(index, ins, i, keys, profile)


def _check_call(index, ins, i, keys, profile):
    pc, _op, operands = ins[i]
    key = keys[operands[0]]
    row = profile["builtins"].get(key)
    if row is None:
        raise VerifyError("block %d at %d: CALL names %r, which is no builtin of this program" % (index, pc, key))
    count = operands[1]
    if count < row[1] or (row[2] >= 0 and count > row[2]):
        raise VerifyError("block %d at %d: %s with %d arguments" % (index, pc, key, count))
    lambdas = _lambda_count(row, count)
    if lambdas > i:
        raise VerifyError("block %d at %d: %s needs %d lambdas before it" % (index, pc, key, lambdas))
    for j in range(i - lambdas, i):
        if ins[j][1] != LAMBDA or ins[j][2][2] != row[4]:
            raise VerifyError("block %d at %d: argument %d of %s must be a LAMBDA of %d parameters"
                              % (index, pc, j - i + count, key, row[4]))


def _lambda_count(row, count):
    """How many of a CALL's ``count`` arguments are lambdas (the last ones)."""
    return count - row[3] if row[3] >= 0 and count > row[3] else 0


def _lambda_groups(index, ins, keys):
    """Every LAMBDA is an argument of the CALL that follows its run of
    LAMBDAs; the offsets control must not jump to (inside such a run)."""
    inner = {}
    i = 0
    n = len(ins)
    while i < n:
        if ins[i][1] != LAMBDA:
            i += 1
            continue
        j = i
        while j < n and ins[j][1] == LAMBDA:
            j += 1
        if j >= n or ins[j][1] != CALL \
                or j - i > _lambda_count(BUILTINS[keys[ins[j][2][0]]], ins[j][2][1]):
            raise VerifyError("block %d at %d: a LAMBDA must be an argument of a CALL" % (index, ins[i][0]))
        for k in range(i + 1, j + 1):
            inner[ins[k][0]] = True
        i = j + 1
    return inner


def _pops(op, operands):
    """(values an instruction needs, values it leaves) for the stack check."""
    if op == CALL:
        return operands[1], 1
    if op == LIST:
        return operands[0], 1
    if op == MAP:
        return 2 * operands[1], 1
    if op == TEMPLATE:
        return operands[1], 1
    if op in (CONST, LOAD, LOCAL, LAMBDA):
        return 0, 1
    if op == INDEX:
        return 2, 1
    if op in (FIELD, JUMP_IF_FALSE_KEEP, JUMP_IF_TRUE_KEEP):
        return 1, 1
    if op in (JUMP_IF_NOT, POP):
        return 1, 0
    return 0, 0   # JUMP, TRY, END_TRY, RETURN


def verify_block(index, code, sizes, keys, nslots, profile):
    """Check block ``index`` and return its decoded instructions. ``sizes``
    is (consts, names, keys, blocks); ``keys`` the key table; ``profile``
    one of PROFILES, what the program may use. The same stack
    depth and open TRYs on every path into an instruction; no TRY region
    pops below the depth it started at; exactly one value at RETURN."""
    ins = decode(code)
    if not ins:
        raise VerifyError("block %d is empty" % index)
    targets = {}
    for i in range(len(ins)):
        targets[ins[i][0]] = i
    return verify_decoded(index, ins, targets, sizes, keys, nslots, profile)


def verify_decoded(index, ins, targets, sizes, keys, nslots, profile):
    """verify_block's checks of decoded instructions ``[(pc, opcode,
    operands)]``, ``targets`` mapping each pc to its instruction's index."""
    _check_operands(index, ins, sizes, keys, nslots, targets, profile)
    inner = _lambda_groups(index, ins, keys)
    for _pc, op, operands in ins:
        if op in (JUMP, TRY, JUMP_IF_FALSE_KEEP, JUMP_IF_TRUE_KEEP, JUMP_IF_NOT) and operands[-1] in inner:
            raise VerifyError("block %d: a jump to %d lands between a LAMBDA and its CALL" % (index, operands[-1]))
    # states: (depth, floors): floors are the depths of the open TRYs, innermost last
    state = [None] * len(ins)
    work = [(0, 0, ())]
    while work:
        i, d, floors = work.pop()
        if i >= len(ins):
            raise VerifyError("block %d: control runs off its end" % index)
        if state[i] is not None:
            if state[i] != (d, floors):
                raise VerifyError("block %d at %d: the stack differs between the paths into it" % (index, ins[i][0]))
            continue
        state[i] = (d, floors)
        pc, op, operands = ins[i]
        need, leave = _pops(op, operands)
        floor = floors[-1] if floors else 0
        if d - need < floor:
            raise VerifyError("block %d at %d: stack underflow" % (index, pc))
        after = d - need + leave
        if after > MAX_STACK:
            raise VerifyError("block %d at %d: stack overflow" % (index, pc))
        if op == RETURN:
            if d != 1:
                raise VerifyError("block %d at %d: RETURN with %d values on the stack" % (index, pc, d))
            continue
        if op == JUMP:
            work.append((targets[operands[0]], after, floors))
            continue
        if op == TRY:
            if len(floors) >= MAX_TRY_DEPTH:
                raise VerifyError("block %d at %d: TRY nests deeper than %d" % (index, pc, MAX_TRY_DEPTH))
            work.append((targets[operands[0]], d + 1, floors))
            work.append((i + 1, d, floors + (d,)))
            continue
        if op == END_TRY:
            if not floors:
                raise VerifyError("block %d at %d: END_TRY outside a TRY" % (index, pc))
            work.append((i + 1, d, floors[:-1]))
            continue
        if op in (JUMP_IF_NOT, JUMP_IF_FALSE_KEEP, JUMP_IF_TRUE_KEEP):
            work.append((targets[operands[-1]], after, floors))
        work.append((i + 1, after, floors))
    return ins


# Opcodes a straight-line block (no jump, TRY or LAMBDA) holds besides its
# final RETURN, and the stack effect of those with fixed ones.
_STRAIGHT_OPS = (CONST, LOAD, LOCAL, FIELD, INDEX, CALL, LIST, MAP, TEMPLATE, POP)
_FIXED_EFFECT = {CONST: (0, 1), LOAD: (0, 1), LOCAL: (0, 1), FIELD: (1, 1), INDEX: (2, 1), POP: (1, 0)}


def _straight_checks(profile, sizes, nslots):
    """opcode -> what each operand must be for the straight-line pass: an
    int it must be below, or the set of the rule numbers the profile allows."""
    bounds = {"c": sizes[0], "n": sizes[1], "k": sizes[2], "s": nslots, "i": MAX_COUNT + 1}
    checks = {RETURN: ()}
    for op in _STRAIGHT_OPS:
        if op not in profile["ops"]:
            continue
        row = []
        for kind in OPCODES[op][1]:
            if kind in bounds:
                row.append(bounds[kind])
                continue
            table = _RULES[kind]
            allowed = [v for v in range(len(table)) if table[v] in profile[kind]]
            if op == FIELD or op == INDEX:
                allowed = [v for v in allowed if table[v] in FIELD_ACCESS]
            row.append(set(allowed))
        checks[op] = tuple(row)
    return checks


def _straight_block(code, checks, keys, builtins):
    """The decoded instructions of a block that runs straight to its final
    RETURN (no jump, TRY or LAMBDA) and passes every check verify_block
    makes; None for any other block."""
    out = []
    p = 0
    n = len(code)
    depth = 0
    while p < n:
        start = p
        op = code[p]
        p += 1
        row = checks.get(op)
        if row is None:
            return None
        if op == RETURN:
            return out + [(start, op, [])] if p == n and depth == 1 else None
        operands = []
        packed = op == LOAD or op == FIELD
        rest = 0
        for check in row:
            if packed and operands:      # the name: the rest of the first varint
                v = rest
            else:
                v = code[p] if p < n else 0x80
                if v < 0x80:
                    p += 1
                else:
                    v, p = _varint_or_none(code, p)
                    if v is None:
                        return None
                if packed:
                    rest = v >> ACCESS_BITS
                    v &= 3
            if (v >= check) if type(check) is int else (v not in check):
                return None
            operands.append(v)
        effect = _FIXED_EFFECT.get(op)
        if effect is None:      # CALL, LIST, MAP, TEMPLATE: a count last
            count = operands[-1]
            if op == CALL:
                brow = builtins.get(keys[operands[0]])
                if brow is None or count < brow[1] or (brow[2] >= 0 and count > brow[2]) \
                        or _lambda_count(brow, count):
                    return None
            effect = (2 * count if op == MAP else count, 1)
        if depth < effect[0]:
            return None
        depth += effect[1] - effect[0]
        if depth > MAX_STACK:
            return None
        out.append((start, op, operands))
    return None


def _varint_or_none(code, p):
    """(value, next offset) of the varint at p, or (None, p) when it is
    truncated or longer than 5 bytes."""
    value = 0
    shift = 0
    n = len(code)
    while p < n and shift < 35:
        b = code[p]
        p += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, p
    return None, p


def verify(blocks, nconsts, names, keys, nslots, profile):
    """Verify every block of a program (``nslots``: the largest frame an
    expression has; ``profile``: a key of PROFILES); the decoded blocks. A block is the body of at most one
    LAMBDA, and lambdas nest at most MAX_LAMBDA_DEPTH deep."""
    for k in keys:
        if type(k) is not str:
            raise VerifyError("a key must be a string")
    sizes = (nconsts, len(names), len(keys), len(blocks))
    rules = PROFILES[profile]
    checks = _straight_checks(rules, sizes, nslots)
    decoded = []
    for i in range(len(blocks)):
        if type(blocks[i]) is not bytes:
            raise VerifyError("block %d must be msgpack bin" % i)
        # most blocks run straight through: checked in one pass; the others,
        # and any the one pass doubts, by the general verifier (which says what is wrong)
        ins = _straight_block(blocks[i], checks, keys, rules["builtins"])
        decoded.append(ins if ins is not None else verify_block(i, blocks[i], sizes, keys, nslots, rules))
    check_lambdas(decoded)
    return decoded


def _index_stream(v, n, what):
    """Check that ``v`` is an array of integers in [0, n), all at once."""
    if type(v) is not list:
        raise VerifyError("%s must be an array" % what)
    if v and (set(map(type, v)) != {int} or min(v) < 0 or max(v) >= n):
        raise VerifyError("%s must be integers in [0, %d)" % (what, n))


def _holes(index, ins):
    """(constant holes, name holes) of form ``index``: each hole the next
    one or one used before (numbered in order of first use)."""
    nc = nn = 0
    for pc, op, o in ins:
        if op == CONST:
            if o[0] > nc:
                raise VerifyError("form %d at %d: constant hole %d before hole %d" % (index, pc, o[0], nc))
            nc += o[0] == nc
        elif op == LOAD or op == FIELD:
            if o[1] > nn:
                raise VerifyError("form %d at %d: name hole %d before hole %d" % (index, pc, o[1], nn))
            nn += o[1] == nn
    return nc, nn


def verify_forms(section, nconsts, names, keys, nslots, profile):
    """Verify a program's blocks held as forms, ``[forms, uses, consts,
    names]`` (docs/bytecode.md section 2.3): every form once, as a block
    whose pools are its holes (no LAMBDA: a form names no block); each
    block's form in range; the streams exactly as long as the holes of the
    blocks' forms and, all at once, in range of the pools. The blocks, as
    :class:`FormBlocks`."""
    if type(section) is not list or len(section) != 4:
        raise VerifyError("section code must be [forms, uses, consts, names]")
    forms, uses, crefs, nrefs = section
    if type(forms) is not list:
        raise VerifyError("the forms must be an array")
    for k in keys:
        if type(k) is not str:
            raise VerifyError("a key must be a string")
    rules = PROFILES[profile]
    sizes = (MAX_COUNT, MAX_COUNT, len(keys), 0)
    checks = _straight_checks(rules, sizes, nslots)
    decoded = []
    holes = []
    for i in range(len(forms)):
        if type(forms[i]) is not bytes:
            raise VerifyError("form %d must be msgpack bin" % i)
        ins = _straight_block(forms[i], checks, keys, rules["builtins"])
        if ins is None:
            ins = verify_block(i, forms[i], sizes, keys, nslots, rules)
        decoded.append(ins)
        holes.append(_holes(i, ins))
    _index_stream(uses, len(forms), "the blocks' forms")
    nc = sum([holes[f][0] for f in uses])
    nn = sum([holes[f][1] for f in uses])
    if type(crefs) is not list or len(crefs) != nc or type(nrefs) is not list or len(nrefs) != nn:
        raise VerifyError("the blocks' forms have %d constant and %d name holes; the streams differ" % (nc, nn))
    _index_stream(crefs, nconsts, "the constant stream")
    _index_stream(nrefs, len(names), "the name stream")
    return FormBlocks(decoded, holes, uses, crefs, nrefs)


class FormBlocks:
    """A program's decoded blocks from its verified forms: block ``b`` the
    instructions of its form with the holes filled, made when asked (the
    Machine resolves a block when it first runs)."""

    def __init__(self, forms, holes, uses, consts, names):
        self.forms = forms
        self.holes = holes
        self.uses = uses
        self.consts = consts
        self.names = names
        self.starts = None

    def __len__(self):
        return len(self.uses)

    def _starts(self):
        """Where each block's holes start in the streams (conversion only)."""
        starts = []
        nc = nn = 0
        holes = self.holes
        for f in self.uses:
            starts.append((nc, nn))
            nc += holes[f][0]
            nn += holes[f][1]
        return starts

    def __getitem__(self, block):
        if self.starts is None:
            self.starts = self._starts()
        c, n = self.starts[block]
        consts = self.consts
        names = self.names
        out = []
        for pc, op, o in self.forms[self.uses[block]]:
            if op == CONST:
                o = [consts[c + o[0]]]
            elif op == LOAD or op == FIELD:
                o = [o[0], names[n + o[1]]]
            out.append((pc, op, o))
        return out


def check_lambdas(decoded):
    """No block is the body of two LAMBDAs; lambdas nest at most MAX_LAMBDA_DEPTH deep."""
    depth = [0] * len(decoded)
    named = [False] * len(decoded)
    for i in range(len(decoded) - 1, -1, -1):
        d = 0
        for _pc, op, operands in decoded[i]:
            if op == LAMBDA:
                b = operands[0]
                if named[b]:
                    raise VerifyError("block %d is the body of two LAMBDAs" % b)
                named[b] = True
                d = max(d, depth[b] + 1)
        if d > MAX_LAMBDA_DEPTH:
            raise VerifyError("block %d nests lambdas deeper than %d" % (i, MAX_LAMBDA_DEPTH))
        depth[i] = d


# ================================================================ running

# Resolved opcodes: a mode operand picks one of these (or a function) at load.
_VAR = 0x40      # LOAD cel: the environment, else a qualified name (cel.qualified)
_CALL1 = 0x41
_CALL2 = 0x42
_CALL_LAMBDAS = 0x43   # a CALL with lambda arguments: they spend the fuel while it runs

# by rule number (ACCESS, TRUTHINESS, STRINGIFY, MAPS), filled by the
# dialects' registrations; FIELD and INDEX have no flat-key rule, LOAD cel is _VAR
_LOADERS = [None, None, None, None]
_FIELDS = [None, None, None, None]
_INDEXES = [None, None, None, None]
_TESTS = [None, None, None, None]
_TEMPLATES = [None, None, None]
_MAPPERS = [None, None, None]
_RUN_RULES = {"load": (ACCESS, _LOADERS), "field": (ACCESS, _FIELDS), "index": (ACCESS, _INDEXES),
              "test": (TRUTHINESS, _TESTS), "template": (STRINGIFY, _TEMPLATES), "map": (MAPS, _MAPPERS)}


def _copier(copy, value):
    def fresh():
        return copy(value)
    return fresh


def _resolve(ins, consts, names, keys, copy=None):
    """Decoded instructions -> tuples (opcode, a, b, c) with the operands
    resolved: the constant, the name, the function a rule names, the index
    of the instruction a jump lands on. With ``copy``, a CONST of an array
    or object pushes ``copy(value)`` (a CALL of no arguments: WorkflowSkill
    values are mutable)."""
    at = {}
    for i in range(len(ins)):
        at[ins[i][0]] = i
    out = []
    for _pc, op, o in ins:
        if op == CONST:
            v = consts[o[0]]
            if copy is not None and (type(v) is list or isinstance(v, dict)):
                out.append((CALL, _copier(copy, v), 0, None))
            else:
                out.append((CONST, v, None, None))
        elif op == LOAD:
            if o[0] == 0:
                out.append((_VAR, names[o[1]], None, None))
            else:
                out.append((LOAD, names[o[1]], _LOADERS[o[0]], None))
        elif op == FIELD:
            out.append((FIELD, names[o[1]], _FIELDS[o[0]], None))
        elif op == INDEX:
            out.append((INDEX, _INDEXES[o[0]], None, None))
        elif op == CALL:
            row = BUILTINS[keys[o[0]]]
            if _lambda_count(row, o[1]):
                out.append((_CALL_LAMBDAS, row[0], o[1], None))
            else:
                out.append((_CALL1 if o[1] == 1 else _CALL2 if o[1] == 2 else CALL, row[0], o[1], None))
        elif op == LIST or op == LOCAL:
            out.append((op, o[0], None, None))
        elif op == MAP:
            out.append((MAP, o[1], _MAPPERS[o[0]], None))
        elif op == TEMPLATE:
            out.append((TEMPLATE, o[1], _TEMPLATES[o[0]], None))
        elif op == JUMP_IF_NOT:
            out.append((JUMP_IF_NOT, at[o[1]], _TESTS[o[0]], None))
        elif op in (JUMP, JUMP_IF_FALSE_KEEP, JUMP_IF_TRUE_KEEP, TRY):
            out.append((op, at[o[0]], None, None))
        elif op == LAMBDA:
            out.append((LAMBDA, o[0], o[1], o[2]))
        else:
            out.append((op, None, None, None))
    return out


class Machine:
    """Runs the verified blocks of one program.

    Outside a run every evaluation gets ``fuel`` instructions; between
    :meth:`start_run` and :meth:`end_run` all evaluations share the run's
    instruction budget (its :class:`flowc.runtime.fuel.Fuel`). Out of
    instructions, it raises OutOfFuel: in a run, the run fails. The loop keeps the fuel in a local and writes it back around
    lambdas, which run nested."""

    def __init__(self, consts, names, keys, decoded, fuel=DEFAULT_FUEL, copy=None):
        self.fuel = fuel
        self.left = fuel
        self.per_run = False  # within a run, the fuel is the run's, not one evaluation's
        # each block resolved when it first runs (a program may hold many that a run never reaches)
        self.code = [None] * len(decoded)
        self._pools = (decoded, consts, names, keys, copy)

    def start_run(self, fuel):
        """From now on every evaluation spends the instructions of ``fuel``,
        the run's :class:`~flowc.runtime.fuel.Fuel`."""
        if not self.per_run:
            self.saved_fuel = self.fuel
        self.fuel = fuel.max_instructions
        self.left = fuel.instructions_left
        self.per_run = True

    def end_run(self):
        if self.per_run:
            self.fuel = self.saved_fuel
        self.per_run = False

    def evaluate(self, block, nslots, env, args):
        """The value of root block ``block`` with ``args`` in its first slots."""
        frame = [None] * nslots
        for i in range(len(args)):
            frame[i] = args[i]
        if not self.per_run:
            self.left = self.fuel
        return self.run(block, env, frame)

    def source(self, block):
        """(block's decoded instructions ``[(pc, opcode, operands)]``, the
        consts, names and keys they index): what a compiler of blocks reads."""
        decoded, consts, names, keys, _copy = self._pools
        return decoded[block], consts, names, keys

    def _resolved(self, block):
        decoded, consts, names, keys, copy = self._pools
        code = self.code[block] = _resolve(decoded[block], consts, names, keys, copy)
        return code

    def run(self, block, env, frame):
        code = self.code[block]
        if code is None:
            code = self._resolved(block)
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
                        raise OutOfFuel(exhausted(self.fuel, "instructions"))
                    op, a, b, c = code[i]
                    i += 1
                    if op == _VAR:
                        try:
                            push(env[a])
                        except KeyError:
                            v, i = self._qualified(code, i, env, a)
                            push(v)
                    elif op == FIELD:
                        stack[-1] = b(stack[-1], a)
                    elif op == CONST:
                        push(a)
                    elif op == _CALL2:
                        y = stack.pop()
                        stack[-1] = a(stack[-1], y)
                    elif op == _CALL1:
                        stack[-1] = a(stack[-1])
                    elif op == LOCAL:
                        push(frame[a])
                    elif op == RETURN:
                        self.left = left
                        return stack[-1]
                    elif op == LOAD:
                        push(b(env, a))
                    elif op == LAMBDA:
                        push(self._lambda(a, b, c, env, frame))
                    elif op == _CALL_LAMBDAS:
                        args = stack[len(stack) - b:]
                        del stack[len(stack) - b:]
                        self.left = left
                        push(a(*args))
                        left = self.left
                    elif op == CALL:
                        if b:
                            args = stack[len(stack) - b:]
                            del stack[len(stack) - b:]
                            push(a(*args))
                        else:
                            push(a())
                    elif op == INDEX:
                        key = stack.pop()
                        stack[-1] = a(stack[-1], key)
                    elif op == TRY:
                        handlers.append((a, len(stack)))
                    elif op == END_TRY:
                        handlers.pop()
                    elif op == JUMP:
                        i = a
                    elif op == JUMP_IF_NOT:
                        if not b(stack.pop()):
                            i = a
                    elif op == JUMP_IF_FALSE_KEEP:
                        if stack[-1] is False:
                            i = a
                    elif op == JUMP_IF_TRUE_KEEP:
                        if stack[-1] is True:
                            i = a
                    elif op == LIST:
                        items = stack[len(stack) - a:]
                        del stack[len(stack) - a:]
                        push(items)
                    elif op == MAP:
                        n = a * 2
                        flat = stack[len(stack) - n:]
                        del stack[len(stack) - n:]
                        push(b([(flat[j], flat[j + 1]) for j in range(0, n, 2)]))
                    elif op == TEMPLATE:
                        parts = stack[len(stack) - a:]
                        del stack[len(stack) - a:]
                        push(b(parts))
                    else:  # POP
                        stack.pop()
            except _Caught as e:
                # A lambda that failed has already spent its fuel in self.left.
                left = min(left, self.left)
                if not handlers:
                    self.left = left
                    raise
                target, depth = handlers.pop()
                del stack[depth:]
                push(e)
                i = target
            except BaseException:
                self.left = min(left, self.left)
                raise

    def _qualified(self, code, i, env, name):
        """A variable missing from ``env``: the longest qualified name
        ``name.f1...fk`` bound in it, where the CEL FIELDs that follow the
        LOAD at ``i`` give the fields; (value, the instruction after the
        FIELDs it took in). Else the plain variable lookup (a type name or an error)."""
        fields = []
        j = i
        select = _FIELDS[0]
        while j < len(code) and code[j][0] == FIELD and code[j][2] is select:
            fields.append(code[j][1])
            j += 1
        v, taken = _qualified_name(env, name, fields)
        return v, i + taken

    def _lambda(self, block, slot, params, env, frame):
        run = self.run
        if params == 0:
            def thunk():
                return run(block, env, frame)
            return thunk
        if params == 1:
            def body(x):
                frame[slot] = x
                return run(block, env, frame)
            return body

        def body2(k, v):
            frame[slot] = k
            frame[slot + 1] = v
            return run(block, env, frame)
        return body2
