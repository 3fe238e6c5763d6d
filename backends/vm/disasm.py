"""A readable listing of any flowc program (``flowc disasm``): the
container's header and section table, then the program's plan and code.

A sequential program lists its constants, names, steps (the plan: the
top-level sequence and the conditionals' arms), retry policies, regions
and the code with offsets and source lines; a kernel
program its roles and steps with the block of each parameter, then every
block; a dataflow program its graphs with each node's expressions, then
every CEL block.

The program is verified first (so every index in the listing resolves);
the sections are then decoded again from the bytes, and sequential code
with the opcode table of :mod:`flowc.backends.vm.format`, independent of
the VM's own tables. Every piece of program text passes ``shown`` (the
listing is printed to a terminal).
"""

from __future__ import annotations

import json
import os

from flowc.backends.vm import container as C
from flowc.backends.vm import format as F
from flowc.backends.vm.assemble import join_blocks, plan_rows
from flowc.backends.vm.device import load
from flowc.backends.vm.expr_disasm import disassemble_block
from flowc.backends.vm.plan_vm import plan_fields
from flowc.termtext import shown

__all__ = ["decode_code", "disassemble"]


def decode_code(code: list, entries: list[int]) -> list[tuple[int, F.Opcode, list[int]]]:
    """(offset, opcode, operands) for every instruction of verified section
    code, ``entries`` the step functions' offsets: targets and steps as
    offsets and step indices of the whole program, not of their function."""
    bounds = [0, *entries]
    out = []
    f = 0
    for at, spec, operands in F.join_code(code):
        while f + 1 < len(bounds) and at >= bounds[f + 1]:
            f += 1
        absolute = []
        for kind, v in zip(spec.operands, operands):
            if kind == "target":
                v += bounds[f]
            elif kind == "step" and f > 0:
                v += f - 1
            absolute.append(v)
        out.append((at, spec, absolute))
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
    """The listing of a program; VerifyError when it does not load."""
    program = load(data)  # raises VerifyError
    model, name, table = C.open_container(data)
    sections = {sname: C.read_section(data, table, sname) for sname in table}
    lines = [
        f"flowc program, format version {data[4]}, scheduling model {model}",
        f"workflow: {_show(name)}",
        f"size: {len(data)} bytes, checksum crc32 0x{int.from_bytes(data[5:9], 'big'):08x}",
        f"sections ({len(table)}):",
    ]
    for sname, where in table.items():
        start, end = where[0], where[1]
        lines.append(f"  {sname:<8} {end - start:9,d} bytes at {start:#06x}")
    body = _sequential if model == "sequential" else _plan_listing
    return "\n".join(lines + [""] + body(program, sections, source_root)) + "\n"


def _sequential(program, sec: dict, source_root: str | None) -> list[str]:
    consts, names, code = (sec[k] for k in ("consts", "names", "code"))
    steps, finish, retries, regions, arms = plan_rows(sec["plan"])
    arms_of = {step: (then, otherwise) for step, then, otherwise in arms}
    targets = {t for _step, then, otherwise in arms for t in then + otherwise}
    srcmap = sec.get("srcmap")
    lines = [
        f"code: {len(code[0])} instructions, max stack depth {program.max_stack}",
        f"source map: {_show(srcmap[0]) if srcmap else 'stripped'}",
        "",
        f"constants ({len(consts)}):",
    ]
    lines += [f"  #{i:<4} {_show(c, 90)}" for i, c in enumerate(consts)]
    lines += ["", f"names ({len(names)}):"]
    lines += [f"  @{i:<4} {_show(n, 90)}" for i, n in enumerate(names)]
    lines += ["", f"steps ({len(steps)}):"]
    for i, (sid, flags, entry, after) in enumerate(steps):
        extra = "  branch target" if i in targets else ""
        extra += "  first top-level step" if flags & F.STEP_ENTRY else ""
        extra += f"  then s{after - 1}" if after else ""
        lines.append(f"  s{i:<4} {shown(names[sid]):<24} entry {entry:04x}{extra}")
        if i in arms_of:    # a conditional: the steps of its arms, in order
            lines.append("        arms: " + "; ".join(
                f"{label} [{', '.join(f's{t} {shown(names[steps[t][0]])}' for t in arm)}]"
                for label, arm in zip(("then", "else"), arms_of[i])))
    lines += ["", f"retry policies ({len(retries)}):"]
    for i, (mx, delay, backoff) in enumerate(retries):
        lines.append(f"  r{i + 1:<4} max {mx}, delay {delay} ms, backoff {backoff}")
    lines += ["", f"regions ({len(regions)}):"]
    for start, end, handler, depth in regions:
        lines.append(f"  [{start:04x}, {end:04x}) -> {handler:04x}  stack depth {depth}")
    positions = _srcmap(srcmap)
    source = _source_lines(srcmap[0], source_root) if srcmap and srcmap[0] else None
    entry_names = {entry: f"step s{i} {shown(names[sid])}" for i, (sid, _f, entry, _n) in enumerate(steps)}
    exprs = sec.get("exprs")
    keys, blocks = (exprs[0], join_blocks(exprs[1:], code[3])) if exprs is not None else ([], [])
    lines += ["", (f"expression blocks: {len(blocks)}, {len(set(code[3]))} forms (each listed under the "
                   "instruction that runs it)")]
    lines += ["", "code:", "main:"]
    block = 0
    last_line = None
    for at, spec, operands in decode_code(code, [entry for _sid, _f, entry, _n in steps]):
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
        runs = None     # the block this instruction runs
        for kind, v in zip(spec.operands, operands):
            if kind == "block":     # block k is the code's k-th block operand; the operand names its form
                parts.append(f"b{block} (form {v})")
                runs = blocks[block]
                block += 1
            else:
                parts.append(_operand(kind, v, spec, consts, names, steps))
        lines.append(f"  {at:04x}  {spec.name:<16} {', '.join(parts)}".rstrip())
        if runs is not None:
            lines += ["          | " + line for line in disassemble_block(
                runs, lambda c: _show(consts[c]), lambda n: _show(names[n]), lambda k: shown(keys[k]))]
    return lines


def _operand(kind: str, v: int, spec: F.Opcode, consts: list, names: list, steps: list) -> str:
    if kind == "const" and spec.name in ("CHECK_INPUTS", "CHECK_OUTPUT"):
        pairs = consts[v]
        types = ", ".join(f"{_show(names[n], 30)}: {F.TYPES[t]}" for n, t in zip(pairs[::2], pairs[1::2]))
        return f"#{v} {{{types}}}"
    if kind == "const":
        return f"#{v} {_show(consts[v])}"
    if kind == "name":
        return f"@{v} {_show(names[v])}"
    if kind == "target":
        return f"-> {v:04x}"
    if kind == "step":
        return f"s{v} {shown(names[steps[v][0]])}"
    if kind == "retry":
        return f"r{v}" if v else "no retry"
    return str(v)


# ---------------------------------------------------------------- the plan-run models

class _References:
    """Expressions named, not run: the plan of a listing holds each
    expression's reference, and a kernel step's parameters as pairs."""

    def function(self, ref):
        return ref

    def params(self, flat, what):
        return [flat[i:i + 2] for i in range(0, len(flat), 2)]


def _plan_listing(program, sec: dict, _source_root: str | None) -> list[str]:
    """The plan (each expression named by its block or expression index),
    the expression table when there is one, then every block."""
    row = _PLAN_LISTINGS[program.model]
    out: list[str] = []
    if sec["plan"] is not None:   # the plan as plan_vm decodes it, expressions as their references
        out += row["plan"](dict(plan_fields(program.model, sec["plan"], _References())))
    flat = sec.get("exprs")
    if flat is not None:
        rows = [flat[i:i + 3] for i in range(0, len(flat), 3)]
        out.append(f"expressions ({len(rows)}):")
        for i, (block, params, slots) in enumerate(rows):
            out.append(f"  e{i}: block {block}, {params} parameters, {slots} slots")
    keys = sec.get("keys", sec["names"])
    const = row["const"]
    for b, code in enumerate(sec["code"]):
        out.append("")
        out.append(f"block {b}:")
        out += ["  " + line for line in disassemble_block(
            code, lambda c: const(sec["consts"][c]), lambda n: shown(sec["names"][n]), lambda k: shown(keys[k]))]
    return out


def _kernel_plan(plan: dict) -> list[str]:
    out = []
    if plan["roles"]:
        out.append("roles:")
        for rid, config in plan["roles"].items():
            out.append(f"  {shown(rid)}: {shown(json.dumps(config, ensure_ascii=False))}")
        out.append("")
    routes = _by_end(plan["edges"], 0)   # the fallthrough edges included
    out.append(f"steps ({len(plan['nodes'])}):")
    for step in plan["nodes"]:
        out.append(_step_line(step, "  "))
        _params(step["params"], "      ", out)
        if step.get("condition") is not None:
            out.append(f"      condition: b{step['condition']}")
        for _source, target, kind, label in routes.get(step["id"], ()):
            out.append(_route_line(kind, label, target, "      "))
        if step["retry"] is not None:
            count, delay, mode = step["retry"]
            out.append(f"      retry {count} x {delay} ms{' (exponential)' if mode == 2 else ''}")
        if step["on_error"] != "fail":
            default = f" default {_show(step['default_output'], 48)}" if step.get("default_output") is not None else ""
            out.append(f"      on_error {shown(step['on_error'])}{default}")
        if step.get("timeout_ms") is not None:
            out.append(f"      timeout {step['timeout_ms']} ms")
        for name, region in step.get("regions") or ():
            out.append(f"      region {shown(name)}:")
            for sub in region["nodes"]:
                out.append(_step_line(sub, "        "))
                _params(sub["params"], "            ", out)
    return out


def _dataflow_plan(plan: dict) -> list[str]:
    out = ["graph:"]
    _graph(plan, "  ", out)
    return [*out, ""]


def _cel_const(entry) -> str:
    tag, v = entry if type(entry) is list else ("b" if type(entry) is bytes else "v", entry)
    shown_value = repr(v) if tag == "v" else (f"{v}u" if tag == "u" else f"b{v!r}")
    return shown(shown_value[:40])


# How each plan-run model's listing shows its plan and its constants.
_PLAN_LISTINGS = {
    "kernel": {"plan": _kernel_plan, "const": lambda c: _show(c, 48)},
    "dataflow": {"plan": _dataflow_plan, "const": _cel_const},
}


def _by_end(edges: list, end: int) -> dict[str, list]:
    """The plan's edges grouped by source (``end`` 0) or target (1), in plan order."""
    grouped: dict[str, list] = {}
    for edge in edges:
        grouped.setdefault(edge[end], []).append(edge)
    return grouped


# How a listing names each kind of route (dependencies are listed on the
# node's line; an error route by its label: goto, fallback, on_timeout).
_ROUTE_WORDS = {"sequence": "next", "fallthrough": "then", "branch": "branch"}
_ERROR_WORDS = {"timeout": "on_timeout"}


def _route_line(kind: str, label: str | None, target: str, indent: str) -> str:
    if kind == "error":
        return f"{indent}{shown(_ERROR_WORDS.get(label or '', label or 'on error'))} -> {shown(target)}"
    shown_label = f" {shown(repr(label))}" if label is not None else ""
    return f"{indent}{_ROUTE_WORDS.get(kind, kind)}{shown_label} -> {shown(target)}"


def _params(params: list, indent: str, out: list[str]) -> None:
    for name, block in params:
        out.append(f"{indent}{shown(name)} = b{block}")


def _step_line(step: dict, indent: str) -> str:
    line = f"{indent}{shown(step['id'])}: {shown(step['type'])}"
    if step["role"] is not None:
        line += f" (role {shown(step['role'])})"
    if step["capability"] is not None:
        line += f" -> {shown(step['capability'])} {shown(step['name'])}"
    return line


def _graph(graph: dict, indent: str, out: list[str]) -> None:
    edges = graph["edges"]
    incoming, outgoing = _by_end(edges, 1), _by_end(edges, 0)
    for node in graph["nodes"]:
        line = f"{indent}{shown(node['id'])}: {shown(node['op'])} ({shown(node['kind'])})"
        deps = [e[0] for e in incoming.get(node["id"], ()) if e[2] == "dependency"]
        if deps:
            line += " after " + ", ".join(shown(d) for d in deps)
        out.append(line)
        exprs = []
        if node.get("guard") is not None:
            exprs.append(f"when=e{node['guard']}")
        if node.get("over") is not None:
            exprs.append(f"over=e{node['over']}")
        exprs += [f"{shown(k)}=e{v}" for k, v in node["attrs"].items()]
        if exprs:
            out.append(f"{indent}    " + " ".join(exprs))
        for _source, target, kind, label in outgoing.get(node["id"], ()):
            if kind == "branch":
                out.append(f"{indent}    case {shown(repr(label))} -> {shown(target)}")
            elif kind != "dependency":
                out.append(_route_line(kind, label, target, indent + "    "))
        for name, region in node.get("regions") or ():
            region_deps = {e[0] for e in region["edges"] if e[2] == "dependency"}
            sinks = [n["id"] for n in region["nodes"] if n["id"] not in region_deps]
            out.append(f"{indent}    region {shown(name)} (sinks: {', '.join(shown(x) for x in sinks)})")
            _graph(region, indent + "        ", out)
