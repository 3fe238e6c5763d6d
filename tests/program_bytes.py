"""Take flowc programs apart and put them back together (tests only): the
container's header and sections as plain data, so a test can change one
section and repack it with valid checksums (docs/bytecode.md section 1)."""

from __future__ import annotations

from typing import Any

from flowc.backends.vm import container as C
from flowc.backends.vm import device
from flowc.backends.vm import format as F


def open_program(data: bytes) -> tuple[str, str | None, dict[str, Any]]:
    """(model, name, {section name: decoded value}) of a container, in table
    order, the references to the string table resolved."""
    model, name, table = C.open_container(data)
    return model, name, {sname: C.read_section(data, table, sname) for sname in table}


def pack_program(model: Any, name: Any, sections: dict[str, Any], version: int = F.FORMAT_VERSION) -> bytes:
    """A container with valid checksums, whatever the model, name and
    sections hold (an unknown model or section name gets an unknown id)."""
    unknown: dict[str, int] = {}

    def ident(sname: str) -> int:
        if sname in F.SECTIONS:
            return F.SECTIONS.index(sname)
        return unknown.setdefault(sname, len(F.SECTIONS) + len(unknown))

    code = F.MODELS.index(model) if model in F.MODELS else 7
    return F.pack_sections(code, name, [(ident(s), v) for s, v in sections.items()], version)


def sequential_body(data: bytes) -> list:
    """``[name, consts, names, blocks, plan, srcmap]`` of a sequential
    program: its blocks with their forms' holes filled, section plan as it is (``[entry, terminal, inputs, outputs,
    step rows, edges]``, docs/bytecode.md section 2), srcmap nil when stripped."""
    _model, name, s = open_program(data)
    return [name, s["consts"], s["names"], F.blocks_of_forms(s["code"]), s["plan"], s.get("srcmap")]


def pack_sequential(body: list, version: int = F.FORMAT_VERSION) -> bytes:
    """The inverse of :func:`sequential_body` (any values, checksums valid;
    the blocks as forms, a block that does not decode a form of its own)."""
    name, consts, names, blocks, plan, srcmap = body
    code = F.forms_of_blocks(blocks) if type(blocks) is list else blocks
    sections = {"consts": consts, "names": names, "plan": plan, "code": code}
    if srcmap is not None:
        sections["srcmap"] = srcmap
    return pack_program("sequential", name, sections, version)


def kernel_body(data: bytes) -> list:
    """``[name, consts, names, blocks, roles, steps, edges]`` of a kernel (aevatar) program, the
    plan's tables spelled out: step rows of 12 fields ``[id, type, role, params, capability, name,
    on_error, retry, default_output, condition, regions, timeout_ms]`` (params ``[name, block]``
    pairs, regions ``[name, sub-step rows, edges]``, absent fields nil) and edges
    ``[source, target, kind, label]`` by id, the fallthrough edges included."""
    _model, name, s = open_program(data)
    roles, steps, _edges = s["plan"]
    rows = []
    for row in steps:
        row = _step_fields(row)
        for region in row[10] or ():
            ids = [sub[0] for sub in region[1]]
            flat = region[2]
            region[2] = [[ids[flat[i]], ids[flat[i + 1]], F.EDGE_KINDS[flat[i + 2]], flat[i + 3]]
                         for i in range(0, len(flat), 4)]
        rows.append(row)
    return [name, s["consts"], s["names"], s["code"], roles, rows, device.load(data).plan["edges"]]


def _step_fields(row: list) -> list:
    """A step row of section plan as ``[id, type, role, params, capability,
    name, on_error, retry, default_output, condition, regions, timeout_ms]``
    (params and regions as pairs and triples; absent fields nil)."""
    fields: dict = dict.fromkeys(F.KERNEL_STEP_FIELDS)
    at = 8
    for bit, key in enumerate(F.KERNEL_STEP_FIELDS):
        if row[7] & (1 << bit):
            size = 3 if key == "retry" else 1
            fields[key] = row[at:at + size] if key == "retry" else row[at]
            at += size
    regions = fields["regions"]
    if regions is not None:
        regions = [[regions[i], [_sub_fields(sub) for sub in regions[i + 1]], regions[i + 2]]
                   for i in range(0, len(regions), 3)]
    return _sub_fields(row) + [F.KERNEL_ON_ERROR[row[6]], fields["retry"], fields["default_output"],
                               fields["condition"], regions, fields["timeout_ms"]]


def _sub_fields(row: list) -> list:
    params = row[3]
    return row[:3] + [[params[i:i + 2] for i in range(0, len(params), 2)]] + row[4:6]


def pack_kernel(body: list) -> bytes:
    """The inverse of :func:`kernel_body`, whatever the body holds (a value
    that has no encoding goes in as it is, so the loader sees the damage);
    a body of another length keeps its first four fields and makes the rest the plan."""
    name, consts, names, blocks = (list(body) + [None] * 4)[:4]
    plan = list(body[4:])
    if len(plan) == 3 and type(plan[1]) is list:
        ids = [row[0] for row in plan[1] if type(row) is list and row]
        edges = plan[2]
        if type(edges) is list:
            edges = [e for e in edges if not (type(e) is list and len(e) > 2 and e[2] == "fallthrough")]
        plan = [plan[0], [_kernel_row(row) for row in plan[1]], _flat_edges(edges, ids)]
    return pack_program("kernel", name, {"consts": consts, "names": names, "plan": plan, "code": blocks})


def _index(table, v):
    return table.index(v) if v in table else v


def _flat_edges(edges, ids):
    if type(edges) is not list:
        return edges
    out = []
    for e in edges:
        if type(e) is list and len(e) >= 3:
            out += [_index(ids, e[0]), _index(ids, e[1]), _index(list(F.EDGE_KINDS), e[2]), *e[3:]]
        else:
            out += e if type(e) is list else [e]
    return out


def _flat_params(params):
    if type(params) is not list:
        return params
    return [x for pair in params for x in (pair if type(pair) is list else [pair])]


def _sub_row(row):
    if type(row) is not list or len(row) != 6:
        return row
    return row[:3] + [_flat_params(row[3])] + row[4:]


def _kernel_row(row):
    """A spelled-out step row as section plan holds it."""
    if type(row) is not list or len(row) != 12:
        return row
    out = _sub_row(row[:6]) + [_index(list(F.KERNEL_ON_ERROR), row[6]), 0]
    for bit, value in enumerate(row[7:]):
        if value is None:
            continue
        out[7] |= 1 << bit
        if F.KERNEL_STEP_FIELDS[bit] == "retry" and type(value) is list:
            out += value
        elif F.KERNEL_STEP_FIELDS[bit] == "regions" and type(value) is list:
            out.append([x for region in value for x in _region(region)])
        else:
            out.append(value)
    return out


def _region(region):
    if type(region) is not list or len(region) != 3 or type(region[1]) is not list:
        return region if type(region) is list else [region]
    ids = [sub[0] for sub in region[1] if type(sub) is list and sub]
    return [region[0], [_sub_row(sub) for sub in region[1]], _flat_edges(region[2], ids)]
