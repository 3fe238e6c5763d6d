"""IR of an aevatar workflow -> an aevatar program for the VM
(:mod:`flowc.backends.vm.aevatar_vm`, docs/bytecode.md section 8).

The plan is the one the Python backend generates
(:mod:`flowc.backends.aevatar_plan`); each parameter value and while
condition is compiled to a block of aevatar expression code. The same IR
always gives the same bytes.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgpack
from flowc.backends.aevatar_plan import AevatarPlanError, build_plan
from flowc.backends.python.aevatar_expr import AevatarCompileError, flat_key
from flowc.backends.vm import aevatar_vm as A
from flowc.backends.vm.assemble import AssembleError
from flowc.ir import expr as E
from flowc.ir.workflow import Node, Workflow

__all__ = ["AevatarAssembleError", "assemble_aevatar"]

# As the Python backend's expression compiler: deeper expressions do not compile.
MAX_DEPTH = 90

# IR key -> function name (aevatar_vm.FUNCTIONS)
_CALLS = {
    "aevatar.concat": "concat", "aevatar.isblank": "isblank", "aevatar.length": "length", "aevatar.not": "not",
    "aevatar.and": "and", "aevatar.or": "or", "aevatar.upper": "upper", "aevatar.lower": "lower",
    "aevatar.trim": "trim", "aevatar.json": "json", "aevatar.add": "add", "aevatar.sub": "sub",
    "aevatar.mul": "mul", "aevatar.div": "div", "aevatar.eq": "eq", "aevatar.lt": "lt", "aevatar.lte": "lte",
    "aevatar.gt": "gt", "aevatar.gte": "gte", "aevatar.fail": "fail",
    "aevatar.conditional_test": "conditional_test",
}


class AevatarAssembleError(AssembleError):
    """The aevatar workflow can't be expressed as an aevatar program."""


def _varint(out: bytearray, value: int) -> None:
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


class _Tables:
    def __init__(self) -> None:
        self.consts: list[str] = []
        self.const_index: dict[str, int] = {}
        self.names: list[str] = []
        self.name_index: dict[str, int] = {}
        self.blocks: list[bytes | None] = []

    def const(self, value: str) -> int:
        if value not in self.const_index:
            self.const_index[value] = len(self.consts)
            self.consts.append(value)
        return self.const_index[value]

    def name(self, value: str) -> int:
        if value not in self.name_index:
            self.name_index[value] = len(self.names)
            self.names.append(value)
        return self.name_index[value]

    def block(self, expr: E.Expr, ci: bool, lazy_depth: int = 0, depth: int = 0) -> int:
        index = len(self.blocks)
        self.blocks.append(None)
        self.fill(index, expr, ci, lazy_depth, depth)
        return index

    def fill(self, index: int, expr: E.Expr, ci: bool, lazy_depth: int, depth: int) -> None:
        code = bytearray()
        self.emit(expr, ci, code, lazy_depth, depth)
        code.append(A.RETURN)
        self.blocks[index] = bytes(code)

    def emit(self, e: E.Expr, ci: bool, code: bytearray, lazy_depth: int, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise AevatarAssembleError("expression is nested too deeply to compile")
        if isinstance(e, E.Literal):
            if not isinstance(e.value, str):
                raise AevatarAssembleError(f"aevatar values are strings, not {type(e.value).__name__}")
            code.append(A.CONST)
            _varint(code, self.const(e.value))
        elif isinstance(e, E.Ref):
            try:
                key = flat_key(e)
            except AevatarCompileError as exc:
                raise AevatarAssembleError(str(exc)) from None
            code.append(A.VAR_CI if ci else A.VAR)
            _varint(code, self.name(key))
        elif isinstance(e, E.Template):
            if e.stringify != "aevatar":
                raise AevatarAssembleError(f"unsupported stringify rule: {e.stringify!r}")
            self.strict("template", e.parts, ci, code, lazy_depth, depth)
        elif isinstance(e, E.Conditional):
            if e.op != "aevatar.if":
                raise AevatarAssembleError(f"unsupported conditional: {e.op!r}")
            self.lazy("if", (e.test, e.then, e.otherwise), ci, code, lazy_depth, depth)
        elif isinstance(e, E.Call):
            name = _CALLS.get(e.func)
            if name is None:
                raise AevatarAssembleError(f"unsupported function: {e.func!r}")
            if A.FUNCTIONS[A.FUNCTION_CODES[name]][2]:
                self.lazy(name, e.args, ci, code, lazy_depth, depth)
            else:
                self.strict(name, e.args, ci, code, lazy_depth, depth)
        else:
            raise AevatarAssembleError(f"unsupported expression: {type(e).__name__}")

    def _arity(self, name: str, count: int) -> None:
        _n, _helper, _lazy, low, high = A.FUNCTIONS[A.FUNCTION_CODES[name]]
        if count < low or (high is not None and count > high) or count > A.MAX_COUNT:
            raise AevatarAssembleError(f"{name} with {count} arguments")

    def strict(self, name: str, args, ci: bool, code: bytearray, lazy_depth: int, depth: int) -> None:
        self._arity(name, len(args))
        for a in args:
            self.emit(a, ci, code, lazy_depth, depth + 1)
        code.append(A.CALL)
        _varint(code, A.FUNCTION_CODES[name])
        _varint(code, len(args))

    def lazy(self, name: str, args, ci: bool, code: bytearray, lazy_depth: int, depth: int) -> None:
        self._arity(name, len(args))
        if lazy_depth + 1 > A.MAX_LAZY_DEPTH:
            raise AevatarAssembleError(f"expression nests more than {A.MAX_LAZY_DEPTH} lazy calls "
                                       "(and, or, if, the arithmetic and comparisons)")
        # the argument blocks are consecutive: reserve them, then fill each
        first = len(self.blocks)
        self.blocks.extend([None] * len(args))
        for i, a in enumerate(args):
            self.fill(first + i, a, ci, lazy_depth + 1, depth + 1)
        code.append(A.LAZY)
        _varint(code, A.FUNCTION_CODES[name])
        _varint(code, first)
        _varint(code, len(args))


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise AevatarAssembleError(f"{what} must be a string")
    return value


def _role_config(config: dict) -> dict:
    out: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, list):
            out[key] = [_text(v, f"role setting {key!r}") for v in value]
        else:
            out[key] = _text(value, f"role setting {key!r}")
    return out


def _sub_row(sub: dict) -> list:
    return [sub["id"], sub["type"], sub["role"], sub["params"], sub["capability"], sub["name"]]


def _step_row(step: dict) -> list:
    retry = step["retry"]
    if retry is not None:
        retry = [int(v) if isinstance(v, float) and v == int(v) else v for v in retry]
    regions = step.get("regions")
    return [step["id"], step["type"], step["role"], step["params"], step["capability"], step["name"],
            step["next"], step["branches"], retry, step["on_error"], step.get("condition"),
            None if regions is None else {name: [_sub_row(s) for s in subs] for name, subs in regions.items()},
            step.get("timeout_ms")]


def assemble_aevatar(workflow: Workflow) -> bytes:
    """The aevatar program of a checked aevatar workflow."""
    tables = _Tables()

    def params_fn(node: Node, entries: list[tuple[str, E.Expr]], ci: bool) -> list:
        pairs = []
        for key, value in entries:
            try:
                pairs.append([key, tables.block(value, ci)])
            except AevatarAssembleError as exc:
                raise AevatarAssembleError(f"step {node.id!r}, parameter {key!r}: {exc}") from None
        return pairs

    def expression_fn(node: Node, expr: E.Expr, ci: bool, what: str) -> int:
        try:
            return tables.block(expr, ci)
        except AevatarAssembleError as exc:
            raise AevatarAssembleError(f"step {node.id!r}, {what}: {exc}") from None

    try:
        plan = build_plan(workflow, params_fn, expression_fn)
    except AevatarPlanError as exc:
        raise AevatarAssembleError(str(exc)) from None
    roles = {rid: _role_config(config) for rid, config in plan["roles"].items()}
    body = [plan["name"], tables.consts, tables.names, tables.blocks, roles,
            [_step_row(s) for s in plan["steps"]]]
    data = msgpack.packb(body, use_bin_type=True)
    return msgpack.packb([A.MAGIC, A.FORMAT_VERSION, zlib.crc32(data) & 0xFFFFFFFF, data], use_bin_type=True)


_MEANINGS = {
    "CONST": "push consts[c]",
    "VAR": "push the variable names[n]: its value, else the name itself when it is a number, the name "
           "lower-cased when it is true/false (any case), else \"\"",
    "VAR_CI": "as VAR, but when no variable has exactly that name, the first one (in the order the "
              "variables were first set) whose name equals it ignoring case",
    "CALL": "pop k values (the first pushed is the first argument), push FUNCTIONS[f] of them",
    "LAZY": "push FUNCTIONS[f] of k thunks: thunk i evaluates block b+i when the function asks for it",
    "RETURN": "end the block: its value is the one value on the stack",
}
_EFFECTS = {"CONST": "0 → 1", "VAR": "0 → 1", "VAR_CI": "0 → 1", "CALL": "k → 1", "LAZY": "0 → 1",
            "RETURN": "1 → (end)"}
_FUNCTION_MEANINGS = {
    "template": "the parts joined (a `${...}` template)",
    "concat": "the arguments joined",
    "isblank": "\"true\" when blank (empty or .NET white space only), else \"false\"",
    "length": "the length in UTF-16 code units",
    "not": "\"false\" when truthy, else \"true\"",
    "upper": "invariant upper case", "lower": "invariant lower case", "trim": ".NET white space trimmed",
    "json": "the JSON string body (UnsafeRelaxedJsonEscaping)",
    "eq": "\"true\" when both are numbers within 1e-9, or equal text, else \"false\"",
    "fail": "the evaluation fails with this message (the engine throws)",
    "conditional_test": "the conditional primitive's test of (condition, input): \"true\" or \"false\"",
    "and": "\"true\" when both are truthy; the second is not evaluated when the first is not",
    "or": "\"true\" when one is truthy; the second is not evaluated when the first is",
    "add": "the sum, G17; `[add: non-numeric argument]` at the first non-number (the rest unevaluated)",
    "sub": "the first minus the others (one argument: negated); `[sub: non-numeric argument]` likewise",
    "mul": "the product; `[mul: non-numeric argument]` likewise",
    "div": "the first divided by the others; `[div: non-numeric argument]`, `[div: division by zero]`",
    "lt": "\"true\"/\"false\"; `[lt: non-numeric argument]` (the right side unevaluated when the left is not a number)",
    "lte": "as lt, `<=`", "gt": "as lt, `>`", "gte": "as lt, `>=`",
    "if": "the second thunk's value when the first's is truthy, else the third's (only one is evaluated)",
}


def doc_tables() -> str:
    """The opcode and function tables of docs/bytecode.md section 8 (a test keeps them equal)."""
    kinds = {"c": "const", "n": "name", "f": "function", "b": "block", "k": "count"}
    out = ["| code | name | operands | stack | meaning |", "|---|---|---|---|---|"]
    for code in sorted(A.OPCODES):
        name, ops = A.OPCODES[code]
        operands = ", ".join(kinds[k] for k in ops) or "—"
        out.append(f"| `0x{code:02X}` | `{name}` | {operands} | {_EFFECTS[name]} | {_MEANINGS[name]} |")
    out += ["", "| f | function | kind | arguments | value |", "|---|---|---|---|---|"]
    for i, (name, _helper, lazy, low, high) in enumerate(A.FUNCTIONS):
        arity = str(low) if high == low else (f"{low} or more" if high is None else f"{low}..{high}")
        out.append(f"| {i} | `{name}` | {'lazy' if lazy else 'strict'} | {arity} | {_FUNCTION_MEANINGS[name]} |")
    return "\n".join(out) + "\n"
