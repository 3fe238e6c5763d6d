"""Take flowc programs apart and put them back together (tests only): the
container's header and sections as plain data, so a test can change one
section and repack it with valid checksums (docs/bytecode.md section 1)."""

from __future__ import annotations

import zlib
from typing import Any

import msgpack
from flowc.backends.vm import format as F


def open_program(data: bytes) -> tuple[str, str | None, dict[str, Any]]:
    """(model, name, {section name: decoded value}) of a container, in table order."""
    hlen = int.from_bytes(data[5:9], "big")
    model, name, rows = msgpack.unpackb(data[13:13 + hlen], raw=False)
    sections = {}
    pos = 13 + hlen
    for sname, length in rows:
        sections[sname] = msgpack.unpackb(data[pos:pos + length], raw=False)
        pos += length
    return model, name, sections


def pack_program(model: Any, name: Any, sections: dict[str, Any], version: int = F.FORMAT_VERSION) -> bytes:
    """A container with valid checksums, whatever the model, name and sections hold."""
    blobs = [(sname, msgpack.packb(value, use_bin_type=True)) for sname, value in sections.items()]
    header = msgpack.packb([model, name, [[s, len(b)] for s, b in blobs]], use_bin_type=True)
    rest = header + b"".join(b for _, b in blobs)
    return F.MAGIC + bytes([version]) + len(header).to_bytes(4, "big") + zlib.crc32(rest).to_bytes(4, "big") + rest


def sequential_body(data: bytes) -> list:
    """``[name, consts, names, steps, retries, regions, finish, code, srcmap]`` of a sequential program,
    and its section exprs last when it has one."""
    _model, name, s = open_program(data)
    steps, finish = s["plan"]
    body = [name, s["consts"], s["names"], steps, s["retries"], s["regions"], finish, s["code"], s.get("srcmap")]
    if "exprs" in s:
        body.append(s["exprs"])
    return body


def pack_sequential(body: list, version: int = F.FORMAT_VERSION) -> bytes:
    """The inverse of :func:`sequential_body` (any values, checksums valid)."""
    name, consts, names, steps, retries, regions, finish, code, srcmap = body[:9]
    sections = {"consts": consts, "names": names, "plan": [steps, finish], "retries": retries,
                "regions": regions, "code": code}
    if len(body) > 9:
        sections["exprs"] = body[9]
    if srcmap is not None:
        sections["srcmap"] = srcmap
    return pack_program("sequential", name, sections, version)


def kernel_body(data: bytes) -> list:
    """``[name, consts, names, blocks, roles, steps, edges]`` of a kernel (aevatar) program."""
    _model, name, s = open_program(data)
    roles, steps, edges = s["plan"]
    return [name, s["consts"], s["names"], s["code"], roles, steps, edges]


def pack_kernel(body: list) -> bytes:
    """The inverse of :func:`kernel_body`; a body of another length keeps
    its first four fields and makes the rest the plan (a malformed one)."""
    name, consts, names, blocks = (list(body) + [None] * 4)[:4]
    return pack_program("kernel", name, {"consts": consts, "names": names, "plan": list(body[4:]),
                                         "code": blocks})
