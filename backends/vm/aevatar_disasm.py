"""A readable listing of an aevatar program (``flowc disasm`` on the VM
form of an aevatar workflow): the roles, the steps with the block of each
parameter, then every block instruction by instruction."""

from __future__ import annotations

import json

import msgpack
from flowc.backends.vm import aevatar_vm as A
from flowc.termtext import shown

__all__ = ["disassemble_aevatar"]


def _shown(text: str, limit: int = 48) -> str:
    r = shown(json.dumps(text, ensure_ascii=False))
    return r if len(r) <= limit else r[: limit - 4] + '..."'


def _operand(kind: str, value: int, body: list) -> str:
    if kind == "c":
        return f"{value} ({_shown(body[1][value])})"
    if kind == "n":
        return f"{value} ({shown(body[2][value])})"
    if kind == "f":
        return f"{value} ({A.FUNCTIONS[value][0]})"
    if kind == "b":
        return f"block {value}"
    return str(value)


def _params(params: list, indent: str, out: list[str]) -> None:
    for name, block in params:
        out.append(f"{indent}{shown(name)} = b{block}")


def _step_line(row: list, indent: str) -> str:
    line = f"{indent}{shown(row[0])}: {shown(row[1])}"
    if row[2] is not None:
        line += f" (role {shown(row[2])})"
    if row[4] is not None:
        line += f" -> {shown(row[4])} {shown(row[5])}"
    return line


def disassemble_aevatar(data: bytes) -> str:
    program = A.load(data)   # verifies first
    body = msgpack.unpackb(A.split(data), raw=False)
    out = [f"flowc aevatar program, format {A.FORMAT_VERSION}, workflow {shown(repr(program.name))}"]
    if body[4]:
        out.append("")
        out.append("roles:")
        for rid, config in body[4].items():
            out.append(f"  {shown(rid)}: {shown(json.dumps(config, ensure_ascii=False))}")
    out.append("")
    out.append("steps:")
    for row in body[5]:
        out.append(_step_line(row, "  "))
        _params(row[3], "      ", out)
        if row[10] is not None:
            out.append(f"      condition: b{row[10]}")
        if row[6] is not None:
            out.append(f"      next -> {shown(row[6])}")
        for key, target in row[7]:
            out.append(f"      branch {shown(repr(key))} -> {shown(target)}")
        if row[8] is not None:
            count, delay, mode = row[8]
            out.append(f"      retry {count} x {delay} ms{' (exponential)' if mode == 2 else ''}")
        if row[9] is not None:
            action, target, default = row[9]
            detail = f" -> {shown(target)}" if target is not None else ""
            detail += f" default {_shown(default)}" if default is not None else ""
            out.append(f"      on_error {shown(action)}{detail}")
        if len(row) > 12 and row[12] is not None:
            out.append(f"      timeout {row[12]} ms")
        for name, subs in (row[11] or {}).items():
            out.append(f"      region {shown(name)}:")
            for sub in subs:
                out.append(_step_line(sub, "        "))
                _params(sub[3], "            ", out)
    for b, code in enumerate(body[3]):
        out.append("")
        out.append(f"block {b}:")
        for pc, op, operands in A.decode(code):
            name, kinds = A.OPCODES[op]
            args = ", ".join(_operand(k, v, body) for k, v in zip(kinds, operands, strict=True))
            out.append(f"  {pc:5d}  {name:<8} {args}".rstrip())
    return "\n".join(out) + "\n"
