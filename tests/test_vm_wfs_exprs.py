"""WorkflowSkill bytecode's expressions run on the shared expression machine
(``EXPR`` and section ``exprs``, docs/bytecode.md sections 1, 3 and 6): the
same records as the inline encoding, fuel included, and the section is
verified with WorkflowSkill's rules."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from flowc.backends.vm import expr_vm as X
from flowc.backends.vm import sequential as V
from flowc.backends.vm.assemble import assemble_body, join_blocks, pack_file, split_blocks
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


def _programs(workflow):
    """(the program with expression blocks, the one with every expression inline)."""
    shared = V.load(pack_file(assemble_body(workflow)))
    inline = V.load(pack_file(assemble_body(workflow, shared_expressions=False)))
    return shared, inline


def _exprs(program) -> int:
    return sum(1 for ins in program.decoded() if ins[0] == V.EXPR)


def _case_workflows():
    for case in CASES:
        result = driver.compile_file(str(WFS_DIR / case["file"]))
        assert result.ok
        yield case, result.workflow


def test_the_corpus_expressions_are_blocks_of_the_shared_machine():
    total = 0
    for _case, wf in _case_workflows():
        shared, inline = _programs(wf)
        total += _exprs(shared)
        assert _exprs(inline) == 0 and inline.machine is None
        assert (shared.machine is None) == (_exprs(shared) == 0)
    assert total > 50


def test_every_record_equals_the_inline_encodings_under_every_instruction_budget():
    """Fuel: an expression costs on the machine what it cost inline, so the
    run out of fuel at any budget gives the same record."""
    seen = 0
    for case, wf in _case_workflows():
        shared, inline = _programs(wf)
        if not _exprs(shared):
            continue
        for budget in [*range(160), None]:
            want = inline.run(case["inputs"], ScriptedHost(case["host"]), budget)
            got = shared.run(case["inputs"], ScriptedHost(case["host"]), budget)
            assert json.dumps(got) == json.dumps(want), (case["case"], budget)
            seen += 1
    assert seen > 1000


def test_guards_and_templates_give_the_inline_records():
    wf = driver.compile_text(textwrap.dedent(GUARDED), "guarded.yaml", "workflowskill").workflow
    shared, inline = _programs(wf)
    assert _exprs(shared) == 3   # the guard, the input's template, the output's template
    script = {"t": [{"text": "hi"}, {"text": "again"}]}
    for inputs in ({}, {"who": "bob"}, {"n": 1}, {"n": "7"}):
        for budget in [*range(60), None]:
            want = inline.run(inputs, ScriptedHost(script), budget)
            assert json.dumps(shared.run(inputs, ScriptedHost(script), budget)) == json.dumps(want)
    record = shared.run({}, ScriptedHost(script))
    assert record["outputs"] == {"text": "hi and 3"}


def _body():
    wf = driver.compile_text(textwrap.dedent(GUARDED), "guarded.yaml", "workflowskill").workflow
    body = sequential_body(pack_file(assemble_body(wf)))
    assert len(body) == 10
    return body


def _rejected(body) -> str:
    with pytest.raises(V.VerifyError) as info:
        V.load(pack_sequential(body))
    return str(info.value)


def _section(keys, decoded) -> list:
    """Section exprs of decoded blocks (targets are instruction indexes: 1-byte offsets here)."""
    return [keys, *split_blocks([_encoded(block) for block in decoded])]


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
    keys = body[9][0]
    body[9] = _section(keys, join_blocks(body[9][1:])[:1])
    assert "block" in _rejected(body) and "out of range" in _rejected(body)
    del body[9]
    assert "out of range" in _rejected(body)


def test_the_blocks_are_verified_with_workflowskills_rules():
    body = _body()
    keys, ops, lengths, shape, forms, names = body[9]
    # a CEL builtin is no builtin of a WorkflowSkill program
    body[9] = [[*keys[:-1], "cel.size"] if keys else ["cel.size"], ops, lengths, shape, forms, names]
    if keys:
        assert "no builtin of this program" in _rejected(body)
    # a form that does not end in RETURN, one that is empty, opcodes not bin, a section of another shape
    body[9] = [keys, ops, [lengths[0] - 1, lengths[1] + 1, *lengths[2:]], shape, forms, names]
    assert _rejected(body)
    body[9] = [keys, ops, [0, *lengths[1:]], shape, forms, names]
    assert "empty" in _rejected(body)
    body[9] = [keys, list(ops), lengths, shape, forms, names]
    assert "msgpack bin" in _rejected(body)
    body[9] = [keys]
    assert "section exprs must be [keys, ops, lengths, shape, forms, names]" in _rejected(body)
    # a block's form past the forms, a form no block has, names too many or too few
    body[9] = [keys, ops, lengths, shape, [*forms[:-1], len(lengths)], names]
    assert "names form" in _rejected(body)
    body[9] = [keys, ops, lengths, shape, [0 for _ in forms], names]
    assert "no block has" in _rejected(body)
    body[9] = [keys, ops, lengths, shape, forms, [*names, 0]]
    assert "name operands" in _rejected(body)
    body[9] = [keys, ops, lengths, shape, forms, names[:-1]]
    assert "name operands" in _rejected(body)
    # LOAD, FIELD and INDEX carry their access rule in the opcode byte: only wfs (3) here
    load = ops.index(X.LOAD + 3 * V.ACCESS_STEP)
    for byte in (X.LOAD, X.LOAD + V.ACCESS_STEP, X.LOAD + 4 * V.ACCESS_STEP, X.RETURN + V.ACCESS_STEP):
        body[9] = [keys, ops[:load] + bytes([byte]) + ops[load + 1:], lengths, shape, forms, names]
        assert _rejected(body)


def test_blocks_of_one_form_are_kept_and_verified_once(monkeypatch):
    """Blocks that differ only in their names share their form, checked once;
    each name is in range."""
    body = _body()
    keys = body[9][0]
    blocks = join_blocks(body[9][1:])
    twin = [(k, op, [o[0], len(body[2]) - 1] if op in X.PACKED_OPS else o) for k, op, o in blocks[0]]
    body[9] = _section(keys, [*blocks, twin])
    assert body[9][4][-1] == body[9][4][0] and len(body[9][2]) < len(blocks) + 1
    checked = []
    check = X.verify_decoded
    monkeypatch.setattr(X, "verify_decoded", lambda *args: checked.append(args[0]) or check(*args))
    V.load(pack_sequential(body))
    assert checked == list(range(len(body[9][2])))     # each form once
    monkeypatch.undo()
    if any(op in X.PACKED_OPS for _k, op, _o in twin):
        body[9][5][-1] = len(body[2])
        assert "name index" in _rejected(body)


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
