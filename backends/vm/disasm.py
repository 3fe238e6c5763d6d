"""A readable listing of any flowc program (``flowc disasm``): the
container's header and section table, then the program's plan and code.

A sequential program lists its inputs, its step rows (each step's kind,
call, the block of each of its values, its sequence and branch edges,
with its source line) and its outputs; a kernel program its roles and
steps with the block of each parameter; a dataflow program its graphs
with each node's expressions; then every block of each.

The program is verified first (so every index in the listing resolves);
the sections are then decoded again from the bytes. Every piece of
program text passes ``shown`` (the listing is printed to a terminal).
"""

from __future__ import annotations

import json
import os

from flowc.backends.vm import container as C
from flowc.backends.vm import format as F
from flowc.backends.vm.device import load
from flowc.backends.vm.expr_disasm import disassemble_block
from flowc.backends.vm.plan_vm import plan_fields
from flowc.runtime.wfs import MISSING
from flowc.termtext import shown

__all__ = ["disassemble"]


def _show(value, limit: int = 60) -> str:
    text = shown(json.dumps(value, ensure_ascii=False, sort_keys=False))
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
    return "\n".join(lines + [""] + _plan_listing(program, sections, source_root)) + "\n"


# ---------------------------------------------------------------- the plan-run models

class _References:
    """Expressions named, not run: the plan of a listing holds each
    expression's reference, and a kernel step's parameters as pairs."""

    machine = None   # no fast loop is compiled for a listing

    def __init__(self, consts: list) -> None:
        self.consts = consts

    def function(self, ref):
        return ref

    def params(self, flat, what):
        return [flat[i:i + 2] for i in range(0, len(flat), 2)]


def _plan_listing(program, sec: dict, source_root: str | None) -> list[str]:
    """The plan (each expression named by its block or expression index),
    the expression table when there is one, then every block."""
    row = _PLAN_LISTINGS[program.model]
    out: list[str] = []
    if sec["plan"] is not None:   # the plan as plan_vm decodes it, expressions as their references
        plan = dict(plan_fields(program.model, sec["plan"], _References(sec["consts"])))
        out += row["plan"](plan, _step_lines(plan, sec.get("srcmap"), source_root), sec.get("srcmap"))
    flat = sec.get("exprs")
    if flat is not None:
        rows = [flat[i:i + 3] for i in range(0, len(flat), 3)]
        out.append(f"expressions ({len(rows)}):")
        for i, (block, params, slots) in enumerate(rows):
            out.append(f"  e{i}: block {block}, {params} parameters, {slots} slots")
    keys = sec.get("keys", sec["names"])
    const = row["const"]
    blocks = F.blocks_of_forms(sec["code"]) if program.row["expressions"]["forms"] else sec["code"]
    for b, code in enumerate(blocks):
        out.append("")
        out.append(f"block {b}:")
        out += ["  " + line for line in disassemble_block(
            code, lambda c: const(sec["consts"][c]), lambda n: shown(sec["names"][n]), lambda k: shown(keys[k]))]
    return out


def _step_lines(plan: dict, srcmap: list | None, source_root: str | None) -> dict[str, str]:
    """Each node's source line and its text, from a sequential program's
    source map (``[file, line, col per node]``); {} without one."""
    if not srcmap or not isinstance(srcmap, list) or len(srcmap) != 2:
        return {}
    source = _source_lines(srcmap[0], source_root) if srcmap[0] else None
    out = {}
    flat = srcmap[1]
    for i, node in enumerate(plan["nodes"]):
        if 2 * i + 1 < len(flat) and flat[2 * i]:
            line = flat[2 * i]
            text = ""
            if source is not None and 0 < line <= len(source):
                text = "  " + shown(source[line - 1].strip()[:80])
            out[node["id"]] = f"; line {line}{text}"
    return out


def _sequential_plan(plan: dict, lines: dict[str, str], srcmap: list | None) -> list[str]:
    """Entry, inputs, each step row (its kind, its blocks, its edges, its
    source line), the workflow outputs."""
    named = _show(srcmap[0]) if isinstance(srcmap, list) and srcmap else "stripped"
    out = [f"entry: {shown(str(plan['entry']))}, terminal: {shown(str(plan['terminal']))}",
           f"source map: {named}", "", f"inputs ({len(plan['inputs'])}):"]
    for name, kind, default in plan["inputs"]:
        has_default = default is not MISSING
        out.append(f"  {shown(name)}: {kind or 'any'}" + (f" = {_show(default, 60)}" if has_default else ""))
    routes = _by_end(plan["edges"], 0)
    out += ["", f"steps ({len(plan['nodes'])}):"]
    for node in plan["nodes"]:
        line = f"  {shown(node['id'])}: {shown(node['op'])}"
        if node.get("call_name") is not None:
            line += f" -> {shown(node['capability'])} {shown(node['call_name'])}"
        if node["on_error"] != "fail":
            line += f"  on_error {node['on_error']}"
        if node["id"] in lines:
            line += "    " + lines[node["id"]]
        out.append(line)
        out += _sequential_fields_lines(node, "      ")
        for _source, target, kind, label in routes.get(node["id"], ()):
            out.append(_route_line(kind, label, target, "      "))
    keys, block = plan["outputs"]
    out += ["", f"outputs: {', '.join(shown(k) for k in keys) or '(none)'}"
            + (f" = b{block}" if block is not None else " (from the last value)")]
    return out


_BODY_WORDS = {"transform.filter": "test", "transform.map": "object", "branch": "condition", "exit": "output"}


def _sequential_fields_lines(node: dict, indent: str) -> list[str]:
    parts = []
    if node.get("guard") is not None:
        parts.append(f"guard=b{node['guard']}")
    if node.get("each") is not None:
        parts.append(f"each=b{node['over']} (delay {node['each']['delay_ms']} ms)")
    if node.get("args") is not None:
        parts.append(f"inputs=b{node['args']}")
    if node.get("body") is not None:
        parts.append(f"{_BODY_WORDS.get(node['op'], 'body')}=b{node['body']}")
    if node.get("sort") is not None:
        path, descending = node["sort"]
        parts.append(f"by {shown('.'.join(path))}{' desc' if descending else ''}")
    if node.get("key") is not None:
        parts.append(f"into {shown(node['key'])}")
    if node.get("mapping") is not None:
        parts.append(f"outputs=b{node['mapping']}")
    if node.get("status") is not None:
        parts.append(f"status {node['status']}")
    out = [indent + " ".join(parts)] if parts else []
    if node.get("declared"):
        out.append(indent + "declared: " + ", ".join(f"{shown(n)}: {t}" for n, t in node["declared"]))
    if node.get("retry") is not None:
        mx, delay, backoff = node["retry"]
        out.append(f"{indent}retry {mx} x {delay} ms, backoff {backoff}")
    return out


def _kernel_plan(plan: dict, _lines: dict[str, str], _srcmap: list | None) -> list[str]:
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


def _dataflow_plan(plan: dict, _lines: dict[str, str], _srcmap: list | None) -> list[str]:
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
    "sequential": {"plan": _sequential_plan, "const": lambda c: _show(c, 60)},
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
