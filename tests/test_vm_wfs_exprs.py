"""WorkflowSkill bytecode's values run on the shared expression machine
(``EXPR``, ``DEFAULT`` and section ``exprs``, docs/bytecode.md sections 1, 3
and 6): the generated module's records, and the section is verified with
WorkflowSkill's rules."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from flowc.backends.python import compile_workflow as python_compile
from flowc.backends.python import load_module
from flowc.backends.vm import expr_vm as X
from flowc.backends.vm import sequential as V
from flowc.backends.vm.assemble import assemble_body, join_blocks, pack_file, split_blocks
from flowc.backends.vm.disasm import disassemble
from flowc.backends.vm.expr_assemble import Tables, assemble_expression, varint
from flowc.host import ScriptedHost
from flowc.ir import expr as E
from flowc.pipeline import driver

from tests.program_bytes import pack_sequential, sequential_body

WFS_DIR = Path(__file__).resolve().parent / "data" / "workflowskill"
CASES = [c for c in json.loads((WFS_DIR / "cases.json").read_text(encoding="utf-8"))
         if c["expected"].get("error", {}).get("phase") not in ("parse", "validate")]

GUARDED = """
inputs:
  n: {type: int, default: 3}
  who: {type: string, default: "ada"}
outputs:
  text: {type: string, value: "${steps.say.output.text} and ${inputs.n}"}
steps:
  - id: say
    type: tool
    tool: t
    condition: $inputs.n > 2 && $inputs.who != "bob"
    inputs:
      text: {type: string, value: "hello ${inputs.who}"}
      more: {type: array, value: [1, {"a": 2}]}
"""


def _program(workflow):
    return V.load(pack_file(assemble_body(workflow)))


def _module_record(workflow, inputs, script):
    return load_module(python_compile(workflow)).run(inputs, ScriptedHost(script))


def _exprs(program) -> int:
    return sum(1 for ins in program.decoded() if ins[0] in (V.EXPR, V.DEFAULT))


def _case_workflows():
    for case in CASES:
        result = driver.compile_file(str(WFS_DIR / case["file"]))
        assert result.ok
        yield case, result.workflow


# The sequential instruction set is the steps' control: what computes a value
# is a block of the expression machine (EXPR, DEFAULT) or OUTPUTS, the run's end.
_STEP_CONTROL = {"JUMP", "JUMP_IF_NOT", "EXITED", "RET", "FINISH", "OUTPUTS", "OUTPUTS_FAILED", "CHECK_INPUTS",
                 "WALK", "ARM", "STEP", "SKIP", "DONE", "FAIL", "FAIL_PARTIAL", "EXIT", "SET_RESULT",
                 "CHECK_OUTPUT", "CALL", "ITER", "NEXT", "APPEND", "KEEP", "ITEM_FAILED", "COLLECT", "END_EACH",
                 "TRANSFORM_INPUT", "SORT", "WRAP"}


def test_every_value_is_a_block_of_the_shared_machine():
    assert {name for name, *_rest in V.OPS.values()} == _STEP_CONTROL | {"EXPR", "DEFAULT"}
    total = 0
    for _case, wf in _case_workflows():
        program = _program(wf)
        total += _exprs(program)
        assert program.machine is not None and len(program.machine.code) == _exprs(program)
    assert total > 50


def test_every_record_is_the_generated_modules_and_fuel_only_ends_it_early():
    """The records equal the Python backend's; under any instruction budget a
    run gives the full record or fails with the fuel's message, and once a
    budget suffices every larger one does."""
    seen = 0
    for case, wf in _case_workflows():
        program = _program(wf)
        full = program.run(case["inputs"], ScriptedHost(case["host"]))
        assert json.dumps(full) == json.dumps(_module_record(wf, case["inputs"], case["host"])), case["case"]
        enough = False
        for budget in range(160):
            got = program.run(case["inputs"], ScriptedHost(case["host"]), budget)
            if got == full:
                enough = True
            else:
                assert not enough, (case["case"], budget)
                assert got["error"]["message"] == f"fuel exhausted: more than {budget} instructions"
            seen += 1
    assert seen > 1000


def test_guards_and_templates_give_the_generated_modules_records():
    wf = driver.compile_text(textwrap.dedent(GUARDED), "guarded.yaml", "workflowskill").workflow
    program = _program(wf)
    # the defaults, the guard, the call's inputs, the outputs
    assert _exprs(program) == 5
    script = {"t": [{"text": "hi"}, {"text": "again"}]}
    for inputs in ({}, {"who": "bob"}, {"n": 1}, {"n": "7"}):
        want = _module_record(wf, inputs, script)
        assert json.dumps(program.run(inputs, ScriptedHost(script))) == json.dumps(want)
    record = program.run({}, ScriptedHost(script))
    assert record["outputs"] == {"text": "hi and 3"}


def _body():
    wf = driver.compile_text(textwrap.dedent(GUARDED), "guarded.yaml", "workflowskill").workflow
    body = sequential_body(pack_file(assemble_body(wf)))
    assert len(body) == 11
    return body


def _rejected(body) -> str:
    with pytest.raises(V.VerifyError) as info:
        V.load(pack_sequential(body))
    return str(info.value)


def _with_blocks(body, keys, decoded) -> None:
    """Section exprs and the code's block operands of decoded blocks, the k-th
    the code's k-th block operand (targets are instruction indexes: 1-byte offsets here)."""
    streams = split_blocks([_encoded(block) for block in decoded])
    body[7][3] = streams.pop(2)
    body[10] = [keys, *streams]


def _encoded(block) -> bytes:
    """A decoded block's bytes (section 10): every operand below 128 here."""
    pcs, pc = [], 0
    for _k, op, _operands in block:
        pcs.append(pc)
        pc += 1 + len(X.OPCODES[op][1]) - (op in X.PACKED_OPS)
    out = bytearray()
    for _k, op, operands in block:
        out.append(op)
        if op in X.PACKED_OPS:
            out += varint(operands[1] << X.ACCESS_BITS | operands[0])
            continue
        for kind, v in zip(X.OPCODES[op][1], operands, strict=True):
            out += varint(pcs[v] if kind == "t" else v)
    return bytes(out)


def test_an_expr_without_its_block_is_rejected():
    body = _body()
    blocks = join_blocks(body[10][1:], body[7][3])
    body[7][3] = body[7][3][:-1]
    assert f"the code has {len(blocks)} block operands, its stream {len(blocks) - 1}" in _rejected(body)
    body[7][3].append(99)
    assert "names form" in _rejected(body)
    body = _body()
    del body[10]
    assert "block operands but no section exprs" in _rejected(body)


def test_the_blocks_are_verified_with_workflowskills_rules():
    body = _body()
    keys, ops, shape, names, consts = body[10]
    forms = body[7][3]
    # a CEL builtin is no builtin of a WorkflowSkill program
    body[10] = [[*keys[:-1], "cel.size"] if keys else ["cel.size"], ops, shape, names, consts]
    if keys:
        assert "no builtin of this program" in _rejected(body)
    # a form ends at its RETURN: one without, opcodes past the last, opcodes not bin, a section of another shape
    body[10] = [keys, ops[:-1], shape, names, consts]
    assert _rejected(body)
    body[10] = [keys, ops + bytes([X.CONST]), shape, names, consts]
    assert "hold more than the forms" in _rejected(body)
    body[10] = [keys, list(ops), shape, names, consts]
    assert "msgpack bin" in _rejected(body)
    body[10] = [keys]
    assert "section exprs must be [keys, ops, shape, names, consts]" in _rejected(body)
    # a block's form past the forms, a form no block has, names or constants too many or too few
    body[10] = [keys, ops, shape, names, consts]
    body[7][3] = [*forms[:-1], len(set(forms))]
    assert "names form" in _rejected(body)
    body[7][3] = [0 for _ in forms]
    assert "no block has" in _rejected(body)
    body[7][3] = forms
    for refs, what in (([*names, 0], "name"), (names[:-1], "name"), ([*consts, 0], "constant"),
                       (consts[:-1], "constant")):
        body[10] = [keys, ops, shape, refs, consts] if what == "name" else [keys, ops, shape, names, refs]
        assert f"{what} operands" in _rejected(body)
    body[10] = [keys, ops, shape, names, [*consts[:-1], len(body[1])]]
    assert "constant index" in _rejected(body)
    # LOAD, FIELD and INDEX carry their access rule in the opcode byte: only wfs (3) here
    load = ops.index(X.LOAD + 3 * V.ACCESS_STEP)
    for byte in (X.LOAD, X.LOAD + V.ACCESS_STEP, X.LOAD + 4 * V.ACCESS_STEP, X.RETURN + V.ACCESS_STEP):
        body[10] = [keys, ops[:load] + bytes([byte]) + ops[load + 1:], shape, names, consts]
        assert _rejected(body)


def test_blocks_of_one_form_are_kept_and_verified_once(monkeypatch):
    """Blocks that differ only in their names and constants share their
    form, checked once; each name and constant is in range."""
    body = _body()
    keys = body[10][0]
    blocks = join_blocks(body[10][1:], body[7][3])
    assert len(set(body[7][3])) < len(blocks)   # the defaults' blocks: CONST, RETURN
    twin = [(k, op, [o[0], len(body[2]) - 1] if op in X.PACKED_OPS else o) for k, op, o in blocks[-1]]
    _with_blocks(body, keys, [*blocks[:-1], twin])
    assert body[7][3] == _body()[7][3]
    checked = []
    check = X.verify_decoded
    monkeypatch.setattr(X, "verify_decoded", lambda *args: checked.append(args[0]) or check(*args))
    V.load(pack_sequential(body))
    assert checked == list(range(len(set(body[7][3]))))     # each form once
    monkeypatch.undo()
    if any(op in X.PACKED_OPS for _k, op, _o in twin):
        body[10][3][-1] = len(body[2])
        assert "name index" in _rejected(body)


def test_a_bindings_object_literal_is_one_map_that_drops_missing_values():
    """A binding's object literal is MAP by rule wfs_compact (wfs.compact of
    the literal at once); an output without a value is wfs.pick of the raw result."""
    wf = driver.compile_text(textwrap.dedent(MAPPED), "mapped.yaml", "workflowskill").workflow
    program = _program(wf)
    text = disassemble(pack_file(assemble_body(wf), strip=True))
    assert "MAP                wfs_compact, 2" in text and "CALL               0 (wfs.pick), 2" in text
    script = {"t": {"output": {"a": 1, "rows": [{"x": 1, "y": 2}, {"x": 3}, {}]}}}
    record = program.run({}, ScriptedHost(script))
    assert json.dumps(record) == json.dumps(_module_record(wf, {}, script))
    assert record["outputs"] == {"out": [{"x": 1, "y": 2}, {"x": 3}, {}], "a": 1}


MAPPED = """
outputs:
  out: {type: array, value: $steps.m.output.pairs}
  a: {type: int, value: $steps.s.output.a}
steps:
  - id: s
    type: tool
    tool: t
    outputs:
      a: {type: int}
      rows: {type: array, value: $result.rows}
  - id: m
    type: transform
    operation: map
    inputs:
      items: {type: array, value: $steps.s.output.rows}
    outputs:
      pairs: {type: array}
    expression:
      x: $item.x
      y: $item.y
"""


def test_constant_arrays_and_objects_are_fresh_copies_on_every_evaluation():
    tables = Tables(tagged=False)
    tables.const = lambda value, kind="auto": tables.consts.append(value) or len(tables.consts) - 1
    block, _params, _slots = assemble_expression(tables, E.ListExpr((E.Literal([1, {"a": 2}]),)), "wfs")
    decoded = X.verify(tables.blocks, len(tables.consts), tables.names, tables.keys, 0, "wfs")
    machine = X.Machine(tables.consts, tables.names, tables.keys, decoded, copy=V.copy_json)
    first = machine.evaluate(block, 0, {}, ())
    first[0][1]["a"] = 99
    assert machine.evaluate(block, 0, {}, ()) == [[1, {"a": 2}]]
    plain = X.Machine(tables.consts, tables.names, tables.keys, decoded)
    assert plain.evaluate(block, 0, {}, ())[0] is tables.consts[0]
