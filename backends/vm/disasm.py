"""A readable listing of flowc bytecode: header, constants, names, steps,
retry policies, regions, and the code with offsets and source lines.

The bytecode is verified first (so every index in the listing resolves);
the code is then decoded again from the bytes with the opcode table of
:mod:`flowc.backends.vm.format`, independent of the VM's own tables.
"""

from __future__ import annotations

import json
import os

from flowc.backends.vm import format as F
from flowc.backends.vm import vm as V
from flowc.termtext import shown

__all__ = ["decode_code", "disassemble"]


def _varint(code: bytes, p: int) -> tuple[int, int]:
    v = 0
    shift = 0
    while True:
        b = code[p]
        p += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, p
        shift += 7


def decode_code(code: bytes) -> list[tuple[int, F.Opcode, list[int]]]:
    """(offset, opcode, raw operands) for every instruction of verified code."""
    out = []
    p = 0
    while p < len(code):
        at = p
        spec = F.BY_CODE[code[p]]
        p += 1
        operands = []
        for _ in spec.operands:
            v, p = _varint(code, p)
            operands.append(v)
        out.append((at, spec, operands))
    return out


def _show(value, limit: int = 60) -> str:
    text = shown(json.dumps(value, ensure_ascii=False, sort_keys=False))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _srcmap(srcmap) -> dict[int, tuple[int, int]]:
    """code offset -> (line, col) where a source position starts."""
    out = {}
    if not srcmap:
        return out
    flat = srcmap[1]
    off = 0
    for i in range(0, len(flat), 3):
        off += flat[i]
        out[off] = (flat[i + 1], flat[i + 2])
    return out


def _source_lines(name: str, source_root: str | None) -> list[str] | None:
    """The lines of the source file a program names, or None. The program
    may come from anywhere, so only its base name counts (what flowc
    writes): looked up in ``source_root``, else in the current directory,
    never along a path the bytecode chose. Only a regular file of at most
    MAX_SOURCE_BYTES is read (a FIFO or a device named like the source
    can't block the listing or fill memory)."""
    from flowc.ir.limits import MAX_SOURCE_BYTES
    from flowc.sourcefile import FileTooLarge, read_limited

    base = os.path.basename(name.replace("\\", "/"))
    if base in ("", ".", "..") or "\0" in base:
        return None
    for candidate in ([os.path.join(source_root, base)] if source_root else []) + [base]:
        try:
            return read_limited(candidate, MAX_SOURCE_BYTES).decode("utf-8").splitlines()
        except (OSError, FileTooLarge, UnicodeDecodeError):
            continue
    return None


def disassemble(data: bytes, source_root: str | None = None) -> str:
    program = V.load(data)  # raises VerifyError
    top = V.unpackb(bytes(data))
    version, checksum, body = top[1], top[2], top[3]
    sec = V.unpackb(body)
    name, consts, names, steps, retries, regions, finish, code, srcmap = sec
    lines = [
        f"flowc bytecode, format version {version}",
        f"workflow: {_show(name)}",
        f"size: {len(data)} bytes (body {len(body)}, code {len(code)}), checksum crc32 0x{checksum:08x}",
        f"max stack depth: {program.max_stack}",
        f"source map: {_show(srcmap[0]) if srcmap else 'stripped'}",
        "",
        f"constants ({len(consts)}):",
    ]
    lines += [f"  #{i:<4} {_show(c, 90)}" for i, c in enumerate(consts)]
    lines += ["", f"names ({len(names)}):"]
    lines += [f"  @{i:<4} {_show(n, 90)}" for i, n in enumerate(names)]
    lines += ["", f"steps ({len(steps)}):"]
    for i, (sid, kind, flags, entry) in enumerate(steps):
        extra = "  branch target" if flags & F.STEP_BRANCH_TARGET else ""
        lines.append(f"  s{i:<4} {shown(names[sid]):<24} {shown(names[kind]):<12} entry {entry:04x}{extra}")
    lines += ["", f"retry policies ({len(retries)}):"]
    for i, (mx, delay, backoff) in enumerate(retries):
        lines.append(f"  r{i + 1:<4} max {mx}, delay {delay} ms, backoff {backoff}")
    lines += ["", f"regions ({len(regions)}):"]
    for start, end, handler, depth in regions:
        lines.append(f"  [{start:04x}, {end:04x}) -> {handler:04x}  stack depth {depth}")
    positions = _srcmap(srcmap)
    source = _source_lines(srcmap[0], source_root) if srcmap and srcmap[0] else None
    entry_names = {entry: f"step s{i} {shown(names[sid])}" for i, (sid, _k, _f, entry) in enumerate(steps)}
    lines += ["", "code:", "main:"]
    last_line = None
    for at, spec, operands in decode_code(code):
        if at in entry_names:
            lines.append("")
            lines.append(entry_names[at] + ":")
        if at == finish:
            lines.append("  finish:")
        if at in positions:
            line, _col = positions[at]
            if line != last_line:
                text = ""
                if source is not None and 0 < line <= len(source):
                    text = "  " + shown(source[line - 1].strip()[:80])
                lines.append(f"        ; line {line}{text}")
                last_line = line
        parts = []
        for kind, v in zip(spec.operands, operands):
            if kind == "const" and spec.name in ("CHECK_INPUTS", "CHECK_OUTPUT"):
                pairs = consts[v]
                types = ", ".join(f"{_show(names[n], 30)}: {F.TYPES[t]}" for n, t in zip(pairs[::2], pairs[1::2]))
                parts.append(f"#{v} {{{types}}}")
            elif kind == "const":
                parts.append(f"#{v} {_show(consts[v])}")
            elif kind == "name":
                parts.append(f"@{v} {_show(names[v])}")
            elif kind == "target":
                parts.append(f"-> {v:04x}")
            elif kind == "step":
                parts.append(f"s{v} {shown(names[steps[v][0]])}")
            elif kind == "retry":
                parts.append(f"r{v}" if v else "no retry")
            elif kind == "root":
                parts.append("$" + F.ROOTS[v])
            elif kind == "state":
                parts.append(F.STATES[v])
            else:
                parts.append(str(v))
        lines.append(f"  {at:04x}  {spec.name:<16} {', '.join(parts)}".rstrip())
    return "\n".join(lines) + "\n"
