"""The flowc VM: loads, verifies and runs flowc bytecode (docs/bytecode.md).

Standard library only, on the container reader (container.py: the
header, the sections, the msgpack decoder), flowc's sans-I/O kernel (runtime/kernel.py and
runtime/drivers.py), WorkflowSkill's values (runtime/wfs.py) and the shared
expression machine (expr_vm.py and the dialect runtimes it calls): all
standard library only too, copied side by side or bundled into one file
elsewhere. It runs unmodified on MicroPython: no typing, dataclasses, attrs
or f-strings, no ``re``; objects are OrderedDicts where plain dicts forget
their order.

    program = load(data)            # decode + verify, or raise VerifyError
    record = program.run(inputs, host)
    record = program.run_virtual(inputs, script)   # a virtual clock (drivers.VirtualHost)
    record = await program.run_async(inputs, host) # asyncio (CPython)

``host`` has ``call(capability, name, args)`` and ``sleep(ms)``; an exception
with a true ``retriable`` attribute is a tool error (retried by a step's
retry policy), any other exception a host failure. The record is
``{"status", "outputs", "error", "steps", "calls", "sleeps_ms"}``.

The interpreter loop is a kernel task (:class:`SkillVMRun`): a host call
yields a ``Call`` request and a pause a ``Sleep``, which a driver answers
(docs/runtime.md); ``program.new_run(inputs)`` is such a run, not started.

The WorkflowSkill value semantics are ``flowc.runtime.wfs``'s, the
functions generated modules run on. The instruction set is the steps'
control: every value is a block of the shared expression machine
(``expr_vm``) that ``EXPR`` (or ``DEFAULT``) runs; a filter/map loop's block
is compiled into closures the first time the loop runs (``compile_loop``,
an optional part: ``BY_FEATURE``).
"""

# MicroPython style on purpose: %-formatting, explicit `object` bases and
# `x != x` NaN tests read the same on both interpreters.
# ruff: noqa: UP004, UP031

try:
    from flowc.backends.vm import expr_vm as _x
    from flowc.backends.vm import expr_wfs as _xw
    from flowc.backends.vm.container import (
        MAX_NESTING,
        _int,
        _Obj,
        copy_json,
        guarded,
        open_container,
        read_section,
    )
    from flowc.runtime import drivers as _drivers
    from flowc.runtime.fuel import (
        DEFAULT_MAX_HOST_CALLS,
        DEFAULT_MAX_INSTRUCTIONS,
        DEFAULT_MAX_ITERATIONS,
        Fuel,
        OutOfFuel,
    )
    from flowc.runtime.kernel import Call, Kernel, Sleep
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import drivers as _drivers
    import expr_vm as _x
    import expr_wfs as _xw
    from container import MAX_NESTING, _int, _Obj, copy_json, guarded, open_container, read_section
    from fuel import (  # noqa: F401 - the budgets, re-exported
        DEFAULT_MAX_HOST_CALLS,
        DEFAULT_MAX_INSTRUCTIONS,
        DEFAULT_MAX_ITERATIONS,
        Fuel,
        OutOfFuel,
    )
    from kernel import Call, Kernel, Sleep

# The container (its format, its reader, the msgpack decoder) is container.py's.
ENTRY = 1  # step flag: the first top-level step (WALK starts there)

MAX_STACK = 131072  # >= MAX_EXPR_DEPTH * (2 * MAX_EXPR_ITEMS + 1) of ir/limits.py (a test checks)
MAX_CALL_DEPTH = 256
# The run-time budgets (fuel) are the kernel's: flowc.runtime.fuel.

# ---------------------------------------------------------------- opcodes
# Must equal flowc.backends.vm.format.OPCODES (a test checks it). The
# instruction set is the steps' control: every value is a block of the
# shared expression machine, run by EXPR (and DEFAULT).
EXPR = 0x1A
JUMP = 0x20
JUMP_IF_NOT = 0x21
EXITED = 0x22
RET = 0x24
FINISH = 0x25
OUTPUTS = 0x26
OUTPUTS_FAILED = 0x27
CHECK_INPUTS = 0x28
WALK = 0x29
ARM = 0x2A
STEP = 0x30
SKIP = 0x31
DONE = 0x34
FAIL = 0x35
FAIL_PARTIAL = 0x36
EXIT = 0x37
DEFAULT = 0x39
SET_RESULT = 0x3A
CHECK_OUTPUT = 0x3B
CALL = 0x40
ITER = 0x50
NEXT = 0x51
APPEND = 0x52
KEEP = 0x53
ITEM_FAILED = 0x54
COLLECT = 0x55
END_EACH = 0x56
TRANSFORM_INPUT = 0x57
SORT = 0x58
WRAP = 0x59

# code: (name, operand kinds, pop, push, flow, branch push or -1)
# kinds: c const, n name, t target, s step, r retry, f flag, k count,
#        x block.
# flow: 0 next, 1 jump, 2 branch, 3 return, 4 stop
OPS = {
    EXPR: ("EXPR", "x", 0, 1, 0, -1),
    JUMP: ("JUMP", "t", 0, 0, 1, -1),
    JUMP_IF_NOT: ("JUMP_IF_NOT", "t", 1, 0, 2, -1),
    EXITED: ("EXITED", "t", 0, 0, 2, -1),
    RET: ("RET", "", 0, 0, 3, -1),
    FINISH: ("FINISH", "", 1, 0, 4, -1),
    OUTPUTS: ("OUTPUTS", "c", 0, 1, 0, -1),
    OUTPUTS_FAILED: ("OUTPUTS_FAILED", "", 1, 1, 0, -1),
    CHECK_INPUTS: ("CHECK_INPUTS", "tc", 0, 0, 2, -1),
    WALK: ("WALK", "t", 0, 0, 2, -1),
    ARM: ("ARM", "", 1, 0, 3, -1),
    STEP: ("STEP", "s", 0, 0, 0, -1),
    SKIP: ("SKIP", "", 0, 0, 0, -1),
    DONE: ("DONE", "", 1, 0, 0, -1),
    FAIL: ("FAIL", "f", 1, 0, 0, -1),
    FAIL_PARTIAL: ("FAIL_PARTIAL", "f", 2, 0, 0, -1),
    EXIT: ("EXIT", "f", 1, 0, 0, -1),
    DEFAULT: ("DEFAULT", "nx", 0, 0, 0, -1),
    SET_RESULT: ("SET_RESULT", "", 1, 0, 0, -1),
    CHECK_OUTPUT: ("CHECK_OUTPUT", "c", 1, 1, 0, -1),
    CALL: ("CALL", "nnr", 1, 1, 0, -1),
    ITER: ("ITER", "", 1, 1, 0, -1),
    NEXT: ("NEXT", "tk", 1, 1, 2, -1),
    APPEND: ("APPEND", "", 2, 1, 0, -1),
    KEEP: ("KEEP", "", 2, 1, 0, -1),
    ITEM_FAILED: ("ITEM_FAILED", "", 2, 1, 0, -1),
    COLLECT: ("COLLECT", "", 1, 1, 0, -1),
    END_EACH: ("END_EACH", "t", 1, 1, 2, 2),
    TRANSFORM_INPUT: ("TRANSFORM_INPUT", "", 1, 1, 0, -1),
    SORT: ("SORT", "nf", 1, 1, 0, -1),
    WRAP: ("WRAP", "n", 1, 1, 0, -1),
}


# ---------------------------------------------------------------- values and errors
# WorkflowSkill's values are the runtime's (flowc.runtime.wfs: generated
# modules run on the same functions); the VM's errors are errors.py's.
try:
    from flowc.backends.vm.errors import StepError as _StepError
    from flowc.backends.vm.errors import VerifyError, VMError
    from flowc.runtime.wfs import (
        _MAX_SAFE,
        MAX_SLEEP_MS,
        MISSING,
        EvalError,
        _is_array,
        _num,
        compact,
        error_message,
        js_boolean,
        retry_sleep,
        shape_outputs,
        type_mismatch,
        wfs_contains,
        wfs_eq,
        wfs_truthy,
        whole_ms,
    )
    from flowc.runtime.wfs import js_to_string as to_string
    from flowc.runtime.wfs import js_typeof as _typeof
    from flowc.runtime.wfs import to_number as _to_number
    from flowc.runtime.wfs import transform_items as transform_input
    from flowc.runtime.wfs import wfs_get_field as get_field
    from flowc.runtime.wfs import wfs_get_index as get_index
    from flowc.runtime.wfs import wfs_sort as sort_items
    from flowc.runtime.wfs import wfs_stringify as stringify
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    from errors import StepError as _StepError
    from errors import VerifyError, VMError
    from wfs import (
        _MAX_SAFE,
        MAX_SLEEP_MS,  # noqa: F401 - the VM's limit, read as this module's
        MISSING,
        EvalError,
        _is_array,
        _num,
        compact,
        error_message,
        js_boolean,
        retry_sleep,
        shape_outputs,
        type_mismatch,
        wfs_contains,
        wfs_eq,
        wfs_truthy,
        whole_ms,
    )
    from wfs import js_to_string as to_string
    from wfs import js_typeof as _typeof
    from wfs import to_number as _to_number
    from wfs import transform_items as transform_input
    from wfs import wfs_get_field as get_field
    from wfs import wfs_get_index as get_index
    from wfs import wfs_sort as sort_items
    from wfs import wfs_stringify as stringify

# The declared types of CHECK_INPUTS and CHECK_OUTPUT, by code.
TYPES = ("string", "int", "float", "boolean", "array", "object")

# ================================================================ loading

def _check_const(v, depth):
    if depth > MAX_NESTING:
        raise VerifyError("a constant nests deeper than %d" % MAX_NESTING)
    t = type(v)
    if v is None or t is bool or t is int or t is float or t is str:
        return
    if t is list:
        for e in v:
            if type(e) is list or isinstance(e, dict):
                _check_const(e, depth + 1)
            else:
                _check_const(e, depth + 1)
        return
    if isinstance(v, dict):
        for k in v:
            if type(k) is not str:
                raise VerifyError("a constant object has a non-string key")
            _check_const(v[k], depth + 1)
        return
    raise VerifyError("a constant is of an unsupported type (%s)" % type(v).__name__)


def load(data):
    """Decode and verify a sequential program; return a :class:`Program` or
    raise VerifyError. (flowc.backends.vm.load runs every model.)"""
    return guarded(_load, data)


def _load(data):
    model, name, table = open_container(data)
    if model != "sequential":
        raise VerifyError("a %s program: this loader runs sequential programs" % model)
    return load_sequential(data, name, table)


def load_sequential(data, name, table):
    """A :class:`Program` of an opened container (:func:`open_container`).
    The source map is not read: the VM has no use for it."""
    return _verify(name, read_section(data, table, "consts"), read_section(data, table, "names"),
                   read_section(data, table, "plan"), read_section(data, table, "code"),
                   read_section(data, table, "exprs"))


def _verify(name, consts, names, plan, code, exprs):
    """The :class:`Program` of a sequential program's sections (``plan``
    as the section holds it, its tables flat and relative), verified
    completely (docs/bytecode.md section 5): every function's form once
    (functions of the same form share the result), every name and block
    operand in range."""
    if type(name) is not str:
        raise VerifyError("section name must be a string")
    _check_pools(consts, names)
    ops, shape, name_refs, block_refs = _code_streams(code)
    ncode = len(ops)
    if type(plan) is not list or len(plan) != 5:
        raise VerifyError("section plan must be [steps, finish, retries, regions, arms]")
    step_rows, entries, sequence = _step_rows(plan[0], names, ncode)
    _check_sequence(sequence)
    retry_rows = _retry_rows(plan[2])
    regions, starts = _region_table(plan[3])
    finish = _int(plan[1], "finish offset", 0, max(ncode - 1, 0))
    if ncode == 0:
        raise VerifyError("the code is empty")
    # Function boundaries: main is [0, first entry); step i is [entry i, entry i+1).
    bounds = [0] + entries + [ncode]
    if not (finish < bounds[1]):
        raise VerifyError("the finish offset must be inside the main function")
    tables = (consts, names, retry_rows, len(step_rows))
    max_depth, funcs, counts, conditionals = _check_functions(ops, shape, bounds, finish, regions, starts, tables)
    arms = _arm_rows(plan[4], len(step_rows), conditionals)
    # the name and block operands: as many as the code has, names in range; each
    # block operand names a form of section exprs (checked with the blocks)
    for refs, count, what in ((name_refs, counts[1], "name"), (block_refs, counts[2], "block")):
        if len(refs) != count:
            raise VerifyError("the code has %d %s operands, its stream %d" % (count, what, len(refs)))
    if name_refs and max(name_refs) >= len(names):
        raise VerifyError("name index %d out of range" % max(name_refs))
    machine = _expression_machine(exprs, consts, names, block_refs)
    program = Program(name, step_rows, entries, finish, consts, names, retry_rows, max_depth,
                      (ops, shape, name_refs, block_refs, bounds, funcs, regions, starts))
    program.machine = machine
    program.first, program.after = sequence
    program.arms = arms
    program.arm_table = plan[4]
    return program


def _code_streams(code):
    """Section code, ``[ops, shape, names, blocks]``: the opcodes (bin) and
    the three operand streams (arrays of ints >= 0); the shape stream as a
    tuple (it keys the functions' forms)."""
    if type(code) is not list or len(code) != 4 or type(code[0]) is not bytes:
        raise VerifyError("section code must be [ops, shape, names, blocks], ops msgpack bin")
    for i in (1, 2, 3):
        stream = code[i]
        if type(stream) is not list:
            raise VerifyError("section code's operand streams must be arrays")
        # bools and floats would compare equal to ints in a form's key: ints only; the
        # functions' check finds a negative shape operand (a form's operands are checked once)
        if stream and (list(map(type, stream)).count(int) != len(stream) or (i > 1 and min(stream) < 0)):
            raise VerifyError("section code's operand streams hold only non-negative integers")
    return code[0], tuple(code[1]), code[2], code[3]


def _check_pools(consts, names):
    """Sections consts (values) and names (strings)."""
    if type(consts) is not list:
        raise VerifyError("section consts must be an array")
    for c in consts:
        _check_const(c, 0)
    if type(names) is not list:
        raise VerifyError("section names must be an array")
    for nm in names:
        if type(nm) is not str:
            raise VerifyError("the name table holds only strings")


def _step_rows(flat, names, ncode):
    """The step table (flat, entries as deltas) as ``(id, flags, entry)``
    tuples, checked, and the top-level sequence ``(first step, each step's
    next)``: indices, -1 none."""
    if type(flat) is not list or len(flat) % 4:
        raise VerifyError("the step table must be a flat array of rows of 4")
    if not flat:
        return [], [], (-1, [])
    if list(map(type, flat)).count(int) != len(flat):
        raise VerifyError("the step table holds only integers")
    nsteps = len(flat) // 4
    ids, flags, deltas, nexts = flat[0::4], flat[1::4], flat[2::4], flat[3::4]
    entries = _running_sum(deltas)
    # the columns' ranges at once; row by row for the message when one is out
    if not (min(ids) >= 0 and max(ids) < len(names) and min(flags) >= 0 and max(flags) <= ENTRY
            and min(deltas) > 0 and entries[-1] < ncode and min(nexts) >= 0 and max(nexts) <= nsteps):
        last = 0
        for i in range(nsteps):
            _int(ids[i], "step id name", 0, len(names) - 1)
            _int(flags[i], "step flags", 0, ENTRY)
            _int(entries[i], "step entry", 1, ncode - 1)
            _int(nexts[i], "step next", 0, nsteps)
            if entries[i] <= last:
                raise VerifyError("step entries must be strictly increasing")
            last = entries[i]
    if flags.count(ENTRY) > 1:
        raise VerifyError("two steps are flagged the first top-level step")
    step_rows = list(zip([names[i] for i in ids], flags, entries))
    return step_rows, entries, (flags.index(ENTRY) if ENTRY in flags else -1, [n - 1 for n in nexts])


def _check_sequence(sequence):
    """The top-level sequence must end: from its first step along each
    step's next, no step twice (a loop would never finish)."""
    first, after = sequence
    seen = 0
    i = first
    while i >= 0:
        seen += 1
        if seen > len(after):
            raise VerifyError("the top-level sequence loops")
        i = after[i]


def _arm_rows(flat, nsteps, conditionals):
    """The arms table (flat: per conditional ``step, then length, else
    length``, then the arms' steps, each as its index minus the
    conditional's), checked: rows listed by step, each step once, none
    running past the table; exactly the conditionals (``conditionals``:
    the steps whose function has an ARM) have arms; every arm's step a
    later step than its conditional (so an arm never runs its conditional,
    and arms nest at most as deep as there are steps) and in the table.
    Per step None, or where its row's arms lie in ``flat``: ``(then
    start, else start, end)`` (:func:`arm_steps` reads them)."""
    if type(flat) is not list:
        raise VerifyError("the arms table must be a flat array")
    if flat and list(map(type, flat)).count(int) != len(flat):
        raise VerifyError("the arms table holds only integers")
    arms = [None] * nsteps
    n = len(flat)
    rows = 0
    last = -1
    i = 0
    while i < n:
        if i + 3 > n:
            raise VerifyError("the arms table ends inside a row")
        step = flat[i]
        j = i + 3
        m = j + flat[i + 1]
        k = m + flat[i + 2]
        if step <= last or step >= nsteps or m < j or k < m or k > n:
            if not 0 <= step < nsteps:
                raise VerifyError("arms of step %d: no such step" % step)
            if step <= last:
                raise VerifyError("the arms table must list each conditional once, by step (step %d)" % step)
            raise VerifyError("the arms of step %d run past the table's end" % step)
        if k > j:
            seg = flat[j:k]
            if min(seg) < 1 or step + max(seg) >= nsteps:
                raise VerifyError("the arms of step %d must name later steps of the table" % step)
        arms[step] = (j, m, k)
        rows += 1
        last = step
        i = k
    if rows != len(conditionals) or None in [arms[c] for c in conditionals]:
        for step in conditionals:
            if arms[step] is None:
                raise VerifyError("step %d has an ARM but no arms" % step)
        for step in range(nsteps):
            if arms[step] is not None and step not in conditionals:
                raise VerifyError("step %d has arms but no ARM: it is no conditional" % step)
    return arms


def arm_steps(program, step, label):
    """The steps of conditional ``step``'s arm ``label`` (0 then, 1 else),
    by index, from the verified arms table."""
    j, m, k = program.arms[step]
    table = program.arm_table
    return [step + d for d in (table[j:m] if label == 0 else table[m:k])]


def _retry_rows(flat):
    """The retry policies (flat triples) as ``(max, delay_ms, backoff)`` tuples, checked."""
    if type(flat) is not list or len(flat) % 3:
        raise VerifyError("the retry table must be a flat array of rows of 3")
    retry_rows = []
    for i in range(0, len(flat), 3):
        mx = _int(flat[i], "retry max", 0, 1000000)
        delay = _int(flat[i + 1], "retry delay", 0, 0xFFFFFFFF)
        backoff = flat[i + 2]
        if type(backoff) is not float and type(backoff) is not int:
            raise VerifyError("retry backoff must be a number")
        if not (0 <= backoff <= 1e6):
            raise VerifyError("retry backoff out of range")
        retry_rows.append((mx, delay, backoff))
    return retry_rows


def _region_table(flat):
    """The region table as the plan holds it (quadruples ``start delta,
    end - start, handler - end, depth``, listed by start) as a tuple, and
    every region's start. Checked here: the shape, start <= the next start,
    start < end <= handler, the depth; where each lies, by the functions' check."""
    if type(flat) is not list or len(flat) % 4:
        raise VerifyError("the region table must be a flat array of rows of 4")
    ints = list(map(type, flat)).count(int) == len(flat)
    if flat and (not ints or min(flat[0::4]) < 0 or min(flat[1::4]) < 1
                 or min(flat[2::4]) < 0 or min(flat[3::4]) < 0 or max(flat[3::4]) > MAX_STACK):
        if not ints:
            raise VerifyError("the region table holds only integers")
        for i in range(0, len(flat), 4):
            if flat[i] < 0:
                raise VerifyError("regions must be listed by start (region %d)" % (i // 4))
            if flat[i + 1] < 1 or flat[i + 2] < 0:
                raise VerifyError("region %d: need start < end <= handler" % (i // 4))
            _int(flat[i + 3], "region depth", 0, MAX_STACK)
    return tuple(flat), _running_sum(flat[0::4])


def _running_sum(deltas):
    """[d0, d0 + d1, ...]."""
    try:
        from itertools import accumulate
    except ImportError:  # pragma: no cover - MicroPython
        accumulate = None
    if accumulate is not None:
        return list(accumulate(deltas))
    out = []
    total = 0
    for d in deltas:
        total += d
        out.append(total)
    return out


def _check_functions(ops, shape, bounds, finish, regions, starts, tables):
    """Verify every function (docs/bytecode.md section 5). A function's
    *form* is its opcodes, its shape operands, its regions relative to its
    start and, for the main function, the finish offset: everything the
    checks of section 5 read but the name and block operands (whose ranges
    :func:`_verify` checks for all functions at once) and where the
    function lies (which its step operands depend on: checked here for
    each). Each form is verified once. Returns the deepest stack, per
    function where its operands and regions start ``(shape, names, blocks,
    first region, end region)``, the operand counts of the streams and the
    conditionals (the steps whose function has an ARM), by index."""
    nsteps = tables[3]
    nregions = len(starts)
    layouts = {}    # opcodes -> operand counts per stream (shape, names, blocks)
    forms = {}      # a function's form -> its largest step operand (-1: none)
    depths = [0]    # the deepest stack of each form
    funcs = []
    conditionals = []
    s0 = n0 = b0 = r0 = e0 = 0
    main_finish = finish    # part of the main function's form only
    # the loop runs once per function: its lookups bound once
    layout_of = layouts.get
    checked = forms.get
    add_func = funcs.append
    for f, e1 in enumerate(bounds[1:]):
        fops = ops[e0:e1]
        counts = layout_of(fops)
        if counts is None:
            counts = layouts[fops] = _operand_counts(fops, e0)
        s1 = s0 + counts[0]
        r1 = r0
        while r1 < nregions and starts[r1] < e1:
            r1 += 1
        if r1 > r0:
            form = (fops, shape[s0:s1], main_finish, starts[r0] - e0, regions[4 * r0 + 1:4 * r1])
        else:
            form = (fops, shape[s0:s1], main_finish)
        top_step = checked(form)
        if top_step is None:
            if s1 > len(shape):
                raise VerifyError("the shape stream ends inside function %d" % f)
            rows = []   # the function's regions, counted from its start
            for r in range(r0, r1):
                start = starts[r] - e0
                rows.append((start, start + regions[4 * r + 1], start + regions[4 * r + 1] + regions[4 * r + 2],
                             regions[4 * r + 3]))
            depth, top_step = _check_function(fops, form[1], rows, f, finish, e0, tables)
            depths.append(depth)
            forms[form] = top_step
        # step operands count from the function's own step (f - 1), in main from 0
        if top_step > nsteps - (f or 1):
            raise VerifyError("step index %d out of range in function %d" % ((f - 1 if f else 0) + top_step, f))
        add_func((s0, n0, b0, r0, r1))
        if counts[3]:   # an ARM: a conditional (the main function's would have been refused)
            conditionals.append(f - 1)
        s0 = s1
        n0 += counts[1]
        b0 += counts[2]
        r0 = r1
        e0 = e1
        main_finish = -1
    if s0 != len(shape):
        raise VerifyError("the code has %d shape operands, its stream %d" % (s0, len(shape)))
    if r0 != nregions:
        raise VerifyError("a region starts past the end of the code")
    return max(depths), funcs, (s0, n0, b0), conditionals


def _operand_counts(fops, base):
    """How many operands of each stream (shape, names, blocks) the opcodes
    take, and whether one of them is an ARM (the function is a conditional's)."""
    counts = [0, 0, 0, _ARM_BYTE in fops]
    for i in range(len(fops)):
        spec = _SPEC_LIST[fops[i]]
        if spec[6] == 4:
            raise VerifyError("unknown opcode 0x%02x at offset %d" % (fops[i], base + i))
        for k in spec[7]:
            counts[_STREAM[k]] += 1
    return counts


class _Regions(object):
    """The regions around the instruction the function check is at."""

    def __init__(self, rows, n):
        self.rows = rows
        self.ri = 0                     # next region (listed by start)
        self.open = []                  # (end, [handler, depth]) of the regions around, innermost last
        self.n = n

    def at_event(self, i, depth, iters, expect):
        """Close and open the regions at instruction i (where one starts or
        ends); the next such instruction, the innermost open region's depth."""
        open_regions = self.open
        rows = self.rows
        nrows = len(rows)
        ri = self.ri
        while open_regions and open_regions[-1][0] <= i:
            open_regions.pop()
        while ri < nrows and rows[ri][0] <= i:
            start, end, handler, rdepth = rows[ri]
            if end > self.n or handler >= self.n:
                raise VerifyError("region at offset %d leaves its function" % start)
            if open_regions and end > open_regions[-1][0]:
                raise VerifyError("regions at offset %d are not well nested" % start)
            if rdepth > depth:
                raise VerifyError("region at offset %d declares depth %d, the stack has %d"
                                  % (start, rdepth, depth))
            _expect(expect, handler, (rdepth + 1, tuple([k for k in iters if k < rdepth]) if iters else ()))
            open_regions.append((end, rdepth))
            ri += 1
        self.ri = ri
        if open_regions:
            event = open_regions[-1][0]
            if ri < nrows and rows[ri][0] < event:
                event = rows[ri][0]
            return event, open_regions[-1][1]
        return rows[ri][0] if ri < nrows else self.n + 1, 0


def _check_function(ops, args, rows, f, finish, base, tables):
    """Verify function ``f`` (0 main, i + 1 step i): its opcodes, shape
    operands and regions (``rows``), counted from its start ``base``, which
    error messages add. Every instruction reachable with the same stack on
    every path; operands, jumps and regions in range; the stack never below
    its region's depth, nor taking an iterator as a value. Returns ``(the
    deepest stack, the largest step operand or -1)``."""
    consts, names, retry_rows, _nsteps = tables
    n = len(ops)
    # a shape operand's bound by kind code (_KIND_CODES); steps are checked by the caller
    limit = [0, len(consts), 0, n, 0, len(retry_rows) + 1, 0, 2, MAX_STACK + 1, 0]
    expect = {0: _EMPTY}
    if f == 0:
        _expect(expect, finish, _EMPTY)
    depth_at = [None] * n
    iters_at = {}
    regions = _Regions(rows, n)
    event = rows[0][0] if rows else n + 1
    floor = depth = max_depth = low = j = 0
    top_step = -1
    iters, reachable = (), True
    for i in range(n):
        at = base + i
        if i in expect:
            d = expect.pop(i)
            if reachable and (d[0] != depth or d[1] != iters):
                raise VerifyError("stack depth %d at offset %d does not match %d from a jump"
                                  % (depth, at, d[0]) if d[0] != depth else
                                  "iterator slots at offset %d do not match those from a jump" % at)
            if d[1] != iters:
                iters = d[1]
                low = iters[-1] + 1 if iters else 0
            depth = d[0]
            reachable = True
        elif not reachable:
            raise VerifyError("unreachable code at offset %d" % at)
        if i >= event:
            event, floor = regions.at_event(i, depth, iters, expect)
        if depth < floor:
            raise VerifyError("the stack drops below its region's depth at offset %d" % at)
        op = ops[i]
        _nops, _k0, pop, push, flow, branch_push, special, kinds = _SPEC_LIST[op]
        vals = [0, 0]
        m = 0
        for k in kinds:
            if k == 2 or k == 9:    # a name, a block: their streams are checked apart
                continue
            v = args[j]
            j += 1
            if v < 0:
                raise VerifyError("operand %d out of range at offset %d" % (v, at))
            if k == 4:
                top_step = max(top_step, v)
            elif v >= limit[k]:
                raise VerifyError(_operand_error(k, v, at))
            vals[m] = v
            m += 1
        a = vals[0]
        if pop < 0:
            pop = a if pop == -1 else 2 * a
        if pop > depth:
            raise VerifyError(_underflow(op, at, pop, depth))
        if iters and special != 3:
            iters_at[i] = iters
        if not special:
            if depth - pop < low:
                raise VerifyError("%s would take an iterator as a value at offset %d" % (OPS[op][0], at))
        else:
            iters, low = _special(op, special, vals, at, depth, pop, iters, low, f, consts, names)
        depth_at[i] = depth
        depth = depth - pop + push
        if depth > max_depth:
            max_depth = depth
            if depth > MAX_STACK:
                raise VerifyError("stack deeper than %d at offset %d" % (MAX_STACK, at))
        if flow:
            if flow <= 2:   # jump, branch
                _jump(a, i, depth if branch_push < 0 else depth - push + branch_push, iters, expect, depth_at,
                      iters_at, base)
            reachable = flow == 2
    if reachable:
        raise VerifyError("code falls through the end of a function at offset %d" % (base + n))
    if expect:   # pragma: no cover - every target is an instruction of the function
        raise VerifyError("jump target %d is not an instruction" % (base + min(expect)))
    return max_depth, top_step


def _jump(a, i, tdepth, iters, expect, depth_at, iters_at, base):
    """A jump or branch from instruction ``i`` to ``a`` with ``tdepth``
    values: a forward one records what its target must see, a backward
    one must land on an instruction already seen in that state."""
    if a > i:
        _expect(expect, a, (tdepth, iters))
        return
    seen = depth_at[a]
    if seen != tdepth or iters_at.get(a, ()) != iters:
        raise VerifyError("backward jump at offset %d reaches depth %d where %d was seen"
                          % (base + i, tdepth, seen) if seen != tdepth else
                          "backward jump at offset %d: iterator slots differ" % (base + i))


def _underflow(op, at, pop, depth):
    return "stack underflow at offset %d (%s pops %d, the stack has %d)" % (at, OPS[op][0], pop, depth)


_OPERAND_ERRORS = {1: "constant index %d out of range", 2: "name index %d out of range",
                   3: "jump target %d outside its function", 4: "step index %d out of range",
                   5: "retry index %d out of range", 7: "operand %d out of range",
                   8: "count %d too large", 9: "block %d out of range"}


def _operand_error(kind, a, at):
    """The message of an operand ``a`` of kind code ``kind`` out of range."""
    return (_OPERAND_ERRORS[kind] + " at offset %d") % (a, at)


def _special(op, special, vals, at, depth, pop, iters, low, f, consts, names):
    """The checks of an instruction with checks of its own (_SPECIAL),
    ``vals`` its shape operands: the iterator slots after it ``(iters, low)``."""
    if special == 3:    # RET, WALK, ARM (an empty stack has no iterators; ARM's one value is none)
        if op == ARM:
            if depth != 1 or iters:
                raise VerifyError("ARM needs exactly its condition on the stack at offset %d" % at)
        elif depth != 0:
            raise VerifyError("%s needs an empty stack at offset %d" % (OPS[op][0], at))
        if (op == RET or op == ARM) and f == 0:
            raise VerifyError("%s in the main function at offset %d" % (OPS[op][0], at))
        if op == WALK and f != 0:
            raise VerifyError("WALK outside the main function at offset %d" % at)
        return iters, low
    if special == 1:    # the iterator's own instructions
        need = _ITER_AT.get(op)
        if need is not None:
            if not iters or iters[-1] != depth - need:
                raise VerifyError("%s needs an iterator %d deep at offset %d" % (OPS[op][0], need, at))
        elif depth - pop < low:
            raise VerifyError("%s would take an iterator as a value at offset %d" % (OPS[op][0], at))
        if op == ITER:
            return iters + (depth - 1,), depth
        if op == COLLECT or op == END_EACH:
            iters = iters[:-1]
            return iters, iters[-1] + 1 if iters else 0
        return iters, low
    if depth - pop < low:
        raise VerifyError("%s would take an iterator as a value at offset %d" % (OPS[op][0], at))
    if op == CHECK_OUTPUT:
        _declared_types(consts[vals[0]], at, names)
    elif op == OUTPUTS:
        a = consts[vals[0]]
        if type(a) is not list or [1 for x in a if type(x) is not str]:
            raise VerifyError("OUTPUTS needs a constant list of strings at offset %d" % at)
    if op == FINISH and depth != 1:
        raise VerifyError("FINISH needs exactly the outputs on the stack at offset %d" % at)
    if f != 0 and (op == FINISH or op == EXITED or op == OUTPUTS or op == OUTPUTS_FAILED or op == CHECK_INPUTS):
        raise VerifyError("%s outside the main function at offset %d" % (OPS[op][0], at))
    if op == CHECK_INPUTS:
        _declared_types(consts[vals[1]], at, names)
    return iters, low


def _expression_machine(exprs, consts, names, block_forms):
    """The shared expression machine over section exprs, ``[keys, ops,
    shape, names, consts]`` (the forms and the blocks' names and constants
    in streams; they index the program's consts and names), verified as
    WorkflowSkill code: block k is the k-th block operand of the code
    (``block_forms``, each a form's index). None when the program has no
    such section and no block operand."""
    if exprs is None:
        if block_forms:
            raise VerifyError("block operands but no section exprs")
        return None
    if type(exprs) is not list or len(exprs) != 5 or type(exprs[0]) is not list:
        raise VerifyError("section exprs must be [keys, ops, shape, names, consts]")
    keys = exprs[0]
    blocks = verify_streams(exprs[1:], block_forms, len(consts), names, keys, 0, _xw.PROFILE)
    return _x.Machine(consts, names, keys, blocks, copy=copy_json)


# ---------------------------------------------------------------- expression blocks in streams
# Section exprs holds the blocks' distinct forms (opcodes and operands but
# the name operands of FIELD and the constant operands of CONST: a LOAD
# names one of a few roots, a FIELD any field)
# once each, each ending at its only RETURN, then the blocks' names and the
# blocks' constants (docs/bytecode.md section 1); targets count
# instructions. A block is a block operand of the code (EXPR's, DEFAULT's),
# which names its form. Each
# form is verified once: a block's names and constants are only indexes
# into the name table and the constant pool, checked for all blocks at once.

# In the opcode stream, an instruction whose first operand is a rule (LOAD,
# FIELD, INDEX: access; JUMP_IF_NOT: truthiness; TEMPLATE: stringify; MAP:
# map) carries it: the byte is the opcode + ACCESS_STEP * the rule (so no
# operand holds it).
ACCESS_STEP = 32
RULE_KINDS = "ahym"
_RETURN_BYTE = bytes([_x.RETURN])


class StreamBlocks(object):
    """The blocks of section exprs as the expression machine reads them
    (``blocks[i]``, ``len(blocks)``): block i's form with its names and
    constants, made when the machine first resolves it. Its static methods
    read and verify the streams (kept in the class: a device bundle is one
    module namespace, which they would grow)."""

    def __init__(self, forms, block_forms, refs, counts):
        self.forms = forms      # the distinct forms
        self.block_forms = block_forms  # per block its form's index
        self.refs = refs        # (the names stream, the consts stream)
        self.counts = counts    # per form how many names and how many constants it has
        self.starts = None      # per block where its names and its constants start, once a block is read

    def __len__(self):
        return len(self.block_forms)

    def __getitem__(self, block):
        if self.starts is None:
            self.starts = (StreamBlocks.starts(StreamBlocks.gather(self.counts[0], self.block_forms)),
                           StreamBlocks.starts(StreamBlocks.gather(self.counts[1], self.block_forms)))
        return StreamBlocks.with_refs(self.forms[self.block_forms[block]], self.refs,
                                      (self.starts[0][block], self.starts[1][block]))

    @staticmethod
    def form_ends(ops):
        """Where each form of the opcode stream ends: after its RETURN (no
        other opcode byte is RETURN's, whatever rule it carries)."""
        ends = []
        e = ops.find(_RETURN_BYTE)
        while e >= 0:
            ends.append(e + 1)
            e = ops.find(_RETURN_BYTE, e + 1)
        return ends

    @staticmethod
    def counts(ops, index):
        """(shape operands, name operands of FIELD, constant operands, has a
        LAMBDA) of a form's opcode bytes."""
        nshape = nnames = nconsts = 0
        for k in range(len(ops)):
            byte = ops[k]
            spec = _x.OPCODES.get(byte % ACCESS_STEP)
            if spec is None or (byte >= ACCESS_STEP and not (
                    spec[1] and spec[1][0] in RULE_KINDS and byte // ACCESS_STEP < len(_x._RULES[spec[1][0]]))):
                raise VerifyError("unknown opcode 0x%02x at %d of expression form %d" % (byte, k, index))
            for j in range(len(spec[1])):
                kind = spec[1][j]
                if kind == "n" and byte % ACCESS_STEP == _x.FIELD:
                    nnames += 1
                elif kind == "c":
                    nconsts += 1
                elif j or kind not in RULE_KINDS:
                    nshape += 1
        return nshape, nnames, nconsts, _x.LAMBDA in ops

    @staticmethod
    def form_of(ops, shape):
        """The decoded instructions ``[(index, opcode, operands)]`` of a form's
        opcode bytes and shape operands, each name operand of FIELD and
        constant operand 0 (a placeholder)."""
        ins = []
        j = 0
        for k in range(len(ops)):
            op = ops[k] % ACCESS_STEP
            operands = []
            kinds = _x.OPCODES[op][1]
            for m in range(len(kinds)):
                kind = kinds[m]
                if kind == "c" or (kind == "n" and op == _x.FIELD):
                    operands.append(0)
                elif m == 0 and kind in RULE_KINDS:
                    operands.append(ops[k] // ACCESS_STEP)
                else:
                    operands.append(shape[j])
                    j += 1
            ins.append((k, op, operands))
        return ins

    @staticmethod
    def with_refs(form, refs, at):
        """A block's form with its names of FIELD, refs[0][at[0]] ..., and
        its constants, refs[1][at[1]] ..."""
        names, consts = refs
        n, c = at
        out = []
        for k, op, operands in form:
            if op == _x.FIELD:
                operands = [operands[0], names[n]]
                n += 1
            elif op == _x.CONST:
                operands = [consts[c]]
                c += 1
            out.append((k, op, operands))
        return out

    @staticmethod
    def verify_form(k, form, block_forms, has_lambda, sizes, keys, nslots, rules):
        """The expression machine's checks of form k, as the block that has it
        (the first one, in messages). A LAMBDA names a later block than its
        own: a form with one is a single block's."""
        targets = {}
        for i in range(len(form)):
            targets[i] = i
        if has_lambda:
            if block_forms.count(k) != 1:
                raise VerifyError("expression form %d has a LAMBDA: it must be one block's" % k)
            _x.verify_decoded(block_forms.index(k), form, targets, sizes, keys, nslots, rules)
            return
        try:
            _x.verify_decoded(k, form, targets, sizes, keys, nslots, rules)
        except VerifyError:     # again, for the message: it names the first block of the form
            _x.verify_decoded(block_forms.index(k), form, targets, sizes, keys, nslots, rules)
            raise

    @staticmethod
    def total(table, indexes):
        """sum(table[i] for i in indexes)."""
        try:
            return sum(map(table.__getitem__, indexes))
        except AttributeError:  # pragma: no cover - MicroPython
            return sum([table[i] for i in indexes])

    @staticmethod
    def gather(table, indexes):
        """[table[i] for i in indexes]."""
        try:
            return list(map(table.__getitem__, indexes))
        except AttributeError:  # pragma: no cover - MicroPython
            return [table[i] for i in indexes]

    @staticmethod
    def starts(counts):
        """Where each block's operands start in a stream, given how many each has."""
        ends = _running_sum(counts)
        return [0] + ends[:-1] if ends else []


def verify_streams(streams, block_forms, nconsts, names, keys, nslots, profile):
    """Verify expression blocks in streams, ``[ops, shape, names, consts]``
    (the distinct forms, each ending at its RETURN, then the blocks' names
    and constants), block k of form ``block_forms[k]``, with every check of the expression
    machine's verifier: each form once, the blocks by their form's index
    and the name and constant operands' ranges all at once. Returns the
    blocks (:class:`StreamBlocks`)."""
    if type(streams) is not list or len(streams) != 4 or type(streams[0]) is not bytes:
        raise VerifyError("expression blocks must be [ops, shape, names, consts], ops msgpack bin")
    ops = streams[0]
    for stream in streams[1:]:
        if type(stream) is not list:
            raise VerifyError("the expression streams must be arrays")
        if stream and (list(map(type, stream)).count(int) != len(stream) or min(stream) < 0):
            raise VerifyError("the expression streams hold only non-negative integers")
    shape, refs, const_refs = streams[1:]
    ends = StreamBlocks.form_ends(ops)
    for k in keys:
        if type(k) is not str:
            raise VerifyError("a key must be a string")
    nforms = len(ends)
    # a form's constants are placeholders (0): verified against one constant at least,
    # the blocks' own against the pool below
    sizes = (max(nconsts, 1), len(names), len(keys), len(block_forms))
    used = set(block_forms)
    if used and max(used) >= nforms:
        raise VerifyError("a block names form %d of %d" % (max(used), nforms))
    if len(used) != nforms:
        raise VerifyError("an expression form no block has")
    forms = []
    form_names = []
    form_consts = []
    lambdas = False
    e0 = s0 = 0
    for k in range(nforms):
        e1 = ends[k]
        nshape, nnames, nc, has_lambda = StreamBlocks.counts(ops[e0:e1], k)
        if s0 + nshape > len(shape):
            raise VerifyError("the shape stream ends inside expression form %d" % k)
        form = StreamBlocks.form_of(ops[e0:e1], shape[s0:s0 + nshape])
        StreamBlocks.verify_form(k, form, block_forms, has_lambda, sizes, keys, nslots, _x.PROFILES[profile])
        lambdas = lambdas or has_lambda
        forms.append(form)
        form_names.append(nnames)
        form_consts.append(nc)
        e0 = e1
        s0 += nshape
    if e0 != len(ops) or s0 != len(shape):
        raise VerifyError("the expression streams hold more than the forms")
    # the blocks' operands together (each block's count, where its operands start, when it is first read)
    nrefs = StreamBlocks.total(form_names, block_forms)
    ncrefs = StreamBlocks.total(form_consts, block_forms)
    if nrefs != len(refs):
        raise VerifyError("the expression blocks have %d name operands, the stream %d" % (nrefs, len(refs)))
    if ncrefs != len(const_refs):
        raise VerifyError("the expression blocks have %d constant operands, the stream %d"
                          % (ncrefs, len(const_refs)))
    if refs and max(refs) >= len(names):
        raise VerifyError("name index %d out of range in an expression block" % max(refs))
    if const_refs and max(const_refs) >= nconsts:
        raise VerifyError("constant index %d out of range in an expression block" % max(const_refs))
    blocks = StreamBlocks(forms, block_forms, (refs, const_refs), (form_names, form_consts))
    if lambdas:
        _x.check_lambdas(StreamBlocks.gather(forms, block_forms))
    return blocks


def decode_function(program, f):
    """Function ``f`` (0 main, i + 1 step i) of a verified program in the
    interpreter's form, written into ``program.code`` (per instruction
    ``(op, a, b, c, next)``, operands resolved: the constant, the name, the
    retry policy, the absolute target and step) and ``program.handlers``
    (per instruction its innermost region ``[handler, depth]``, or None).
    The interpreter decodes a function when it first enters it: the
    verifier has checked everything already."""
    ops, shape, name_refs, _blocks, bounds, funcs, regions, starts = program.streams
    consts, names, retry_rows = program.consts, program.names, program.retries
    code = program.code
    e0 = bounds[f]
    s, nn, nb, r0, r1 = funcs[f]
    base_step = f - 1 if f else 0
    for i in range(e0, bounds[f + 1]):
        op = ops[i]
        vals = [0, 0, 0]
        for m, k in enumerate(_SPEC_LIST[op][7]):
            if k == 2:
                v = names[name_refs[nn]]
                nn += 1
            elif k == 9:     # block k is the k-th block operand's (the stream names its form)
                v = nb
                nb += 1
            else:
                v = shape[s]
                s += 1
                if k == 1:
                    v = consts[v]
                elif k == 3:
                    v += e0
                elif k == 4:
                    v += base_step
                elif k == 5:
                    v = retry_rows[v - 1] if v else None
            vals[m] = v
        a, b, c = vals
        if op == SORT:
            a = tuple(a.split("."))
        elif op == CHECK_OUTPUT:
            a = _declared_types(a, i, names)
        elif op == CHECK_INPUTS:
            b = _declared_types(b, i, names)
        elif op == ARM:
            a = base_step   # the conditional: the step whose function this is
        code[i] = (op, a, b, c, i + 1)
    handlers = program.handlers
    for r in range(r0, r1):     # listed by start: an inner region after the ones around it
        start = starts[r]
        end = start + regions[4 * r + 1]
        h = [end + regions[4 * r + 2], regions[4 * r + 3]]
        for i in range(start, end):
            handlers[i] = h


def _declared_types(v, at, names):
    """The operand of CHECK_INPUTS/CHECK_OUTPUT: a list of ints, name index
    and type code alternating -> a tuple of (name, type name) pairs."""
    if type(v) is not list or len(v) % 2:
        raise VerifyError("declared types must be a constant list of pairs at offset %d" % at)
    out = []
    for i in range(0, len(v), 2):
        n = v[i]
        t = v[i + 1]
        if type(n) is not int or type(t) is not int or not 0 <= n < len(names) or not 0 <= t < len(TYPES):
            raise VerifyError("declared types must be name indices and type codes at offset %d" % at)
        out.append((names[n], TYPES[t]))
    return tuple(out)


_EMPTY = (0, ())
_KIND_CODES = {"c": 1, "n": 2, "t": 3, "s": 4, "r": 5, "f": 7, "k": 8, "x": 9}
# kind code -> the stream of section code holding such operands: 0 shape, 1 names, 2 blocks
_STREAM = (0, 0, 1, 0, 0, 0, 0, 0, 0, 2)
# Opcodes with checks of their own: 1 the iterator's, 3 RET, WALK and ARM, 2 the others (4: unknown opcodes).
_SPECIAL = {ITER: 1, COLLECT: 1, END_EACH: 1, NEXT: 1, APPEND: 1, KEEP: 1, ITEM_FAILED: 1, RET: 3, WALK: 3, ARM: 3,
            FINISH: 2, EXITED: 2, OUTPUTS: 2, OUTPUTS_FAILED: 2, SORT: 2, CHECK_INPUTS: 2, CHECK_OUTPUT: 2}
# opcode -> (operand count, first operand's kind code, pop, push, flow, branch push, needs special
# checks, operand kind codes); an unknown opcode's special checks (4) refuse it
_SPEC_LIST = [(0, 0, 0, 0, 0, -1, 4, ())] * 256
for _code, _i in OPS.items():
    _kinds = tuple([_KIND_CODES[_k] for _k in _i[1]])
    _SPEC_LIST[_code] = (len(_kinds), _kinds[0] if _kinds else 0, _i[2], _i[3], _i[4], _i[5],
                         _SPECIAL.get(_code, 0), _kinds)
# A conditional's function has an ARM: the opcode byte, to find it in a function's opcodes.
_ARM_BYTE = bytes([ARM])
# Opcodes that use the iterator: how deep it must be (1 = the top).
_ITER_AT = {NEXT: 1, APPEND: 2, KEEP: 2, ITEM_FAILED: 2, COLLECT: 1, END_EACH: 1}


def _expect(expect, off, state):
    d = expect.get(off)
    if d is None:
        expect[off] = state
    elif d != state:
        raise VerifyError("two jumps reach offset %d with different stacks (depth %d and %d)"
                          % (off, d[0], state[0]))


# ================================================================ running

class Program(object):
    """A verified program. :meth:`run` may be called any number of times.

    The interpreter reads each function decoded into lists indexed by
    instruction (None where a function not yet entered lies), decoded when
    it first enters it (:func:`decode_function`)."""

    def __init__(self, name, steps, entries, finish, consts, names, retries, max_stack, streams):
        self.name = name
        self.steps = steps          # (id, flags, entry offset)
        self.entries = entries      # code offset of each step function
        self.finish = finish
        self.consts = consts
        self.names = names
        self.retries = retries
        self.max_stack = max_stack
        # section code and where each function's operands and regions start (_check_functions)
        self.streams = streams
        self.code_size = len(streams[0])
        self.code = None            # per offset: (op, a, b, c, next offset), operands resolved (prepare)
        self.handlers = None        # per offset: None or [handler offset, depth] of the innermost region
        self.loops = {}             # NEXT offset -> its compiled loop (compile_loop) or None, as run
        self.machine = None         # the shared expression machine of section exprs, if any
        self.first = -1             # the first top-level step (WALK starts there), -1: none
        self.after = []             # per step: the top-level step after it, -1: none
        self.arms = []              # per step: None, or where a conditional's arms lie in arm_table
        self.arm_table = []         # the plan's arms table (_arm_rows, arm_steps)
        self._targets = None        # the steps some arm lists (branch_targets)

    def branch_targets(self):
        """The steps some arm lists (a run that skips one skips a branch)."""
        if self._targets is None:
            self._targets = {t for step in range(len(self.arms)) if self.arms[step] is not None
                             for label in (0, 1) for t in arm_steps(self, step, label)}
        return self._targets

    @property
    def instructions(self):
        """The number of instructions."""
        return self.code_size

    def prepare(self):
        """The interpreter's lists, before the first run (functions are
        decoded into them as they are first entered)."""
        if self.code is None:
            self.code = [None] * self.code_size
            self.handlers = [None] * self.code_size

    def decoded(self):
        """The code with every function decoded (listings and tests)."""
        self.prepare()
        for f in range(len(self.entries) + 1):
            if self.code[self.streams[4][f]] is None:
                decode_function(self, f)
        return self.code

    def new_run(self, inputs, max_instructions=None, max_iterations=None, max_host_calls=None):
        """The run on the sans-I/O kernel, not started: a driver (or a caller
        by hand) answers its requests; ``record()`` is the run record once it
        has finished. Raises TypeError when ``inputs`` is not a dict."""
        return SkillVMRun(self, inputs, max_instructions, max_iterations, max_host_calls)

    def run(self, inputs, host, max_instructions=None, max_iterations=None, max_host_calls=None):
        """Run with ``inputs`` (a dict) against ``host``; return the run record.
        Past a budget (None: the default) the run fails with "fuel exhausted"."""
        return _drivers.drive_sync(self.new_run(inputs, max_instructions, max_iterations, max_host_calls), host)

    def run_async(self, inputs, host, max_instructions=None, max_iterations=None, max_host_calls=None):
        """A coroutine: the run record, driven by asyncio (``host.call`` and
        ``host.sleep`` may be coroutines); the steps still run one after another."""
        from flowc.runtime.aio import drive_async  # CPython only: MicroPython has no such asyncio

        return drive_async(self.new_run(inputs, max_instructions, max_iterations, max_host_calls), host)

    def run_virtual(self, inputs, script, max_instructions=None, max_iterations=None, max_host_calls=None):
        """The run record on a virtual clock (``script``: see
        flowc.runtime.drivers.VirtualHost, or an object with its ``answer``);
        its steps carry ``start_ms``/``end_ms``."""
        host = script if hasattr(script, "answer") else _drivers.VirtualHost(script)
        return _drivers.drive_virtual(self.new_run(inputs, max_instructions, max_iterations, max_host_calls),
                                      host)


class _Iter(object):
    __slots__ = ("acc", "failed", "i", "items", "saved_index", "saved_item")

    def __init__(self, items, saved_item, saved_index):
        self.items = items
        self.i = 0
        self.acc = []
        self.failed = None
        self.saved_item = saved_item
        self.saved_index = saved_index


_GUARD_FALSE = "Guard condition evaluated to false"

# What fails a step (not the whole run): the errors of flowc.runtime.sequence_run.STEP_ERRORS.
try:
    _STEP_ERRORS = (EvalError, _StepError, ArithmeticError, LookupError, TypeError, ValueError,
                    RecursionError)
except NameError:  # pragma: no cover - MicroPython has no RecursionError
    _STEP_ERRORS = (EvalError, _StepError, ArithmeticError, LookupError, TypeError, ValueError,
                    RuntimeError)


# ================================================================ fast loops
# A filter or map loop -- NEXT; EXPR of a straight-line block; KEEP or
# APPEND; JUMP back to the NEXT -- is translated, the first time it runs,
# from the expression machine's block into a tree of closures, one per
# expression node: no operand stack, no dispatch. On each entry to the loop
# the nodes that depend on neither $item nor $index are evaluated once and
# folded into constants (an expression has no effects and evaluates all of
# its operands, so they are the same for every item), and the common cases
# of the value semantics (plain objects, numbers, strings) run inline behind
# type checks, falling back to flowc.runtime.wfs's functions, the builtins
# the block calls, for anything else.
#
# Fuel is charged as the interpreter charges it: an iteration costs NEXT,
# the block's instructions but its RETURN, KEEP or APPEND and JUMP, and one
# unit of iteration fuel. The fast loop commits only whole iterations that
# fit in the fuel left and that complete without an exception; the
# interpreter runs every other iteration instruction by instruction (the
# block is then evaluated again: it is pure), so records, errors and the
# point where fuel runs out are exactly the interpreter's.

FAST_LOOPS = True       # False: the interpreter runs every instruction (tests compare the two)
# The tables of optional parts, a speed-up a device can do without: a small
# bundle (flowc bundle --small) keeps none of their rows, and with them goes
# the code only they reach. The run finds the compiled loops in FEATURES only.
BY_FEATURE = ("FEATURES",)
_MAX_TREE = 24          # deeper expressions stay in the interpreter (closures nest on the C stack)
_NOT_YET = object()     # a loop not yet looked at (Program.loops)
_FAST_DICT = _Obj       # the objects the fast paths read directly; anything else takes the general path

# The nodes of a compiled block: an instruction of the expression machine
# each (a builtin CALL by its key), the ones a loop body holds.
_N_CONST = 1
_N_ROOT = 3
_N_FIELD = 5
_N_INDEX = 6
_N_EQ = 7
_N_NE = 8
_N_LT = 9
_N_LE = 10
_N_GT = 11
_N_GE = 12
_N_CONTAINS = 13
_N_AND = 14
_N_OR = 15
_N_NOT = 16
_N_TEMPLATE = 17
_N_LIST = 18
_N_OBJECT = 19
_N_COMPACT = 25
_N_COMPACT_OBJECT = 26    # MAP wfs_compact: an object without the keys whose value is missing
_CONST_COPY = 0x101     # CONST of an array or object: a fresh copy per evaluation
_FLIPPED = {_N_LT: _N_GT, _N_LE: _N_GE, _N_GT: _N_LT, _N_GE: _N_LE}
# The builtins a compiled block may call, by key.
_BODY_CALLS = {"wfs.eq": _N_EQ, "wfs.ne": _N_NE, "wfs.lt": _N_LT, "wfs.le": _N_LE, "wfs.gt": _N_GT, "wfs.ge": _N_GE,
               "wfs.contains": _N_CONTAINS, "wfs.and": _N_AND, "wfs.or": _N_OR, "wfs.not": _N_NOT, "wfs.compact": _N_COMPACT}


class _Loop(object):
    """A compiled filter/map loop (compile_loop)."""
    __slots__ = ("cache", "cost", "keep", "leaves", "tree", "uses_index")

    def __init__(self, keep, cost, tree, uses_index, leaves):
        self.keep = keep            # KEEP (a filter), else APPEND (a map)
        self.cost = cost            # instructions per iteration: NEXT, the block, KEEP/APPEND, JUMP
        self.tree = tree            # the expression: nodes (op, operand, children, height, depends)
        self.uses_index = uses_index
        self.leaves = leaves        # its largest parts read from $inputs, $steps or $result
        self.cache = None           # (the leaves' values, the function of an item built from them)


# What a node depends on (bits): 1 $item or $index; 2 the run ($inputs, $steps,
# $result); 4 a fresh object per evaluation (never folded into a constant).
_FRESH_OPS = (_CONST_COPY, _N_LIST, _N_OBJECT, _N_COMPACT_OBJECT, _N_COMPACT)


def compile_loop(program, at):
    """The loop whose NEXT is at offset ``at`` as a :class:`_Loop`, or None
    when it is not a filter/map loop the fast path runs."""
    code = program.code
    ins = code[at]
    if ins[2]:      # a delay between items: the interpreter sleeps
        return None
    body = code[ins[4]]
    if body[0] != EXPR:
        return None
    end = code[body[4]]
    if end[0] != KEEP and end[0] != APPEND:
        return None
    after = code[end[4]]
    if after is None or after[0] != JUMP or after[1] != at:
        return None
    tree = _block_tree(program.machine, body[1])
    if tree is None:
        return None
    leaves = []
    _leaves(tree[0], leaves)
    return _Loop(end[0] == KEEP, tree[1] + 2, tree[0], tree[2], tuple(leaves))


def _block_tree(machine, block):
    """(the tree, the block's instruction count, reads $index) of a block
    that runs straight to its RETURN with the instructions a compiled loop
    has; else None."""
    decoded, consts, names, keys = machine.source(block)
    stack = []
    uses_index = False
    for _k, op, o in decoded:
        if op == _x.RETURN:
            break
        pops = 0
        if op == _x.CONST:
            v = consts[o[0]]
            node = (_CONST_COPY if type(v) is list or isinstance(v, dict) else _N_CONST, v)
        elif op == _x.LOAD:
            root = _xw.WFS_ROOTS.index(names[o[1]]) if names[o[1]] in _xw.WFS_ROOTS else -1
            if root < 0 or _x.ACCESS[o[0]] != "wfs":   # another name fails: the interpreter says how
                return None
            node = (_N_ROOT, root)
            uses_index = uses_index or root == 3
        elif op == _x.FIELD:
            node = (_N_FIELD, names[o[1]])
            pops = 1
        elif op == _x.INDEX:
            node = (_N_INDEX, None)
            pops = 2
        elif op == _x.CALL:
            node = (_BODY_CALLS.get(keys[o[0]]), None)
            pops = o[1]
            if node[0] is None:
                return None
        elif op == _x.LIST or op == _x.MAP or op == _x.TEMPLATE:
            count = o[-1]
            node = ({_x.LIST: _N_LIST, _x.MAP: _N_OBJECT, _x.TEMPLATE: _N_TEMPLATE}[op], count)
            if op == _x.MAP and _x.MAPS[o[0]] == "wfs_compact":
                node = (_N_COMPACT_OBJECT, count)
            pops = 2 * count if op == _x.MAP else count
        else:
            return None
        tree = _node(node[0], node[1], stack, pops)
        if tree is None:
            return None
        stack.append(tree)
    if len(stack) != 1:     # pragma: no cover - verified away
        return None
    return stack[0], len(decoded), uses_index


def _node(op, a, stack, pops):
    """The node (op, operand, children, height, depends) of an instruction
    popping ``pops`` children off ``stack``; None when the tree grows too deep."""
    kids = ()
    height = 1
    depends = 4 if op in _FRESH_OPS else 0
    if pops:
        kids = tuple(stack[len(stack) - pops:])
        del stack[len(stack) - pops:]
        for kid in kids:
            if kid[3] >= height:
                height = kid[3] + 1
            depends |= kid[4]
        if height > _MAX_TREE:
            return None
    elif op == _N_ROOT:
        depends = 1 if a == 2 or a == 3 else 2
    return (op, a, kids, height, depends)


def _leaves(node, out):
    if node[4] == 2:
        out.append(node)
    else:
        for kid in node[2]:
            _leaves(kid, out)


def _scalar(v):
    t = type(v)
    return v is None or v is MISSING or t is str or t is int or t is float or t is bool


# Stage two, on each entry to a loop: a node becomes (kind, payload, is_bool):
# kind 0 a constant (payload: the value), 1 $item itself, 2 a path of names
# read from $item (payload: a tuple of names), 3 a function of $item.

def _identity(x):
    return x


def _const_fn(v):
    return lambda x: v


def _path_fn(names):
    if len(names) == 1:
        name = names[0]

        def get1(x):
            if type(x) is _FAST_DICT:
                return x.get(name, MISSING)
            return get_field(x, name)
        return get1
    if len(names) == 2:
        n0 = names[0]
        n1 = names[1]

        def get2(x):
            x = x.get(n0, MISSING) if type(x) is _FAST_DICT else get_field(x, n0)
            if type(x) is _FAST_DICT:
                return x.get(n1, MISSING)
            return get_field(x, n1)
        return get2

    def get_n(x):
        for name in names:
            x = x.get(name, MISSING) if type(x) is _FAST_DICT else get_field(x, name)
        return x
    return get_n


def _fn(s):
    kind = s[0]
    if kind == 3:
        return s[1]
    if kind == 2:
        return _path_fn(s[1])
    if kind == 1:
        return _identity
    return _const_fn(s[1])


def _is_plain_number(v):
    t = type(v)
    return t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE)


def _order(op, x, y):
    if op == _N_LT:
        return x < y
    if op == _N_LE:
        return x <= y
    if op == _N_GT:
        return x > y
    return x >= y


def _operand(s):
    """(name, function) of a node: name when it is $item.name (read inline
    from a plain object; the function reads everything else), else None."""
    if s[0] == 2 and len(s[1]) == 1:
        return s[1][0], _fn(s)
    return None, _fn(s)


def _order_const(op, s, h):
    """s <op> h by toNumber, h a number already: plain numbers compare directly."""
    name, g = _operand(s)
    if op == _N_LT:
        def lt(x):
            v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
            t = type(v)
            if t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE):
                return v < h
            return _to_number(v) < h
        return lt
    if op == _N_LE:
        def le(x):
            v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
            t = type(v)
            if t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE):
                return v <= h
            return _to_number(v) <= h
        return le
    if op == _N_GT:
        def gt(x):
            v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
            t = type(v)
            if t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE):
                return v > h
            return _to_number(v) > h
        return gt

    def ge(x):
        v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
        t = type(v)
        if t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE):
            return v >= h
        return _to_number(v) >= h
    return ge


def _b_order(op, left, right):
    if left[0] == 0 and right[0] == 0:
        return (0, _order(op, _to_number(left[1]), _to_number(right[1])), True)
    if left[0] == 0:    # the constant on the right: a < b is b > a
        left, right = right, left
        op = _FLIPPED[op]
    if right[0] == 0:
        return (3, _order_const(op, left, _to_number(right[1])), True)
    gl = _fn(left)
    gr = _fn(right)

    def order(x):
        return _order(op, _to_number(gl(x)), _to_number(gr(x)))
    return (3, order, True)


def _b_eq(left, right, negate):
    if left[0] == 0 and right[0] == 0:
        return (0, wfs_eq(left[1], right[1]) != negate, True)
    if left[0] == 0:    # wfs_eq is symmetric
        left, right = right, left
    if right[0] == 0:
        c = right[1]
        name, g = _operand(left)
        tc = type(c)
        if tc is str:
            def eq(x):
                v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
                if type(v) is str:
                    return v == c
                return wfs_eq(v, c)
        elif tc is int or tc is float:
            h = _num(c)

            def eq(x):
                v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
                t = type(v)
                if t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE):
                    return v == h
                return wfs_eq(v, c)
        else:
            def eq(x):
                return wfs_eq(g(x), c)
    else:
        gl = _fn(left)
        gr = _fn(right)

        def eq(x):
            return wfs_eq(gl(x), gr(x))
    if not negate:
        return (3, eq, True)

    def ne(x):
        return not eq(x)
    return (3, ne, True)


def _b_contains(left, right):
    if left[0] == 0 and right[0] == 0:
        return (0, wfs_contains(left[1], right[1]), True)
    if right[0] == 0:
        c = right[1]
        name, g = _operand(left)
        # the case-insensitive substring test of a string left side
        lower = ("" if c is None or c is MISSING else to_string(c)).lower()

        def contains(x):
            v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
            if type(v) is str:
                return lower in v.lower()
            return wfs_contains(v, c)
        return (3, contains, True)
    gl = _fn(left)
    gr = _fn(right)

    def contains2(x):
        return wfs_contains(gl(x), gr(x))
    return (3, contains2, True)


def _b_logic(op, left, right):
    if left[0] == 0 and right[0] == 0:
        a = wfs_truthy(left[1])
        b = wfs_truthy(right[1])
        return (0, (a and b) if op == _N_AND else (a or b), True)
    gl = _fn(left)
    gr = _fn(right)
    if op == _N_AND:
        def and_(x):
            a = gl(x)
            b = gr(x)
            return wfs_truthy(a) and wfs_truthy(b)
        return (3, and_, True)

    def or_(x):
        a = gl(x)
        b = gr(x)
        return wfs_truthy(a) or wfs_truthy(b)
    return (3, or_, True)


def _b_object(kids, env, compact_it):
    """MAP (wfs, or wfs_compact: without the keys whose value is missing): a fresh object per item."""
    parts = [_build(k, env) for k in kids]
    keys = []
    for j in range(0, len(parts), 2):
        if parts[j][0] != 0:
            keys = None
            break
        k = parts[j][1]
        keys.append(k if type(k) is str else to_string(k))
    if keys is not None:
        pairs = tuple([(keys[j],) + _operand(parts[2 * j + 1]) for j in range(len(keys))])

        def obj(x):
            o = _Obj()
            missing = False
            plain = type(x) is _FAST_DICT
            for k, name, g in pairs:
                v = x.get(name, MISSING) if name is not None and plain else g(x)
                if v is MISSING:
                    missing = True
                o[k] = v
            if missing and compact_it:
                return compact(o)
            return o
        return (3, obj, False)
    fns = tuple([_fn(s) for s in parts])

    def obj_any(x):
        vals = [g(x) for g in fns]
        o = _Obj()
        for j in range(0, len(vals), 2):
            k = vals[j]
            o[k if type(k) is str else to_string(k)] = vals[j + 1]
        return compact(o) if compact_it else o
    return (3, obj_any, False)


def _build(node, env):
    """Stage two: one node (and its children) for one entry to the loop.
    env is (inputs, $steps, index cell, $result)."""
    op, a, kids = node[0], node[1], node[2]
    if op in _LEAVES:
        return _b_leaf(op, a, env)
    if op == _N_OBJECT or op == _N_COMPACT_OBJECT:
        return _b_object(kids, env, op == _N_COMPACT_OBJECT)
    if op == _N_COMPACT and kids[0][0] == _N_OBJECT:
        return _b_object(kids[0][2], env, True)
    args = [_build(k, env) for k in kids]
    if op == _N_FIELD:
        return _b_field(args[0], a)
    if op == _N_EQ or op == _N_NE:
        return _b_eq(args[0], args[1], op == _N_NE)
    if op == _N_LT or op == _N_LE or op == _N_GT or op == _N_GE:
        return _b_order(op, args[0], args[1])
    if op == _N_CONTAINS:
        return _b_contains(args[0], args[1])
    if op == _N_AND or op == _N_OR:
        return _b_logic(op, args[0], args[1])
    if op == _N_NOT:
        s = args[0]
        if s[0] == 0:
            return (0, not wfs_truthy(s[1]), True)
        g = _fn(s)
        return (3, lambda x: not wfs_truthy(g(x)), True)
    if op == _N_INDEX:
        if args[0][0] == 0 and args[1][0] == 0:
            v = get_index(args[0][1], args[1][1])
            return (0, v, type(v) is bool)
        gl = _fn(args[0])
        gr = _fn(args[1])
        return (3, lambda x: get_index(gl(x), gr(x)), False)
    if op == _N_TEMPLATE:
        if not [1 for s in args if s[0] != 0]:
            return (0, "".join([stringify(s[1]) for s in args]), False)
        fns = tuple([_fn(s) for s in args])
        return (3, lambda x: "".join([stringify(g(x)) for g in fns]), False)
    fns = tuple([_fn(s) for s in args])
    if op == _N_LIST:
        return (3, lambda x: [g(x) for g in fns], False)
    g = fns[0]
    # wfs.compact of anything but an object built here
    return (3, lambda x: compact(g(x)), False)


_LEAVES = (_N_CONST, _N_ROOT, _CONST_COPY)


def _b_leaf(op, a, env):
    """A node without children: a constant, a root."""
    if op == _N_CONST:
        return (0, a, type(a) is bool)
    if op == _N_ROOT:
        if a == 2:
            return (1, None, False)
        if a == 3:
            cell = env[2]
            return (3, lambda x: cell[0], False)
        v = env[3] if a == 4 else env[a]
        return (0, v, type(v) is bool)
    return (3, lambda x: copy_json(a), False)   # _CONST_COPY


def _b_field(s, a):
    """_N_FIELD a of node s: a constant folded, a path of $item extended."""
    kind = s[0]
    if kind == 0:
        v = get_field(s[1], a)
        return (0, v, type(v) is bool)
    if kind == 1:
        return (2, (a,), False)
    if kind == 2:
        return (2, s[1] + (a,), False)
    g = s[1]

    def field(x):
        v = g(x)
        if type(v) is _FAST_DICT:
            return v.get(a, MISSING)
        return get_field(v, a)
    return (3, field, False)


def _loop_fn(loop, env):
    """The function of one item a compiled loop applies: for a filter, the
    JavaScript Boolean() of the expression; for a map, its value."""
    s = _build(loop.tree, env)
    if not loop.keep or s[2]:
        return _fn(s)
    if s[0] == 0:
        keep = js_boolean(s[1])
        return lambda x: keep
    if s[0] == 2 and len(s[1]) == 1:
        name = s[1][0]

        def test_field(x):
            v = x.get(name, MISSING) if type(x) is _FAST_DICT else get_field(x, name)
            if v is True:
                return True
            if v is False:
                return False
            return js_boolean(v)
        return test_field
    g = _fn(s)

    def test(x):
        v = g(x)
        if v is True:
            return True
        if v is False:
            return False
        return js_boolean(v)
    return test


def _fast_loop(loop, it, env, fuel, iters):
    """Run the whole iterations of a compiled loop that fit in the fuel left
    and complete; return the instruction and iteration fuel left. env as
    for _build, with a fresh index cell."""
    keep = loop.keep
    cost = loop.cost
    uses_index = loop.uses_index
    items = it.items
    i = it.i
    k = len(items) - i
    if fuel < k * cost:
        k = fuel // cost
    k = min(k, iters)
    if k <= 0:
        return fuel, iters
    try:
        f = None
        if not uses_index:
            # built again only when a part read from the run has another value
            values = [_build(leaf, env)[1] for leaf in loop.leaves]
            cache = loop.cache
            if cache is not None:
                f = cache[1]
                for j in range(len(values)):
                    if values[j] is not cache[0][j]:
                        f = None
                        break
        if f is None:
            f = _loop_fn(loop, env)
            if not uses_index and not [1 for v in values if not _scalar(v)]:
                loop.cache = (values, f)
    except Exception:  # noqa: BLE001 - the interpreter reports it
        return fuel, iters
    chunk = items if (i == 0 and k == len(items)) else items[i:i + k]
    out = None
    done = 0
    if not uses_index:
        try:
            out = list(filter(f, chunk)) if keep else list(map(f, chunk))
            done = k
        except Exception:  # noqa: BLE001 - item by item below, up to the one that fails
            out = None
    if out is None:
        out = []
        cell = env[2]
        for x in chunk:
            if uses_index:
                cell[0] = i + done
            try:
                v = f(x)
            except Exception:  # noqa: BLE001 - the interpreter runs this iteration
                break
            if keep:
                if v:
                    out.append(x)
            else:
                out.append(v)
            done += 1
    if it.acc:
        it.acc.extend(out)
    else:
        it.acc = out
    it.i = i + done
    return fuel - done * cost, iters - done


# The optional parts (BY_FEATURE): "fast_loops", how a filter/map loop is
# compiled (compile_loop) and run (_fast_loop).
FEATURES = {"fast_loops": (compile_loop, _fast_loop)}


def _answer_message(answer):
    """The message of a failed request's answer: what error_message gives
    for the host's exception (its type's name when empty); the Python
    backend's runtime.answer_message."""
    message = answer.message
    if type(message) is not str:
        message = str(message)
    return message or getattr(answer, "type_name", None) or answer.kind


def _answer_retriable(answer):
    """Is the failure a tool error, retried under the step's retry? (the
    Python backend's runtime.answer_retriable)."""
    return getattr(answer, "retriable", answer.kind == "error")


class SkillVMRun(Kernel):
    """One run of a WorkflowSkill program on the sans-I/O kernel
    (flowc.runtime.kernel): a single task, the interpreter loop
    (:meth:`execute`, a generator), which yields a ``Call`` at each CALL
    instruction and a ``Sleep`` for a retry's backoff and an each's delay,
    and reads the driver's answers as the Python backend's ``Run.call``
    does. The dialect is sequential: one request at a time, whatever the
    driver. ``record()`` is the run record once the run has finished."""

    def __init__(self, program, inputs, max_instructions=None, max_iterations=None, max_host_calls=None):
        Kernel.__init__(self)
        if not isinstance(inputs, dict):
            raise TypeError("the inputs of a run must be a dict, not " + type(inputs).__name__)
        env_inputs = _Obj()
        for k in inputs:
            env_inputs[k] = inputs[k]
        self.p = program
        self.inputs = env_inputs
        # the run's fuel; the interpreter loop keeps instructions and
        # iterations in locals and writes them back at FINISH (and the
        # iterations when they run out)
        self.fuel = Fuel(max_iterations, max_host_calls, max_instructions)
        self.records = []
        self.calls = []
        self.sleeps = []
        self.ctx = _Obj()           # step id -> {"output": v}
        self.status = "success"
        self.error = None
        self.last = None
        self.halted = False
        self.exited = False
        self.exit_output = None
        self.outputs = None         # the workflow outputs, once the run has finished
        self.cur = -1
        self.began = None           # a clock only: the virtual time the current step began at
        self.branch_records = None  # a clock only: a conditional's record, to end after its arm

    def start(self):
        return Kernel.start(self, self._main())

    def _main(self):
        try:
            outputs = yield from self.execute(self.inputs)
        except (OutOfFuel,) + _STEP_ERRORS as exc:  # only hand-written bytecode leaves errors uncaught
            self.status = "failed"
            e = _Obj()
            e["message"] = error_message(exc)
            e["step"] = self.p.steps[self.cur][0] if self.cur >= 0 else None
            self.error = e
            outputs = _Obj()
        self.outputs = outputs

    def add_record(self, sid, status, reason):
        rec = _Obj()
        rec["id"] = sid
        rec["status"] = status
        if reason is not None:
            rec["reason"] = reason
        if self.began is not None:  # a virtual clock: when the step ran
            rec["start_ms"] = self.began
            rec["end_ms"] = self.now
        self.records.append(rec)
        self.note("step_end", sid, status, reason)
        return rec

    def set_output(self, sid, v):
        slot = _Obj()
        if v is not MISSING:
            slot["output"] = v
        self.ctx[sid] = slot

    def output_or_null(self, sid):
        slot = self.ctx.get(sid)
        if slot is None:
            return None
        v = slot.get("output")
        return None if v is MISSING else v

    # effects: generators, ``yield from`` them (the kernel answers their requests)
    def sleep(self, ms):
        """Ask the driver to pause; a pause the host fails to make fails the step."""
        ms = whole_ms(ms)
        self.sleeps.append(ms)
        answer = yield Sleep(ms)
        if answer.kind != "result":
            raise _StepError(_answer_message(answer))

    def call(self, capability, name, args, retry):
        """Call the host; ``retry`` is ``(max_retries, delay_ms, backoff)``.
        Only a tool error (an ``Error`` answer) is retried, with a Sleep for
        the backoff; it fails the step as ``<Capability> "<name>": <message>``.
        Any other answer fails the step with its own message. WorkflowSkill
        has no call timeout."""
        args = compact(args)
        attempts = 0
        while True:
            self.fuel.call()
            call = _Obj()
            call["capability"] = capability
            call["name"] = name
            call["args"] = args
            self.calls.append(call)
            answer = yield Call(capability, name, args)
            if answer.kind == "result":
                return answer.value
            message = _answer_message(answer)
            if not _answer_retriable(answer):
                raise _StepError(message)
            if retry is None or attempts >= retry[0]:
                raise _StepError(capability[:1].upper() + capability[1:] + ' "' + name + '": ' + message)
            attempts += 1
            yield from self.sleep(retry_sleep(retry[1], retry[2], attempts))

    def fail(self, message, output, ignore):
        sid = self.p.steps[self.cur][0]
        slot = _Obj()
        slot["output"] = output
        self.ctx[sid] = slot
        self.add_record(sid, "failed", None)
        if not ignore:
            self.status = "failed"
            e = _Obj()
            e["message"] = message
            e["step"] = sid
            self.error = e
            self.halted = True

    def record(self):
        """The run record: ``{"status", "outputs", "error", "steps", "calls",
        "sleeps_ms"}`` (the steps not run are recorded as skipped). What no
        step catches (a bug, not a step's failure) is raised here."""
        if self.finished:
            self.outcome()
        steps = list(self.records)
        recorded = {r["id"] for r in steps}
        targets = self.p.branch_targets()
        for i, row in enumerate(self.p.steps):
            if row[0] not in recorded:
                r = _Obj()
                r["id"] = row[0]
                r["status"] = "skipped"
                r["reason"] = "Branch not selected" if i in targets else "Workflow halted"
                steps.append(r)
        rec = _Obj()
        rec["status"] = self.status
        rec["outputs"] = _Obj() if self.outputs is None else self.outputs
        rec["error"] = self.error
        rec["steps"] = steps
        rec["calls"] = self.calls
        rec["sleeps_ms"] = self.sleeps
        return rec

    def execute(self, inputs):
        p = self.p
        p.prepare()
        code = p.code
        handlers = p.handlers
        steps = p.steps
        entries = p.entries
        ctx = self.ctx
        stack = []
        push = stack.append
        pop = stack.pop
        frames = []
        item = MISSING
        index = MISSING
        result = MISSING
        cur = -1
        walking = -1    # the top-level step WALK runs (its RET comes back to the WALK), -1: none
        after = p.after
        # the arms running, innermost last: [conditional, its arm's steps, the next one's index,
        # the conditional's frame depth] (its steps' RETs come back to its ARM)
        armed = []
        fuel = self.fuel.instructions_left
        iters = self.fuel.iterations_left
        pc = 0
        if code[0] is None:
            decode_function(p, 0)
        fast = FEATURES.get("fast_loops") if FAST_LOOPS else None
        loops = p.loops
        machine = p.machine
        while True:
            try:
                while True:
                    at = pc
                    op, a, b, c, pc = code[at]
                    fuel -= 1
                    if fuel < 0:
                        raise self.fuel.out_of_instructions()
                    if op == EXPR:
                        # The machine spends this run's fuel: as much as the block's
                        # instructions would have cost here (this EXPR stands for the
                        # first, the RETURN is not charged).
                        machine.left = fuel + 1
                        try:
                            push(machine.run(a, {"inputs": inputs, "steps": ctx, "item": item, "index": index,
                                                 "result": result,
                                                 "@final": self.exit_output if self.exited else self.last},
                                      None))
                        except OutOfFuel:  # the machine's own budget is not the run's: the run's message
                            raise self.fuel.out_of_instructions()
                        finally:
                            fuel = machine.left
                        fuel += 1
                    elif op == NEXT:
                        it = stack[-1]
                        i = it.i
                        if fast is not None and i < len(it.items):
                            lp = loops.get(at, _NOT_YET)
                            if lp is _NOT_YET:
                                lp = loops[at] = fast[0](p, at)
                            if lp is not None:
                                # whole iterations, this NEXT included; then this NEXT again
                                fuel, iters = fast[1](lp, it, (inputs, ctx, [0], result), fuel + 1, iters)
                                fuel -= 1
                                if fuel < 0:
                                    raise self.fuel.out_of_instructions()
                                i = it.i
                        if i < len(it.items):
                            iters -= 1
                            if iters < 0:
                                self.fuel.iterations_left = iters
                                raise self.fuel.out_of_iterations()
                            if i > 0 and b:
                                yield from self.sleep(b)
                            item = it.items[i]
                            index = i
                            it.i = i + 1
                        else:
                            item = it.saved_item
                            index = it.saved_index
                            pc = a
                    elif op == JUMP:
                        pc = a
                    elif op == KEEP:
                        v = pop()
                        if v is True or (v is not False and js_boolean(v)):
                            stack[-1].acc.append(item)
                    elif op == APPEND:
                        v = pop()
                        stack[-1].acc.append(v)
                    elif op == ITER:
                        v = stack[-1]
                        if not _is_array(v):
                            raise _StepError("each expression must resolve to an array, got "
                                             + _typeof(v))
                        stack[-1] = _Iter(v, item, index)
                    elif op == COLLECT:
                        stack[-1] = stack[-1].acc
                    elif op == JUMP_IF_NOT:
                        v = pop()
                        if v is False or (v is not True and not js_boolean(v)):
                            pc = a
                    elif op == STEP:
                        self.cur = cur = a
                        if self.now is not None:  # a virtual clock: the step's record gets its start
                            self.began = self.now
                        if self.events is not None:  # observed (a trace)
                            self.events.append(("step_start", self.p.steps[a][0]))
                    elif op == RET:
                        pc, cur, item, index, result = frames.pop()
                        self.cur = cur
                    elif op == WALK:
                        # The plan's top level, charged as the RUN, HALTED and SET_FINAL of
                        # each step were (format 4): this instruction is the first step's RUN,
                        # and each return here is its HALTED, then its SET_FINAL and the next RUN.
                        if walking < 0:
                            s = p.first
                        elif self.halted:
                            walking = -1
                            pc = a
                            continue
                        else:
                            fuel -= 1
                            if fuel < 0:
                                raise self.fuel.out_of_instructions()
                            self.last = self.output_or_null(steps[walking][0])
                            s = after[walking]
                            if s >= 0:
                                fuel -= 1
                                if fuel < 0:
                                    raise self.fuel.out_of_instructions()
                        if s < 0:
                            walking = -1
                        else:
                            if len(frames) >= MAX_CALL_DEPTH:
                                raise OutOfFuel("call depth exceeds %d" % MAX_CALL_DEPTH)
                            walking = s
                            frames.append((at, cur, item, index, result))
                            item = index = result = MISSING
                            pc = entries[s]
                            if code[pc] is None:
                                decode_function(p, s + 1)
                    elif op == ARM:
                        # A conditional's arm, run from the plan's arms table and charged as
                        # the code that held it was (format 4): this instruction is the test's
                        # JUMP_IF_NOT, then RECORD; per step a RUN and, after its RET comes
                        # back here, a HALTED (not after the arm's last step); then ROOT,
                        # FIELD, FIELD, COALESCE, SET_OUTPUT (CONST, SET_OUTPUT for an empty
                        # arm) and the conditional's RET.
                        if armed and armed[-1][3] == len(frames):
                            arm = armed[-1]     # a step of this conditional's arm came back
                            steps_of = arm[1]
                            k = arm[2]
                            if k < len(steps_of) and not self.halted:
                                s = steps_of[k]     # this was its HALTED; the next step's RUN
                                arm[2] = k + 1
                                fuel -= 1
                            else:               # the arm ends: this was its HALTED or ROOT
                                armed.pop()
                                fuel -= 4 if k == len(steps_of) else 5
                                s = -1
                            if fuel < 0:
                                raise self.fuel.out_of_instructions()
                        else:
                            v = pop()
                            steps_of = arm_steps(p, a, 0 if v is True or (v is not False and js_boolean(v)) else 1)
                            fuel -= 1
                            if fuel < 0:
                                raise self.fuel.out_of_instructions()
                            rec = self.add_record(steps[a][0], "success", None)
                            if self.began is not None:  # on a clock it ends when its arm does
                                if self.branch_records is None:
                                    self.branch_records = {}
                                self.branch_records[a] = rec
                            if steps_of:
                                s = steps_of[0]
                                armed.append([a, steps_of, 1, len(frames)])
                                fuel -= 1
                            else:
                                s = -1
                                fuel -= 2
                            if fuel < 0:
                                raise self.fuel.out_of_instructions()
                        if s >= 0:  # the arm's next step, called as WALK calls one
                            if len(frames) >= MAX_CALL_DEPTH:
                                raise OutOfFuel("call depth exceeds %d" % MAX_CALL_DEPTH)
                            frames.append((at, cur, item, index, result))
                            item = index = result = MISSING
                            pc = entries[s]
                            if code[pc] is None:
                                decode_function(p, s + 1)
                        else:       # the conditional's output, then its RET
                            self.set_output(steps[a][0], None if not steps_of
                                            else self.output_or_null(steps[steps_of[-1]][0]))
                            if self.branch_records is not None and a in self.branch_records:
                                self.branch_records.pop(a)["end_ms"] = self.now
                            fuel -= 1
                            if fuel < 0:
                                raise self.fuel.out_of_instructions()
                            pc, cur, item, index, result = frames.pop()
                            self.cur = cur
                    elif op == DONE:
                        sid = steps[cur][0]
                        self.set_output(sid, pop())
                        self.add_record(sid, "success", None)
                    elif op == SET_RESULT:
                        result = pop()
                    elif op == CHECK_OUTPUT:
                        v = stack[-1]
                        if isinstance(v, dict):
                            for name, kind in a:
                                got = type_mismatch(v.get(name), kind)
                                if got is not None:
                                    raise _StepError('Step "' + steps[cur][0] + '" output "' + name
                                                     + '": expected ' + kind + ", got " + got)
                    elif op == CALL:
                        stack[-1] = yield from self.call(a, b, stack[-1], c)
                    elif op == TRANSFORM_INPUT:
                        stack[-1] = transform_input(stack[-1])
                    elif op == WRAP:
                        obj = _Obj()
                        obj[a] = stack[-1]
                        stack[-1] = obj
                    elif op == SORT:
                        stack[-1] = sort_items(stack[-1], a, b)
                    elif op == SKIP:
                        sid = steps[cur][0]
                        self.set_output(sid, None)
                        self.add_record(sid, "skipped", _GUARD_FALSE)
                    elif op == FAIL:
                        self.fail(pop(), None, a)
                    elif op == FAIL_PARTIAL:
                        message = pop()
                        self.fail(message, pop(), a)
                    elif op == ITEM_FAILED:
                        message = pop()
                        it = stack[-1]
                        it.failed = message
                        it.acc.append(None)
                    elif op == END_EACH:
                        it = stack[-1]
                        stack[-1] = it.acc
                        if it.failed is not None:
                            push(it.failed)
                            pc = a
                    elif op == EXIT:
                        v = pop()
                        sid = steps[cur][0]
                        self.set_output(sid, v)
                        self.add_record(sid, "success", None)
                        self.exited = True
                        self.halted = True
                        self.exit_output = v
                        if a == 1:
                            self.status = "failed"
                    elif op == DEFAULT:
                        if a not in inputs:     # the block's value, charged as EXPR charges it
                            machine.left = fuel + 1
                            try:
                                inputs[a] = machine.run(b, {"inputs": inputs, "steps": ctx}, None)
                            except OutOfFuel:
                                raise self.fuel.out_of_instructions()
                            finally:
                                fuel = machine.left
                            fuel += 1
                    elif op == EXITED:
                        if self.exited:
                            pc = a
                    elif op == OUTPUTS:
                        push(shape_outputs(self.exit_output if self.exited else self.last, a))
                    elif op == CHECK_INPUTS:
                        for name, kind in b:
                            got = type_mismatch(inputs.get(name), kind)
                            if got is not None:
                                self.status = "failed"
                                e = _Obj()
                                e["message"] = ('workflow input "' + name + '": expected ' + kind + ", got "
                                                + got)
                                e["step"] = None
                                self.error = e
                                self.halted = True
                                pc = a
                                break
                    elif op == OUTPUTS_FAILED:
                        message = pop()
                        self.status = "failed"
                        if self.error is None:
                            e = _Obj()
                            e["message"] = "workflow outputs: " + stringify(message)
                            e["step"] = None
                            self.error = e
                        push(_Obj())
                    elif op == FINISH:
                        self.fuel.instructions_left = fuel
                        self.fuel.iterations_left = iters
                        return pop()
                    else:  # pragma: no cover - verified away
                        raise VMError("unknown opcode %d" % op)
            except _STEP_ERRORS as exc:
                h = handlers[at]
                if h is None:
                    raise
                del stack[h[1]:]
                push(error_message(exc))
                pc = h[0]


def run(data, inputs, host, max_instructions=None, max_iterations=None, max_host_calls=None):
    """Load, verify and run bytecode in one call."""
    return load(data).run(inputs, host, max_instructions, max_iterations, max_host_calls)
