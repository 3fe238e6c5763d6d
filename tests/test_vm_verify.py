"""Verification of WorkflowSkill programs: malformed bytecode is rejected
with a VerifyError (never another exception, never a hang); fuel bounds
every run; same input, same bytes and records. A program is its plan's
rows (docs/bytecode.md section 2): every block index in range, every kind
and code valid, arms only to later steps and only from branch rows, the
retry values in range, a top-level sequence that ends."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import msgpack
import pytest
from flowc.backends.vm import VerifyError, compile_workflow, expr_vm, load, plan_vm
from flowc.backends.vm import container as C
from flowc.backends.vm import format as F
from flowc.backends.vm.disasm import disassemble
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
    with pytest.raises(VerifyError) as info:
        load(data)
    assert str(info.value)
    return str(info.value)


# ------------------------------------------------------------------ tables

def test_the_format_and_the_loader_agree():
    assert C.MAGIC == F.MAGIC and C.FORMAT_VERSION == F.FORMAT_VERSION
    assert C.SUPPORTED_VERSIONS == F.SUPPORTED_VERSIONS == (F.FORMAT_VERSION,)
    assert C.MAX_NESTING == F.LIMITS["nesting"]
    assert plan_vm.TYPES == F.TYPES and plan_vm.SEQUENTIAL_OPS == F.SEQUENTIAL_OPS


def test_docs_name_the_format_version():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "bytecode.md").read_text(encoding="utf-8")
    assert f"# flowc bytecode, format version {F.FORMAT_VERSION}\n" in doc


# ------------------------------------------------------------------ rejections

def test_rejects_wrong_magic_version_checksum():
    data = _program()[1]
    assert "magic" in _rejected(b"\x00" + data[1:])
    assert "magic" in _rejected(b"")
    assert "version" in _rejected(_repack(_body(data), version=99))
    assert "version" in _rejected(_repack(_body(data), version=6))   # the sequential instruction set's
    assert "version" in _rejected(_repack(_body(data), version=7))   # blocks one by one, no forms
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
                load(bytes(bad))
            except VerifyError:
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
    with pytest.raises(VerifyError):
        r = C._Reader(lie)
        r.value(0)
    with pytest.raises(VerifyError):
        C._Reader(b"\x91" * 1000 + b"\xc0").value(0)


# ------------------------------------------------------------------ the plan rows
#
# each-loop: rows fetch [id, op, on_error, mask 536 (args, call, declared), args, capability, name,
# declared], summarize (mask 794: each, args, call, mapping, declared), $end; edges fetch -> summarize
# -> $end. branch/then: check, branch (mask 32: body), exit_success, exit_failed (mask 1056: body,
# status), $end; branch's arms then -> exit_success, else -> exit_failed.

def _mutated(name, mutate):
    body = _body(_program(name)[1])
    plan = copy.deepcopy(body[4])
    mutate(plan, body)
    body[4] = plan
    return _repack(body)


def _row(name, step, at, value):
    def mutate(plan, _body):
        row = next(r for r in plan[4] if r[0] == step)
        if at == len(row):
            row.append(value)
        else:
            row[at] = value
    return name, mutate


def _set(name, at, value):
    def mutate(plan, _body):
        plan[at] = value
    return name, mutate


def _edges(name, edges):
    def mutate(plan, _body):
        plan[5] = edges
    return name, mutate


def _blocks_past(name, step, at):
    def mutate(plan, body):
        next(r for r in plan[4] if r[0] == step)[at] = len(body[3])
    return name, mutate


ROW_MUTATIONS = [
    ("a guard's block out of range", _blocks_past("branch/then", "branch", 4), "expression index is out of range"),
    ("an inputs block out of range", _blocks_past("each-loop", "fetch", 4), "expression index is out of range"),
    ("an each block out of range", _blocks_past("each-loop", "summarize", 5), "expression index is out of range"),
    ("a mapping block out of range", _blocks_past("each-loop", "summarize", 9), "expression index is out of range"),
    ("a negative block", _row("each-loop", "fetch", 4, -1), "expression index is out of range"),
    ("a block that is no index", _row("each-loop", "fetch", 4, "b0"), "expression index is out of range"),
    ("an unknown step kind", _row("each-loop", "fetch", 1, 7), "unknown step kind"),
    ("a step kind by name", _row("each-loop", "fetch", 1, "call"), "unknown step kind"),
    ("an on_error past ignore", _row("each-loop", "fetch", 2, 2), "on_error must be 0 (fail) or 1 (ignore)"),
    ("a field mask past the fields", _row("each-loop", "fetch", 3, 1 << 11), "field mask must be"),
    ("a row longer than its mask", _row("each-loop", "fetch", 8, 0), "has 8 fields, not 9"),
    ("a row shorter than its mask", _row("each-loop", "fetch", 3, 536 | 1), "has 11 fields, not 8"),
    ("a negative retry", _row("retry-backoff/exhausted", "flaky_call", 4, -1), "retry max"),
    ("too many retries", _row("retry-backoff/exhausted", "flaky_call", 4, 10**7), "retry max"),
    ("a negative retry delay", _row("retry-backoff/exhausted", "flaky_call", 5, -1), "retry delay"),
    ("a retry delay past 32 bits", _row("retry-backoff/exhausted", "flaky_call", 5, 2**32), "retry delay"),
    ("a retry backoff of text", _row("retry-backoff/exhausted", "flaky_call", 6, "2"), "retry backoff"),
    ("a negative retry backoff", _row("retry-backoff/exhausted", "flaky_call", 6, -1.0), "retry backoff"),
    ("a huge retry backoff", _row("retry-backoff/exhausted", "flaky_call", 6, 1e7), "retry backoff"),
    ("a negative each delay", _row("each-loop", "summarize", 4, -1), "each delay"),
    ("a sort path of no names", _row("sort-pipeline", "sort_by_score", 5, []), "sort path"),
    ("a sort path of a number", _row("sort-pipeline", "sort_by_score", 5, [1]), "names must be strings"),
    ("a sort direction of a number", _row("sort-pipeline", "sort_by_score", 6, 1), "sort direction"),
    ("a result key of a number", _row("sort-pipeline", "sort_by_score", 7, 1), "names must be strings"),
    ("a declared type past the types", _row("each-loop", "fetch", 7, ["documents", 6]), "is not an index into"),
    ("declared types of odd length", _row("each-loop", "fetch", 7, ["documents"]), "name, type pairs"),
    ("a declared name of a number", _row("each-loop", "fetch", 7, [1, 4]), "must be a string"),
    ("an exit status past failed", _row("branch/then", "exit_success", 5, 2), "exit status"),
    ("a capability of a number", _row("each-loop", "fetch", 5, 1), "names must be strings"),
    ("a duplicate id", _row("each-loop", "summarize", 0, "fetch"), "node ids must be unique"),
    ("an id of a number", _row("each-loop", "summarize", 0, 3), "node ids must be unique strings"),
    ("a dependency edge", _edges("each-loop", [0, 1, 3, None, 1, 2, 0, None]), "not sequential scheduling's"),
    ("an edge to no node", _edges("each-loop", [0, 9, 0, None, 1, 2, 0, None]), "not a node of its graph"),
    ("an arm from a call", _edges("branch/then", [0, 1, 0, None, 1, 4, 0, None, 0, 2, 2, "then"]),
     "has arms but is not a branch"),
    ("an arm to its own branch", _edges("branch/then", [0, 1, 0, None, 1, 4, 0, None, 1, 1, 2, "then"]),
     "later steps"),
    ("an arm to an earlier step", _edges("branch/then", [0, 1, 0, None, 1, 4, 0, None, 1, 0, 2, "then"]),
     "later steps"),
    ("an arm to the end", _edges("branch/then", [0, 1, 0, None, 1, 4, 0, None, 1, 4, 2, "then"]), "later steps"),
    ("an arm of another label", _edges("branch/then", [0, 1, 0, None, 1, 4, 0, None, 1, 2, 2, "maybe"]),
     "labelled then or else"),
    ("two successors", _edges("each-loop", [0, 1, 0, None, 0, 2, 0, None]), "two successors"),
    ("a successor of the end", _edges("each-loop", [0, 1, 0, None, 2, 0, 0, None]), "two successors, or is the end"),
    ("a sequence that loops", _edges("each-loop", [0, 1, 0, None, 1, 0, 0, None]), "the top-level sequence loops"),
    ("a step that follows itself", _edges("each-loop", [0, 0, 0, None]), "the top-level sequence loops"),
    ("an entry past the nodes", _set("each-loop", 0, 3), "the entry must be a node index or nil"),
    ("a terminal that is no end", _set("each-loop", 1, 0), "the terminal, and it alone, is the end"),
    ("no terminal but an end", _set("each-loop", 1, None), "the terminal, and it alone, is the end"),
    ("inputs not in triples", _set("each-loop", 2, ["items", 4]), "name, type, default triples"),
    ("an input type past the types", _set("each-loop", 2, ["items", 9, None]), "is not an index into"),
    ("an input default past the constants", _set("each-loop", 2, ["items", 4, 99]), "a default must be a constant"),
    ("an input name of a number", _set("each-loop", 2, [1, 4, None]), "an input name must be a string"),
    ("outputs not keys and a block", _set("each-loop", 3, [["summaries"]]), "the outputs ([keys, block])"),
    ("an output key of a number", _set("each-loop", 3, [[1], None]), "names must be strings"),
    ("an outputs block out of range", _set("each-loop", 3, [["summaries"], 99]), "expression index is out of range"),
    ("a plan of five fields", ("each-loop", lambda plan, body: plan.pop()), "must be an array of 6"),
]


@pytest.mark.parametrize("what,mutation,message", ROW_MUTATIONS, ids=[m[0] for m in ROW_MUTATIONS])
def test_rejects_malformed_plan_rows(what, mutation, message):
    name, mutate = mutation
    assert message in _rejected(_mutated(name, mutate))


def test_the_unmutated_rows_load():
    for name in ("each-loop", "branch/then", "retry-backoff/exhausted", "sort-pipeline"):
        load(_mutated(name, lambda plan, body: None))


def _deep(levels):
    v = [1]
    for _ in range(levels):
        v = [v]
    return v


@pytest.mark.parametrize("consts,message", [
    ([{1: 2}], "map key"),
    ([b"x"], "unsupported type"),
    ([_deep(C.MAX_NESTING + 2)], "nests deeper"),
])
def test_rejects_constants_that_are_no_json(consts, message):
    body = _body(_program()[1])
    body[1] = body[1] + consts
    assert message in _rejected(_repack(body))


def test_rejects_blocks_of_another_dialect_or_broken():
    body = _body(_program("branch/then")[1])
    names, blocks = body[2], body[3]
    key = names.index("wfs.eq")
    body[2] = [*names[:key], "cel.size", *names[key + 1:]]
    assert "no builtin of this program" in _rejected(_repack(body))
    body[2] = names
    for bad in (blocks[1][:-1], "text", None):
        body[3] = [blocks[0], bad, *blocks[2:]]
        assert _rejected(_repack(body))
    body[3] = blocks[:1]    # a row names a block there is none of
    assert "expression index is out of range" in _rejected(_repack(body))


def _forms_changed(change):
    """The each-loop program with its section code (``[forms, uses, consts, names]``) changed."""
    _model, name, sections = open_program(_program()[1])
    change(sections["code"])
    return pack_program("sequential", name, sections)


def _set(field, i, value):
    def change(code):
        code[field][i] = value
    return change


def _append(field, value):
    def change(code):
        code[field].append(value)
    return change


@pytest.mark.parametrize("change, message", [
    (_set(1, 0, 99), "the blocks' forms must be integers in [0,"),          # a block of a form there is none of
    (_set(1, 0, -1), "the blocks' forms must be integers in [0,"),
    (_set(1, 0, "0"), "the blocks' forms must be integers in [0,"),
    (_set(2, 0, 10**6), "the constant stream must be integers in [0,"),   # a constant there is none of
    (_set(2, 0, None), "the constant stream must be integers in [0,"),
    (_set(3, 0, 10**6), "the name stream must be integers in [0,"),       # a name there is none of
    (_set(3, 0, 1.0), "the name stream must be integers in [0,"),
    (_append(2, 0), "the streams differ"),                                 # a hole more than the forms have
    (_append(3, 0), "the streams differ"),
    (lambda code: code[2].pop(), "the streams differ"),
    (lambda code: code.pop(), "section code must be [forms, uses, consts, names]"),
    (_set(0, 0, "text"), "form 0 must be msgpack bin"),
    (_set(0, 0, bytes([0x01, 0x01, 0x12])), "constant hole 1 before hole 0"),   # CONST 1; RETURN
    (_set(0, 0, bytes([0x02, 0x07, 0x12])), "name hole 1 before hole 0"),        # LOAD wfs 1; RETURN
    (_set(0, 0, bytes([0x11, 0x00, 0x00, 0x00, 0x12])), "is not an instruction of this program"),  # LAMBDA
    (_set(0, 0, bytes([0x01, 0x00])), "control runs off its end"),   # CONST 0, no RETURN
])
def test_rejects_forms_out_of_range(change, message):
    assert message in _rejected(_forms_changed(change))


def test_forms_hold_each_distinct_form_once():
    """Blocks that differ only in their constants and names share one form;
    the blocks with their holes filled are the blocks the loader runs."""
    data = compile_workflow(driver.compile_text(_MANY_STEPS, "many.yaml", "workflowskill").workflow)
    _model, _name, sections = open_program(data)
    forms, uses, _consts, _names = sections["code"]
    assert len(forms) < len(uses) and len(set(forms)) == len(forms)
    program = load(data)
    for b, code in enumerate(F.blocks_of_forms(sections["code"])):
        assert program.machine.source(b)[0] == expr_vm.decode(code)


_MANY_STEPS = """inputs:
  region: {type: string, default: eu}
outputs:
  last: {type: object, value: $steps.c.output}
steps:
  - id: a
    type: tool
    tool: t.a
    inputs:
      q: {type: string, value: "a ${inputs.region}"}
  - id: b
    type: tool
    tool: t.b
    inputs:
      q: {type: string, value: "b ${inputs.region}"}
  - id: c
    type: tool
    tool: t.c
    inputs:
      q: {type: string, value: "c ${steps.b.output.x}"}
"""


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_fuzz_structural_mutations_never_crash(data):
    """Mutated sections with valid checksums: VerifyError or a clean run."""
    _name, program, inputs, script = data.draw(st.sampled_from(corpus_programs()))
    _model, name, sections = open_program(program)
    key = data.draw(st.sampled_from(sorted(sections)))
    choice = data.draw(st.integers(0, 3))
    if key == "code" and choice < 2 and sections[key][0]:
        blocks = sections[key][0]   # the forms
        i = data.draw(st.integers(0, len(blocks) - 1))
        ops = bytearray(blocks[i])
        for _ in range(data.draw(st.integers(1, 4))):
            ops[data.draw(st.integers(0, len(ops) - 1))] = data.draw(st.integers(0, 255))
        blocks[i] = bytes(ops)
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
    _loads_and_runs_or_refuses(pack_program("sequential", name, sections), inputs, script)


def _loads_and_runs_or_refuses(data, inputs, script):
    try:
        prog = load(data)
    except VerifyError:
        return
    record = prog.run(inputs, ScriptedHost(script), 100000, 10000)
    json.dumps(record)


_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2, 12), st.floats(-1, 3, allow_nan=False),
                    st.sampled_from(["then", "else", "x", "fetch", "branch"]), st.lists(st.integers(-1, 6), max_size=3))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_fuzz_plan_row_mutations_never_crash(data):
    """Corpus programs, their rows' and edges' values rewritten, cut or
    lengthened: VerifyError or a clean run."""
    _name, program, inputs, script = data.draw(st.sampled_from(corpus_programs()))
    _model, name, sections = open_program(program)
    plan = sections["plan"]
    for _ in range(data.draw(st.integers(1, 3))):
        what = data.draw(st.integers(0, 3))
        target = plan[5] if what == 3 else data.draw(st.sampled_from(plan[4]))
        if what in (0, 3) and target:
            target[data.draw(st.integers(0, len(target) - 1))] = data.draw(_VALUES)
        elif what == 1 and target:
            del target[data.draw(st.integers(0, len(target) - 1)):]
        else:
            target.insert(data.draw(st.integers(0, len(target))), data.draw(_VALUES))
    _loads_and_runs_or_refuses(pack_program("sequential", name, sections), inputs, script)


def test_the_quick_check_passes_every_corpus_plan():
    """A loadable plan takes the quick check (its nodes made when first asked for)."""
    for _name, program, _inputs, _script in corpus_programs():
        prog = load(program)
        assert prog._unmade is not None and prog._plan is None
        assert prog.plan["nodes"] and prog._unmade is None


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_the_quick_check_passes_no_plan_the_decoder_refuses(data):
    """Rows and edges rewritten as the fuzz above: when the quick check
    passes a plan, the decoder makes its fields without complaint."""
    _name, program, _inputs, _script = data.draw(st.sampled_from(corpus_programs()))
    prog = load(program)
    plan = copy.deepcopy(open_program(program)[2]["plan"])
    for _ in range(data.draw(st.integers(1, 3))):
        what = data.draw(st.integers(0, 5))
        if len(plan) != 6:
            break
        rows = plan[4] if type(plan[4]) is list and plan[4] else [plan]
        target = plan[5] if what == 3 else plan if what == 4 else data.draw(st.sampled_from(rows))
        if type(target) is not list:
            break
        if what == 5 and target:   # a field's value inside the row: a list's entry
            lists = [v for v in target if type(v) is list and v]
            if lists:
                target = data.draw(st.sampled_from(lists))
        if what != 1 and target:
            target[data.draw(st.integers(0, len(target) - 1))] = data.draw(_VALUES)
        elif target:
            del target[data.draw(st.integers(0, len(target) - 1)):]
    try:
        quick = plan_vm._sequential_quick(plan, prog.expressions)
    except VerifyError:
        quick = False   # refused by the decoder's own checks of inputs and outputs
    if quick:
        plan_vm.plan_fields("sequential", plan, prog.expressions)


# ------------------------------------------------------------------ fuel

def test_fuel_instructions_fail_the_run_cleanly():
    _name, data, inputs, script = _program()
    prog = load(data)
    full = prog.run(inputs, ScriptedHost(script))
    assert full["status"] == "success"
    for limit in (0, 1, 3):
        record = prog.run(inputs, ScriptedHost(script), max_instructions=limit)
        assert record["status"] == "failed"
        assert record["error"]["message"] == f"fuel exhausted: more than {limit} instructions"
        assert [s["id"] for s in record["steps"]] == [s["id"] for s in full["steps"]]


def test_fuel_iterations():
    _name, data, inputs, script = _program()
    record = load(data).run(inputs, ScriptedHost(script), max_iterations=2)
    assert record["status"] == "failed"
    assert record["error"] == {"message": "fuel exhausted: more than 2 iterations", "step": "summarize"}
    assert load(data).run(inputs, ScriptedHost(script), max_iterations=3)["status"] == "success"


# ------------------------------------------------------------------ determinism

def test_same_ir_same_bytes_and_same_record():
    for case in ("each-loop", "filter-exit/found-else", "retry-backoff/exhausted"):
        _name, data, inputs, script = _program(case)
        records = [load(data).run(inputs, ScriptedHost(script)) for _ in range(3)]
        assert all(json.dumps(r) == json.dumps(records[0]) for r in records)
    for file in ("fixtures/graduation-email-triage.md", "fixtures/filter-exit.md"):
        wf = _workflow(file)
        assert compile_workflow(wf) == compile_workflow(wf)
        assert compile_workflow(wf, strip=True) != compile_workflow(wf)


def test_stripped_and_unstripped_run_alike():
    wf = _workflow("fixtures/filter-exit.md")
    script = {"get_items": {"output": {"items": []}}}
    a = load(compile_workflow(wf)).run({}, ScriptedHost(script))
    b = load(compile_workflow(wf, strip=True)).run({}, ScriptedHost(script))
    assert a == b


def test_a_large_program_runs_as_the_python_backend_runs():
    """A program big enough for two- and three-byte msgpack values (names
    past 255, many rows) runs as the generated module does."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_vm import big_workflow
    from flowc.backends.python import compile_workflow as python_compile
    from flowc.backends.python import load_module

    wf = driver.compile_text(big_workflow(900), "big.yaml", "workflowskill").workflow
    program = load(compile_workflow(wf, strip=True))
    assert len(program.plan["nodes"]) > 900 and len(program.expressions.names) > 256
    rows = [{"id": i, "score": 20 + i, "region": "eu", "name": f"n{i}", "address": {"city": "c", "zip": "1"}}
            for i in range(3)]
    script = {"*": {"output": {"rows": rows, "total": 3}}}
    want = load_module(python_compile(wf)).run({}, ScriptedHost(script))
    assert program.run({}, ScriptedHost(script)) == want


# ------------------------------------------------------------------ the top-level sequence

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


def test_the_vm_walks_the_plans_sequence_and_charges_only_blocks():
    """Redrawing the sequence edges reorders the run (the walk reads them
    from the plan at run time); instruction fuel pays for the blocks the
    run evaluates only: each step's inputs block (MAP, RETURN) here."""
    result = driver.compile_text("---\nname: pipe\n---\n```workflow" + PIPE + "```\n", "pipe.md")
    assert result.ok, [d.message for d in result.diagnostics if d.is_error]
    data = compile_workflow(result.workflow)
    script = {"*": {"output": {"ok": True}}}
    record = load(data).run({}, ScriptedHost(script))
    assert [s["id"] for s in record["steps"]] == ["first", "second", "third"]
    body = _body(data)
    assert body[4][0] == 0 and body[4][5] == [0, 1, 0, None, 1, 2, 0, None, 2, 3, 0, None]
    body[4][0] = 2                                          # the entry: third
    body[4][5] = [2, 1, 0, None, 1, 3, 0, None]             # third, then second; first off the top level
    redrawn = load(_repack(body)).run({}, ScriptedHost(script))
    assert [(s["id"], s["status"]) for s in redrawn["steps"]] == [
        ("third", "success"), ("second", "success"), ("first", "skipped")]
    assert [c["name"] for c in redrawn["calls"]] == ["three", "two"]
    program = load(data)
    assert program.run({}, ScriptedHost(script), 6)["status"] == "success"
    short = program.run({}, ScriptedHost(script), 5)
    assert short["error"] == {"message": "fuel exhausted: more than 5 instructions", "step": "third"}
    assert len(short["calls"]) == 2


# ------------------------------------------------------------------ the conditionals' arms

def _statuses(record):
    return [(s["id"], s["status"], s.get("reason")) for s in record["steps"]]


def test_a_branch_runs_the_arm_its_edges_name():
    _name, data, inputs, script = _program("branch/then")
    record = load(data).run(inputs, ScriptedHost(script))
    assert _statuses(record)[:3] == [("check", "success", None), ("branch", "success", None),
                                     ("exit_success", "success", None)]
    body = _body(data)
    edges = body[4][5]
    assert edges[8:] == [1, 2, 2, "then", 1, 3, 2, "else"]
    body[4][5] = edges[:8] + [1, 3, 2, "then", 1, 2, 2, "else"]     # the arms swapped
    swapped = load(_repack(body)).run(inputs, ScriptedHost(script))
    assert _statuses(swapped)[:3] == [("check", "success", None), ("branch", "success", None),
                                      ("exit_failed", "success", None)]
    body[4][5] = edges[:8] + [1, 3, 2, "else"]                       # no then arm: nothing runs
    empty = load(_repack(body)).run(inputs, ScriptedHost(script))
    assert _statuses(empty)[2:] == [("exit_success", "skipped", "Workflow halted"),
                                    ("exit_failed", "skipped", "Branch not selected")]


def test_disasm_lists_each_branchs_arms_and_blocks():
    text = disassemble(compile_workflow(_workflow("fixtures/branch.md"), strip=True))
    assert "  branch: branch\n      condition=b1\n      next -> $end\n" in text
    assert "      branch 'then' -> exit_success\n      branch 'else' -> exit_failed\n" in text
    assert "\nblock 1:\n" in text and text.count("  RETURN\n") == text.count("\nblock ")
