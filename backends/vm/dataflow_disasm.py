"""A readable listing of a dataflow program (``flowc disasm`` on the VM
form of an instruction workflow): the graphs with each step's expressions,
then every expression block instruction by instruction."""

from __future__ import annotations

from flowc.backends.vm import dataflow as D
from flowc.backends.vm.expr_disasm import disassemble_block
from flowc.termtext import shown as text

__all__ = ["disassemble_dataflow"]


def _const(body: dict, value: int) -> str:
    tag, v = body["consts"][value]
    shown_value = repr(v) if tag == "v" else (f"{v}u" if tag == "u" else f"b{v!r}")
    return text(shown_value[:40])


def _graph(graph: dict, indent: str, out: list[str]) -> None:
    for node in graph["nodes"]:
        line = f"{indent}{text(node['id'])}: {text(node['op'])} ({text(node['kind'])})"
        if node["deps"]:
            line += " after " + ", ".join(text(d) for d in node["deps"])
        out.append(line)
        exprs = []
        if node.get("guard") is not None:
            exprs.append(f"when=e{node['guard']}")
        if node.get("over") is not None:
            exprs.append(f"over=e{node['over']}")
        exprs += [f"{text(k)}=e{v}" for k, v in node["attrs"].items()]
        if exprs:
            out.append(f"{indent}    " + " ".join(exprs))
        for label, target in node["branches"]:
            out.append(f"{indent}    case {text(repr(label))} -> {text(target)}")
        for key in ("goto", "on_timeout"):
            if node.get(key):
                out.append(f"{indent}    {key} -> {text(node[key])}")
        for name, region in node.get("regions") or ():
            out.append(f"{indent}    region {text(name)} (sinks: {', '.join(text(x) for x in region['sinks'])})")
            _graph(region, indent + "        ", out)


def disassemble_dataflow(data: bytes) -> str:
    program = D.load(data)   # verifies first
    body = _body(data)
    out = [f"flowc dataflow program, format {D.FORMAT_VERSION}, workflow {text(repr(program.workflow))}"]
    if body.get("graph") is not None:
        out.append("")
        out.append("graph:")
        _graph(body["graph"], "  ", out)
    out.append("")
    out.append("expressions:")
    for i, (block, params, slots) in enumerate(body["exprs"]):
        out.append(f"  e{i}: block {block}, {params} parameters, {slots} slots")
    for b, code in enumerate(body["blocks"]):
        out.append("")
        out.append(f"block {b}:")
        out += ["  " + line for line in disassemble_block(
            code, lambda c: _const(body, c), lambda n: text(body["names"][n]), lambda k: text(body["keys"][k]))]
    return "\n".join(out) + "\n"


def _body(data: bytes) -> dict:
    import msgpack

    return msgpack.unpackb(D.split(data), raw=False)
