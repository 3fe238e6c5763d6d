"""WorkflowSkill bytecode's values run on the shared expression machine:
every value of a step row is a block of section code (docs/bytecode.md
sections 7 and 10), the records are the generated module's, and the
blocks are verified with WorkflowSkill's rules."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from flowc.backends.python import compile_workflow as python_compile
from flowc.backends.python import load_module
from flowc.backends.vm import VerifyError, compile_workflow, load
from flowc.backends.vm import expr_vm as X
from flowc.backends.vm.container import copy_json
from flowc.backends.vm.disasm import disassemble
from flowc.backends.vm.expr_assemble import Tables, assemble_expression
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
    return load(compile_workflow(workflow))


def _module_record(workflow, inputs, script):
    return load_module(python_compile(workflow)).run(inputs, ScriptedHost(script))


def _exprs(program) -> int:
    return len(program.machine.code)


def _case_workflows():
    for case in CASES:
        result = driver.compile_file(str(WFS_DIR / case["file"]))
        assert result.ok
        yield case, result.workflow


# A step row's fields that hold blocks (plan_vm.py decodes each to a closure over the machine).
_BLOCK_FIELDS = ("guard", "over", "args", "body", "mapping")


def test_every_value_is_a_block_of_the_shared_machine():
    total = 0
    for _case, wf in _case_workflows():
        program = _program(wf)
        total += _exprs(program)
        for node in program.plan["nodes"]:
            assert all(node.get(key) is None or callable(node[key]) for key in _BLOCK_FIELDS), node["id"]
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
    # the guard, the call's inputs, the outputs (the defaults are constants)
    assert _exprs(program) == 3
    script = {"t": [{"text": "hi"}, {"text": "again"}]}
    for inputs in ({}, {"who": "bob"}, {"n": 1}, {"n": "7"}):
        want = _module_record(wf, inputs, script)
        assert json.dumps(program.run(inputs, ScriptedHost(script))) == json.dumps(want)
    record = program.run({}, ScriptedHost(script))
    assert record["outputs"] == {"text": "hi and 3"}


def _body():
    wf = driver.compile_text(textwrap.dedent(GUARDED), "guarded.yaml", "workflowskill").workflow
    return sequential_body(compile_workflow(wf))


def _rejected(body) -> str:
    with pytest.raises(VerifyError) as info:
        load(pack_sequential(body))
    return str(info.value)


def test_a_row_naming_no_block_is_rejected():
    body = _body()
    rows = body[4][4]
    say = rows[0]
    assert say[0] == "say" and say[3] == 0b11100   # the mask: guard, inputs, call
    for at in (4, 5):   # the guard's block, the inputs' block
        row = list(say)
        row[at] = len(body[3])
        body[4][4] = [row, *rows[1:]]
        assert "an expression index is out of range" in _rejected(body)
    body = _body()
    body[4][3][1] = -1     # the workflow outputs' block
    assert "an expression index is out of range" in _rejected(body)


def test_the_blocks_are_verified_with_workflowskills_rules():
    body = _body()
    names, blocks = body[2], body[3]
    # a CEL builtin is no builtin of a WorkflowSkill program
    key = next(i for i, n in enumerate(names) if n.startswith("wfs."))
    body[2] = [*names[:key], "cel.size", *names[key + 1:]]
    assert "no builtin of this program" in _rejected(body)
    body[2] = names
    # a block ends at its RETURN: one without, opcodes past it, a block not bin
    for bad in (blocks[0][:-1], blocks[0] + bytes([X.CONST]), list(blocks[0])):
        body[3] = [bad, *blocks[1:]]
        assert _rejected(body)
    # LOAD carries its access rule: only wfs here
    block = blocks[0]
    load = block.index(X.LOAD)
    for access in range(len(X.ACCESS)):
        if X.ACCESS[access] == "wfs":
            continue
        rule = bytes([(block[load + 1] & ~((1 << X.ACCESS_BITS) - 1)) | access])
        body[3] = [block[:load + 1] + rule + block[load + 2:], *blocks[1:]]
        assert _rejected(body)


def test_a_bindings_object_literal_is_one_map_that_drops_missing_values():
    """A binding's object literal is MAP by rule wfs_compact (wfs.compact of
    the literal at once); an output without a value is wfs.pick of the raw result."""
    wf = driver.compile_text(textwrap.dedent(MAPPED), "mapped.yaml", "workflowskill").workflow
    program = _program(wf)
    text = disassemble(compile_workflow(wf, strip=True))
    assert "MAP                wfs_compact, 2" in text
    assert re.search(r"CALL +\d+ \(wfs.pick\), 2", text)
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
    machine = X.Machine(tables.consts, tables.names, tables.keys, decoded, copy=copy_json)
    first = machine.evaluate(block, 0, {}, ())
    first[0][1]["a"] = 99
    assert machine.evaluate(block, 0, {}, ()) == [[1, {"a": 2}]]
    plain = X.Machine(tables.consts, tables.names, tables.keys, decoded)
    assert plain.evaluate(block, 0, {}, ())[0] is tables.consts[0]
