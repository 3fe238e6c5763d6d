"""The bytecode format as data: the container, the plans' codes and limits.

The assemblers, the disassembler, the docs (docs/bytecode.md) and the
tests read this module. The device side (container.py, plan_vm.py)
imports nothing of flowc but the runtime and keeps its own copies of the
numbers; tests check that they agree.

Declared types (a sequential plan's inputs and a step's declared outputs)
are small ints, indices into :data:`TYPES`; the names are the ones the
run-time error messages use.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgpack
from flowc.backends.vm import expr_vm as X
from flowc.ir.limits import (  # noqa: F401 - the VM's fuel defaults, re-exported
    DEFAULT_MAX_HOST_CALLS,
    DEFAULT_MAX_INSTRUCTIONS,
    DEFAULT_MAX_ITERATIONS,
)

# The container every program kind shares (docs/bytecode.md section 1).
MAGIC = b"FLWC"
FORMAT_VERSION = 8
# Versions this VM runs (a VM refuses every other).
SUPPORTED_VERSIONS = (8,)
# Scheduling models, as DialectProfile.scheduling names them; the header holds the index.
MODELS = ("sequential", "kernel", "dataflow")
# Section names; the index is the section's id, its bit in the header's
# section mask; the sections follow the header in id order.
SECTIONS = ("consts", "names", "keys", "exprs", "plan", "code", "srcmap")
# model -> (sections it must hold, sections it may hold); the writers list them in this order.
MODEL_SECTIONS = {
    "sequential": (("consts", "names", "plan", "code"), ("srcmap",)),
    "kernel": (("consts", "names", "plan", "code"), ()),
    "dataflow": (("consts", "names", "keys", "exprs", "plan", "code"), ()),
}
# The msgpack ext type of a reference to the string table, the name table
# (docs/bytecode.md section 1).
STRING_REF = 0

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

# A WorkflowSkill (sequential) program's plan (docs/bytecode.md section 2):
# a step row names its kind by index into SEQUENTIAL_OPS; its mask's bit b
# set when the step has the fields of SEQUENTIAL_STEP_FIELDS' bit b, whose
# row values follow in bit order (a retry is three: max, delay_ms,
# backoff; an each its delay_ms and the block of its list; a sort its path
# and whether it descends). The loader (plan_vm.py) keeps its own copies;
# tests/test_plan_vm.py checks them.
SEQUENTIAL_OPS = ("call", "transform.filter", "transform.map", "transform.sort", "branch", "exit", "end")
SEQUENTIAL_STEP_FIELDS = (
    (0, ("retry",)),
    (1, ("each", "over")),
    (2, ("guard",)),
    (3, ("args",)),
    (4, ("capability", "call_name")),
    (5, ("body",)),
    (6, ("sort",)),
    (7, ("key",)),
    (8, ("mapping",)),
    (9, ("declared",)),
    (10, ("status",)),
)

# Declared types, by code (input and output checks of a sequential plan).
TYPES = ("string", "int", "float", "boolean", "array", "object")

# Limits a VM enforces while loading (all inclusive).
LIMITS = {
    "file_bytes": 64 * 1024 * 1024,
    "header_bytes": 65535,   # the container header (model, name, section table)
    "nesting": 100,          # msgpack container nesting in the constant pool
    "stack": 131072,         # the value stack's maximum depth, as verified
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


# ================================================================ forms
#
# A sequential program's section code (docs/bytecode.md section 2.3): its
# blocks as forms, ``[forms, uses, consts, names]``. A form is a block's
# code whose CONST operands and LOAD/FIELD names are holes, numbered per
# kind in order of first use (one hole per distinct pool entry); block i is
# form uses[i] with its holes filled, in order, from the next entries of
# the flat streams consts and names.


def _code(ins: list) -> bytes:
    out = bytearray()
    for _pc, op, operands in ins:
        out.append(op)
        if op in X.PACKED_OPS:
            operands = [operands[1] << X.ACCESS_BITS | operands[0]]
        for v in operands:
            out += uleb128(v)
    return bytes(out)


def _form(code: bytes) -> tuple[bytes, list[int], list[int]]:
    """(form, const holes, name holes) of one block; a block that does not
    decode is a form of no holes (the loader refuses it)."""
    try:
        ins = X.decode(code)
    except X.VerifyError:
        return code, [], []
    consts: dict[int, int] = {}
    names: dict[int, int] = {}
    out = []
    for pc, op, o in ins:
        if op == X.CONST:
            o = [consts.setdefault(o[0], len(consts))]
        elif op in X.PACKED_OPS:
            o = [o[0], names.setdefault(o[1], len(names))]
        out.append((pc, op, o))
    return _code(out), list(consts), list(names)


def forms_of_blocks(blocks: list) -> list:
    """Section code of a sequential program from its blocks (each distinct
    form once, in order of first use; deterministic). A value that is not
    bytes goes in as a form of its own (tests hand the loader broken blocks)."""
    forms: dict[Any, int] = {}
    table: list = []
    uses: list[int] = []
    consts: list[int] = []
    names: list[int] = []
    for code in blocks:
        form, c, n = _form(code) if type(code) is bytes else (code, [], [])
        key = (type(form), form) if type(form) is bytes else (type(form), len(table))
        if key not in forms:
            forms[key] = len(table)
            table.append(form)
        uses.append(forms[key])
        consts += c
        names += n
    return [table, uses, consts, names]


def blocks_of_forms(section: list) -> list[bytes]:
    """The blocks of a (loadable) sequential program's section code, their holes filled."""
    forms, uses, consts, names = section
    blocks = []
    at_c = at_n = 0
    for f in uses:
        ins = X.decode(forms[f])
        out = []
        nc = nn = 0
        for pc, op, o in ins:
            if op == X.CONST:
                nc = max(nc, o[0] + 1)
                o = [consts[at_c + o[0]]]
            elif op in X.PACKED_OPS:
                nn = max(nn, o[1] + 1)
                o = [o[0], names[at_n + o[1]]]
            out.append((pc, op, o))
        at_c += nc
        at_n += nn
        blocks.append(_code(out))
    return blocks
