"""Verification: malformed bytecode is rejected with a VerifyError (never
another exception, never a hang); fuel bounds every run; same input, same
bytes and records; the VM's opcode table equals format.py's."""

from __future__ import annotations

import json
from pathlib import Path

import msgpack
import pytest
from flowc.backends.vm import container as C
from flowc.backends.vm import expr_vm as X
from flowc.backends.vm import format as F
from flowc.backends.vm import sequential as V
from flowc.backends.vm.assemble import assemble_body, pack_file
from flowc.host import ScriptedHost
from flowc.pipeline import driver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.program_bytes import open_program, pack_program, pack_sequential, sequential_body
from tests.test_vm_equivalence import _workflow, corpus_programs


def _program(name="each-loop"):
    return next(p for p in corpus_programs() if p[0] == name)


_body = sequential_body
_repack = pack_sequential


def _rejected(data) -> str:
    with pytest.raises(V.VerifyError) as info:
        V.load(data)
    assert str(info.value)
    return str(info.value)


# ------------------------------------------------------------------ tables

def test_vm_opcode_table_equals_format():
    kinds = {"const": "c", "name": "n", "target": "t", "step": "s", "retry": "r", "count": "k", "flag": "f",
             "block": "x"}
    flows = {"next": 0, "jump": 1, "branch": 2, "return": 3, "stop": 4}
    pops = {"n": -1, "2n": -2}
    assert set(V.OPS) == set(F.BY_CODE)
    for code, spec in F.BY_CODE.items():
        name, k, pop, push, flow, branch_push = V.OPS[code]
        assert name == spec.name
        assert getattr(V, name) == code
        assert k == "".join(kinds[o] for o in spec.operands)
        assert pop == pops.get(spec.pop, spec.pop)
        assert push == spec.push
        assert flow == flows[spec.flow]
        assert branch_push == (spec.branch[1] if spec.branch else -1)
    assert C.MAGIC == F.MAGIC and C.FORMAT_VERSION == F.FORMAT_VERSION
    assert C.SUPPORTED_VERSIONS == F.SUPPORTED_VERSIONS
    assert V.MAX_STACK == F.LIMITS["stack"] and C.MAX_NESTING == F.LIMITS["nesting"]


def test_docs_opcode_table_equals_format():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "bytecode.md").read_text(encoding="utf-8")
    assert F.opcode_table() in doc
    assert f"# flowc bytecode, format version {F.FORMAT_VERSION}\n" in doc
    assert V.TYPES == F.TYPES


# ------------------------------------------------------------------ rejections

def test_rejects_wrong_magic_version_checksum():
    data = _program()[1]
    assert "magic" in _rejected(b"\x00" + data[1:])
    assert "magic" in _rejected(b"")
    assert "version" in _rejected(_repack(_body(data), version=99))
    assert "version" in _rejected(_repack(_body(data), version=0))
    flipped = bytearray(data)
    flipped[-3] ^= 0x01
    assert "checksum" in _rejected(bytes(flipped))
    _rejected("not bytes")


def test_rejects_every_truncation():
    data = _program()[1]
    for n in range(len(data)):
        _rejected(data[:n])


def test_rejects_every_single_bit_flip():
    data = _program("filter-exit/found-else")[1]
    for i in range(len(data)):
        for bit in range(8):
            bad = bytearray(data)
            bad[i] ^= 1 << bit
            try:
                V.load(bytes(bad))
            except V.VerifyError:
                continue
            raise AssertionError(f"flip of bit {bit} of byte {i} was accepted")


def test_rejects_huge_lengths_quickly():
    # An array claiming 2**32-1 elements with a few bytes behind it.
    lie = b"\xdd\xff\xff\xff\xff" + b"\x00" * 8
    body = _body(_program()[1])
    body[1] = msgpack.ExtType(1, b"")   # replaced by the lie below
    good = _repack(body)
    marker = msgpack.packb(msgpack.ExtType(1, b""))
    at = good.index(marker, 10 + good[9])   # after the header (its length a one-byte varint)
    assert good.count(marker) == 1
    for data in (lie, good[:at] + lie + good[at + len(marker):]):
        _rejected(data)
    # the built-in decoder too (MicroPython has no msgpack package)
    with pytest.raises(V.VerifyError):
        r = C._Reader(lie)
        r.value(0)
    with pytest.raises(V.VerifyError):
        C._Reader(b"\x91" * 1000 + b"\xc0").value(0)


CODE_MUTATIONS = [
    ("unknown opcode", lambda code: [code[0][:3] + b"\xff" + code[0][4:], *code[1:]]),
    ("truncated", lambda code: [code[0][:-1], *code[1:]]),
    ("trailing garbage", lambda code: [code[0] + b"\x01", *code[1:]]),
    ("a shape operand too many", lambda code: [code[0], code[1] + [0], *code[2:]]),
    ("a shape operand too few", lambda code: [code[0], code[1][:-1], *code[2:]]),
    ("a name operand too many", lambda code: [*code[:2], code[2] + [0], code[3]]),
    ("a negative operand", lambda code: [code[0], [-1, *code[1][1:]], *code[2:]]),
    ("a bool operand", lambda code: [code[0], [True, *code[1][1:]], *code[2:]]),
    ("a float operand", lambda code: [code[0], [float(code[1][0]), *code[1][1:]], *code[2:]]),
    ("not four streams", lambda code: code[:3]),
    ("ops not bin", lambda code: [list(code[0]), *code[1:]]),
]


@pytest.mark.parametrize("what,mutate", CODE_MUTATIONS, ids=[m[0] for m in CODE_MUTATIONS])
def test_rejects_code_mutations_with_a_valid_checksum(what, mutate):
    body = _body(_program()[1])
    body[7] = mutate(body[7])
    _rejected(_repack(body))


# Hand-written values: each a block of the expression machine (section exprs)
# by its form, (opcode bytes, shape operands): {} or a constant (its index
# in the block's constant stream); "raw" forms are given as they are, with
# the block's name and constant operands.
_FORMS = {"obj": (bytes([X.MAP + V.ACCESS_STEP * X.MAPS.index("wfs"), X.RETURN]), [0]),
          "const": (bytes([X.CONST, X.RETURN]), [])}


def _assemble_custom(code_ops, consts=(), names=("x",), steps=(), regions=(), finish=0, retries=(), arms=()):
    """A program of the instructions ``code_ops`` (offsets count
    instructions; targets from their function's start, steps from the
    function's own step); ``arms`` rows ``(step, then steps, else steps)``.
    A block operand is ``"obj"``, ``("const", c)`` or ``("raw", ops, shape[,
    names[, consts]])``: its form goes to section exprs, the code's operand names it."""
    forms: list = []
    name_refs: list[int] = []
    const_refs: list[int] = []
    code = []
    for op, operands in code_ops:
        out = []
        for kind, v in zip(F.BY_CODE[op].operands, operands, strict=True):
            if kind == "block":
                form = _FORMS["obj"] if v == "obj" else _FORMS["const"] if v[0] == "const" else (v[1], v[2])
                if v != "obj" and v[0] == "const":
                    const_refs.append(v[1])
                elif v != "obj":
                    name_refs += v[3] if len(v) > 3 else []
                    const_refs += v[4] if len(v) > 4 else []
                if form not in forms:
                    forms.append(form)
                v = forms.index(form)
            out.append(v)
        code.append((op, out))
    body = ["t", list(consts), list(names), [list(s) for s in steps], [list(r) for r in retries],
            [list(r) for r in regions], finish, F.split_code(code), None, [list(a) for a in arms]]
    if forms:
        body.append([[], b"".join(f[0] for f in forms), [v for f in forms for v in f[1]], name_refs, const_refs])
    return _repack(body)


def _op(name, *operands):
    """One instruction, as a list (instructions concatenate with +)."""
    return [(F.op(name), list(operands))]


def _obj():
    """EXPR of a block that gives {}."""
    return _op("EXPR", "obj")


def _val(c):
    """EXPR of a block that gives constant c."""
    return _op("EXPR", ("const", c))


def test_minimal_program_runs():
    data = _assemble_custom(_obj() + _op("FINISH"))
    record = V.load(data).run({}, ScriptedHost({}))
    assert record == {"status": "success", "outputs": {}, "error": None, "steps": [], "calls": [],
                      "sleeps_ms": []}


@pytest.mark.parametrize("code,consts,message", [
    (_op("FINISH"), (), "underflow"),
    (_val(3) + _op("FINISH"), (1,), "constant index 3 out of range in an expression block"),
    (_op("SET_RESULT") + _obj() + _op("FINISH"), (), "underflow"),
    (_obj() + _op("WRAP", 9) + _op("FINISH"), (), "name index"),
    (_op("JUMP", 2) + _obj() + _op("FINISH"), (), "unreachable"),
    (_op("JUMP", 99) + _obj() + _op("FINISH"), (), "outside"),
    (_obj() + _obj() + _op("FINISH"), (), "FINISH needs"),
    (_obj() + _op("FINISH") + _obj(), (), "unreachable"),
    (_obj() + _op("FINISH") + _obj() + _op("FINISH"), (), "unreachable"),
    (_val(0) + _op("JUMP_IF_NOT", 3) + _val(0) + _obj() + _op("FINISH"), (True,),
     "depth"),
    (_op("EXPR", ("raw", b"\x02\x12", [0])) + _op("FINISH"), (), "LOAD names no rule 0"),
    (_op("EXPR", ("raw", b"\x62\x12", [])) + _op("FINISH"), (), "the shape stream ends inside"),
    (_op("EXPR", ("raw", bytes([0x2A, X.RETURN]), [])) + _op("FINISH"), (), "unknown opcode 0x2a"),
    (_op("EXPR", ("raw", bytes([X.MAP, X.RETURN]), [0])) + _op("FINISH"), (), "MAP names no rule 0"),
    (_op("EXPR", ("raw", bytes([X.LIST, X.RETURN]), [1])) + _op("FINISH"), (), "underflow"),
    (_op("STEP", 0) + _obj() + _op("FINISH"), (), "step index"),
    (_obj() + _op("RET"), (), "RET"),
    (_op("OUTPUTS", 0) + _op("FINISH"), (5,), "OUTPUTS needs a constant list of strings"),
    (_op("OUTPUTS", 0) + _op("FINISH"), ([1],), "OUTPUTS needs a constant list of strings"),
    (_op("EXPR", ("raw", bytes([X.TEMPLATE + V.ACCESS_STEP * 2, X.RETURN]), [1])) + _op("FINISH"), (),
     "underflow"),
    (_obj() + _op("FAIL", 2) + _op("FINISH"), (), "operand 2 out of range"),
    (_obj() + _op("CALL", 0, 0, 1) + _op("FINISH"), (), "retry index 1 out of range"),
    (_obj() + _op("ITER") + _op("NEXT", 4, 131073) + _op("JUMP", 2) + _op("COLLECT") + _op("FINISH"), (),
     "count 131073 too large"),
    (_op("DEFAULT", 0, ("const", 1)) + _obj() + _op("FINISH"), (0,), "constant index 1 out of range"),
    (_obj() + _op("JUMP", 0), (), "depth"),
    (_op("CHECK_INPUTS", 1, 0) + _obj() + _op("FINISH"), (5,), "declared types"),
    (_op("CHECK_INPUTS", 1, 0) + _obj() + _op("FINISH"), ([0, 6],), "declared types"),
    (_op("CHECK_INPUTS", 1, 0) + _obj() + _op("FINISH"), ([0, 1, 0],), "declared types"),
    (_op("CHECK_INPUTS", 1, 0) + _obj() + _op("FINISH"), ([1, 1],), "declared types"),
    (_op("CHECK_INPUTS", 1, 0) + _obj() + _op("FINISH"), (["x", 1],), "declared types"),
    (_op("CHECK_INPUTS", 1, 0) + _obj() + _op("FINISH"), ([[0, 1]],), "declared types"),
    (_op("CHECK_INPUTS", 2, 0) + _obj() + _op("FINISH"), ([],), "depth"),
    (_obj() + _op("CHECK_OUTPUT", 0) + _op("FINISH"), ({"n": 1},), "declared types"),
    (_op("CHECK_OUTPUT", 0) + _op("FINISH"), ([],), "underflow"),
])
def test_rejects_bad_code(code, consts, message):
    assert message in _rejected(_assemble_custom(code, consts=consts))


def test_rejects_bad_regions():
    code = _val(0) + _op("FINISH") + _op("OUTPUTS_FAILED") + _op("FINISH")
    ok = _assemble_custom(code, consts=(1,), regions=[(0, 1, 2, 0)])
    V.load(ok)
    V.load(_assemble_custom(code, consts=(1,), regions=[(0, 2, 2, 0), (0, 1, 2, 0)]))  # nested, the outer first
    for regions, message in [
        ([(0, 1, 0, 0)], "start < end <= handler"),
        ([(0, 1, 2, 5)], "depth"),
        ([(0, 1, 2, 0), (0, 2, 2, 0)], "nested"),
        ([(0, 1, 3, 0)], "unreachable"),
        ([(0, 1, 4, 0)], "leaves its function"),
        ([(0, 1, 2, 0), (4, 5, 5, 0)], "past the end of the code"),
    ]:
        assert message in _rejected(_assemble_custom(code, consts=(1,), regions=regions))


def test_declared_types_checks():
    ok = _op("CHECK_INPUTS", 1, 0) + _obj() + _op("CHECK_OUTPUT", 0) + _op("FINISH")
    prog = V.load(_assemble_custom(ok, consts=([0, 1, 1, 2],), names=("n", "f")))
    assert prog.run({"n": 2.0, "f": 1}, ScriptedHost({}))["status"] == "success"
    record = prog.run({"n": 2.5}, ScriptedHost({}))
    assert record["error"] == {"message": 'workflow input "n": expected int, got float', "step": None}
    # CHECK_INPUTS belongs to the main function
    code = _obj() + _op("FINISH") + _op("CHECK_INPUTS", 1, 0) + _op("RET")
    assert "main function" in _rejected(_assemble_custom(code, consts=([],), names=("a",),
                                                         steps=[(0, 0, 2, 0)]))
    # and so does OUTPUTS (it reads the run's final value)
    code = _obj() + _op("FINISH") + _op("OUTPUTS", 0) + _op("DONE") + _op("RET")
    assert "OUTPUTS outside the main function" in _rejected(_assemble_custom(code, consts=(["a"],), names=("a",),
                                                                             steps=[(0, 0, 2, 0)]))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_fuzz_structural_mutations_never_crash(data):
    """Mutated sections with valid checksums: VerifyError or a clean run."""
    _name, program, inputs, script = data.draw(st.sampled_from(corpus_programs()))
    _model, name, sections = open_program(program)
    key = data.draw(st.sampled_from(sorted(sections)))
    choice = data.draw(st.integers(0, 3))
    if key in ("code", "exprs") and choice < 2:
        streams = sections[key]
        at = 0 if key == "code" else 1     # the opcodes (bin), then the operand streams
        ops = bytearray(streams[at])
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(ops) - 1))
            ops[i] = data.draw(st.integers(0, 255))
        streams[at] = bytes(ops)
        for _ in range(data.draw(st.integers(0, 3))):
            stream = streams[data.draw(st.integers(at + 1, len(streams) - 1))]
            if stream:
                stream[data.draw(st.integers(0, len(stream) - 1))] = data.draw(st.integers(0, 300))
    elif choice == 0:
        sections[key] = data.draw(st.one_of(st.none(), st.integers(-5, 2**40), st.text(max_size=3),
                                            st.binary(max_size=5), st.lists(st.integers(0, 3), max_size=3)))
    elif choice == 1 and isinstance(sections[key], list) and sections[key]:
        i = data.draw(st.integers(0, len(sections[key]) - 1))
        sections[key][i] = data.draw(st.one_of(st.none(), st.integers(-3, 300),
                                               st.lists(st.integers(-1, 300), max_size=5)))
    elif choice == 2 and isinstance(sections[key], list):
        sections[key] = sections[key][:-1]
    else:
        del sections[key]
    try:
        prog = V.load(pack_program("sequential", name, sections))
    except V.VerifyError:
        return
    record = prog.run(inputs, ScriptedHost(script), 100000, 10000)
    json.dumps(record)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_fuzz_arms_table_mutations_never_crash(data):
    """Corpus programs with conditionals, their arms table's entries
    rewritten, cut or lengthened: VerifyError or a clean run."""
    armed = [p for p in corpus_programs() if open_program(p[1])[2]["plan"][4]]
    _name, program, inputs, script = data.draw(st.sampled_from(armed))
    _model, name, sections = open_program(program)
    flat = sections["plan"][4]
    for _ in range(data.draw(st.integers(1, 3))):
        what = data.draw(st.integers(0, 3))
        if what == 0 and flat:
            flat[data.draw(st.integers(0, len(flat) - 1))] = data.draw(st.integers(-2, 12))
        elif what == 1 and flat:
            del flat[data.draw(st.integers(0, len(flat) - 1)):]
        elif what == 2:
            flat.insert(data.draw(st.integers(0, len(flat))), data.draw(st.integers(-1, 12)))
        else:
            flat.extend(data.draw(st.lists(st.integers(0, 6), max_size=5)))
    try:
        prog = V.load(pack_program("sequential", name, sections))
    except V.VerifyError:
        return
    record = prog.run(inputs, ScriptedHost(script), 100000, 10000)
    json.dumps(record)


# ------------------------------------------------------------------ fuel

def test_fuel_instructions_fail_the_run_cleanly():
    _name, data, inputs, script = _program()
    prog = V.load(data)
    full = prog.run(inputs, ScriptedHost(script))
    assert full["status"] == "success"
    for limit in (0, 1, 10, 50):
        record = prog.run(inputs, ScriptedHost(script), max_instructions=limit)
        assert record["status"] == "failed"
        assert record["error"]["message"] == f"fuel exhausted: more than {limit} instructions"
        assert [s["id"] for s in record["steps"]] == [s["id"] for s in full["steps"]]


def test_fuel_iterations():
    _name, data, inputs, script = _program()
    record = V.load(data).run(inputs, ScriptedHost(script), max_iterations=2)
    assert record["status"] == "failed"
    assert record["error"] == {"message": "fuel exhausted: more than 2 iterations", "step": "summarize"}
    assert V.load(data).run(inputs, ScriptedHost(script), max_iterations=3)["status"] == "success"


# ------------------------------------------------------------------ determinism

def test_same_ir_same_bytes_and_same_record():
    for case in ("each-loop", "filter-exit/found-else", "retry-backoff/exhausted"):
        _name, data, inputs, script = _program(case)
        records = [V.load(data).run(inputs, ScriptedHost(script)) for _ in range(3)]
        assert all(json.dumps(r) == json.dumps(records[0]) for r in records)
    for file in ("fixtures/graduation-email-triage.md", "fixtures/filter-exit.md"):
        wf = _workflow(file)
        assert pack_file(assemble_body(wf)) == pack_file(assemble_body(wf))
        assert pack_file(assemble_body(wf), strip=True) != pack_file(assemble_body(wf))


def test_stripped_and_unstripped_run_alike():
    wf = _workflow("fixtures/filter-exit.md")
    a = V.load(pack_file(assemble_body(wf))).run({}, ScriptedHost({"get_items": {"output": {"items": []}}}))
    b = V.load(pack_file(assemble_body(wf), strip=True)).run(
        {}, ScriptedHost({"get_items": {"output": {"items": []}}}))
    assert a == b


# ------------------------------------------------------------------ operands

def test_long_operands_decode_as_the_python_backend_runs():
    """A program big enough for two- and three-byte operands (names past 255,
    offsets past 65535) runs as the generated module does."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_vm import big_workflow
    from flowc.backends.python import compile_workflow as python_compile
    from flowc.backends.python import load_module

    wf = driver.compile_text(big_workflow(900), "big.yaml", "workflowskill").workflow
    data = pack_file(assemble_body(wf), strip=True)
    program = V.load(data)
    assert program.instructions > 10000 and len(program.names) > 256
    rows = [{"id": i, "score": 20 + i, "region": "eu", "name": f"n{i}", "address": {"city": "c", "zip": "1"}}
            for i in range(3)]
    script = {"*": {"output": {"rows": rows, "total": 3}}}
    want = load_module(python_compile(wf)).run({}, ScriptedHost(script))
    assert program.run({}, ScriptedHost(script)) == want


def test_operands_may_take_any_msgpack_int_width():
    # OUTPUTS 1 with its operand written as a uint 8, 16, 32 and 64 (not the shortest form: still valid)
    good = _assemble_custom(_op("OUTPUTS", 1) + _op("FINISH"), consts=(None, ["k"]))
    short = msgpack.packb([b"&%", [1], [], []], use_bin_type=True)
    assert short in good
    for width in (b"\xcc", b"\xcd\x00", b"\xce\x00\x00\x00", b"\xcf\x00\x00\x00\x00\x00\x00\x00"):
        wide = short.replace(b"\x91\x01", b"\x91" + width + b"\x01")
        _model, name, sections = open_program(good)
        data = pack_program("sequential", name, {**sections, "code": msgpack.unpackb(wide)})
        record = V.load(data).run({}, ScriptedHost({}))
        assert record["outputs"] == {"k": None}


def test_functions_of_one_form_are_verified_once_but_each_where_it_lies(monkeypatch):
    """Two step functions of the same form (opcodes, shape operands,
    regions) share their check; what depends on where a function lies is
    checked for each: its step operands, the regions it holds."""
    main = _obj() + _op("FINISH")
    step = _op("STEP", 0) + _op("RET")
    steps = [(0, 0, 2, 0), (1, 0, 4, 0)]
    checked = []
    check = V._check_function
    monkeypatch.setattr(V, "_check_function", lambda *args: checked.append(args[3]) or check(*args))
    V.load(_assemble_custom(main + step + step, names=("a", "b"), steps=steps))
    assert checked == [0, 1]     # main, then the form of both steps
    monkeypatch.undo()
    # STEP 1 in step 0 names step 1, in step 1 step 2: past the table
    run_next = _op("STEP", 1) + _op("RET")
    assert "step index 2 out of range" in _rejected(
        _assemble_custom(main + run_next + run_next, names=("a", "b"), steps=steps))
    # the second function's region leaves it (the first's is inside)
    guarded = _op("STEP", 0) + _op("RET") + _op("FAIL", 0) + _op("RET")
    steps = [(0, 0, 2, 0), (1, 0, 6, 0)]
    V.load(_assemble_custom(main + guarded + guarded, names=("a", "b"), steps=steps,
                            regions=[(2, 3, 4, 0), (6, 7, 8, 0)]))
    assert "leaves its function" in _rejected(_assemble_custom(
        main + guarded + guarded, names=("a", "b"), steps=steps, regions=[(2, 3, 4, 0), (6, 7, 10, 0)]))


# ------------------------------------------------------------------ the plan's flat tables

def test_plan_tables_are_flat_and_relative():
    from flowc.backends.vm.assemble import flat_plan, plan_rows

    steps, regions = [[0, 1, 5, 0], [1, 0, 9, 0]], [[2, 4, 7, 0], [3, 4, 4, 1]]
    arms = [[0, [1, 3], []], [2, [3], [4]]]   # targets counted from their conditional
    plan = flat_plan(steps, 1, [[2, 100, 2.0]], regions, arms)
    assert plan == [[0, 1, 5, 0, 1, 0, 4, 0], 1, [2, 100, 2.0], [2, 2, 3, 0, 1, 1, 0, 1],
                    [0, 2, 0, 1, 3, 2, 1, 1, 1, 2]]
    assert plan_rows(plan) == (steps, 1, [[2, 100, 2.0]], regions, arms)


@pytest.mark.parametrize("plan,message", [
    ([[], 0, [], []], "section plan must be"),
    ([[0, 0, 1], 0, [], [], []], "rows of 4"),
    ([[0, 0, "x", 0], 0, [], [], []], "only integers"),
    ([[0, 0, 1.5, 0], 0, [], [], []], "only integers"),
    ([[], 0, [1, 2], [], []], "rows of 3"),
    ([[], 0, [], [0, 1, 1], []], "rows of 4"),
    ([[], 0, [], [0, 1, 1, None], []], "only integers"),
    ([[0, 0, 1, 0, 0, 0, 0, 0], 0, [], [], []], "strictly increasing"),
    ([[], 0, [], [0, 2, -1, 0], []], "start < end <= handler"),
    ([[], 0, [], [], None], "arms table must be a flat array"),
    ([[], 0, [], [], [0, 0, 1.0]], "arms table holds only integers"),
])
def test_rejects_malformed_plan_tables(plan, message):
    good = _assemble_custom(_obj() + _op("FINISH"))
    _model, name, sections = open_program(good)
    sections["plan"] = plan
    assert message in _rejected(pack_program("sequential", name, sections))


# ------------------------------------------------------------------ the top-level sequence

# main: WALK finish; finish: EXPR {}; FINISH. Steps 0 and 1 at 3 and 4: each a RET.
_WALKED = _op("WALK", 1) + _obj() + _op("FINISH") + _op("RET") + _op("RET")


def test_walk_runs_the_sequence_of_the_step_table():
    data = _assemble_custom(_WALKED, names=("a", "b"), steps=[(0, 1, 3, 2), (1, 0, 4, 0)])
    program = V.load(data)
    assert (program.first, program.after) == (0, [1, -1])
    assert program.run({}, ScriptedHost({}))["status"] == "success"


@pytest.mark.parametrize("steps,message", [
    ([(0, 1, 3, 2), (1, 0, 4, 1)], "loops"),        # 0 -> 1 -> 0
    ([(0, 1, 3, 1), (1, 0, 4, 0)], "loops"),        # 0 -> 0
    ([(0, 1, 3, 0), (1, 1, 4, 0)], "two steps"),    # two first steps
    ([(0, 1, 3, 3), (1, 0, 4, 0)], "step next"),    # next past the table
    ([(0, 2, 3, 0), (1, 0, 4, 0)], "step flags"),   # bit 1: no such flag
])
def test_rejects_a_sequence_that_does_not_end(steps, message):
    assert message in _rejected(_assemble_custom(_WALKED, names=("a", "b"), steps=steps))


def test_walk_belongs_to_the_main_function_and_needs_an_empty_stack():
    # step 0 holds the WALK
    code = _obj() + _op("FINISH") + _op("WALK", 1) + _op("RET")
    assert "outside the main function" in _rejected(_assemble_custom(code, names=("a",), steps=[(0, 0, 2, 0)]))
    code = _obj() + _op("WALK", 2) + _op("FINISH") + _op("RET")
    assert "empty stack" in _rejected(_assemble_custom(code, names=("a",), steps=[(0, 1, 3, 0)]))


PIPE = """
steps:
  - id: first
    type: tool
    tool: one
  - id: second
    type: tool
    tool: two
  - id: third
    type: tool
    tool: three
"""


def test_the_vm_walks_the_plans_sequence_and_charges_it_as_before():
    """Redrawing the step table's sequence reorders the run (the order is read
    from the plan at run time, not from code); the instruction fuel a run
    needs is what format 4's RUN / HALTED / SET_FINAL chain cost: 3 per top-level
    step over the steps' own code."""
    result = driver.compile_text("---\nname: pipe\n---\n```workflow" + PIPE + "```\n", "pipe.md")
    assert result.ok, [d.message for d in result.diagnostics if d.is_error]
    data = pack_file(assemble_body(result.workflow))
    script = {"*": {"output": {"ok": True}}}
    record = V.load(data).run({}, ScriptedHost(script))
    assert [s["id"] for s in record["steps"]] == ["first", "second", "third"]
    body = _body(data)
    assert [row[1:] for row in body[3]] == [[1, body[3][0][2], 2], [0, body[3][1][2], 3], [0, body[3][2][2], 0]]
    body[3][0][1], body[3][0][3] = 0, 0       # first: off the top level
    body[3][2][1], body[3][2][3] = 1, 2       # third, then second
    body[3][1][3] = 0
    redrawn = V.load(_repack(body)).run({}, ScriptedHost(script))
    assert [(s["id"], s["status"]) for s in redrawn["steps"]] == [
        ("third", "success"), ("second", "success"), ("first", "skipped")]
    assert [c["name"] for c in redrawn["calls"]] == ["three", "two"]
    # main is WALK and the finish block (EXPR of {}, FINISH); each step's code
    # STEP, EXPR of {}, CALL, DONE, RET runs 5: 2 + 3 * (5 + 3) instructions
    # (an EXPR costs its block's instructions but RETURN: MAP, 1)
    program = V.load(data)
    assert program.run({}, ScriptedHost(script), 26)["status"] == "success"
    short = program.run({}, ScriptedHost(script), 25)
    assert short["error"]["message"].startswith("fuel exhausted") and len(short["calls"]) == 3


# ------------------------------------------------------------------ the conditionals' arms

# main: WALK finish; finish: EXPR {}; FINISH. Step 0 (c), at 3, a conditional:
# STEP 0; EXPR #0; ARM. Steps 1 (a) and 2 (b), at 6 and 10: STEP 0; EXPR {}; DONE; RET.
_STEP_BODY = _op("STEP", 0) + _obj() + _op("DONE") + _op("RET")
_ARMED = (_op("WALK", 1) + _obj() + _op("FINISH") + _op("STEP", 0) + _val(0) + _op("ARM")
          + _STEP_BODY + _STEP_BODY)
_ARMED_STEPS = [(0, 1, 3, 0), (1, 0, 6, 0), (2, 0, 10, 0)]


def _armed(arms, condition=True, code=_ARMED, steps=_ARMED_STEPS):
    return _assemble_custom(code, consts=(condition,), names=("c", "a", "b"), steps=steps, finish=1, arms=arms)


def _statuses(record):
    return [(s["id"], s["status"], s.get("reason")) for s in record["steps"]]


def test_arm_runs_the_chosen_arm_from_the_arms_table():
    record = V.load(_armed([(0, [1], [2])])).run({}, ScriptedHost({}))
    assert _statuses(record) == [("c", "success", None), ("a", "success", None),
                                 ("b", "skipped", "Branch not selected")]
    record = V.load(_armed([(0, [1], [2])], condition=0)).run({}, ScriptedHost({}))
    assert _statuses(record) == [("c", "success", None), ("b", "success", None),
                                 ("a", "skipped", "Branch not selected")]
    # redrawn: the arm is read from the table at run time, not from code
    record = V.load(_armed([(0, [2, 1], [])])).run({}, ScriptedHost({}))
    assert _statuses(record)[:3] == [("c", "success", None), ("b", "success", None), ("a", "success", None)]
    record = V.load(_armed([(0, [], [1, 2])])).run({}, ScriptedHost({}))
    assert _statuses(record) == [("c", "success", None), ("a", "skipped", "Branch not selected"),
                                 ("b", "skipped", "Branch not selected")]


def test_arm_is_charged_as_the_code_it_replaced():
    """WALK 1; STEP, CONST, ARM (as JUMP_IF_NOT) 3; RECORD 1; RUN 1; a's 4; ROOT, FIELD,
    FIELD, COALESCE, SET_OUTPUT, RET 6; WALK's HALTED and SET_FINAL 2; EXPR, FINISH 2: 20 (an EXPR of a
    constant or of {} costs 1, as format 5's CONST and OBJECT did)."""
    program = V.load(_armed([(0, [1], [2])]))
    assert program.run({}, ScriptedHost({}), 20)["status"] == "success"
    short = program.run({}, ScriptedHost({}), 19)
    assert short["error"]["message"] == "fuel exhausted: more than 19 instructions"
    # an empty arm: WALK 1; STEP, CONST, ARM 3; RECORD 1; CONST, SET_OUTPUT, RET 3; WALK 2; main 2: 12
    program = V.load(_armed([(0, [], [1])]))
    assert program.run({}, ScriptedHost({}), 12)["status"] == "success"
    assert program.run({}, ScriptedHost({}), 11)["status"] == "failed"


@pytest.mark.parametrize("arms,message", [
    ([], "step 0 has an ARM but no arms"),
    ([(0, [1], []), (1, [2], [])], "step 1 has arms but no ARM"),
    ([(0, [0], [])], "must name later steps"),         # its own conditional: it would never end
    ([(0, [1], [3])], "must name later steps"),        # past the table
    ([(3, [], [])], "no such step"),
    ([(0, [1], []), (0, [2], [])], "each conditional once"),
])
def test_rejects_bad_arms(arms, message):
    assert message in _rejected(_armed(arms))


@pytest.mark.parametrize("flat,message", [
    ([0, 1], "ends inside a row"),
    ([0, 2, 0, 1], "past the table's end"),
    ([0, -1, 0], "past the table's end"),
    ([0, 1, 0, -1], "must name later steps"),
])
def test_rejects_a_malformed_arms_table(flat, message):
    _model, name, sections = open_program(_armed([(0, [1], [2])]))
    sections["plan"][4] = flat
    assert message in _rejected(pack_program("sequential", name, sections))


@pytest.mark.parametrize("body,message", [
    (_op("ARM"), "stack underflow"),
    (_val(0) + _val(0) + _op("ARM"), "ARM needs exactly its condition"),
    (_val(1) + _op("ITER") + _op("ARM"), "ARM needs exactly its condition"),   # an iterator
])
def test_arm_ends_a_conditional_with_its_condition_alone_on_the_stack(body, message):
    code = _op("WALK", 1) + _obj() + _op("FINISH") + _op("STEP", 0) + body + _STEP_BODY + _STEP_BODY
    at = 3 + 1 + len(body)
    steps = [(0, 1, 3, 0), (1, 0, at, 0), (2, 0, at + 4, 0)]
    data = _assemble_custom(code, consts=(True, []), names=("c", "a", "b"), steps=steps, finish=1,
                            arms=[(0, [1], [2])])
    assert message in _rejected(data)


def test_arm_belongs_to_a_step_function():
    code = _val(0) + _op("ARM") + _obj() + _op("FINISH")
    assert "ARM in the main function" in _rejected(_assemble_custom(code, consts=(True,)))


def test_disasm_lists_each_conditionals_arms():
    result = driver.compile_file(str(Path(__file__).resolve().parent / "data" / "workflowskill" / "fixtures"
                                     / "branch.md"))
    from flowc.backends.vm.disasm import disassemble

    text = disassemble(pack_file(assemble_body(result.workflow), strip=True))
    assert "  s1    branch                   entry 000c\n        arms: then [s2 exit_success]; else [s3 exit_failed]\n" in text
    assert "s2    exit_success             entry 0011  branch target" in text
    assert "  ARM\n" in text and "RUN" not in text
    # each block is listed under the instruction that runs it, named by its form
    lines = text.splitlines()
    runs = [i for i, line in enumerate(lines) if "  EXPR  " in line or "  DEFAULT  " in line]
    assert runs and all(lines[i + 1].startswith("          |     0  ") for i in runs)
    assert text.count("  RETURN\n") == len(runs) and "expression blocks: " in text
