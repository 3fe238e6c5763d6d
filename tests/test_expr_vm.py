"""The VM's expression machine (backends/vm/expr_vm.py): one instruction set
for CEL and aevatar expressions.

- Random well-typed IR expressions give the same value (or the same kind of
  failure) on the Python backend's generated code and on the machine.
- The verifier refuses what the machine can't run safely: lambdas as values,
  TRY regions that pop below their start, inconsistent stacks, jumps into
  instructions, unknown keys, wrong argument counts.
- Fuel: one unit per instruction executed, in lambdas too; TRY never
  catches a fuel failure.
- The builtin table agrees with the runtime functions and the IR's keys;
  docs/bytecode.md section 9 is the machine's own table.
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import pytest
from flowc.backends.python import aevatar_expr
from flowc.backends.python import expr as python_expr
from flowc.backends.python.cel_expr import evaluate_cel
from flowc.backends.vm import device, expr_aevatar, expr_cel, expr_wfs
from flowc.backends.vm import expr_vm as X
from flowc.backends.vm.errors import VerifyError
from flowc.backends.vm.expr_assemble import ExprAssembleError, Tables, assemble_expression
from flowc.backends.vm.expr_disasm import doc_table
from flowc.backends.vm.plan_assemble import assemble_expressions
from flowc.compiler.instruction.cel import parse_cel
from flowc.ir import expr as E
from flowc.ir.semantics import FUNCTIONS, OPERATORS, FunctionSpec
from flowc.plan.kernel import flat_key
from flowc.runtime import aevatar_text
from flowc.runtime import cel as C
from flowc.runtime import wfs as python_runtime
from flowc.runtime.fuel import Fuel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.program_bytes import open_program, pack_program

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ helpers

def on_vm(expr: E.Expr, env: dict):
    return device.load(assemble_expressions([expr])).evaluate(0, env)


def outcome(evaluate, *args):
    """("value", v) or ("error",): CEL errors are compared by kind, not text."""
    try:
        return ("value", C.to_json_text(evaluate(*args)))
    except C.CelError:
        return ("error",)


def aevatar_on_vm(expr: E.Expr, variables: dict, ci: bool = False, fuel: int = X.DEFAULT_FUEL) -> str:
    tables = Tables(tagged=False, keys_in_names=True)
    block, _params, _slots = assemble_expression(tables, expr, "flat_keys_ci" if ci else "flat_keys",
                                                 flat_key, 90)
    decoded = X.verify(tables.blocks, len(tables.consts), tables.names, tables.names, 0, "aevatar")
    return X.Machine(tables.consts, tables.names, tables.names, decoded, fuel).evaluate(block, 0, variables, ())


def aevatar_outcome(evaluate, *args):
    try:
        return ("value", evaluate(*args))
    except aevatar_text.AevatarError as e:
        return ("error", e.message)


def lit(v):
    return E.Literal(v)


def var(name):
    return E.Ref(name)


# ------------------------------------------------------------------ random CEL

ENV = {"x": 7, "s": "Abc", "xs": [3, -1, 4, 1, 5], "m": {"a": 1, "b": "two"}}


@st.composite
def cel_int(draw, depth: int, scope: tuple):
    leaves = [st.integers(-5, 9).map(lit), st.just(var("x"))] + [st.just(var(v)) for v in scope]
    if depth <= 0:
        return draw(st.one_of(leaves))
    d = depth - 1
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return draw(st.one_of(leaves))
    if choice == 1:
        op = draw(st.sampled_from(["cel.add", "cel.sub", "cel.mul", "cel.div", "cel.mod"]))
        return E.Binary(op, draw(cel_int(d, scope)), draw(cel_int(d, scope)))
    if choice == 2:
        return E.Call("cel.size", (draw(st.one_of(cel_list(d, scope), cel_str(d, scope))),))
    if choice == 3:
        return E.Conditional("cel.ternary", draw(cel_bool(d, scope)), draw(cel_int(d, scope)),
                             draw(cel_int(d, scope)))
    if choice == 4:
        return E.Unary("cel.neg", draw(cel_int(d, scope)))
    return E.Binary("cel.index", draw(cel_list(d, scope)), draw(cel_int(d, scope)))


@st.composite
def cel_bool(draw, depth: int, scope: tuple):
    leaves = [st.booleans().map(lit), st.just(E.Call("cel.has", (E.Ref("m", (E.Field("a"),)),))),
              st.just(E.Call("cel.has", (E.Ref("m", (E.Field("z"),)),)))]
    if depth <= 0:
        return draw(st.one_of(leaves))
    d = depth - 1
    choice = draw(st.integers(0, 6))
    if choice == 0:
        return draw(st.one_of(leaves))
    if choice == 1:
        op = draw(st.sampled_from(["cel.eq", "cel.ne", "cel.lt", "cel.le", "cel.gt", "cel.ge"]))
        return E.Binary(op, draw(cel_int(d, scope)), draw(cel_int(d, scope)))
    if choice == 2:
        op = draw(st.sampled_from(["cel.and", "cel.or"]))
        return E.Binary(op, draw(cel_bool(d, scope)), draw(cel_bool(d, scope)))
    if choice == 3:
        return E.Unary("cel.not", draw(cel_bool(d, scope)))
    if choice == 4:
        name = f"v{len(scope)}"
        macro = draw(st.sampled_from(["cel.all", "cel.exists", "cel.exists_one"]))
        body = draw(cel_bool(d, (*scope, name)))
        return E.Call(macro, (draw(cel_list(d, scope)), E.Lambda((name,), body)))
    if choice == 5:
        return E.Binary("cel.in", draw(cel_int(d, scope)), draw(cel_list(d, scope)))
    fn = draw(st.sampled_from(["cel.contains", "cel.startsWith", "cel.endsWith"]))
    return E.Call(fn, (draw(cel_str(d, scope)), draw(cel_str(d, scope))))


@st.composite
def cel_str(draw, depth: int, scope: tuple):
    leaves = [st.sampled_from(["", "a", "Ab", "bc"]).map(lit), st.just(var("s")),
              st.just(E.Ref("m", (E.Field("b"),)))]
    if depth <= 0:
        return draw(st.one_of(leaves))
    d = depth - 1
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return draw(st.one_of(leaves))
    if choice == 1:
        return E.Binary("cel.add", draw(cel_str(d, scope)), draw(cel_str(d, scope)))
    if choice == 2:
        return E.Call("cel.string", (draw(cel_int(d, scope)),))
    parts = draw(st.lists(st.one_of(cel_str(d, scope), cel_int(d, scope), cel_list(d, scope)), min_size=1,
                          max_size=3))
    return E.Template(tuple(parts), "json")


@st.composite
def cel_list(draw, depth: int, scope: tuple):
    leaves = [st.just(var("xs")), st.lists(st.integers(-2, 3).map(lit), max_size=3).map(
        lambda items: E.ListExpr(tuple(items)))]
    if depth <= 0:
        return draw(st.one_of(leaves))
    d = depth - 1
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return draw(st.one_of(leaves))
    if choice == 1:
        return E.ListExpr(tuple(draw(st.lists(cel_int(d, scope), max_size=3))))
    name = f"v{len(scope)}"
    if choice == 2:
        return E.Call("cel.map", (draw(cel_list(d, scope)), E.Lambda((name,), draw(cel_int(d, (*scope, name))))))
    return E.Call("cel.filter", (draw(cel_list(d, scope)), E.Lambda((name,), draw(cel_bool(d, (*scope, name))))))


cel_exprs = st.integers(0, 4).flatmap(lambda depth: st.one_of(
    cel_int(depth, ()), cel_bool(depth, ()), cel_str(depth, ()), cel_list(depth, ())))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cel_exprs)
def test_random_cel_expressions_agree_on_both_backends(expr):
    assert outcome(on_vm, expr, dict(ENV)) == outcome(evaluate_cel, expr, dict(ENV))


# ------------------------------------------------------------------ random aevatar

AEVATAR_VARS = {"n": "3", "t": "true", "w": "  hello ", "Mixed": "M"}


@st.composite
def aevatar_expr_st(draw, depth: int):
    leaves = [st.sampled_from(["", "1", "2.5", "-4", "true", "no", " x ", "0"]).map(lit),
              st.sampled_from(["n", "t", "w", "missing", "mixed", "7"]).map(lambda k: E.Ref("vars", (E.Field(k),)))]
    if depth <= 0:
        return draw(st.one_of(leaves))
    d = depth - 1
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return draw(st.one_of(leaves))
    if choice == 1:
        fn = draw(st.sampled_from(["aevatar.isblank", "aevatar.length", "aevatar.not", "aevatar.upper",
                                   "aevatar.lower", "aevatar.trim", "aevatar.json"]))
        return E.Call(fn, (draw(aevatar_expr_st(d)),))
    if choice == 2:
        fn = draw(st.sampled_from(["aevatar.eq", "aevatar.and", "aevatar.or", "aevatar.lt", "aevatar.lte",
                                   "aevatar.gt", "aevatar.gte", "aevatar.conditional_test"]))
        return E.Call(fn, (draw(aevatar_expr_st(d)), draw(aevatar_expr_st(d))))
    if choice == 3:
        fn = draw(st.sampled_from(["aevatar.concat", "aevatar.add", "aevatar.sub", "aevatar.mul", "aevatar.div"]))
        low = 1 if fn in ("aevatar.sub", "aevatar.div") else 0
        return E.Call(fn, tuple(draw(st.lists(aevatar_expr_st(d), min_size=low, max_size=3))))
    if choice == 4:
        return E.Conditional("aevatar.if", draw(aevatar_expr_st(d)), draw(aevatar_expr_st(d)),
                             draw(aevatar_expr_st(d)))
    return E.Template(tuple(draw(st.lists(aevatar_expr_st(d), max_size=3))), "aevatar")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 4).flatmap(aevatar_expr_st), st.booleans())
def test_random_aevatar_expressions_agree_on_both_backends(expr, ci):
    want = aevatar_outcome(aevatar_expr.evaluate, expr, dict(AEVATAR_VARS), ci)
    assert aevatar_outcome(aevatar_on_vm, expr, dict(AEVATAR_VARS), ci) == want


def test_a_lazy_argument_is_not_evaluated_once_the_answer_is_known():
    fail = E.Call("aevatar.fail", (lit("boom"),))
    assert aevatar_on_vm(E.Call("aevatar.and", (lit("false"), fail)), {}) == "false"
    assert aevatar_on_vm(E.Call("aevatar.add", (lit("x"), fail)), {}) == "[add: non-numeric argument]"
    assert aevatar_on_vm(E.Conditional("aevatar.if", lit("1"), lit("a"), fail), {}) == "a"
    with pytest.raises(aevatar_text.AevatarError, match="boom"):
        aevatar_on_vm(E.Call("aevatar.or", (lit("false"), fail)), {})


# ------------------------------------------------------------------ random WorkflowSkill

WFS_ENV = {"inputs": {"n": 3, "f": 2.5, "s": "Ab", "num": "3", "xs": [1, "a", None, [2]], "o": {"k": "v", "1": 2},
                      "z": None, "t": True},
           "steps": {"a": {"output": {"items": [{"x": 1}, {"x": "2"}]}}}, "item": "it", "index": 0}


def _wfs_leaf_refs():
    paths = [("inputs", "n"), ("inputs", "f"), ("inputs", "s"), ("inputs", "num"), ("inputs", "xs"),
             ("inputs", "o"), ("inputs", "z"), ("inputs", "t"), ("inputs", "nothing"), ("inputs", "xs", "length"),
             ("inputs", "xs", "1"), ("inputs", "o", "1"), ("steps", "a", "output", "items"), ("item",), ("index",),
             ("result",), ("bogus", "x")]
    return [E.Ref(p[0], tuple(E.Field(f) for f in p[1:])) for p in paths]


@st.composite
def wfs_expr(draw, depth: int):
    leaves = [st.sampled_from(_wfs_leaf_refs()),
              st.one_of(st.integers(-2, 3), st.sampled_from([0.5, "", "a", "3", "AB", True, False, None])).map(lit)]
    if depth <= 0:
        return draw(st.one_of(leaves))
    d = depth - 1
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return draw(st.one_of(leaves))
    if choice == 1:
        op = draw(st.sampled_from(sorted(k for k in OPERATORS if k.startswith("wfs.") and k != "wfs.not")))
        return E.Binary(op, draw(wfs_expr(d)), draw(wfs_expr(d)))
    if choice == 2:
        return E.Unary("wfs.not", draw(wfs_expr(d)))
    if choice == 3:
        ref = draw(st.sampled_from(_wfs_leaf_refs()))
        return E.Ref(ref.root, (*ref.path, E.Index(draw(wfs_expr(d)))))
    if choice == 4:
        return E.Template(tuple(draw(st.lists(wfs_expr(d), max_size=3))), "wfs")
    if draw(st.booleans()):
        return E.ListExpr(tuple(draw(st.lists(wfs_expr(d), max_size=3))))
    keys = st.sampled_from(["a", "b", "1"]).map(lit)   # WorkflowSkill map keys are YAML keys: strings
    return E.MapExpr(tuple(E.MapEntry(draw(keys), draw(wfs_expr(d))) for _ in range(draw(st.integers(0, 3)))))


def _plain_wfs(v):
    """A comparable form: both backends' missing values as one marker, NaN as text."""
    if v is python_runtime.MISSING:   # the VM runs on the same values (flowc.runtime.wfs)
        return "<missing>"
    if isinstance(v, float) and math.isnan(v):
        return "<NaN>"
    if isinstance(v, list):
        return [_plain_wfs(x) for x in v]
    if isinstance(v, dict):
        return [(k, _plain_wfs(x)) for k, x in v.items()]
    return (type(v).__name__ if isinstance(v, bool) else "", v)


def wfs_outcome(evaluate, *args):
    try:
        return ("value", _plain_wfs(evaluate(*args)))
    except python_runtime.EvalError as e:
        return ("error", str(e))


def wfs_on_vm(expr: E.Expr, env: dict):
    tables = Tables()
    block, _params, slots = assemble_expression(tables, expr, "wfs")
    decoded = X.verify(tables.blocks, len(tables.consts), tables.names, tables.keys, slots, "wfs")
    consts = [expr_cel.decode_const(c) for c in tables.consts]
    return X.Machine(consts, tables.names, tables.keys, decoded).evaluate(block, slots, env, ())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 3).flatmap(wfs_expr))
def test_random_workflowskill_expressions_agree_with_the_python_backend(expr):
    """The instruction set covers WorkflowSkill's semantics keys, access,
    templates and objects: the machine gives the Python backend's values."""
    assert wfs_outcome(wfs_on_vm, expr, WFS_ENV) == wfs_outcome(python_expr.evaluate, expr, WFS_ENV)


# ------------------------------------------------------------------ verification

def _code(*ins) -> bytes:
    out = bytearray()
    for op, *operands in ins:
        out.append(op)
        if op in X.PACKED_OPS:   # access rule and name in one varint
            operands = [operands[1] << X.ACCESS_BITS | operands[0]]
        for v in operands:
            while v >= 0x80:
                out.append((v & 0x7F) | 0x80)
                v >>= 7
            out.append(v)
    return bytes(out)


KEYS = ["cel.add", "cel.all", "cel.map", "cel.size", "nope", "aevatar.and"]
SIZES = (2, 1, len(KEYS), 3)   # consts, names, keys, blocks
ONE = _code((X.CONST, 0), (X.RETURN,))


def check(code: bytes, nslots: int = 2, index: int = 0, profile: str = "cel"):
    X.verify_block(index, code, SIZES, KEYS, nslots, X.PROFILES[profile])


def test_well_formed_blocks_verify():
    check(ONE)
    # x.all(v, ...) with a one-parameter lambda in slot 0
    check(_code((X.CONST, 0), (X.LAMBDA, 1, 0, 1), (X.CALL, 1, 2), (X.RETURN,)))
    # a TRY whose handler keeps the error, combined by cel.and
    check(_code((X.TRY, 5), (X.CONST, 0), (X.END_TRY,), (X.CONST, 1), (X.CALL, 0, 2), (X.RETURN,)))


@pytest.mark.parametrize("code, message", [
    (_code((X.CONST, 0), (X.CONST, 0), (X.RETURN,)), "RETURN with 2 values"),
    (_code((X.CONST, 0)), "runs off its end"),
    (_code((X.CALL, 4, 0), (X.RETURN,)), "no builtin"),
    (_code((X.CONST, 0), (X.CALL, 3, 2), (X.RETURN,)), "cel.size with 2 arguments"),
    (_code((X.CONST, 0), (X.CALL, 0, 2), (X.RETURN,)), "stack underflow"),
    (_code((X.LOAD, 2, 0), (X.RETURN,)), "LOAD names no rule 2"),
    (_code((X.CONST, 0), (X.FIELD, 1, 0), (X.RETURN,)), "FIELD names no rule 1"),
    (_code((X.LOCAL, 2), (X.RETURN,)), "out of range"),
    (_code((X.JUMP, 1), (X.CONST, 0), (X.RETURN,)), "not an instruction start"),
    # a lambda as a value, or as the argument of a strict builtin
    (_code((X.LAMBDA, 1, 0, 0), (X.RETURN,)), "argument of a CALL"),
    (_code((X.LAMBDA, 1, 0, 0), (X.CALL, 3, 1), (X.RETURN,)), "argument of a CALL"),
    # a value where a builtin takes a lambda; a lambda of the wrong arity
    (_code((X.CONST, 0), (X.CONST, 0), (X.CALL, 1, 2), (X.RETURN,)), "must be a LAMBDA of 1"),
    (_code((X.CONST, 0), (X.LAMBDA, 1, 0, 2), (X.CALL, 1, 2), (X.RETURN,)), "must be a LAMBDA of 1"),
    (_code((X.CONST, 0), (X.LAMBDA, 1, 1, 1), (X.LAMBDA, 2, 0, 1), (X.CALL, 1, 2), (X.RETURN,)),
     "argument of a CALL"),
    (_code((X.CONST, 0), (X.LAMBDA, 1, 2, 1), (X.CALL, 1, 2), (X.RETURN,)), "slots out of range"),
    (_code((X.CONST, 0), (X.LAMBDA, 0, 0, 1), (X.CALL, 1, 2), (X.RETURN,)), "not a later one"),
    # jumping between a LAMBDA and its CALL skips the lambda
    (_code((X.CONST, 0), (X.JUMP, 8), (X.LAMBDA, 1, 0, 1), (X.LAMBDA, 2, 0, 1), (X.CALL, 2, 3), (X.RETURN,)),
     "between a LAMBDA and its CALL"),
    (_code((X.END_TRY,), (X.CONST, 0), (X.RETURN,)), "END_TRY outside a TRY"),
    # inside a TRY the stack must not drop below its depth at the TRY (the handler restores that depth)
    (_code((X.CONST, 0), (X.TRY, 5), (X.POP,), (X.CONST, 0), (X.END_TRY,), (X.RETURN,)), "stack underflow"),
    # two paths into one instruction with different depths
    (_code((X.CONST, 0), (X.CONST, 1), (X.JUMP_IF_NOT, 0, 9), (X.CONST, 0), (X.POP,), (X.RETURN,)),
     "differs"),
    (b"\x01\x80\x80\x80\x80\x80\x00\x12", "longer than 5 bytes"),
    (b"\x7f", "unknown opcode"),
])
def test_the_verifier_refuses(code, message):
    with pytest.raises(VerifyError, match=message):
        check(code)


@pytest.mark.parametrize("code, profile", [
    (_code((X.CONST, 0), (X.CONST, 0), (X.CALL, 0, 2), (X.RETURN,)), "aevatar"),     # a CEL key
    (_code((X.LAMBDA, 1, 0, 0), (X.LAMBDA, 2, 0, 0), (X.CALL, 5, 2), (X.RETURN,)), "cel"),   # an aevatar key
    (_code((X.CONST, 0), (X.LIST, 1), (X.RETURN,)), "aevatar"),     # a list: aevatar values are strings
    (_code((X.LOAD, 0, 0), (X.RETURN,)), "aevatar"),                # CEL access
    (_code((X.LOAD, 3, 0), (X.RETURN,)), "cel"),                    # WorkflowSkill access
    (_code((X.CONST, 0), (X.TEMPLATE, 1, 1), (X.RETURN,)), "cel"),  # aevatar's stringify
])
def test_a_program_uses_only_its_dialects_builtins_and_rules(code, profile):
    with pytest.raises(VerifyError, match="of this program"):
        check(code, profile=profile)


def test_each_dialect_registers_its_own_builtins():
    """The machine's table is the union of the dialects' tables, each the
    table of its profile; a dialect cannot register another's key."""
    tables = {m.PROFILE: m.BUILTINS for m in (expr_cel, expr_aevatar, expr_wfs)}
    assert {p: X.PROFILES[p]["builtins"] for p in tables} == tables
    assert X.BUILTINS == {**tables["cel"], **tables["aevatar"], **tables["wfs"]}
    with pytest.raises(ValueError, match="not of wfs"):
        X.register("wfs", {"cel.size": tables["cel"]["cel.size"]}, {})
    assert "cel.size" not in X.PROFILES["wfs"]["builtins"]


def test_lambda_bodies_are_later_blocks_named_once():
    call = _code((X.LAMBDA, 1, 0, 0), (X.LAMBDA, 1, 0, 0), (X.CALL, 5, 2), (X.RETURN,))
    with pytest.raises(VerifyError, match="body of two LAMBDAs"):
        X.verify([call, ONE], 2, ["n"], KEYS, 0, "aevatar")
    X.verify([_code((X.LAMBDA, 1, 0, 0), (X.LAMBDA, 2, 0, 0), (X.CALL, 5, 2), (X.RETURN,)), ONE, ONE],
             2, ["n"], KEYS, 0, "aevatar")


def test_every_block_of_a_loaded_program_is_verified():
    data = assemble_expressions([parse_cel("[1, 2].all(x, x > 0)")])
    assert device.load(data).evaluate(0, {}) is True
    model, name, sections = open_program(data)
    sections["code"][1] = _code((X.RETURN,))
    bad = pack_program(model, name, sections)
    with pytest.raises(VerifyError, match="block 1 at 0: RETURN with 0 values"):
        device.load(bad)


# ------------------------------------------------------------------ fuel

def test_fuel_is_one_unit_per_instruction_executed():
    expr = E.Call("aevatar.concat", (lit("a"), E.Ref("vars", (E.Field("n"),))))   # CONST, LOAD, CALL, RETURN
    assert aevatar_on_vm(expr, {"n": "b"}, fuel=4) == "ab"
    with pytest.raises(X.OutOfFuel, match="more than 3 instructions"):
        aevatar_on_vm(expr, {"n": "b"}, fuel=3)
    # a lambda's instructions count too, and only when it runs: and(false, <5 instructions>)
    lazy = E.Call("aevatar.and", (lit("false"), E.Call("aevatar.concat", (lit("a"), lit("b"), lit("c")))))
    # LAMBDA, LAMBDA, CALL, RETURN + the first lambda's CONST, RETURN
    assert aevatar_on_vm(lazy, {}, fuel=6) == "false"
    with pytest.raises(X.OutOfFuel):
        aevatar_on_vm(lazy, {}, fuel=5)


def test_a_try_never_catches_running_out_of_fuel():
    program = device.load(assemble_expressions([parse_cel("[1, 2, 3].map(x, x * 2).size() > 0 || true")]))
    assert program.evaluate(0, {}) is True
    program.machine.fuel = 12
    with pytest.raises(X.OutOfFuel):
        program.evaluate(0, {})


def test_run_fuel_is_shared_and_ends_with_the_run():
    program = device.load(assemble_expressions([parse_cel("1 + 2")]))   # CONST, CONST, CALL, RETURN
    machine = program.machine
    machine.start_run(Fuel(instructions=8))
    assert program.evaluate(0, {}) == 3 and program.evaluate(0, {}) == 3
    with pytest.raises(X.OutOfFuel, match="more than 8 instructions"):
        program.evaluate(0, {})
    machine.end_run()
    assert machine.per_run is False and program.evaluate(0, {}) == 3


# ------------------------------------------------------------------ tables

def test_builtin_arities_are_the_runtime_functions_and_the_ir_keys():
    for key, (fn, low, high, first, _params) in X.BUILTINS.items():
        sig = inspect.signature(fn)
        for n in (low, high if high >= 0 else low + 3):
            sig.bind(*range(n))
        varargs = any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())
        if low > 0 and not varargs:   # aevatar's sub and div take *thunks and need one: the table says so
            with pytest.raises(TypeError):
                sig.bind(*range(low - 1))
        if high >= 0:
            with pytest.raises(TypeError):
                sig.bind(*range(high + 1))
        if key == "cel.has":
            continue   # the IR's has(a.b) is one selection; the builtin gets a and "b"
        spec = FUNCTIONS.get(key) or OPERATORS[key]
        if spec.arity >= 0:
            assert low == high == spec.arity, key
        if isinstance(spec, FunctionSpec):
            assert (first >= 0) == spec.lazy, key


def test_every_expression_key_is_a_builtin_or_an_instruction():
    instructions = {"cel.select", "cel.index", "cel.ternary", "aevatar.if", "tmpl.default"}
    for key in list(FUNCTIONS) + list(OPERATORS):
        if key.startswith("aevatar.transform.") or key == "aevatar.retrieve_facts":
            continue   # step operations, not expression functions
        if key.startswith(("cel.", "aevatar.", "tmpl.", "wfs.")):
            assert key in X.BUILTINS or key in instructions, key


def test_the_docs_table_is_the_machine_table():
    doc = (ROOT / "docs" / "bytecode.md").read_text(encoding="utf-8")
    assert doc_table() in doc
    for code, (name, _kinds) in X.OPCODES.items():
        assert f"| `0x{code:02X}` | `{name}` |" in doc


def test_the_assembler_refuses_what_the_machine_has_no_rule_for():
    with pytest.raises(ExprAssembleError, match="unsupported function"):
        assemble_expressions_raw(E.Call("cel.nothing", ()))
    with pytest.raises(ExprAssembleError, match="stringify"):
        assemble_expressions_raw(E.Template((lit("a"),), "yaml"))
    with pytest.raises(ExprAssembleError, match="aevatar values are strings"):
        assemble_expression(Tables(tagged=False, keys_in_names=True), lit(1), "flat_keys", flat_key)


def assemble_expressions_raw(expr: E.Expr):
    return assemble_expression(Tables(), expr)


# ------------------------------------------------------------------ hostile code

CORRUPTIBLE = [parse_cel(t) for t in (
    "[1, 2, 3].map(x, x * 2).exists(y, y > 4) && m.a == 1",
    "has(m.b) ? {'k': [s, string(x)]}['k'][1] : 'none'",
    "xs.transformList(i, v, i > 0, v + i).size() > 2 || x / 0 > 1",
)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corrupted_blocks_are_refused_or_evaluate_cleanly(data):
    """A block with bytes changed either fails verification or evaluates
    to a value or a CEL error (or runs out of fuel): nothing else escapes."""
    table = Tables()
    for expr in CORRUPTIBLE:
        assemble_expression(table, expr)
    blocks = list(table.blocks)
    for _ in range(data.draw(st.integers(1, 3))):
        b = data.draw(st.integers(0, len(blocks) - 1))
        code = bytearray(blocks[b])
        at = data.draw(st.integers(0, len(code) - 1))
        code[at] = data.draw(st.integers(0, 255))
        blocks[b] = bytes(code)
    consts = [expr_cel.decode_const(c) for c in table.consts]
    try:
        decoded = X.verify(blocks, len(consts), table.names, table.keys, 4, "cel")
    except VerifyError:
        return
    machine = X.Machine(consts, table.names, table.keys, decoded, 10_000)
    env = {"x": 3, "s": "a", "m": {"a": 1, "b": 2}, "xs": [1, 2, 3]}
    for root in range(len(blocks)):
        try:
            machine.evaluate(root, 4, env, (1, 2, 3, 4))
        except (C.CelError, X.OutOfFuel):
            pass


def test_has_with_a_name_that_is_not_text_is_a_cel_error():
    """Corrupted bytes may hand `has` any value as the field name (found by
    the property above): CEL's error, never Python's TypeError."""
    with pytest.raises(C.CelError, match="no such overload: has"):
        C.has({"a": 1, "b": 2}, {"a": 1, "b": 2})
    assert C.has({"a": 1}, "a") is True and C.has({"a": 1}, "b") is False


# ------------------------------------------------------------------ the straight-line verifier

def _straight_cases():
    """Blocks of every dialect, as the assemblers write them."""
    tables = Tables()
    for text in ("a + b * 2 > 3", "size(xs) == 2 && xs[0] == 'x'", "xs.map(x, x + 1)", "{'k': v}.k", "[1, 2][1]",
                 "a.b.c", "'s' + string(1)", "m['k']"):
        assemble_expression(tables, parse_cel(text), "cel")
    return tables


_OPS = sorted(X.OPCODES)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_straight_line_pass_accepts_only_what_the_general_verifier_accepts(data):
    """Whatever the bytes, the one-pass check of a straight-line block either
    gives up (None) or returns exactly what verify_block returns."""
    profile = data.draw(st.sampled_from(sorted(X.PROFILES)))
    rules = X.PROFILES[profile]
    keys = sorted(rules["builtins"])[:6] + ["cel.size", "wfs.eq", "nope"]
    sizes, nslots = (3, 4, len(keys), 5), data.draw(st.integers(0, 3))
    if data.draw(st.booleans()):
        tables = _straight_cases()
        code = bytearray(data.draw(st.sampled_from(tables.blocks)))
        for _ in range(data.draw(st.integers(0, 3))):
            if code:
                code[data.draw(st.integers(0, len(code) - 1))] = data.draw(st.integers(0, 255))
    else:
        code = bytearray()
        for _ in range(data.draw(st.integers(0, 6))):
            code.append(data.draw(st.sampled_from(_OPS)))
            code += bytes(data.draw(st.lists(st.integers(0, 5), max_size=3)))
        if data.draw(st.booleans()):
            code.append(X.RETURN)
    code = bytes(code)
    fast = X._straight_block(code, X._straight_checks(rules, sizes, nslots), keys, rules["builtins"])
    if fast is None:
        return
    assert X.verify_block(0, code, sizes, keys, nslots, rules) == fast


def test_the_straight_line_pass_takes_the_common_blocks():
    rules = X.PROFILES["wfs"]
    keys = ["wfs.eq"]
    checks = X._straight_checks(rules, (2, 3, 1, 1), 0)
    # LOAD wfs 0; FIELD wfs 1; CONST 0; CALL wfs.eq 2; RETURN
    block = bytes([X.LOAD, 0 << 2 | 3, X.FIELD, 1 << 2 | 3, X.CONST, 0, X.CALL, 0, 2, X.RETURN])
    assert X._straight_block(block, checks, keys, rules["builtins"]) == X.verify_block(
        0, block, (2, 3, 1, 1), keys, 0, rules)
    for bad in (block[:-1], bytes([X.LOAD, 0, X.RETURN]),  # cel access in wfs
                bytes([X.CONST, 2, X.RETURN]), bytes([X.CALL, 0, 1, X.RETURN]), bytes([X.RETURN])):
        assert X._straight_block(bad, checks, keys, rules["builtins"]) is None
        with pytest.raises(VerifyError):
            X.verify_block(0, bad, (2, 3, 1, 1), keys, 0, rules)
    # code after the RETURN is left to the general verifier (unreachable, but valid)
    tail = block + bytes([X.RETURN])
    assert X._straight_block(tail, checks, keys, rules["builtins"]) is None
    assert X.verify_block(0, tail, (2, 3, 1, 1), keys, 0, rules)


def test_the_straight_line_pass_equals_the_general_verifier_on_cel_blocks():
    tables = _straight_cases()
    rules = X.PROFILES["cel"]
    sizes = (len(tables.consts), len(tables.names), len(tables.keys), len(tables.blocks))
    checks = X._straight_checks(rules, sizes, 4)
    taken = 0
    for i, block in enumerate(tables.blocks):
        fast = X._straight_block(block, checks, tables.keys, rules["builtins"])
        if fast is not None:
            taken += 1
            assert fast == X.verify_block(i, block, sizes, tables.keys, 4, rules)
    assert 0 < taken < len(tables.blocks)   # jumps, TRY and lambdas take the general path


# ------------------------------------------------------------------ operand and constant encodings

def test_load_and_field_write_access_and_name_as_one_varint():
    """name << 2 | access: one byte for a name below 32, two above; both decoders split it alike."""
    tables = Tables()
    names = [f"n{i}" for i in range(40)]
    for n in names:
        tables.name(n)
    expr = E.Ref("n39", (E.Field("n3"),))
    root, _params, _slots = assemble_expression(tables, expr)
    block = tables.blocks[root]
    load, field = X.ACCESS.index("cel"), X.ACCESS.index("cel")
    assert block[:5] == bytes([X.LOAD, (39 << 2 | load) & 0x7F | 0x80, (39 << 2 | load) >> 7,
                               X.FIELD, 3 << 2 | field])
    ins = X.decode(block)
    assert [(op, operands) for _pc, op, operands in ins[:2]] == [(X.LOAD, [load, 39]), (X.FIELD, [field, 3])]
    rules = X.PROFILES["cel"]
    sizes = (len(tables.consts), len(tables.names), len(tables.keys), len(tables.blocks))
    assert X._straight_block(block, X._straight_checks(rules, sizes, 0), tables.keys, rules["builtins"]) == \
        X.verify_block(0, block, sizes, tables.keys, 0, rules)
    assert len(X.ACCESS) <= 1 << X.ACCESS_BITS


@pytest.mark.parametrize("value, kind, pooled", [
    ("abc", "auto", "abc"),                 # plain values that are no array: as themselves
    ({"k": [1]}, "auto", {"k": [1]}),
    (None, "auto", None),
    (2, "float", 2.0),
    ("7879", "bytes", b"xy"),               # bytes: as bin
    (7, "uint", ["u", 7]),                  # a uint and an array keep their tag
    ([1, 2], "auto", ["v", [1, 2]]),
])
def test_dataflow_constants_are_tagged_only_when_they_must_be(value, kind, pooled):
    tables = Tables()
    assert tables.const(value, kind) == 0 and tables.consts == [pooled]
    assert tables.const(value, kind) == 0   # one entry per constant
    loaded = expr_cel.decode_const(tables.consts[0])
    assert loaded == (C.UInt(7) if kind == "uint" else pooled[1] if type(pooled) is list else pooled)


@pytest.mark.parametrize("text", ['"abc"', "{'k': [1]}", "b'xy'", "7u", "2.5", "null"])
def test_dataflow_constants_round_trip_through_a_program(text):
    program = device.load(assemble_expressions([parse_cel(text)]))
    assert program.evaluate(0, {}) == evaluate_cel(parse_cel(text), {})


def test_dataflow_constants_of_an_unknown_tag_are_refused():
    assert expr_cel.decode_const({"a": 1}) == {"a": 1} and expr_cel.decode_const(None) is None
    assert expr_cel.decode_const(["u", 3]) == C.UInt(3)
    for bad in (["x", 1], ["u", -1], ["b", "text"], [1, 2, 3]):
        with pytest.raises(VerifyError):
            expr_cel.decode_const(bad)

