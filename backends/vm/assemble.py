"""IR -> flowc bytecode (docs/bytecode.md).

:func:`assemble` turns a checked WorkflowSkill :class:`~flowc.ir.workflow.Workflow`
into the bytes of a bytecode file. The output depends on the IR only: the
same IR always gives byte-identical bytecode.

Layout: the main function (input defaults, a ``WALK`` of the top-level
steps, then the finish block that builds the workflow outputs), then one
function per step in declaration order. The order of the steps is no
code: it is the plan's (flowc.plan.sequential), written into section plan.
The step table flags the sequence's first step and gives each top-level
step the one after it (its ``sequence`` edge), which ``WALK`` follows at
run time; the arms table gives each conditional's arms (its ``branch``
edges, by label), and a conditional's function ends with ``ARM``, which
runs the arm it chose from that table. Error policies are regions.
Every value is a block of the shared expression machine (section exprs),
which an ``EXPR`` (or ``DEFAULT``) runs: the sequential code is the steps'
control only.
"""

from __future__ import annotations

import os
from typing import Any

import msgpack
from flowc.backends.vm import expr_vm as X
from flowc.backends.vm import format as F
from flowc.backends.vm import sequential as S
from flowc.backends.vm.expr_assemble import ExprAssembleError, Tables, assemble_expression
from flowc.ir import expr as E
from flowc.ir.span import Span
from flowc.ir.workflow import Node, Workflow
from flowc.plan import NO_BODIES, PlanError, build_plan, runs_under
from flowc.plan.sequential import arms as plan_arms
from flowc.plan.sequential import top_level

__all__ = ["AssembleError", "assemble", "pack_file"]

# IR type kinds -> the codes of declared types (CHECK_INPUTS, CHECK_OUTPUT); other kinds
# (any, null) are not checked.
_TYPES = {kind: F.TYPES.index(name) for kind, name in (
    ("string", "string"), ("int", "int"), ("float", "float"), ("bool", "boolean"), ("array", "array"),
    ("object", "object"))}
# The run's final value as the finish code's blocks read it (expr_wfs.STATE_ROOT):
# an exit step's output when one ended the run, else the last top-level step's output.
_FINAL = E.Ref("@final")


class AssembleError(Exception):
    """The workflow uses something the bytecode can't express."""


class Label:
    __slots__ = ("name", "offset")

    def __init__(self, name: str) -> None:
        self.name = name
        self.offset: int | None = None

    def __repr__(self) -> str:
        return f"Label({self.name}@{self.offset})"


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
        self.chain: list[str] = []  # the top-level steps, from the plan (control_flow)
        self.depth = 0
        self.span: Span = workflow.span
        self._labels = 0
        self.exprs = _SharedTables(self)

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
        """An expression's value onto the stack: one EXPR of a block of the
        shared expression machine (docs/bytecode.md section 10)."""
        self.emit("EXPR", self.block(e), span=e.span if e.span.known else self.span)

    def block(self, e: E.Expr) -> int:
        """The index of the block that evaluates ``e``, the operand of the
        instruction that runs it: each such operand has a block of its own,
        in code order (functions are assembled in the code's order), and
        identical blocks share their form (split_blocks)."""
        try:
            block, _params, _slots = assemble_expression(self.exprs, e, "wfs")
        except ExprAssembleError as exc:
            raise AssembleError(str(exc)) from None
        return block

    def binding(self, e: E.Expr) -> E.Expr:
        """A binding's value: an object literal drops its keys whose value
        is missing (``wfs.compact``), nested object literals too."""
        if not isinstance(e, E.MapExpr):
            return e
        entries = []
        missing = False
        for entry in e.entries:
            if not (isinstance(entry.key, E.Literal) and isinstance(entry.key.value, str)):
                raise AssembleError("object keys must be constant strings")
            value = self.binding(entry.value)
            missing = missing or (not isinstance(entry.value, E.MapExpr) and _may_be_missing(entry.value))
            entries.append(E.MapEntry(entry.key, value, entry.span))
        built = E.MapExpr(tuple(entries), e.span)
        return E.Call("wfs.compact", (built,), e.span) if missing else built

    def outputs(self, bindings: list, source: E.Ref) -> E.Expr:
        """The object of declared outputs: each its value, else
        ``source[name] ?? null`` (``wfs.pick``); keys whose value is missing
        dropped (``wfs.compact``, when a value may be missing)."""
        entries = []
        for b in bindings:
            key = E.Literal(b.name, span=b.span)
            value = self.binding(b.value) if b.value is not None else E.Call("wfs.pick", (source, key), b.span)
            entries.append(E.MapEntry(key, value, b.span))
        built = E.MapExpr(tuple(entries))
        if any(b.value is not None and not isinstance(b.value, E.MapExpr) and _may_be_missing(b.value)
               for b in bindings):
            return E.Call("wfs.compact", (built,))
        return built

    # ------------------------------------------------------------ the program
    def build(self) -> list:
        wf = self.wf
        why_not = runs_under(wf, "sequential")
        if why_not is not None:
            raise AssembleError(f"the sequential assembler: {why_not}")
        nodes = [n for n in wf.nodes if n.op != "end"]
        self.step_index = {n.id: i for i, n in enumerate(nodes)}
        if len(self.step_index) != len(nodes):
            raise AssembleError("step ids are not unique")
        for node in nodes:
            _check_supported(node)
        chain = self.control_flow()
        self.main_function(chain)
        # one function per step
        for node in nodes:
            self.fn = _Function(node.id)
            self.functions.append(self.fn)
            self.depth = 0
            self.span = node.span
            self.step(node)
        return self.encode(nodes)

    def control_flow(self) -> list[str]:
        """The conditionals' arms (self.arms) and the chain of
        top-level steps from the entry, from the workflow's sequential plan
        (flowc.plan: its sequence and branch edges)."""
        try:
            plan = build_plan(self.wf, NO_BODIES, "sequential")
            chain = top_level(plan)
        except PlanError as exc:
            raise AssembleError(str(exc)) from None
        self.arms = plan_arms(plan)
        self.chain = chain
        return chain

    def main_function(self, chain: list[str]) -> None:
        """The inputs' defaults and types, a WALK of the top-level steps
        (none without steps), the finish block (docs/bytecode.md section 3)."""
        wf = self.wf
        self.fn = _Function("main")
        self.functions.append(self.fn)
        self.depth = 0
        self.span = wf.span
        self.finish_label = self.label("finish")
        for param in wf.inputs:
            if param.has_default:
                self.span = param.span
                self.emit("DEFAULT", self.name(param.name), self.block(E.Literal(_plain(param.default))))
        typed = []
        for p in wf.inputs:
            if p.type.kind in _TYPES:
                typed += [self.name(p.name), _TYPES[p.type.kind]]
        if typed:
            self.span = wf.span
            self.emit("CHECK_INPUTS", self.finish_label, self.const(typed))
        if chain:
            self.span = wf.span
            self.emit("WALK", self.finish_label)
        self.place(self.finish_label)
        self.finish_block()

    def finish_block(self) -> None:
        wf = self.wf
        keys = [b.name for b in wf.outputs]
        terminal = wf.node(wf.terminal) if wf.terminal else None
        if terminal is not None and terminal.span.known:
            self.span = terminal.span
        if not keys:
            self.expr(E.MapExpr())
            self.emit("FINISH")
            return
        if all(b.value is None for b in wf.outputs):
            self.emit("OUTPUTS", self.const(keys))
            self.emit("FINISH")
            return
        exited = self.label("exited")
        self.emit("EXITED", exited)
        start, end, failed = self.label("try"), self.label("end"), self.label("outputs_failed")
        self.place(start)
        self.expr(self.outputs(wf.outputs, _FINAL))
        self.place(end)
        self.region(start, end, failed, 0)
        self.emit("FINISH")
        self.place(failed)
        self.depth = 1
        self.emit("OUTPUTS_FAILED")
        self.emit("FINISH")
        self.place(exited)
        self.depth = 0
        self.emit("OUTPUTS", self.const(keys))
        self.emit("FINISH")

    # ------------------------------------------------------------ steps
    def step(self, node: Node) -> None:
        """A step's function. Everything from the guard to the step's outcome
        is one region: any failure fails the step under its on_error policy."""
        sidx = self.step_index[node.id]
        policy = 1 if node.on_error.action == "ignore" else 0
        self.emit("STEP", sidx)
        fail = self.label("fail")
        skip = self.label("skip") if node.guard is not None else None
        start, end = self.label("try"), self.label("end")
        self.place(start)
        if node.guard is not None:
            if node.guard.truthiness != "js_boolean":
                raise AssembleError(f"unsupported guard truthiness {node.guard.truthiness!r}")
            self.span = node.guard.span
            self.expr(node.guard.expr)
            self.emit("JUMP_IF_NOT", skip)
            self.span = node.span
        if node.op == "branch":
            truth = node.attr("truthiness")
            if truth is not None and not (isinstance(truth, E.Literal) and truth.value == "js_boolean"):
                raise AssembleError(f"step {node.id!r}: unsupported truthiness")
            cond = node.attr("condition")
            if cond is None:
                raise AssembleError(f"step {node.id!r}: a branch needs a condition")
            self.expr(cond)
            self.place(end)
            self.region(start, end, fail, 0)
            self.branch(node)
        elif node.op == "exit":
            output = node.attr("output")
            self.expr(E.Literal(None) if output is None else self.binding(output))
            self.place(end)
            self.region(start, end, fail, 0)
            status = node.attr("status")
            if not (isinstance(status, E.Literal) and status.value in ("success", "failed")):
                raise AssembleError(f"step {node.id!r}: exit status must be success or failed")
            self.emit("EXIT", 1 if status.value == "failed" else 0)
            self.emit("RET")
        elif node.iteration is not None:
            self.each(node, policy, start, end, fail)
        else:
            self.dispatch(node)
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

    def args(self, node: Node) -> None:
        """The step's inputs object; bindings without a value are left out.
        Missing values stay (CALL drops them; transforms see them)."""
        self.expr(E.MapExpr(tuple(E.MapEntry(E.Literal(b.name, span=b.span), self.binding(b.value), b.span)
                                  for b in node.inputs if b.value is not None)))

    def dispatch(self, node: Node) -> None:
        """Compute the step's output (inputs, the call or transform, the
        output mapping) onto the stack."""
        self.args(node)
        if node.op == "call":
            cap = node.attr("capability")
            name = node.attr("name")
            if not (isinstance(cap, E.Literal) and isinstance(cap.value, str)
                    and isinstance(name, E.Literal) and isinstance(name.value, str)):
                raise AssembleError(f"step {node.id!r}: capability and name must be constant strings")
            self.emit("CALL", self.name(cap.value), self.name(name.value), self.retry(node.retry))
        else:
            self.emit("TRANSFORM_INPUT")
            self.transform(node)
            key = node.outputs[0].name if node.outputs else "items"
            self.emit("WRAP", self.name(key))
        self.output_mapping(node)
        declared = []
        for i, b in enumerate(node.outputs):
            # a transform's first output holds its result array by definition
            if b.type.kind in _TYPES and not (i == 0 and node.op != "call" and b.value is None):
                declared += [self.name(b.name), _TYPES[b.type.kind]]
        if declared:
            self.emit("CHECK_OUTPUT", self.const(declared), span=node.span)

    def transform(self, node: Node) -> None:
        kind = node.op.split(".", 1)[1]
        if kind == "sort":
            field = node.attr("field")
            direction = node.attr("direction")
            if not (isinstance(field, E.Literal) and isinstance(field.value, str)):
                raise AssembleError(f"step {node.id!r}: `field` must be a constant string")
            desc = isinstance(direction, E.Literal) and direction.value == "desc"
            if direction is not None and not (isinstance(direction, E.Literal)
                                              and direction.value in ("asc", "desc")):
                raise AssembleError(f"step {node.id!r}: sort direction must be asc or desc")
            self.emit("SORT", self.name(field.value), 1 if desc else 0)
            return
        if kind == "filter":
            body = node.attr("where")
            if body is None:
                raise AssembleError(f"step {node.id!r}: a filter needs `where`")
            truth = node.attr("truthiness")
            if truth is not None and not (isinstance(truth, E.Literal) and truth.value == "js_boolean"):
                raise AssembleError(f"step {node.id!r}: unsupported truthiness")
        else:
            body = node.attr("expression")
            if not isinstance(body, E.MapExpr):
                raise AssembleError(f"step {node.id!r}: a map needs an `expression` object")
        self.emit("ITER")
        top, done = self.label("loop"), self.label("done")
        self.place(top)
        self.emit("NEXT", done, 0)
        # one block per item: the VM's fast loops compile it (sequential.compile_loop)
        if kind == "filter":
            self.expr(body)
            self.emit("KEEP")
        else:
            self.expr(self.binding(body))
            self.emit("APPEND")
        self.emit("JUMP", top)
        self.place(done)
        self.emit("COLLECT")

    def output_mapping(self, node: Node) -> None:
        """Raw output on the stack -> the step's output on the stack."""
        if not any(b.value is not None for b in node.outputs):
            return
        self.emit("SET_RESULT")
        self.expr(self.outputs(node.outputs, E.Ref("result")))

    def each(self, node: Node, policy: int, start: Label, end: Label, fail: Label) -> None:
        it = node.iteration
        self.span = it.span
        self.expr(it.over)
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
        self.dispatch(node)
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

    def branch(self, node: Node) -> None:
        """After the condition: ARM records the conditional and runs the arm
        it chose from the plan's arms table (the steps are no code here)."""
        self.emit("ARM")

    # ------------------------------------------------------------ encoding
    @staticmethod
    def _operand(kind: str, v: Any, fi: int, fn_start: int, forms: list[int]) -> int:
        """An operand as the code holds it: a target counted from its
        function's start, a step in step i's function (function i + 1) from
        step i, a block by its form."""
        if kind == "block":
            return forms[v]
        if kind == "target":
            v = v.offset - fn_start
        elif kind == "step" and fi > 0:
            v -= fi - 1
        if v < 0:
            raise AssembleError(f"negative {kind} operand {v}")
        return v

    def encode(self, nodes: list[Node]) -> list:
        # Offsets count instructions: a label is the index of the instruction after it.
        fn_offsets = []
        index = 0
        for fn in self.functions:
            fn_offsets.append(index)
            for item in fn.items:
                if item[0] == "label":
                    item[1].offset = index
                else:
                    index += 1
        streams = split_blocks(self.exprs.blocks)
        forms = streams.pop(2)
        instructions: list[tuple[int, list[int]]] = []
        srcmap: list[int] = []
        blocks = 0
        last_off = 0
        last_pos = None
        for fi, fn in enumerate(self.functions):
            for item in fn.items:
                if item[0] == "label":
                    continue
                _, opname, operands, span = item
                spec = F.BY_NAME[opname]
                here = len(instructions)
                for kind, v in zip(spec.operands, operands):
                    if kind == "block":     # block k is the code's k-th block operand
                        assert v == blocks, "blocks out of code order"
                        blocks += 1
                instructions.append((spec.code, [self._operand(kind, v, fi, fn_offsets[fi], forms)
                                                 for kind, v in zip(spec.operands, operands)]))
                if span is not None and span.known and (span.line, span.col) != last_pos:
                    srcmap.extend((here - last_off, span.line, span.col))
                    last_off = here
                    last_pos = (span.line, span.col)
        code = F.split_code(instructions)
        # the plan's sequence: the first top-level step flagged, each one's next (index + 1; 0: none)
        after = {a: self.step_index[b] + 1 for a, b in zip(self.chain, self.chain[1:])}
        steps = []
        for node in nodes:
            idx = self.step_index[node.id]
            flags = F.STEP_ENTRY if self.chain and node.id == self.chain[0] else 0
            steps.append([self.name(node.id), flags, fn_offsets[idx + 1], after.get(node.id, 0)])
        # each conditional's arms, by step index (the plan's branch edges per label, in arm order)
        arms = [[self.step_index[node.id], *([self.step_index[t] for t in self.arms[node.id][label]]
                                             for label in ("then", "else"))]
                for node in nodes if node.op == "branch"]
        # by start; of two with the same start, the one around the other first (docs/bytecode.md section 1)
        regions = sorted([[s.offset, e.offset, h.offset, d] for s, e, h, d in self.regions],
                         key=lambda r: (r[0], -r[1], r[2], r[3]))
        # The base name only: no machine path in the artifact, and the same
        # bytes however the path was spelled (docs/bytecode.md).
        file = os.path.basename(self.wf.span.file) if self.wf.span.file else ""
        body = [self.wf.name, self.consts, self.names, steps, self.retries, regions,
                self.finish_label.offset, code, [file, srcmap], arms]
        if self.exprs.blocks:
            body.append([self.exprs.keys, *streams])
        return body


def _check_supported(node: Node) -> None:
    """Refuse a step this assembler has no code for (the plan builder
    refuses the forms of a step no sequential run has)."""
    if node.op not in _SUPPORTED_OPS:
        raise AssembleError(f"step {node.id!r}: operation {node.op!r} is not supported")


class _SharedTables(Tables):
    """The expression blocks' pools: the program's own constants and names
    (plain values, as CONST's), the keys and blocks of section exprs."""

    def __init__(self, asm: Assembler) -> None:
        super().__init__()
        self.asm = asm

    def const(self, value: Any, kind: str = "auto") -> int:
        return self.asm.const(_plain(value))

    def name(self, text: str) -> int:
        return self.asm.name(text)


_SUPPORTED_OPS = ("call", "transform.filter", "transform.map", "transform.sort", "branch", "exit")


def _may_be_missing(expr: E.Expr) -> bool:
    """Can ``expr`` evaluate to the missing value? (As the Python backend decides.)"""
    if isinstance(expr, (E.Literal, E.Binary, E.Unary, E.MapExpr, E.ListExpr)):
        return False
    if isinstance(expr, E.Template):
        return expr.typed_whole and any(_may_be_missing(p) for p in expr.parts)
    return True


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


def pack_file(body: list, strip: bool = False) -> bytes:
    """The container of a sequential program for a body
    ``[name, consts, names, steps, retries, regions, finish, code, srcmap, arms]``
    and, when it has expression blocks, ``[keys, blocks]`` (section exprs);
    ``strip`` leaves the source map section out."""
    name, consts, names, steps, retries, regions, finish, code, srcmap, arms = body[:10]
    sections = [("consts", consts), ("names", names),
                ("plan", flat_plan(steps, finish, retries, regions, arms)), ("code", code)]
    if len(body) > 10:
        sections.append(("exprs", body[10]))
    if not strip and srcmap is not None:
        sections.append(("srcmap", srcmap))
    return F.pack_container("sequential", name, sections)


def flat_plan(steps: list, finish: Any, retries: list, regions: list, arms: list) -> list:
    """Section plan, ``[steps, finish, retries, regions, arms]``: each
    table one flat array, offsets relative to the row before (small numbers
    take one byte): a step ``id, flags, entry - the previous entry, next``;
    a retry ``max, delay_ms, backoff``; a region ``start - the previous
    start, end - start, handler - end, depth``; a conditional's arms ``step,
    then length, else length`` and the arms' steps, each as its index minus
    the conditional's (docs/bytecode.md section 1)."""
    flat_steps: list = []
    last = 0
    for sid, flags, entry, after in steps:
        flat_steps += [sid, flags, entry - last, after]
        last = entry
    flat_regions: list = []
    last = 0
    for start, end, handler, depth in regions:
        flat_regions += [start - last, end - start, handler - end, depth]
        last = start
    flat_arms: list = []
    for step, then, otherwise in arms:
        flat_arms += [step, len(then), len(otherwise), *[t - step for t in then], *[t - step for t in otherwise]]
    return [flat_steps, finish, [v for row in retries for v in row], flat_regions, flat_arms]


def split_blocks(blocks: list[bytes]) -> list:
    """Blocks as a sequential program's section exprs holds them (docs/bytecode.md
    section 1): ``[ops, shape, forms, names, consts]`` (``forms`` goes to
    the code's block operands, the rest to section exprs). A block's
    *form* is its opcodes (an instruction whose first operand is a rule with
    the rule, S.ACCESS_STEP) and its operands but the names of FIELD and
    the constants (targets as instruction indexes); the distinct forms in order of first
    use are ``ops`` (their opcodes back to back, each form ending at its
    only RETURN) and ``shape`` (their operands); ``forms`` gives each
    block's form, ``names`` the blocks' name operands of FIELD and
    ``consts`` their constant operands of CONST."""
    ops = bytearray()
    nforms = 0
    shape: list[int] = []
    forms: list[int] = []
    names: list[int] = []
    consts: list[int] = []
    index_of: dict[tuple, int] = {}
    for code in blocks:
        ins = X.decode(code)
        if [op for _pc, op, _o in ins].count(X.RETURN) != 1 or ins[-1][1] != X.RETURN:
            raise AssembleError("a block in streams has one RETURN, its last instruction")
        at = {pc: i for i, (pc, _op, _operands) in enumerate(ins)}
        form_ops = bytearray()
        form_shape: list[int] = []
        for _pc, op, operands in ins:
            kinds = X.OPCODES[op][1]
            folded = bool(kinds) and kinds[0] in S.RULE_KINDS
            form_ops.append(op + S.ACCESS_STEP * operands[0] if folded else op)
            for j, (kind, v) in enumerate(zip(kinds, operands, strict=True)):
                if kind == "n" and op == X.FIELD:
                    names.append(v)
                elif kind == "c":
                    consts.append(v)
                elif j or not folded:
                    form_shape.append(at[v] if kind == "t" else v)
        key = (bytes(form_ops), tuple(form_shape))
        if key not in index_of:
            index_of[key] = nforms
            nforms += 1
            ops += form_ops
            shape += form_shape
        forms.append(index_of[key])
    return [bytes(ops), shape, forms, names, consts]


def join_blocks(streams: list, forms: list[int]) -> list[list[tuple[int, int, list[int]]]]:
    """The blocks of section exprs' streams ``[ops, shape, names, consts]``
    and the code's block operands (``forms``), decoded: per block
    ``[(index, opcode, operands)]`` (targets are instruction indexes)."""
    ops, shape, names, consts = streams
    decoded = []
    e0 = s0 = 0
    for e1 in S.StreamBlocks.form_ends(ops):
        nshape = S.StreamBlocks.counts(ops[e0:e1], len(decoded))[0]
        decoded.append(S.StreamBlocks.form_of(ops[e0:e1], shape[s0:s0 + nshape]))
        s0 += nshape
        e0 = e1
    out = []
    at = (0, 0)
    for k in forms:
        out.append(S.StreamBlocks.with_refs(decoded[k], (names, consts), at))
        at = (at[0] + sum(1 for _k, op, _o in decoded[k] if op == X.FIELD),
              at[1] + sum(1 for _k, op, _o in decoded[k] if op == X.CONST))
    return out


def plan_rows(plan: list) -> tuple[list, Any, list, list, list]:
    """The inverse of :func:`flat_plan` for a verified program's section
    plan: ``(steps, finish, retries, regions, arms)`` as rows with absolute
    offsets and step indexes, steps ``[id, flags, entry, next]``, retries
    ``[max, delay_ms, backoff]``, regions ``[start, end, handler, depth]``,
    arms ``[step, then steps, else steps]``."""
    flat_steps, finish, flat_retries, flat_regions, flat_arms = plan
    steps = [flat_steps[i:i + 4] for i in range(0, len(flat_steps), 4)]
    entry = 0
    for row in steps:       # entry deltas, each from the previous entry
        entry += row[2]
        row[2] = entry
    regions = [flat_regions[i:i + 4] for i in range(0, len(flat_regions), 4)]
    start = 0
    for row in regions:     # start from the previous start; end from start; handler from end
        start += row[0]
        row[0] = start
        row[1] += start
        row[2] += row[1]
    arms = []
    i = 0
    while i < len(flat_arms):   # step, then length, else length, the steps counted from the conditional
        step, nthen, nelse = flat_arms[i:i + 3]
        targets = [step + d for d in flat_arms[i + 3:i + 3 + nthen + nelse]]
        arms.append([step, targets[:nthen], targets[nthen:]])
        i += 3 + nthen + nelse
    return steps, finish, [flat_retries[i:i + 3] for i in range(0, len(flat_retries), 3)], regions, arms


def assemble_body(workflow: Workflow) -> list:
    """The body of a sequential program (pack_file's)."""
    return Assembler(workflow).build()


def assemble(workflow: Workflow, strip: bool = False) -> bytes:
    """The bytecode file for a checked workflow."""
    return pack_file(assemble_body(workflow), strip=strip)
