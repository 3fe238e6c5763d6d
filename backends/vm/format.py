"""The bytecode format as data: the opcode table, the file layout and limits.

The assembler, the disassembler, the docs (docs/bytecode.md) and the tests
read this module. The VM (:mod:`flowc.backends.vm.sequential`) imports nothing of
flowc but the kernel and keeps its own copy of the numbers; ``tests/test_vm_format.py`` checks that
the two agree.

Operand kinds (the code is one opcode byte per instruction and the
operands in three streams, :func:`split_code`):

``const``   index into the constant pool
``name``    index into the name table
``target``  an instruction of the same function: its index counted from
            the function's first instruction
``step``    a step: in step i's function step i + operand, in the main
            function step operand
``retry``   0 (no retry) or 1 + an index into the retry table
``count``   a small count (milliseconds of an each's delay)
``flag``    0 or 1
``block``   index into the blocks of section ``exprs`` (the shared expression machine's code)

Declared types (CHECK_INPUTS, CHECK_OUTPUT) are small ints, indices into
:data:`TYPES`; the names are the ones the run-time error messages use. The
constant operand of both lists the declared names and types as ints, name
index and type code alternating.

Stack effects: ``pop`` and ``push`` are counts; a pop of ``"n"`` or
``"2n"`` is the first operand (times two). ``branch`` is the stack change
on the jump edge of a conditional jump when it differs from the fall-through
one (``None``: same as fall-through).
"""

from __future__ import annotations

import zlib
from typing import Any

import attrs
import msgpack
from flowc.ir.limits import (  # noqa: F401 - the VM's fuel defaults, re-exported
    DEFAULT_MAX_HOST_CALLS,
    DEFAULT_MAX_INSTRUCTIONS,
    DEFAULT_MAX_ITERATIONS,
)

# The container every program kind shares (docs/bytecode.md section 1).
MAGIC = b"FLWC"
FORMAT_VERSION = 6
# Versions this VM runs (a VM refuses every other).
SUPPORTED_VERSIONS = (6,)
# Scheduling models, as DialectProfile.scheduling names them; the header holds the index.
MODELS = ("sequential", "kernel", "dataflow")
# Section names; the index is the section's id, its bit in the header's
# section mask; the sections follow the header in id order.
SECTIONS = ("consts", "names", "keys", "exprs", "plan", "code", "srcmap")
# model -> (sections it must hold, sections it may hold); the writers list them in this order.
MODEL_SECTIONS = {
    "sequential": (("consts", "names", "plan", "code"), ("exprs", "srcmap")),
    "kernel": (("consts", "names", "plan", "code"), ()),
    "dataflow": (("consts", "names", "keys", "exprs", "plan", "code"), ()),
}
# The msgpack ext type of a reference to the string table, the name table
# (docs/bytecode.md section 1).
STRING_REF = 0

# Step flags (bit field in each step table row).
STEP_ENTRY = 1      # the first top-level step: WALK starts there

# A dataflow program's plan (docs/bytecode.md section 9): a node row names
# its operation by index into DATAFLOW_OPS and an edge its kind by index
# into EDGE_KINDS (runtime/edges.py KINDS); append only. The loader
# (plan_vm.py) keeps its own copies; tests/test_plan_vm.py checks them.
DATAFLOW_OPS = (
    "trigger", "call", "assign", "noop", "sleep", "assert", "fail", "finish", "switch", "transform.map",
    "transform.filter", "transform.reduce", "transform.sort", "transform.dedupe", "transform.chunk", "parse",
    "validate", "foreach", "batch", "iterate", "subgraph", "parallel", "race",
)
EDGE_KINDS = ("sequence", "fallthrough", "branch", "dependency", "error")
# A node row's optional fields: (mask bit, the plan's node keys it stands
# for), in row order; the row holds the values of the set bits' fields.
# "inputs" is one flat [name, expression...] array (it gives inputs and
# input_order) and "retry" four values (max, delay_ms, backoff, jitter).
NODE_FIELDS = (
    (0, ("guard",)),
    (1, ("inputs",)),
    (2, ("capability", "call_name")),
    (3, ("retry",)),
    (4, ("over", "item_name", "batch_size")),
    (5, ("item_policy",)),
    (6, ("regions",)),
)
# An aevatar (kernel) program's plan (docs/bytecode.md section 8.3): a step
# row's on_error is an index into KERNEL_ON_ERROR; its mask's bit b set
# when the step has field KERNEL_STEP_FIELDS[b], whose row values follow
# (a retry is three: retries, delay_ms, backoff). The loader (plan_vm.py) keeps its own
# copies; tests/test_plan_vm.py checks them.
KERNEL_ON_ERROR = ("fail", "skip", "fallback")
KERNEL_STEP_FIELDS = ("retry", "default_output", "condition", "regions", "timeout_ms")

# Declared types, by code (the operand lists of CHECK_INPUTS and CHECK_OUTPUT).
TYPES = ("string", "int", "float", "boolean", "array", "object")

# Limits a VM enforces while loading (all inclusive).
LIMITS = {
    "file_bytes": 64 * 1024 * 1024,
    "header_bytes": 65535,   # the container header (model, name, section table)
    "nesting": 100,          # msgpack container nesting in the constant pool
    "stack": 131072,         # the value stack's maximum depth, as verified
    "call_depth": 256,       # nested step frames at run time (WALK's, then an arm's per level)
}

# Fuel defaults (per run; configurable) are flowc.ir.limits' figures, imported above.


def pack_container(model: str, name: str | None, sections: list[tuple[str, Any]]) -> bytes:
    """The bytes of a program: magic, version, checksum, header, then each
    section as one msgpack document (in id order), strings interned in the name table. The same
    arguments give the same bytes."""
    required, optional = MODEL_SECTIONS[model]
    assert [s for s, _ in sections if s in required] == list(required), "sections out of order or missing"
    assert all(s in required or s in optional for s, _ in sections), "a section the model does not have"
    return pack_sections(MODELS.index(model), name, [(SECTIONS.index(s), v) for s, v in sections])


def pack_sections(model: Any, name: Any, sections: list[tuple[int, Any]], version: int = FORMAT_VERSION) -> bytes:
    """A container of any model code, name and (section id, value) rows,
    the sections in id order (tests build malformed ones with it). When there is a name
    table of strings it is the container's string table: the other
    sections' strings that are in it, or occur more than once, are written
    as references to it where that is shorter (those not in it appended)."""
    names_id = SECTIONS.index("names")
    names = next((v for sid, v in sections if sid == names_id), None)
    index: dict[str, int] = {}
    if type(names) is list and all(type(s) is str for s in names):
        names, index = intern_table(names, [v for sid, v in sections if sid != names_id])
    blobs = sorted((sid, msgpack.packb(names if sid == names_id else _with_refs(v, index), use_bin_type=True))
                   for sid, v in sections)
    mask = 0
    for sid, _blob in blobs:
        mask |= 1 << sid
    header = msgpack.packb([model, name, mask, *[len(blob) for _, blob in blobs[:-1]]], use_bin_type=True)
    rest = uleb128(len(header)) + header + b"".join(blob for _, blob in blobs)
    return MAGIC + bytes([version]) + zlib.crc32(rest).to_bytes(4, "big") + rest


def uleb128(v: int) -> bytes:
    """v as an unsigned LEB128 varint (the container's header length)."""
    out = bytearray()
    while v > 0x7F:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    return bytes(out + bytes([v]))


def _strings(v: Any, out: list[str]) -> None:
    if type(v) is str:
        out.append(v)
    elif type(v) is list or type(v) is tuple:   # not an ExtType (a namedtuple)
        for e in v:
            _strings(e, out)
    elif isinstance(v, dict):
        for k, e in v.items():
            _strings(k, out)
            _strings(e, out)


def _ref_size(i: int) -> int:
    return 3 if i < 0x100 else 4 if i < 0x10000 else 6   # fixext 1, 2, 4


def intern_table(names: list[str], values: list[Any]) -> tuple[list[str], dict[str, int]]:
    """The string table (the name table, then the strings of ``values``
    that occur more than once and are shorter as references, in order of
    first occurrence) and the strings to write as references, with their
    index: those whose reference is shorter than the string."""
    seen: list[str] = []
    _strings(values, seen)
    counts: dict[str, int] = {}
    for s in seen:
        counts[s] = counts.get(s, 0) + 1
    table = list(names)
    where = {s: i for i, s in reversed(list(enumerate(table)))}
    refs: dict[str, int] = {}
    for s, n in counts.items():   # dicts keep first-occurrence order
        size = len(msgpack.packb(s))
        i = where.get(s)
        if i is None and n > 1 and n * size > size + n * _ref_size(len(table)):
            i = len(table)
            table.append(s)
        if i is not None and _ref_size(i) < size:
            refs[s] = i
    return table, refs


def string_ref(i: int) -> msgpack.ExtType:
    """The reference to entry i of the string table."""
    return msgpack.ExtType(STRING_REF, i.to_bytes(_ref_size(i) - 2, "big"))


def _with_refs(v: Any, index: dict[str, int]) -> Any:
    if type(v) is str:
        i = index.get(v)
        return v if i is None else string_ref(i)
    if type(v) is list or type(v) is tuple:
        return [_with_refs(e, index) for e in v]
    if isinstance(v, dict):
        return {_with_refs(k, index): _with_refs(e, index) for k, e in v.items()}
    return v


@attrs.frozen
class Opcode:
    code: int
    name: str
    operands: tuple[str, ...]
    pop: int | str
    push: int
    flow: str = "next"   # next | jump | branch | return | stop
    branch: tuple[int | str, int] | None = None   # (pop, push) on the jump edge
    doc: str = ""


def _op(code, name, operands, pop, push, flow="next", branch=None, doc=""):
    return Opcode(code, name, tuple(operands.split()) if operands else (), pop, push, flow, branch, doc)


OPCODES: tuple[Opcode, ...] = (
    # ---- values: every value is a block of the shared expression machine
    _op(0x1A, "EXPR", "block", 0, 1,
        doc="push the value of block b of section exprs, which the shared expression machine "
            "(section 10) evaluates with $inputs, $steps, $item, $index and $result as its roots "
            "(and, for the workflow outputs, the run's final output and exit output as `@final` and "
            "`@exit`); it costs the instructions the block runs but its RETURN"),
    # ---- control
    _op(0x20, "JUMP", "target", 0, 0, "jump", doc="continue at target"),
    _op(0x21, "JUMP_IF_NOT", "target", 1, 0, "branch",
        doc="pop v; continue at target when js_boolean(v) is false"),
    _op(0x22, "EXITED", "target", 0, 0, "branch", doc="continue at target when an exit step ended the run"),
    _op(0x24, "RET", "", 0, 0, "return", doc="return from a step function (stack must be empty)"),
    _op(0x25, "FINISH", "", 1, 0, "stop", doc="pop the workflow outputs; the run ends"),
    _op(0x26, "OUTPUTS", "const", 0, 1,
        doc="push the workflow outputs the run's final value gives (an exit step's output when one "
            "ended the run, else the last top-level step's output ?? null): const is the list of "
            "declared output keys; an object gives {k: v[k] ?? null}, missing {}, anything else "
            "{keys[0]: v}; no keys gives {}"),
    _op(0x27, "OUTPUTS_FAILED", "", 1, 1,
        doc="pop message: the workflow outputs failed; the run fails (its error, unless it already "
            "has one, is 'workflow outputs: ' + message with step null); push {}"),
    _op(0x28, "CHECK_INPUTS", "target const", 0, 0, "branch",
        doc="const lists (name, type) pairs (declared workflow inputs; section 2): for each in "
            "order, an input that is present and not null must have the type; at the first that does "
            "not, the run fails and halts (error 'workflow input \"<name>\": expected <type>, got "
            "<type>' with step null) and continues at target"),
    _op(0x29, "WALK", "target", 0, 0, "branch",
        doc="run the top-level steps by the plan (stack must be empty): from the step flagged first "
            "along each step's next (section 1), each called with $item, $index and $result missing, "
            "its RET coming back to this WALK; after each, continue at target when the run has "
            "halted, else the final output is the step's output ?? null and its next runs; after the "
            "last, continue with the next instruction. Costs 3 per step run, 2 for one that halts the "
            "run (section 6)"),
    _op(0x2A, "ARM", "", 1, 0, "return",
        doc="end a conditional's function, v the only value on the stack: pop v; record the "
            "conditional (the step whose function this is) succeeded; run its then arm when "
            "js_boolean(v), else its else arm (the plan's arms, section 1): the arm's steps in order, "
            "each called as WALK calls a step, until one halts the run; then the conditional's output "
            "is the output of the arm's last listed step ?? null, and the function returns. Costs 2, "
            "then 2 per arm step run (1 for the arm's last), then 6 (3 for an empty arm; section 6)"),
    # ---- steps
    _op(0x30, "STEP", "step", 0, 0, doc="the current step is s (a step's call saves it, RET restores it)"),
    _op(0x31, "SKIP", "", 0, 0,
        doc="record the current step skipped ('Guard condition evaluated to false'); its output is null"),
    _op(0x34, "DONE", "", 1, 0, doc="pop v; the current step's output is v ($steps.id is {} when v is missing); record the step succeeded"),
    _op(0x35, "FAIL", "flag", 1, 0,
        doc="pop message; the current step failed with output null. flag 0 (on_error fail): the run "
            "fails and halts; flag 1 (ignore): the run goes on"),
    _op(0x36, "FAIL_PARTIAL", "flag", 2, 0,
        doc="pop message, pop output; as FAIL but the step's output is that value (each: the partial array)"),
    _op(0x37, "EXIT", "flag", 1, 0,
        doc="pop output; the current step's output is it; record the step succeeded; the run halts "
            "with status success (0) or failed (1) and that exit output"),
    _op(0x39, "DEFAULT", "name block", 0, 0,
        doc="unless the key is present, inputs[name] = the value of block b (a constant's block: a "
            "fresh copy of an array or object); costs as EXPR when it runs the block, else 1"),
    _op(0x3A, "SET_RESULT", "", 1, 0, doc="pop v; $result is v"),
    _op(0x3B, "CHECK_OUTPUT", "const", 1, 1,
        doc="v on top (a step's output); const lists (name, type) pairs (declared outputs): when "
            "v is a plain object, each v[name] that is present and not null must have the type, else "
            "fail the evaluation with 'Step \"<id>\" output \"<name>\": expected <type>, got <type>' "
            "(id: the current step)"),
    # ---- host
    _op(0x40, "CALL", "name name retry", 1, 1,
        doc="pop args; drop its keys whose value is missing; host.call(capability, name, args) with "
            "the retry policy; push the output. "
            "A tool error left after the retries fails with 'Tool \"name\": message'; a host "
            "exception fails with its message and is never retried"),
    # ---- iteration and transforms
    _op(0x50, "ITER", "", 1, 1,
        doc="pop an array, push an iterator over it (saves $item/$index); a non-array fails with "
            "'each expression must resolve to an array, got <typeof>'"),
    _op(0x51, "NEXT", "target count", 1, 1, "branch",
        doc="iterator on top: set $item/$index to the next element (sleeping count ms before every "
            "element but the first) or, when done, restore $item/$index and continue at target"),
    _op(0x52, "APPEND", "", 2, 1, doc="pop v; append it to the iterator's results"),
    _op(0x53, "KEEP", "", 2, 1, doc="pop v; when js_boolean(v), append $item to the iterator's results"),
    _op(0x54, "ITEM_FAILED", "", 2, 1,
        doc="pop message; the iteration failed: append null and remember the message"),
    _op(0x55, "COLLECT", "", 1, 1, doc="pop the iterator, push its results"),
    _op(0x56, "END_EACH", "target", 1, 1, "branch", branch=(1, 2),
        doc="pop the iterator, push its results; when an iteration failed also push the last "
            "message and continue at target"),
    _op(0x57, "TRANSFORM_INPUT", "", 1, 1,
        doc="pop the resolved inputs object, push the transform's input array (items, else the first "
            "array input, else [first input] unless it is null/missing, else [])"),
    _op(0x58, "SORT", "name flag", 1, 1,
        doc="pop an array, push a stable sorted copy by the dotted field path name; flag 1 descending"),
    _op(0x59, "WRAP", "name", 1, 1, doc="pop v, push {name: v}"),
)

BY_CODE: dict[int, Opcode] = {op.code: op for op in OPCODES}
BY_NAME: dict[str, Opcode] = {op.name: op for op in OPCODES}

# The streams of section code (docs/bytecode.md section 2): every operand
# is in the stream of its kind, in instruction order. Names and blocks
# differ from step to step; the rest (the "shape" operands) repeat, so
# that functions of the same form have the same opcodes and shape operands.
CODE_STREAMS = ("shape", "names", "blocks")
STREAM_OF_KIND = {"name": 1, "block": 2}   # any other kind: 0, the shape stream


def split_code(instructions: list[tuple[int, list[int]]]) -> list:
    """Section code, ``[ops, shape, names, blocks]``, of ``(opcode,
    operands)`` pairs whose operands are already as the code holds them
    (targets and steps relative to their function)."""
    ops = bytearray()
    streams: list[list[int]] = [[], [], []]
    for code, operands in instructions:
        ops.append(code)
        for kind, v in zip(BY_CODE[code].operands, operands):
            streams[STREAM_OF_KIND.get(kind, 0)].append(v)
    return [bytes(ops), *streams]


def join_code(code: list) -> list[tuple[int, Opcode, list[int]]]:
    """``(index, opcode, operands)`` of every instruction of a verified
    section code (the inverse of :func:`split_code`)."""
    ops, *streams = code
    at = [0, 0, 0]
    out = []
    for i, c in enumerate(ops):
        spec = BY_CODE[c]
        operands = []
        for kind in spec.operands:
            s = STREAM_OF_KIND.get(kind, 0)
            operands.append(streams[s][at[s]])
            at[s] += 1
        out.append((i, spec, operands))
    return out


def op(name: str) -> int:
    return BY_NAME[name].code


def opcode_table() -> str:
    """The opcode table of docs/bytecode.md (section 2), as Markdown."""
    rows = ["| code | name | operands | stack | flow | meaning |", "|---|---|---|---|---|---|"]
    for spec in OPCODES:
        stack = f"{spec.pop} → {spec.push}"
        if spec.branch is not None:
            stack += f" (jump edge: {spec.branch[0]} → {spec.branch[1]})"
        operands = ", ".join(spec.operands) or "—"
        rows.append(f"| `0x{spec.code:02X}` | `{spec.name}` | {operands} | {stack} | {spec.flow} | {spec.doc} |")
    return "\n".join(rows) + "\n"
