"""CEL IR expressions -> bytecode blocks of the VM's CEL machine
(:mod:`flowc.backends.vm.cel_vm`).

Every ``cel.*`` key becomes one instruction, as in the Python backend:
strict operators and functions are ``OP key argc`` (the same rt_cel
helpers), ``&&``/``||`` evaluate each side under ``TRY`` and combine the
values-or-errors with ``AND2``/``OR2`` (short-circuiting on a kept
``false``/``true``), the ternary is a conditional jump, and macros call a
body block per element through ``MACRO``. Instruction templates compile
here too (``TEMPLATE``, and ``tmpl.default`` as a ``TRY``).
"""

from __future__ import annotations

import math
from typing import Any

from flowc.backends.vm import cel_vm as V
from flowc.ir import expr as E

__all__ = ["CelAssembleError", "Tables", "assemble_expression"]

_LAZY = {"cel.and": (V.JUMP_FALSE_KEEP, V.AND2), "cel.or": (V.JUMP_TRUE_KEEP, V.OR2)}
_MAX_DEPTH = 400


class CelAssembleError(Exception):
    """The expression can't be expressed in CEL bytecode."""


def _varint(v: int) -> bytes:
    if v < 0:
        raise CelAssembleError(f"negative operand {v}")
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def encode_const(value: Any, kind: str = "auto") -> list:
    """A constant in the program's constant pool: ``["v", json]``,
    ``["u", n]`` (uint) or ``["b", bytes]``."""
    if kind == "uint":
        return ["u", int(value)]
    if kind == "bytes":
        return ["b", bytes.fromhex(value)]
    if kind == "float" and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    _check_plain(value, 0)
    return ["v", value]


def _check_plain(value: Any, depth: int) -> None:
    if depth > 100:
        raise CelAssembleError("a constant nests too deeply")
    if value is None or isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return
        return
    if isinstance(value, list):
        for v in value:
            _check_plain(v, depth + 1)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise CelAssembleError("an object constant with a non-string key")
            _check_plain(v, depth + 1)
        return
    raise CelAssembleError(f"not a plain constant: {type(value).__name__}")


class Tables:
    """The pools a program's blocks index: constants, names, keys, blocks."""

    def __init__(self) -> None:
        self.consts: list[list] = []
        self._const_index: dict[str, int] = {}
        self.names: list[str] = []
        self._name_index: dict[str, int] = {}
        self.keys: list[str] = []
        self._key_index: dict[str, int] = {}
        self.blocks: list[bytes] = []

    def const(self, value: Any, kind: str = "auto") -> int:
        encoded = encode_const(value, kind)
        key = repr((encoded[0], type(encoded[1]).__name__, encoded[1]))
        if key not in self._const_index:
            self._const_index[key] = len(self.consts)
            self.consts.append(encoded)
        return self._const_index[key]

    def name(self, text: str) -> int:
        if not isinstance(text, str):
            raise CelAssembleError("a name is not a string")
        if text not in self._name_index:
            self._name_index[text] = len(self.names)
            self.names.append(text)
        return self._name_index[text]

    def key(self, text: str) -> int:
        if text not in self._key_index:
            self._key_index[text] = len(self.keys)
            self.keys.append(text)
        return self._key_index[text]


class _Label:
    __slots__ = ("offset",)

    def __init__(self) -> None:
        self.offset: int | None = None


class _Block:
    def __init__(self) -> None:
        self.items: list = []   # ("op", opcode, operands) | ("label", _Label)

    def emit(self, op: int, *operands) -> None:
        self.items.append(("op", op, operands))

    def mark(self, label: _Label) -> None:
        self.items.append(("label", label))

    def encode(self) -> bytes:
        # Labels resolve by iterating until offsets are stable (varint widths depend on them).
        for _ in range(10):
            out = bytearray()
            changed = False
            for item in self.items:
                if item[0] == "label":
                    if item[1].offset != len(out):
                        item[1].offset = len(out)
                        changed = True
                    continue
                _, op, operands = item
                out.append(op)
                for v in operands:
                    out += _varint((v.offset or 0) if isinstance(v, _Label) else v)
            if not changed:
                return bytes(out)
        raise CelAssembleError("jump offsets do not settle")


class _Assembler:
    def __init__(self, tables: Tables) -> None:
        self.t = tables
        self.slots = 0

    def new_slot(self) -> int:
        self.slots += 1
        return self.slots - 1

    def block(self, expr: E.Expr, scope: dict[str, int]) -> int:
        """Assemble ``expr`` as a block of its own; the block's index."""
        index = len(self.t.blocks)
        self.t.blocks.append(b"")
        b = _Block()
        self.expr(b, expr, scope, 0)
        b.emit(V.RETURN)
        self.t.blocks[index] = b.encode()
        return index

    def expr(self, b: _Block, e: E.Expr, scope: dict[str, int], depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise CelAssembleError("expression is nested too deeply to compile")
        d = depth + 1
        if isinstance(e, E.Literal):
            b.emit(V.CONST, self.t.const(e.value, e.kind))
        elif isinstance(e, E.Ref):
            self.ref(b, e, scope, d)
        elif isinstance(e, E.Binary):
            if e.op in _LAZY:
                jump_keep, combine = _LAZY[e.op]
                after_left, after_right, end = _Label(), _Label(), _Label()
                b.emit(V.TRY, after_left)
                self.expr(b, e.left, scope, d)
                b.emit(V.END_TRY)
                b.mark(after_left)
                b.emit(jump_keep, end)
                b.emit(V.TRY, after_right)
                self.expr(b, e.right, scope, d)
                b.emit(V.END_TRY)
                b.mark(after_right)
                b.emit(combine)
                b.mark(end)
            elif e.op == "cel.select":
                if not (isinstance(e.right, E.Literal) and isinstance(e.right.value, str)):
                    raise CelAssembleError("cel.select needs a field name")
                self.expr(b, e.left, scope, d)
                b.emit(V.SELECT, self.t.name(e.right.value))
            elif e.op == "cel.index":
                self.expr(b, e.left, scope, d)
                self.expr(b, e.right, scope, d)
                b.emit(V.INDEX)
            elif e.op in V.OP_KEYS:
                self.expr(b, e.left, scope, d)
                self.expr(b, e.right, scope, d)
                b.emit(V.OP, self.t.key(e.op), 2)
            else:
                raise CelAssembleError(f"unsupported operator: {e.op!r}")
        elif isinstance(e, E.Unary):
            if e.op not in ("cel.neg", "cel.not"):
                raise CelAssembleError(f"unsupported operator: {e.op!r}")
            self.expr(b, e.operand, scope, d)
            b.emit(V.OP, self.t.key(e.op), 1)
        elif isinstance(e, E.Conditional):
            if e.op != "cel.ternary":
                raise CelAssembleError(f"unsupported conditional: {e.op!r}")
            other, end = _Label(), _Label()
            self.expr(b, e.test, scope, d)
            b.emit(V.JUMP_IF_NOT, other)
            self.expr(b, e.then, scope, d)
            b.emit(V.JUMP, end)
            b.mark(other)
            self.expr(b, e.otherwise, scope, d)
            b.mark(end)
        elif isinstance(e, E.Call):
            self.call(b, e, scope, d)
        elif isinstance(e, E.ListExpr):
            for item in e.items:
                self.expr(b, item, scope, d)
            b.emit(V.LIST, len(e.items))
        elif isinstance(e, E.MapExpr):
            for entry in e.entries:
                self.expr(b, entry.key, scope, d)
                self.expr(b, entry.value, scope, d)
            b.emit(V.MAP, len(e.entries))
        elif isinstance(e, E.Template):
            if e.stringify != "json":
                raise CelAssembleError(f"unsupported stringify rule: {e.stringify!r}")
            if e.typed_whole:
                if len(e.parts) != 1:
                    raise CelAssembleError("a typed_whole template has exactly one part")
                self.expr(b, e.parts[0], scope, d)
            else:
                for part in e.parts:
                    self.expr(b, part, scope, d)
                b.emit(V.TEMPLATE, len(e.parts))
        else:
            raise CelAssembleError(f"unsupported expression: {type(e).__name__}")

    def ref(self, b: _Block, e: E.Ref, scope: dict[str, int], depth: int) -> None:
        if not isinstance(e.root, str):
            raise CelAssembleError("reference root is not a string")
        if e.root in scope:
            b.emit(V.LOCAL, scope[e.root])
        else:
            b.emit(V.VAR, self.t.name(e.root))
        for seg in e.path:
            if isinstance(seg, E.Field):
                b.emit(V.SELECT, self.t.name(seg.name))
            elif isinstance(seg, E.Index):
                self.expr(b, seg.index, scope, depth)
                b.emit(V.INDEX)
            else:
                raise CelAssembleError(f"unsupported path segment: {type(seg).__name__}")

    def lam(self, lam: E.Expr, scope: dict[str, int]) -> tuple[int, int]:
        if not isinstance(lam, E.Lambda) or len(lam.params) != 1:
            raise CelAssembleError("a macro takes a one-parameter Lambda")
        slot = self.new_slot()
        inner = dict(scope)
        inner[lam.params[0]] = slot
        return self.block(lam.body, inner), slot

    def lam2(self, lam: E.Expr, scope: dict[str, int], slot: int) -> int:
        """A two-parameter Lambda's body block, its variables in ``slot`` and ``slot + 1``."""
        if not isinstance(lam, E.Lambda) or len(lam.params) != 2:
            raise CelAssembleError("a two-variable comprehension takes two-parameter Lambdas")
        inner = dict(scope)
        inner[lam.params[0]] = slot
        inner[lam.params[1]] = slot + 1
        return self.block(lam.body, inner)

    def call(self, b: _Block, e: E.Call, scope: dict[str, int], depth: int) -> None:
        f = e.func
        if f in V.MACRO2_KEYS:
            if not (len(e.args) == 2 or (f in V.MACRO2F_KEYS and len(e.args) == 3)):
                raise CelAssembleError(f"{f} takes a target and its Lambdas")
            self.expr(b, e.args[0], scope, depth)
            slot = self.new_slot()
            self.new_slot()
            blocks = [self.lam2(lam, scope, slot) for lam in e.args[1:]]
            if len(blocks) == 1:
                b.emit(V.MACRO2, self.t.key(f), blocks[0], slot)
            else:
                b.emit(V.MACRO2F, self.t.key(f), blocks[0], blocks[1], slot)
        elif f in V.OP_KEYS:
            for arg in e.args:
                self.expr(b, arg, scope, depth)
            b.emit(V.OP, self.t.key(f), len(e.args))
        elif f in ("cel.all", "cel.exists", "cel.exists_one", "cel.filter", "cel.bind") \
                or (f == "cel.map" and len(e.args) == 2):
            if len(e.args) != 2:
                raise CelAssembleError(f"{f} takes a target and a Lambda")
            self.expr(b, e.args[0], scope, depth)
            body, slot = self.lam(e.args[1], scope)
            b.emit(V.MACRO, self.t.key(f), body, slot)
        elif f == "cel.map" and len(e.args) == 3:
            self.expr(b, e.args[0], scope, depth)
            pred, slot = self.lam(e.args[1], scope)
            if not isinstance(e.args[2], E.Lambda) or e.args[2].params != e.args[1].params:
                raise CelAssembleError("the two Lambdas of a three-argument map share their variable")
            inner = dict(scope)
            inner[e.args[2].params[0]] = slot
            fn = self.block(e.args[2].body, inner)
            b.emit(V.MAP3, pred, fn, slot)
        elif f == "cel.has":
            if len(e.args) != 1:
                raise CelAssembleError("cel.has takes one selection")
            arg = e.args[0]
            if isinstance(arg, E.Ref) and arg.path and isinstance(arg.path[-1], E.Field):
                self.ref(b, E.Ref(arg.root, arg.path[:-1], arg.span), scope, depth)
                b.emit(V.HAS, self.t.name(arg.path[-1].name))
            elif isinstance(arg, E.Binary) and arg.op == "cel.select" and isinstance(arg.right, E.Literal):
                self.expr(b, arg.left, scope, depth)
                b.emit(V.HAS, self.t.name(arg.right.value))
            else:
                raise CelAssembleError("cel.has needs a field selection")
        elif f == "tmpl.default":
            if len(e.args) != 2:
                raise CelAssembleError("tmpl.default takes a path and a default")
            failed, end = _Label(), _Label()
            b.emit(V.TRY, failed)
            self.expr(b, e.args[0], scope, depth)
            b.emit(V.END_TRY)
            b.emit(V.JUMP, end)
            b.mark(failed)
            b.emit(V.POP)
            self.expr(b, e.args[1], scope, depth)
            b.mark(end)
        else:
            raise CelAssembleError(f"unsupported function: {f!r}")


def assemble_expression(tables: Tables, expr: E.Expr) -> tuple[int, int, int]:
    """Assemble one expression (a Lambda: its parameters are its first
    slots) into ``tables``: ``(root block, parameter count, slot count)``."""
    asm = _Assembler(tables)
    try:
        if isinstance(expr, E.Lambda):
            scope = {}
            for p in expr.params:
                scope[p] = asm.new_slot()
            block = asm.block(expr.body, scope)
            return block, len(expr.params), asm.slots
        block = asm.block(expr, {})
        return block, 0, asm.slots
    except RecursionError:
        raise CelAssembleError("expression is nested too deeply to compile") from None
