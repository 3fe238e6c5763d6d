"""IR -> flowc bytecode (docs/bytecode.md).

:func:`assemble` turns a checked WorkflowSkill :class:`~flowc.ir.workflow.Workflow`
into the bytes of a bytecode file. The output depends on the IR only: the
same IR always gives byte-identical bytecode.

Layout: the main function (input defaults, the top-level steps in order,
then the finish block that builds the workflow outputs), then one function
per step in declaration order. Branch steps are called with ``RUN`` from
their conditional's function; error policies are regions.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgpack
from flowc.backends.vm import format as F
from flowc.ir import expr as E
from flowc.ir.ops import END_NODE_ID
from flowc.ir.span import Span
from flowc.ir.workflow import EdgeKind, Node, Workflow

__all__ = ["AssembleError", "assemble", "pack_file"]

_ROOTS = {name: i for i, name in enumerate(F.ROOTS)}
_BINARY = {
    "wfs.eq": "EQ", "wfs.ne": "NE", "wfs.lt": "LT", "wfs.le": "LE", "wfs.gt": "GT", "wfs.ge": "GE",
    "wfs.contains": "CONTAINS", "wfs.and": "AND", "wfs.or": "OR",
}


class AssembleError(Exception):
    """The workflow uses something the bytecode can't express."""


class Label:
    __slots__ = ("name", "offset")

    def __init__(self, name: str) -> None:
        self.name = name
        self.offset: int | None = None

    def __repr__(self) -> str:
        return f"Label({self.name}@{self.offset})"


def _varint(v: int) -> bytes:
    if v < 0:
        raise AssembleError(f"negative operand {v}")
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _const_key(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


class _Function:
    def __init__(self, name: str) -> None:
        self.name = name
        # items: ("ins", opname, operands, span) | ("label", Label)
        self.items: list[tuple] = []


class Assembler:
    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        self.consts: list[Any] = []
        self._const_index: dict[bytes, int] = {}
        self.names: list[str] = []
        self._name_index: dict[str, int] = {}
        self.retries: list[list] = []
        self._retry_index: dict[tuple, int] = {}
        self.regions: list[tuple[Label, Label, Label, int]] = []
        self.functions: list[_Function] = []
        self.fn: _Function | None = None
        self.depth = 0
        self.span: Span = workflow.span
        self._labels = 0

    # ------------------------------------------------------------ pools
    def const(self, value: Any) -> int:
        key = _const_key(value)
        idx = self._const_index.get(key)
        if idx is None:
            idx = self._const_index[key] = len(self.consts)
            self.consts.append(value)
        return idx

    def name(self, text: str) -> int:
        idx = self._name_index.get(text)
        if idx is None:
            idx = self._name_index[text] = len(self.names)
            self.names.append(text)
        return idx

    def retry(self, policy) -> int:
        if policy is None:
            return 0
        backoff = float(policy.backoff)
        key = (int(policy.max_retries), int(policy.delay_ms), backoff)
        idx = self._retry_index.get(key)
        if idx is None:
            idx = self._retry_index[key] = len(self.retries)
            self.retries.append(list(key))
        return idx + 1

    # ------------------------------------------------------------ emission
    def label(self, name: str) -> Label:
        self._labels += 1
        return Label(f"{name}{self._labels}")

    def place(self, label: Label) -> None:
        self.fn.items.append(("label", label))

    def emit(self, opname: str, *operands, span: Span | None = None) -> None:
        spec = F.BY_NAME[opname]
        if len(operands) != len(spec.operands):
            raise AssembleError(f"{opname} takes {len(spec.operands)} operands")
        self.fn.items.append(("ins", opname, operands, span or self.span))
        pop = spec.pop
        if pop == "n":
            pop = operands[0]
        elif pop == "2n":
            pop = 2 * operands[0]
        self.depth += spec.push - pop

    def region(self, start: Label, end: Label, handler: Label, depth: int) -> None:
        self.regions.append((start, end, handler, depth))

    # ------------------------------------------------------------ expressions
    def expr(self, e: E.Expr) -> None:
        span = e.span if e.span.known else self.span
        if isinstance(e, E.Literal):
            self.emit("CONST", self.const(_plain(e.value)), span=span)
        elif isinstance(e, E.Ref):
            root = _ROOTS.get(e.root)
            if root is None:
                self.emit("UNKNOWN", self.name(e.root), span=span)
                return
            self.emit("ROOT", root, span=span)
            for seg in e.path:
                if isinstance(seg, E.Field):
                    self.emit("FIELD", self.name(seg.name), span=seg.span if seg.span.known else span)
                else:
                    self.expr(seg.index)
                    self.emit("INDEX", span=span)
        elif isinstance(e, E.Binary):
            opname = _BINARY.get(e.op)
            if opname is None:
                raise AssembleError(f"unsupported operator {e.op!r}")
            self.expr(e.left)
            self.expr(e.right)
            self.emit(opname, span=span)
        elif isinstance(e, E.Unary):
            if e.op != "wfs.not":
                raise AssembleError(f"unsupported operator {e.op!r}")
            self.expr(e.operand)
            self.emit("NOT", span=span)
        elif isinstance(e, E.Template):
            if e.stringify != "wfs":
                raise AssembleError(f"unsupported stringify rule {e.stringify!r}")
            if e.typed_whole:
                if len(e.parts) != 1:
                    raise AssembleError("a typed_whole template has exactly one part")
                self.expr(e.parts[0])
                return
            if not e.parts:
                self.emit("CONST", self.const(""), span=span)
                return
            for part in e.parts:
                self.expr(part)
            self.emit("TEMPLATE", len(e.parts), span=span)
        elif isinstance(e, E.ListExpr):
            for item in e.items:
                self.expr(item)
            self.emit("LIST", len(e.items), span=span)
        elif isinstance(e, E.MapExpr):
            for entry in e.entries:
                self.expr(entry.key)
                self.expr(entry.value)
            self.emit("OBJECT", len(e.entries), span=span)
        else:
            raise AssembleError(f"unsupported expression {type(e).__name__}")

    def value(self, e: E.Expr | None) -> None:
        """A binding's value; no value is the missing value."""
        if e is None:
            self.emit("MISSING")
        else:
            self.expr(e)

    # ------------------------------------------------------------ the program
    def build(self) -> bytes:
        wf = self.wf
        if wf.semantics != "workflowskill":
            raise AssembleError(f"the bytecode backend runs workflowskill semantics, not {wf.semantics!r}")
        nodes = [n for n in wf.nodes if n.id != END_NODE_ID]
        self.step_index = {n.id: i for i, n in enumerate(nodes)}
        if len(self.step_index) != len(nodes):
            raise AssembleError("step ids are not unique")
        branch_edges: dict[str, dict[str, list]] = {}
        targets: set[str] = set()
        successor: dict[str, str] = {}
        for edge in wf.edges:
            if edge.kind is EdgeKind.BRANCH:
                arms = branch_edges.setdefault(edge.source, {})
                arms.setdefault(edge.label or "then", []).append(edge)
                targets.add(edge.target)
            elif edge.kind is EdgeKind.SEQUENCE:
                successor[edge.source] = edge.target
        self.arms = {src: {arm: [e.target for e in sorted(es, key=lambda e: e.order)]
                           for arm, es in arms.items()} for src, arms in branch_edges.items()}
        self.targets = targets
        chain = []
        seen = set()
        cur = wf.entry[0] if wf.entry else END_NODE_ID
        while cur != END_NODE_ID and cur in self.step_index and cur not in seen:
            seen.add(cur)
            chain.append(cur)
            nxt = successor.get(cur)
            if nxt is None:
                break
            cur = nxt

        # main
        self.fn = _Function("main")
        self.functions.append(self.fn)
        self.depth = 0
        self.span = wf.span
        for param in wf.inputs:
            if param.has_default:
                self.span = param.span
                self.emit("DEFAULT", self.name(param.name), self.const(_plain(param.default)))
        for sid in chain:
            node = nodes[self.step_index[sid]]
            self.span = node.span
            self.emit("RUN", self.step_index[sid])
            self.emit("SET_FINAL", self.step_index[sid])
        self.finish_label = self.label("finish")
        self.place(self.finish_label)
        self.finish_block()

        # one function per step
        for node in nodes:
            self.fn = _Function(node.id)
            self.functions.append(self.fn)
            self.depth = 0
            self.span = node.span
            self.step(node)
        return self.encode(nodes)

    def finish_block(self) -> None:
        wf = self.wf
        keys = [b.name for b in wf.outputs]
        exited = self.label("exited")
        self.emit("EXITED", exited)
        if not keys:
            self.emit("OBJECT", 0)
        elif any(b.value is not None for b in wf.outputs):
            for b in wf.outputs:
                self.span = b.span
                self.emit("CONST", self.const(b.name))
                if b.value is not None:
                    self.expr(b.value)
                else:
                    self.emit("STATE", 0)
                    self.emit("PICK", self.name(b.name))
            self.emit("OBJECT", len(keys))
        else:
            self.emit("STATE", 0)
            self.emit("SHAPE", self.const(keys))
        self.emit("FINISH")
        self.place(exited)
        self.depth = 0
        self.emit("STATE", 1)
        self.emit("SHAPE", self.const(keys))
        self.emit("FINISH")

    # ------------------------------------------------------------ steps
    def step(self, node: Node) -> None:
        sidx = self.step_index[node.id]
        policy = 1 if node.on_error.action == "ignore" else 0
        self.emit("STEP", sidx)
        if node.op == "branch":
            self.branch(node, policy)
            return
        skip = None
        if node.guard is not None:
            if node.guard.truthiness != "js_boolean":
                raise AssembleError(f"unsupported guard truthiness {node.guard.truthiness!r}")
            self.span = node.guard.span
            self.expr(node.guard.expr)
            skip = self.label("skip")
            self.emit("JUMP_IF_NOT", skip)
            self.span = node.span
        fail = self.label("fail")
        if node.op == "exit":
            start, end = self.label("try"), self.label("end")
            self.place(start)
            self.expr(node.attr("output") or E.Literal(None))
            self.place(end)
            self.region(start, end, fail, 0)
            status = node.attr("status")
            failed = isinstance(status, E.Literal) and status.value == "failed"
            self.emit("EXIT", 1 if failed else 0)
        elif node.iteration is not None:
            self.each(node, policy, fail)
        else:
            self.inputs(node)
            start, end = self.label("try"), self.label("end")
            self.place(start)
            self.dispatch(node)
            self.output_mapping(node)
            self.place(end)
            self.region(start, end, fail, 0)
            self.emit("DONE")
            self.emit("RET")
        if skip is not None:
            self.place(skip)
            self.depth = 0
            self.emit("SKIP")
            self.emit("RET")
        self.place(fail)
        self.depth = 1
        self.emit("FAIL", policy)
        self.emit("RET")

    def inputs(self, node: Node) -> None:
        for b in node.inputs:
            self.emit("CONST", self.const(b.name), span=b.span)
            self.value(b.value)
        self.emit("OBJECT", len(node.inputs))

    def dispatch(self, node: Node) -> None:
        """Inputs object on the stack -> raw output on the stack."""
        if node.op == "call":
            cap = node.attr("capability")
            name = node.attr("name")
            cap_s = cap.value if isinstance(cap, E.Literal) else "tool"
            name_s = name.value if isinstance(name, E.Literal) else ""
            self.emit("CALL", self.name(cap_s), self.name(name_s), self.retry(node.retry))
            return
        if not node.op.startswith("transform."):
            raise AssembleError(f"unsupported operation {node.op!r} (step {node.id!r})")
        self.emit("TRANSFORM_INPUT")
        kind = node.op.split(".", 1)[1]
        if kind in ("filter", "map"):
            self.emit("ITER")
            top, done = self.label("loop"), self.label("done")
            self.place(top)
            self.emit("NEXT", done, 0)
            if kind == "filter":
                self.expr(node.attr("where") or E.Literal(True))
                self.emit("KEEP")
            else:
                self.expr(node.attr("expression") or E.MapExpr(()))
                self.emit("APPEND")
            self.emit("JUMP", top)
            self.place(done)
            self.emit("COLLECT")
        elif kind == "sort":
            field = node.attr("field")
            direction = node.attr("direction")
            desc = isinstance(direction, E.Literal) and direction.value == "desc"
            self.emit("SORT", self.name(field.value if isinstance(field, E.Literal) else ""), 1 if desc else 0)
        else:
            raise AssembleError(f"unsupported transform {node.op!r}")
        key = node.outputs[0].name if node.outputs else "items"
        self.emit("WRAP", self.name(key))

    def output_mapping(self, node: Node) -> None:
        """Raw output on the stack -> the step's output on the stack."""
        if not any(b.value is not None for b in node.outputs):
            return
        self.emit("SET_RESULT")
        for b in node.outputs:
            self.emit("CONST", self.const(b.name), span=b.span)
            if b.value is not None:
                self.expr(b.value)
            else:
                self.emit("ROOT", _ROOTS["result"], span=b.span)
                self.emit("PICK", self.name(b.name), span=b.span)
        self.emit("OBJECT", len(node.outputs))

    def each(self, node: Node, policy: int, fail: Label) -> None:
        it = node.iteration
        self.span = it.span
        self.expr(it.over)
        start, end = self.label("try"), self.label("end")
        self.place(start)
        self.emit("ITER")
        self.place(end)
        self.region(start, end, fail, 0)
        top, done, item_failed, partial = (self.label("loop"), self.label("done"), self.label("itemfail"),
                                           self.label("partial"))
        self.place(top)
        self.emit("NEXT", done, int(it.delay_ms))
        self.span = node.span
        s2, e2 = self.label("try"), self.label("end")
        self.place(s2)
        self.inputs(node)
        self.dispatch(node)
        self.output_mapping(node)
        self.place(e2)
        self.region(s2, e2, item_failed, 1)
        self.emit("APPEND")
        self.emit("JUMP", top)
        self.place(item_failed)
        self.depth = 2
        self.emit("ITEM_FAILED")
        self.emit("JUMP", top)
        self.place(done)
        self.depth = 1
        self.emit("END_EACH", partial)
        self.emit("DONE")
        self.emit("RET")
        self.place(partial)
        self.depth = 2
        self.emit("FAIL_PARTIAL", policy)
        self.emit("RET")

    def branch(self, node: Node, policy: int) -> None:
        cond = node.attr("condition")
        fail = self.label("fail")
        start, end = self.label("try"), self.label("end")
        self.place(start)
        self.expr(cond if cond is not None else E.Literal(False))
        self.place(end)
        self.region(start, end, fail, 0)
        other = self.label("else")
        self.emit("JUMP_IF_NOT", other)
        arms = self.arms.get(node.id, {})
        for arm, label in (("then", None), ("else", other)):
            if label is not None:
                self.place(label)
                self.depth = 0
            self.emit("RECORD")
            ids = arms.get(arm, [])
            for tid in ids:
                if tid not in self.step_index:
                    raise AssembleError(f"branch target {tid!r} is not a step")
                self.emit("RUN", self.step_index[tid])
            if ids:
                self.emit("ROOT", _ROOTS["steps"])
                self.emit("FIELD", self.name(ids[-1]))
                self.emit("FIELD", self.name("output"))
                self.emit("COALESCE")
            else:
                self.emit("CONST", self.const(None))
            self.emit("SET_OUTPUT")
            self.emit("RET")
        self.place(fail)
        self.depth = 1
        self.emit("FAIL", policy)
        self.emit("RET")

    # ------------------------------------------------------------ encoding
    def encode(self, nodes: list[Node]) -> bytes:
        items = []
        starts = []
        for fn in self.functions:
            starts.append(len(items))
            items.extend(fn.items)
        # Lay out until stable: operand sizes depend on offsets, which only grow.
        sizes: dict[int, int] = {}
        while True:
            offset = 0
            fn_offsets = []
            fi = 0
            positions = []
            for i, item in enumerate(items):
                while fi < len(starts) and starts[fi] == i:
                    fn_offsets.append(offset)
                    fi += 1
                if item[0] == "label":
                    item[1].offset = offset
                    positions.append(offset)
                    continue
                positions.append(offset)
                offset += sizes.get(i, 1 + len(item[2]))
            code = bytearray()
            changed = False
            srcmap: list[int] = []
            last_off = 0
            last_pos = None
            for i, item in enumerate(items):
                if item[0] == "label":
                    continue
                _, opname, operands, span = item
                spec = F.BY_NAME[opname]
                enc = bytearray([spec.code])
                for kind, v in zip(spec.operands, operands):
                    if kind == "target":
                        v = v.offset
                    enc += _varint(v)
                here = len(code)
                if here != positions[i]:
                    changed = True
                if sizes.get(i, 1 + len(operands)) != len(enc):
                    sizes[i] = len(enc)
                    changed = True
                if span is not None and span.known and (span.line, span.col) != last_pos:
                    srcmap.extend((here - last_off, span.line, span.col))
                    last_off = here
                    last_pos = (span.line, span.col)
                code += enc
            if not changed:
                break
        steps = []
        for node in nodes:
            idx = self.step_index[node.id]
            flags = F.STEP_BRANCH_TARGET if node.id in self.targets else 0
            steps.append([self.name(node.id), self.name(node.kind), flags, fn_offsets[idx + 1]])
        regions = sorted([[s.offset, e.offset, h.offset, d] for s, e, h, d in self.regions])
        file = self.wf.span.file or ""
        body = [self.wf.name, self.consts, self.names, steps, self.retries, regions,
                self.finish_label.offset, bytes(code), [file, srcmap]]
        return body


def _plain(value: Any) -> Any:
    """A literal as plain msgpack-able data (tuples become lists)."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, bool) or value is None or isinstance(value, (int, float, str)):
        return value
    raise AssembleError(f"a constant of type {type(value).__name__} can't be encoded")


def pack_file(body: list, strip: bool = False, version: int = F.FORMAT_VERSION) -> bytes:
    """The bytes of a bytecode file for a body (list of sections)."""
    body = list(body)
    if strip:
        body[8] = None
    raw = msgpack.packb(body, use_bin_type=True)
    return msgpack.packb([F.MAGIC, version, zlib.crc32(raw) & 0xFFFFFFFF, raw], use_bin_type=True)


def assemble_body(workflow: Workflow) -> list:
    return Assembler(workflow).build()


def assemble(workflow: Workflow, strip: bool = False) -> bytes:
    """The bytecode file for a checked workflow."""
    return pack_file(assemble_body(workflow), strip=strip)
