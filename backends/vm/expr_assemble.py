"""IR expressions -> blocks of the VM's expression machine
(:mod:`flowc.backends.vm.expr_vm`, docs/bytecode.md section 9).

Every semantic key of the IR becomes one ``CALL key argc`` of the builtin
with that key (the runtime function the Python backend calls too); the
rules where the dialects differ are operands named as the DialectProfile
names them: how a reference is read (``access``), how a condition is
tested (the truthiness of a Conditional's op), how a template joins its
parts (its ``stringify``). CEL's ``&&``/``||`` evaluate each side under
``TRY`` and combine the values-or-errors, short-circuiting on a kept
``false``/``true``; conditionals are jumps; arguments a function evaluates
itself (comprehension bodies, aevatar's lazy arguments) are lambdas over
blocks of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# every dialect's builtins, registered with the machine on import
from flowc.backends.vm import expr_aevatar, expr_cel, expr_wfs  # noqa: F401
from flowc.backends.vm import expr_vm as V
from flowc.ir import expr as E

__all__ = ["ExprAssembleError", "Tables", "assemble_expression"]

_SHORT_CIRCUIT = {"cel.and": V.JUMP_IF_FALSE_KEEP, "cel.or": V.JUMP_IF_TRUE_KEEP}
# the truthiness rule each conditional operator tests with
_CONDITIONALS = {"cel.ternary": "cel_bool", "aevatar.if": "aevatar_truthy"}
# Calls of a builtin over an object literal that a map rule builds at once
_MAP_RULE_CALLS = {"wfs.compact": "wfs_compact"}
# Binary and Unary keys that are machine instructions rather than builtins
_SELECT = "cel.select"
_INDEX = "cel.index"
DEFAULT_MAX_DEPTH = 400


class ExprAssembleError(Exception):
    """The expression can't be expressed as expression code."""


def varint(v: int) -> bytes:
    """``v`` as an unsigned LEB128 varint (every VM operand is one)."""
    if v < 0:
        raise ExprAssembleError(f"negative operand {v}")
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
    """A constant of a dataflow program as ``[tag, value]``: ``["v", json]``,
    ``["u", n]`` (uint) or ``["b", bytes]`` (:func:`pool_const` writes it)."""
    if kind == "uint":
        return ["u", int(value)]
    if kind == "bytes":
        return ["b", bytes.fromhex(value)]
    if kind == "float" and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    _check_plain(value, 0)
    return ["v", value]


def pool_const(encoded: list) -> Any:
    """How the pool holds a constant: a plain value that is no array as
    itself, bytes as bin, the others (an array, a uint) as ``[tag, value]``."""
    tag, value = encoded
    if tag == "b" or (tag == "v" and type(value) is not list):
        return value
    return encoded


def _check_plain(value: Any, depth: int) -> None:
    if depth > 100:
        raise ExprAssembleError("a constant nests too deeply")
    if value is None or isinstance(value, (bool, int, str, float)):
        return
    if isinstance(value, list):
        for v in value:
            _check_plain(v, depth + 1)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ExprAssembleError("an object constant with a non-string key")
            _check_plain(v, depth + 1)
        return
    raise ExprAssembleError(f"not a plain constant: {type(value).__name__}")


class Tables:
    """The pools a program's blocks index: constants, names, keys, blocks.

    ``tagged``: constants are as :func:`pool_const` writes them (dataflow programs);
    otherwise every constant is a string (aevatar programs). ``keys_in_names``:
    builtin keys share the name table (a program without a key table)."""

    def __init__(self, tagged: bool = True, keys_in_names: bool = False) -> None:
        self.tagged = tagged
        self.consts: list = []
        self._const_index: dict[str, int] = {}
        self.names: list[str] = []
        self._name_index: dict[str, int] = {}
        self.keys: list[str] = self.names if keys_in_names else []
        self._key_index: dict[str, int] = self._name_index if keys_in_names else {}
        self.blocks: list[bytes] = []

    def const(self, value: Any, kind: str = "auto") -> int:
        if self.tagged:
            encoded: Any = encode_const(value, kind)
            key = repr((encoded[0], type(encoded[1]).__name__, encoded[1]))
        else:
            if not isinstance(value, str):
                raise ExprAssembleError(f"aevatar values are strings, not {type(value).__name__}")
            encoded, key = value, value
        if key not in self._const_index:
            self._const_index[key] = len(self.consts)
            self.consts.append(pool_const(encoded) if self.tagged else encoded)
        return self._const_index[key]

    def name(self, text: str) -> int:
        if not isinstance(text, str):
            raise ExprAssembleError("a name is not a string")
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
        if op in V.PACKED_OPS:   # access rule and name share one varint
            operands = (operands[1] << V.ACCESS_BITS | operands[0],)
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
                    out += varint((v.offset or 0) if isinstance(v, _Label) else v)
            if not changed:
                return bytes(out)
        raise ExprAssembleError("jump offsets do not settle")


class _Assembler:
    def __init__(self, tables: Tables, access: str, flat_key: Callable[[E.Ref], str] | None,
                 max_depth: int) -> None:
        if access not in V.ACCESS:
            raise ExprAssembleError(f"unknown access rule: {access!r}")
        self.t = tables
        self.access = V.ACCESS.index(access)
        # a map literal is built as the dialect that reads references this way builds it
        self.map_rule = V.MAPS.index("wfs" if access == "wfs" else "cel")
        self.flat_key = flat_key
        self.max_depth = max_depth
        self.slots = 0

    def new_slots(self, n: int) -> int:
        self.slots += n
        return self.slots - n

    def block(self, expr: E.Expr, scope: dict[str, int], depth: int, lambdas: int) -> int:
        """Assemble ``expr`` as a block of its own; the block's index."""
        if lambdas > V.MAX_LAMBDA_DEPTH:
            raise ExprAssembleError(f"expression nests more than {V.MAX_LAMBDA_DEPTH} lazy calls "
                                    "(comprehensions; aevatar's and, or, the arithmetic and comparisons)")
        index = len(self.t.blocks)
        self.t.blocks.append(b"")
        b = _Block()
        self.expr(b, expr, scope, depth, lambdas)
        b.emit(V.RETURN)
        self.t.blocks[index] = b.encode()
        return index

    def expr(self, b: _Block, e: E.Expr, scope: dict[str, int], depth: int, lambdas: int) -> None:
        if depth > self.max_depth:
            raise ExprAssembleError("expression is nested too deeply to compile")
        d = depth + 1
        if isinstance(e, E.Literal):
            b.emit(V.CONST, self.t.const(e.value, e.kind))
        elif isinstance(e, E.Ref):
            self.ref(b, e, scope, d, lambdas)
        elif isinstance(e, E.Binary):
            self.binary(b, e, scope, d, lambdas)
        elif isinstance(e, E.Unary):
            self.call_key(e.op, 1)
            self.expr(b, e.operand, scope, d, lambdas)
            b.emit(V.CALL, self.t.key(e.op), 1)
        elif isinstance(e, E.Conditional):
            rule = _CONDITIONALS.get(e.op)
            if rule is None:
                raise ExprAssembleError(f"unsupported conditional: {e.op!r}")
            other, end = _Label(), _Label()
            self.expr(b, e.test, scope, d, lambdas)
            b.emit(V.JUMP_IF_NOT, V.TRUTHINESS.index(rule), other)
            self.expr(b, e.then, scope, d, lambdas)
            b.emit(V.JUMP, end)
            b.mark(other)
            self.expr(b, e.otherwise, scope, d, lambdas)
            b.mark(end)
        elif isinstance(e, E.Call):
            self.call(b, e, scope, d, lambdas)
        elif isinstance(e, E.ListExpr):
            for item in e.items:
                self.expr(b, item, scope, d, lambdas)
            b.emit(V.LIST, self.count(len(e.items)))
        elif isinstance(e, E.MapExpr):
            for entry in e.entries:
                self.expr(b, entry.key, scope, d, lambdas)
                self.expr(b, entry.value, scope, d, lambdas)
            b.emit(V.MAP, self.map_rule, self.count(len(e.entries)))
        elif isinstance(e, E.Template):
            self.template(b, e, scope, d, lambdas)
        else:
            raise ExprAssembleError(f"unsupported expression: {type(e).__name__}")

    @staticmethod
    def count(n: int) -> int:
        if n > V.MAX_COUNT:
            raise ExprAssembleError(f"more than {V.MAX_COUNT} items")
        return n

    def template(self, b: _Block, e: E.Template, scope: dict[str, int], depth: int, lambdas: int) -> None:
        if e.stringify not in V.STRINGIFY:
            raise ExprAssembleError(f"unsupported stringify rule: {e.stringify!r}")
        if e.typed_whole:
            if len(e.parts) != 1:
                raise ExprAssembleError("a typed_whole template has exactly one part")
            self.expr(b, e.parts[0], scope, depth, lambdas)
            return
        for part in e.parts:
            self.expr(b, part, scope, depth, lambdas)
        b.emit(V.TEMPLATE, V.STRINGIFY.index(e.stringify), self.count(len(e.parts)))

    def binary(self, b: _Block, e: E.Binary, scope: dict[str, int], d: int, lambdas: int) -> None:
        if e.op in _SHORT_CIRCUIT:
            after_left, after_right, end = _Label(), _Label(), _Label()
            b.emit(V.TRY, after_left)
            self.expr(b, e.left, scope, d, lambdas)
            b.emit(V.END_TRY)
            b.mark(after_left)
            b.emit(_SHORT_CIRCUIT[e.op], end)
            b.emit(V.TRY, after_right)
            self.expr(b, e.right, scope, d, lambdas)
            b.emit(V.END_TRY)
            b.mark(after_right)
            b.emit(V.CALL, self.t.key(e.op), 2)
            b.mark(end)
        elif e.op == _SELECT:
            if not (isinstance(e.right, E.Literal) and isinstance(e.right.value, str)):
                raise ExprAssembleError("cel.select needs a field name")
            self.expr(b, e.left, scope, d, lambdas)
            b.emit(V.FIELD, V.ACCESS.index("cel"), self.t.name(e.right.value))
        elif e.op == _INDEX:
            self.expr(b, e.left, scope, d, lambdas)
            self.expr(b, e.right, scope, d, lambdas)
            b.emit(V.INDEX, V.ACCESS.index("cel"))
        else:
            self.call_key(e.op, 2)
            self.expr(b, e.left, scope, d, lambdas)
            self.expr(b, e.right, scope, d, lambdas)
            b.emit(V.CALL, self.t.key(e.op), 2)

    def ref(self, b: _Block, e: E.Ref, scope: dict[str, int], depth: int, lambdas: int) -> None:
        if not isinstance(e.root, str):
            raise ExprAssembleError("reference root is not a string")
        if V.ACCESS[self.access] in ("flat_keys", "flat_keys_ci"):
            if self.flat_key is None:
                raise ExprAssembleError("flat-key access needs the dialect's key function")
            b.emit(V.LOAD, self.access, self.t.name(self.flat_key(e)))
            return
        if e.root in scope and V.ACCESS[self.access] == "cel":
            b.emit(V.LOCAL, scope[e.root])
        else:
            b.emit(V.LOAD, self.access, self.t.name(e.root))
        for seg in e.path:
            if isinstance(seg, E.Field):
                b.emit(V.FIELD, self.access, self.t.name(seg.name))
            elif isinstance(seg, E.Index):
                self.expr(b, seg.index, scope, depth, lambdas)
                b.emit(V.INDEX, self.access)
            else:
                raise ExprAssembleError(f"unsupported path segment: {type(seg).__name__}")

    @staticmethod
    def call_key(key: str, count: int) -> tuple:
        row = V.BUILTINS.get(key)
        if row is None:
            raise ExprAssembleError(f"unsupported function: {key!r}")
        if count < row[1] or (row[2] >= 0 and count > row[2]) or count > V.MAX_COUNT:
            raise ExprAssembleError(f"{key} with {count} arguments")
        return row

    def call(self, b: _Block, e: E.Call, scope: dict[str, int], depth: int, lambdas: int) -> None:
        f = e.func
        if f == "cel.has":
            self.has(b, e, scope, depth, lambdas)
            return
        if f == "tmpl.default":
            self.default(b, e, scope, depth, lambdas)
            return
        if f in _MAP_RULE_CALLS and len(e.args) == 1 and isinstance(e.args[0], E.MapExpr):
            for entry in e.args[0].entries:
                self.expr(b, entry.key, scope, depth, lambdas)
                self.expr(b, entry.value, scope, depth, lambdas)
            b.emit(V.MAP, V.MAPS.index(_MAP_RULE_CALLS[f]), self.count(len(e.args[0].entries)))
            return
        row = self.call_key(f, len(e.args))
        first_lambda = row[3] if row[3] >= 0 else len(e.args)
        for arg in e.args[:first_lambda]:
            self.expr(b, arg, scope, depth, lambdas)
        lazy = e.args[first_lambda:]
        if lazy:
            # the lambdas of one call share their variables' slots (a filter and a body see the same x)
            params = row[4]
            slot = self.new_slots(params) if params else 0
            names = None
            for lam in lazy:
                if params:
                    if not isinstance(lam, E.Lambda) or len(lam.params) != params:
                        raise ExprAssembleError(f"{f} takes Lambdas of {params} parameters")
                    if names is not None and lam.params != names:
                        raise ExprAssembleError(f"the Lambdas of {f} share their variables")
                    names = lam.params
                    inner = dict(scope)
                    for i, p in enumerate(lam.params):
                        inner[p] = slot + i
                    body = self.block(lam.body, inner, depth, lambdas + 1)
                else:
                    body = self.block(lam, scope, depth, lambdas + 1)
                b.emit(V.LAMBDA, body, slot, params)
        b.emit(V.CALL, self.t.key(f), len(e.args))

    def has(self, b: _Block, e: E.Call, scope: dict[str, int], depth: int, lambdas: int) -> None:
        if len(e.args) != 1:
            raise ExprAssembleError("cel.has takes one selection")
        arg = e.args[0]
        if isinstance(arg, E.Ref) and arg.path and isinstance(arg.path[-1], E.Field):
            self.ref(b, E.Ref(arg.root, arg.path[:-1], arg.span), scope, depth, lambdas)
            field = arg.path[-1].name
        elif isinstance(arg, E.Binary) and arg.op == _SELECT and isinstance(arg.right, E.Literal) \
                and isinstance(arg.right.value, str):
            self.expr(b, arg.left, scope, depth, lambdas)
            field = arg.right.value
        else:
            raise ExprAssembleError("cel.has needs a field selection")
        b.emit(V.CONST, self.t.const(field, "string"))
        b.emit(V.CALL, self.t.key("cel.has"), 2)

    def default(self, b: _Block, e: E.Call, scope: dict[str, int], depth: int, lambdas: int) -> None:
        if len(e.args) != 2:
            raise ExprAssembleError("tmpl.default takes a path and a default")
        failed, end = _Label(), _Label()
        b.emit(V.TRY, failed)
        self.expr(b, e.args[0], scope, depth, lambdas)
        b.emit(V.END_TRY)
        b.emit(V.JUMP, end)
        b.mark(failed)
        b.emit(V.POP)
        self.expr(b, e.args[1], scope, depth, lambdas)
        b.mark(end)


def assemble_expression(tables: Tables, expr: E.Expr, access: str = "cel",
                        flat_key: Callable[[E.Ref], str] | None = None,
                        max_depth: int = DEFAULT_MAX_DEPTH) -> tuple[int, int, int]:
    """Assemble one expression into ``tables``: ``(root block, parameter
    count, slot count)``. A Lambda's parameters are its first slots.
    ``access`` is the DialectProfile's (``cel``, ``flat_keys``, ``wfs``;
    ``flat_keys_ci`` reads aevatar variables ignoring case); ``flat_key`` names the variable a reference
    reads under flat-key access."""
    asm = _Assembler(tables, access, flat_key, max_depth)
    try:
        if isinstance(expr, E.Lambda):
            scope = {}
            for p in expr.params:
                scope[p] = asm.new_slots(1)
            block = asm.block(expr.body, scope, 0, 0)
            return block, len(expr.params), asm.slots
        block = asm.block(expr, {}, 0, 0)
        return block, 0, asm.slots
    except RecursionError:
        raise ExprAssembleError("expression is nested too deeply to compile") from None

