"""Take flowc programs apart and put them back together (tests only): the
container's header and sections as plain data, so a test can change one
section and repack it with valid checksums (docs/bytecode.md section 1)."""

from __future__ import annotations

from typing import Any

from flowc.backends.vm import format as F
from flowc.backends.vm import sequential as V
from flowc.backends.vm.assemble import flat_plan


def open_program(data: bytes) -> tuple[str, str | None, dict[str, Any]]:
    """(model, name, {section name: decoded value}) of a container, in table
    order, the references to the string table resolved."""
    model, name, table = V.open_container(data)
    return model, name, {sname: V.read_section(data, table, sname) for sname in table}


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
    """``[name, consts, names, steps, retries, regions, finish, code, srcmap]`` of a sequential program
    (the plan's tables as rows with absolute offsets), and its section exprs last when it has one."""
    _model, name, s = open_program(data)
    steps, finish, retries, regions = V.plan_rows(s["plan"])
    body = [name, s["consts"], s["names"], steps, retries, regions, finish, s["code"], s.get("srcmap")]
    if "exprs" in s:
        body.append(s["exprs"])
    return body


def pack_sequential(body: list, version: int = F.FORMAT_VERSION) -> bytes:
    """The inverse of :func:`sequential_body` (any values, checksums valid)."""
    name, consts, names, steps, retries, regions, finish, code, srcmap = body[:9]
    try:
        plan = flat_plan(steps, finish, retries, regions)
    except (TypeError, ValueError):   # malformed tables go in as they are
        plan = [steps, finish, retries, regions]
    sections = {"consts": consts, "names": names, "plan": plan, "code": code}
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
