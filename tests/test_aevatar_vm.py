"""aevatar workflows on the VM: aevatar programs (docs/bytecode.md section 8).

- The guide's examples A-F and every corpus workflow that checks clean give
  the same run record on both backends with scripted hosts.
- Programs are deterministic, verified when they load (malformed ones are
  a VerifyError, never anything else, and what loads runs to a record) and
  fuel-bounded.
- The kernel's portable code paths (the ones MicroPython takes: ordered
  objects, its own JSON reader and writer, exact float repr) give what
  CPython's json gives.
"""

from __future__ import annotations

import json
import math
import textwrap

import pytest
from flowc import cli
from flowc.backends import vm
from flowc.backends.python import compile_workflow, load_module
from flowc.backends.vm import VerifyError
from flowc.backends.vm import expr_vm as X
from flowc.backends.vm import format as F
from flowc.host import ScriptedHost
from flowc.ir.limits import MAX_EXPR_DEPTH
from flowc.pipeline import driver
from flowc.runtime import json_text
from flowc.runtime import routing_run as K
from flowc.testing.strategies import ir_workflows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.program_bytes import kernel_body, open_program, pack_kernel, pack_program
from tests.test_aevatar_corpus import BROKEN, CORPUS
from tests.test_aevatar_run import DATA, SCRIPTS


def compile_text(text: str):
    result = driver.compile_text(textwrap.dedent(text), "workflow.yaml", "aevatar")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics if d.is_error]
    return result.workflow


def both(workflow, inputs, script, **limits):
    """(python record, vm record)."""
    py = load_module(compile_workflow(workflow)).run(inputs, ScriptedHost(script))
    got = vm.load(vm.compile_workflow(workflow)).run(inputs, ScriptedHost(script), **limits)
    return py, got


def same(a, b) -> bool:
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def seed(letter: str):
    return driver.compile_file(str(next((DATA / "seed_examples").glob(f"{letter}_*.yaml")))).workflow


# ---------------------------------------------------------------- the guide's examples
@pytest.mark.parametrize("letter", sorted(SCRIPTS))
def test_seed_examples_give_identical_records_on_both_backends(letter):
    inputs, script, expected = SCRIPTS[letter]
    py, got = both(seed(letter), inputs, script)
    assert got["status"] == "success", got["error"]
    if expected is not None:
        assert got["outputs"]["output"] == expected
    assert same(py, got)


# ---------------------------------------------------------------- the corpus
def corpus_hosts(workflow) -> list[dict]:
    """Generic scripted hosts: a fallback for every call, and answers per
    LLM role (routing words, a PASS, numbers, errors, a timeout)."""
    roles = [a.id for a in workflow.actors] or ["assistant"]
    per_role = {f"llm:{r}": [f"{r}: urgent", "true", "PASS 4", {"error": "rate limited"}, "2"] for r in roles}
    per_role.update({"human:approval": [True, False], "human:input": "yes",
                     "*": [{"output": {"k": "v", "n": 1.5, "items": ["a", "b"]}}, "normal", {"throw": "down"},
                           {"error": "timed out after 5 s"}]})
    return [{"*": {"output": "ok"}},
            {"*": ["urgent", "PASS 5", {"error": "boom"}, "false", '{"route": "approved", "score": 3}']},
            per_role]


CLEAN = [(rel, path) for rel, path in CORPUS if rel not in BROKEN]


def test_every_clean_corpus_workflow_gives_identical_records_on_both_backends():
    inputs = {"input": "hello\n---\nworld", "topic": "flowc"}
    equivalent = []
    for rel, path in CLEAN:
        result = driver.compile_file(str(path))
        assert result.ok, rel
        data = vm.compile_workflow(result.workflow)
        assert vm.compile_workflow(result.workflow) == data, rel   # deterministic
        program = vm.load(data)
        module = load_module(compile_workflow(result.workflow))
        for script in corpus_hosts(result.workflow):
            want = module.run(inputs, ScriptedHost(script))
            got = program.run(inputs, ScriptedHost(script))
            assert same(want, got), (rel, script)
        equivalent.append(rel)
    assert len(equivalent) == len(CORPUS) - len(BROKEN) == 174


# ---------------------------------------------------------------- every primitive
KITCHEN = r"""name: kitchen
roles:
  - id: a
    system_prompt: "Answer briefly."
    connectors: [crm]
  - id: b
steps:
  - id: start
    type: assign
    parameters: {target: topic, value: "${concat(upper(input), ' ', length(input), ' ', add(1.5, n), ' ', div(1, 3), ' ', sub(n), ' ', mul(2, 1e300, 1e10))}"}
  - id: fetch
    type: tool_call
    parameters: {tool: search, arguments: '{"q": "${json(topic)}", "k": 3}'}
  - id: pick
    type: transform
    parameters: {op: json_extract, path: items, fields: "name, score", sort_by: score, order: desc, n: "2"}
  - id: parse
    type: transform
    parameters: {op: json_parse, path: "0"}
  - id: facts
    type: retrieve_facts
    parameters: {query: "alpha beta", facts: "alpha one\nbeta two\ngamma\nalpha beta three", top_k: "2"}
  - id: check
    type: guard
    parameters: {check: regex, pattern: "al+pha", on_fail: skip}
  - id: judge
    type: evaluate
    target_role: a
    parameters: {criteria: accuracy, threshold: "3", on_below: retry_it}
    branches: {retry_it: think, _default: think}
  - id: think
    type: reflect
    target_role: b
    parameters: {max_rounds: "2"}
  - id: ask
    type: human_input
    parameters: {prompt: "Why ${topic}?", variable: why}
  - id: approve
    type: human_approval
    parameters: {prompt: "OK?", on_reject: continue}
    branches: {"true": crm, "false": crm}
  - id: crm
    type: connector_call
    target_role: a
    parameters: {connector: crm, operation: lookup, path: "/x", pass_through_input: "false"}
  - id: fan
    type: parallel
    parameters: {workers: "a,b", vote_step_type: vote}
  - id: first
    type: race
    parameters: {workers: "b,a"}
  - id: memo
    type: cache
    parameters: {cache_key: "${topic}", child_target_role: b}
  - id: each
    type: foreach
    parameters: {delimiter: ",", sub_step_type: llm_call, sub_target_role: a, sub_param_prompt_prefix: "Item ${input}:"}
  - id: mr
    type: map_reduce
    parameters: {delimiter: "\n---\n", map_step_type: llm_call, map_target_role: a, reduce_step_type: llm_call, reduce_target_role: b}
  - id: loop
    type: while
    parameters: {step: transform, sub_param_op: uppercase, condition: "${lt(iteration, 3)}", max_iterations: "5"}
  - id: nap
    type: delay
    parameters: {duration_ms: "250"}
  - id: signal
    type: wait_signal
    parameters: {signal_name: Go, timeout_ms: "1000"}
  - id: tell
    type: emit
    parameters: {event_type: done, payload: '{"topic": "${json(topic)}"}'}
  - id: save
    type: checkpoint
    parameters: {name: cp1}
  - id: child
    type: workflow_call
    parameters: {workflow: helper}
    retry: {max_attempts: 3, backoff: exponential, delay_ms: 100}
    on_error: {strategy: skip, default_output: "skipped"}
  - id: route
    type: switch
    parameters: {on: "${steps.parse.json.name}", branch.alpha: done, branch._default: done}
    branches: {alpha: done, _default: done}
  - id: done
    type: assign
    parameters: {target: final, value: "${if(eq(steps.check.success, 'true'), steps.facts.output, 'no')}"}
"""
KITCHEN_INPUTS = {"input": "hello,world", "n": "2"}
KITCHEN_SCRIPT = {
    "tool:search": {"output": {"items": [{"name": "alpha", "score": 0.1, "x": 1},
                                         {"name": "beta", "score": 2.5e-07, "extra": [1, 2]},
                                         {"name": "gamma", "score": 1e21}], "total": 3}},
    "llm:a": [{"echo": True}, "4", "alpha", "beta"],
    "llm:b": ["draft", "needs work", "better", "PASS", {"throw": "down"}, "fine"],
    "human:input": "because \u00e9 \u00fcn\u00efcode \u2028",
    "human:approval": {"approved": "true", "content": "edited"},
    "connector:crm": {"echo": True},
    "signal:go": {"payload": {"z": 1, "a": [True, None]}},
    "workflow:helper": [{"error": "flaky"}, {"error": "flaky"}, {"output": "helped"}],
    "*": {"echo": True},
}


def test_every_primitive_gives_identical_records_on_both_backends():
    py, got = both(compile_text(KITCHEN), KITCHEN_INPUTS, KITCHEN_SCRIPT)
    assert same(py, got)
    assert got["status"] == "success" and len(got["steps"]) == 37 and got["sleeps_ms"] == [250, 100, 200]
    kinds = {(c["capability"], c["name"]) for c in got["calls"]}
    assert {("tool", "search"), ("llm", "a"), ("llm", "b"), ("human", "input"), ("human", "approval"),
            ("connector", "crm"), ("signal", "go"), ("event", "done"), ("checkpoint", "cp1"),
            ("workflow", "helper")} <= kinds


# ---------------------------------------------------------------- CLI
def test_flowc_compile_run_and_disasm(tmp_path, capsys):
    path = next((DATA / "seed_examples").glob("B_*.yaml"))
    out = tmp_path / "b.wfav"
    assert cli.main(["compile", "--target", "bytecode", str(path), "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data[:5] == b"FLWC" + bytes([F.FORMAT_VERSION]) and open_program(data)[0] == "kernel"
    inputs, script, expected = SCRIPTS["B"]
    (tmp_path / "in.json").write_text(json.dumps(inputs))
    (tmp_path / "host.json").write_text(json.dumps(script))
    capsys.readouterr()
    assert cli.main(["run", "--backend", "vm", "--json", str(path), "--inputs", str(tmp_path / "in.json"),
                     "--host", str(tmp_path / "host.json")]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["outputs"]["output"] == expected
    assert record == json.loads(json.dumps(vm.load(data).run(inputs, ScriptedHost(script))))
    assert cli.main(["disasm", str(out)]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith("flowc program, format version 8, scheduling model kernel\n"
                              'workflow: "fetch_and_route"\n')
    for text in ("route: switch", "branch '_default' -> handle_normal", "block 0:", "RETURN"):
        assert text in listing


def test_expressions_compile_to_lazy_blocks():
    wf = compile_text("""\
        name: e
        steps:
          - id: a
            type: transform
            parameters:
              op: "${if(and(gt(n, 1), not(isblank(input))), upper('x'), concat(input, '!'))}"
        """)
    data = vm.compile_workflow(wf)
    listing = vm.disassemble(data)
    # if is a jump on aevatar truthiness; and takes its arguments as lambdas over blocks of their own
    assert "JUMP_IF_NOT        aevatar_truthy, -> " in listing
    assert "LAMBDA             block 1, slot 0, 0" in listing and "(aevatar.and), 2" in listing
    for inputs in ({"input": "hi", "n": "2"}, {"input": "", "n": "2"}, {"input": "hi"}):
        py, got = both(wf, inputs, {})
        assert same(py, got)


def test_every_nesting_check_accepts_runs_on_the_vm(tmp_path, capsys):
    """flowc check limits nesting (LIM101) below the VM's lambda depth, so
    the deepest expression check accepts runs; one deeper is a finding of
    check and of compile, not an assembler error."""
    def nested(depth: int) -> str:
        expr = "x"
        for _ in range(depth):
            expr = f"if(true, {expr}, 'n')"
        return 'name: d\nsteps:\n  - id: a\n    type: transform\n    parameters:\n      op: "${' + expr + '}"\n'

    assert X.MAX_LAMBDA_DEPTH >= MAX_EXPR_DEPTH
    deepest = MAX_EXPR_DEPTH - 4  # the parameters map, the template and a variable (two levels) around
    py, got = both(compile_text(nested(deepest)), {"x": "uppercase", "input": "a"}, {})
    assert got["outputs"]["output"] == "A" and same(py, got)
    path = tmp_path / "deep.yaml"
    path.write_text(nested(deepest + 1))
    capsys.readouterr()
    assert cli.main(["compile", "--target", "bytecode", str(path), "-o", str(tmp_path / "deep.wfav")]) == 1
    assert "error[LIM101]" in capsys.readouterr().err



def test_docs_name_the_format_and_the_limits():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "bytecode.md").read_text(encoding="utf-8")
    assert "## 8. Kernel programs (aevatar)\n" in doc
    flowing = " ".join(doc.split())
    assert f"lambdas nest at most {X.MAX_LAMBDA_DEPTH} deep" in flowing

# ---------------------------------------------------------------- behaviour
LOOP = """\
    name: spin
    steps:
      - id: a
        type: assign
        parameters: {target: x, value: "${concat(x, '1')}"}
        next: b
      - id: b
        type: conditional
        parameters: {condition: "false"}
        branches: {"true": c, "false": a}
      - id: c
        type: assign
        parameters: {target: x, value: "2"}
    """


def test_the_step_budget_applies_on_both_backends():
    py, got = both(compile_text(LOOP), {}, {})
    assert got["status"] == "failed" and "budget" in got["error"]["message"]
    assert same(py, got)


def test_fuel_bounds_instructions_and_dispatches():
    program = vm.load(vm.compile_workflow(compile_text(LOOP)))
    record = program.run({}, ScriptedHost({}), max_instructions=100)
    assert record["status"] == "failed"
    assert record["error"] == {"message": "fuel exhausted: more than 100 instructions", "step": "a"}
    record = program.run({}, ScriptedHost({}), max_iterations=7)
    assert record["error"] == {"message": "fuel exhausted: more than 7 iterations", "step": "b"}
    assert [s["id"] for s in record["steps"]] == ["a", "b"] * 3 + ["a"]
    # the limits are per run
    assert program.run({}, ScriptedHost({}))["error"]["message"].startswith("step budget exhausted")


def test_a_composite_sub_step_fails_its_step_on_both_backends():
    # foreach's default sub-step type is parallel, which has no workers of its own there
    wf = compile_text("""\
        name: t
        roles:
          - id: w
        steps:
          - id: per
            type: foreach
            parameters: {sub_target_role: w}
        """)
    py, got = both(wf, {"input": "a\n---\nb"}, {"*": {"output": "ok"}})
    assert same(py, got)
    assert got["status"] == "failed" and got["error"] == {"message": "foreach: an item failed", "step": "per"}
    assert [s["status"] for s in got["steps"]] == ["failed", "failed", "failed"]


@pytest.mark.parametrize("letter", sorted(SCRIPTS))
def test_the_portable_kernel_paths_give_the_same_records(letter, monkeypatch):
    """What MicroPython runs (ordered objects, json_loads/json_dumps,
    float_repr) gives CPython's records."""
    inputs, script, _ = SCRIPTS[letter]
    program = vm.load(vm.compile_workflow(seed(letter)))
    want = program.run(inputs, ScriptedHost(script))
    for module in (K, json_text):   # the step loop and the JSON text it reads and writes there
        monkeypatch.setattr(module, "_MICRO", True)
        monkeypatch.setattr(module, "_Obj", __import__("collections").OrderedDict)
    got = program.run(inputs, ScriptedHost(script))
    assert json.dumps(got) == json.dumps(want)


# ---------------------------------------------------------------- the portable JSON
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(json_values, st.sampled_from([None, 2]))
def test_json_dumps_is_cpython_json(value, indent):
    if indent is None:
        want = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    else:
        want = json.dumps(value, ensure_ascii=False, indent=indent)
    old = K._MICRO
    K._MICRO = True
    try:
        assert json_text.json_dumps(value, indent) == want
        assert K._dumps(value, indent) == want
    finally:
        K._MICRO = old


@settings(max_examples=400, deadline=None)
@given(json_values, st.sampled_from([None, 1, 2]), st.sampled_from(["", " ", "\n\t"]))
def test_json_loads_is_cpython_json(value, indent, pad):
    text = pad + json.dumps(value, ensure_ascii=bool(indent), indent=indent) + pad
    got = json_text.json_loads(text)
    assert json.dumps(got, sort_keys=False) == json.dumps(json.loads(text), sort_keys=False)


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet='{}[]",:0123456789.eE+-tfnulrsaINfiy \\u\n', max_size=24))
def test_json_loads_accepts_and_refuses_what_cpython_does(text):
    try:
        want = ("ok", json.dumps(json.loads(text)))
    except ValueError:
        want = ("error", None)
    except RecursionError:  # pragma: no cover
        return
    try:
        got = ("ok", json.dumps(json_text.json_loads(text)))
    except ValueError:
        got = ("error", None)
    assert got == want, text


def test_portable_json_nests_beyond_the_interpreter_stack():
    deep = "[" * 20000 + '{"a":[]}' + "]" * 20000
    assert json_text.json_dumps(json_text.json_loads(deep)) == deep
    assert json_text.json_dumps({"a": [1, {"b": []}]}, 2) == json.dumps({"a": [1, {"b": []}]}, indent=2)


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_repr_is_cpython_repr(x):
    old = K._MICRO
    K._MICRO = True
    try:
        assert json_text.float_repr(x) == repr(x)
    finally:
        K._MICRO = old


def test_float_repr_edges():
    old = K._MICRO
    K._MICRO = True
    try:
        for x in (5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e16, 1e-5, 1e-4, 0.1, -0.0, 0.0,
                  9007199254740993.0, 1234567890123456.0, 2.0 ** 60, math.pi):
            assert json_text.float_repr(x) == repr(x)
    finally:
        K._MICRO = old


# ---------------------------------------------------------------- verification
_pack_body = pack_kernel
_body = kernel_body


B_PROGRAM = vm.compile_workflow(seed("B"))
D_PROGRAM = vm.compile_workflow(seed("D"))


def _with(mutate):
    body = _body(B_PROGRAM)
    mutate(body)
    return _pack_body(body)


def _block(*ins) -> bytes:
    out = bytearray()
    for op, *operands in ins:
        out.append(op)
        if op in X.PACKED_OPS:   # access rule and name in one varint
            operands = [operands[1] << X.ACCESS_BITS | operands[0]]
        for v in operands:
            while True:
                if v >= 0x80:
                    out.append((v & 0x7F) | 0x80)
                    v >>= 7
                else:
                    out.append(v)
                    break
    return bytes(out)


def _code(body, ins) -> bytes:
    """A block of ``ins``; a str operand is a builtin key, added to the names."""
    resolved = []
    for op, *operands in ins:
        for i, v in enumerate(operands):
            if isinstance(v, str):
                body[2].append(v)
                operands[i] = len(body[2]) - 1
        resolved.append((op, *operands))
    return _block(*resolved)


def _set_block(*ins):
    def mutate(body):
        body[3][0] = ins[0] if isinstance(ins[0], bytes) else _code(body, ins)
    return mutate


def _add_blocks(*blocks):
    """Block 0 becomes the first; the others are appended (``LAMBDA "+k"`` names the k-th of them)."""
    def mutate(body):
        n = len(body[3])
        fixed = []
        for ins in blocks:
            fixed.append([tuple(n + int(v[1:]) if isinstance(v, str) and v.startswith("+") else v for v in i)
                          for i in ins])
        body[3][0] = _code(body, fixed[0])
        body[3].extend(_code(body, ins) for ins in fixed[1:])
    return mutate


_ONE = [(X.CONST, 0), (X.RETURN,)]
_AND = "aevatar.and"

BAD = {
    "magic": b"FLWX" + B_PROGRAM[4:],
    "truncated": B_PROGRAM[:-5],
    "version": B_PROGRAM[:4] + b"\x09" + B_PROGRAM[5:],
    "checksum": B_PROGRAM[:-1] + bytes([B_PROGRAM[-1] ^ 1]),
    "plan shape": _pack_body(["b", [], [], [], 1, 2]),
    "model": pack_program("dataflow", "b", open_program(B_PROGRAM)[2]),
    "unknown opcode": _with(_set_block(b"\x7f\x12")),
    "no RETURN": _with(_set_block((X.CONST, 0))),
    "RETURN with two values": _with(_set_block((X.CONST, 0), (X.CONST, 0), (X.RETURN,))),
    "RETURN on an empty stack": _with(_set_block((X.RETURN,))),
    "const out of range": _with(_set_block((X.CONST, 10 ** 6), (X.RETURN,))),
    "name out of range": _with(_set_block((X.LOAD, 1, 10 ** 6), (X.RETURN,))),
    "access rule of another dialect": _with(_set_block((X.LOAD, 3, 0), (X.RETURN,))),
    "unknown function": _with(_set_block((X.CONST, 0), (X.CALL, "aevatar.nope", 1), (X.RETURN,))),
    "wrong arity": _with(_set_block((X.CONST, 0), (X.CONST, 0), (X.CALL, "aevatar.isblank", 2), (X.RETURN,))),
    "stack underflow": _with(_set_block((X.CALL, "aevatar.eq", 2), (X.RETURN,))),
    "lazy function called strictly": _with(_set_block((X.CONST, 0), (X.CONST, 0), (X.CALL, _AND, 2),
                                                      (X.RETURN,))),
    "LAMBDA to an earlier block": _with(lambda b: b[3].__setitem__(1, _code(b, [
        (X.LAMBDA, 0, 0, 0), (X.LAMBDA, 0, 0, 0), (X.CALL, _AND, 2), (X.RETURN,)]))),
    "a block the body of two LAMBDAs": _with(_add_blocks(
        [(X.LAMBDA, "+1", 0, 0), (X.LAMBDA, "+1", 0, 0), (X.CALL, _AND, 2), (X.RETURN,)], _ONE)),
    "LAMBDA past the last block": _with(_set_block((X.LAMBDA, 10 ** 5, 0, 0), (X.LAMBDA, 10 ** 5 + 1, 0, 0),
                                                   (X.CALL, _AND, 2), (X.RETURN,))),
    "a lambda as the value": _with(_add_blocks([(X.LAMBDA, "+1", 0, 0), (X.RETURN,)], _ONE)),
    "a lambda to a strict function": _with(_add_blocks(
        [(X.LAMBDA, "+1", 0, 0), (X.CALL, "aevatar.not", 1), (X.RETURN,)], _ONE)),
    "a lambda with parameters where thunks go": _with(_add_blocks(
        [(X.LAMBDA, "+1", 0, 1), (X.LAMBDA, "+2", 0, 0), (X.CALL, _AND, 2), (X.RETURN,)], _ONE, _ONE)),
    "a jump between a LAMBDA and its CALL": _with(_add_blocks(
        [(X.JUMP, 6), (X.LAMBDA, "+1", 0, 0), (X.LAMBDA, "+2", 0, 0), (X.CALL, _AND, 2), (X.RETURN,)],
        _ONE, _ONE)),
    "long varint": _with(_set_block(b"\x01\x80\x80\x80\x80\x80\x00\x12")),
    "next to an unknown step": _with(lambda b: b[6].append([b[5][0][0], "nowhere", "sequence", None])),
    "branch to an unknown step": _with(lambda b: b[6].append([b[5][2][0], "nowhere", "branch", "x"])),
    "an edge from an unknown step": _with(lambda b: b[6].append(["nowhere", b[5][0][0], "sequence", None])),
    "an edge of an unknown kind": _with(lambda b: b[6].append([b[5][0][0], b[5][1][0], "goto", None])),
    "an edge label not a string": _with(lambda b: b[6].append([b[5][0][0], b[5][1][0], "branch", 1])),
    "a short edge": _with(lambda b: b[6].append([b[5][0][0], b[5][1][0], "branch"])),
    "edges not an array": _with(lambda b: b.__setitem__(6, {})),
    "duplicate step id": _with(lambda b: b[5][1].__setitem__(0, b[5][0][0])),
    "short step row": _with(lambda b: b[5][0].__delitem__(slice(11, None))),
    "timeout below 100 ms": _with(lambda b: b[5][0].__setitem__(11, 99)),
    "timeout not an integer": _with(lambda b: b[5][0].__setitem__(11, "5s")),
    "bad retry": _with(lambda b: b[5][0].__setitem__(7, [1, 10, 3])),
    "negative retry": _with(lambda b: b[5][0].__setitem__(7, [-1, 10, 1])),
    "bad on_error": _with(lambda b: b[5][0].__setitem__(6, "explode")),
    "on_error not a string": _with(lambda b: b[5][0].__setitem__(6, ["skip", None, None])),
    "default output not a string": _with(lambda b: b[5][0].__setitem__(8, 3)),
    "params block out of range": _with(lambda b: b[5][0][3].append(["k", 10 ** 6])),
    "params name not a string": _with(lambda b: b[5][0][3].append([1, 0])),
    "role setting not a string": _with(lambda b: b[4]["analyst"].__setitem__("temperature", 0.5)),
    "role setting name not a string": _with(lambda b: b[4]["analyst"].__setitem__(b"x", "y")),
    "regions not a list": _with(lambda b: b[5][0].__setitem__(10, {"body": []})),
    "a region not [name, sub-steps, edges]": _with(lambda b: b[5][0].__setitem__(10, [["body", []]])),
    "a region edge to an unknown sub-step": _with(
        lambda b: b[5][0].__setitem__(10, [["body", [], [["a", "b", "sequence", None]]]])),
    "constant not a string": _with(lambda b: b[1].append(1)),
}


def test_the_plan_section_is_roles_step_rows_and_flat_edges():
    roles, steps, edges = open_program(B_PROGRAM)[2]["plan"]
    assert isinstance(roles, dict) and all(len(row) >= 8 and type(row[7]) is int for row in steps)
    assert edges and len(edges) % 4 == 0
    listed = [[steps[s][0], steps[t][0], F.EDGE_KINDS[k], label] for s, t, k, label in zip(*[iter(edges)] * 4)]
    # the fallthrough edges are not listed: the loader adds them, after each step's own
    loaded = vm.load(B_PROGRAM).plan["edges"]
    assert all(e[2] != "fallthrough" for e in listed) and any(e[2] == "fallthrough" for e in loaded)
    assert [e for e in loaded if e[2] != "fallthrough"] == listed
    for i, step in enumerate(steps[:-1]):
        own = [e for e in loaded if e[0] == step[0]]
        sequenced = any(e[2] == "sequence" for e in own)
        assert (own[-1:] == [[step[0], steps[i + 1][0], "fallthrough", None]]) is not sequenced
    # a program whose plan has no edges is refused, not run without its routes
    with pytest.raises(VerifyError):
        vm.load(pack_kernel(kernel_body(B_PROGRAM)[:6]))


def test_the_loader_and_the_format_agree_on_the_step_row():
    from flowc.backends.vm import plan_vm

    assert plan_vm.KERNEL_ON_ERROR == F.KERNEL_ON_ERROR
    optional = plan_vm.LAYOUTS["kernel"]["step"]["optional"]
    assert [count for count, _field in optional] == [3 if k == "retry" else 1 for k in F.KERNEL_STEP_FIELDS]


def test_edges_listed_out_of_step_order_or_fallthrough_edges_are_refused():
    model, name, sections = open_program(B_PROGRAM)
    edges = sections["plan"][2]
    swapped = edges[4:8] + edges[:4] + edges[8:]
    assert swapped[0] != edges[0]
    sections["plan"][2] = swapped
    with pytest.raises(VerifyError, match="listed step by step"):
        vm.load(pack_program(model, name, sections))
    sections["plan"][2] = [edges[0], edges[1], F.EDGE_KINDS.index("fallthrough"), None] + edges
    with pytest.raises(VerifyError, match="fallthrough edges are implied"):
        vm.load(pack_program(model, name, sections))


@pytest.mark.parametrize("name", sorted(BAD))
def test_malformed_programs_are_refused(name):
    with pytest.raises(VerifyError):
        vm.load(BAD[name])


def _and_chain(depth: int) -> bytes:
    """B's program with ``depth`` nested ands in front: block 2k's lambdas are blocks 2k+1 and 2k+2."""
    body = _body(B_PROGRAM)
    chain = []
    for k in range(depth):
        chain.append(_code(body, [(X.LAMBDA, 2 * k + 1, 0, 0), (X.LAMBDA, 2 * k + 2, 0, 0), (X.CALL, _AND, 2),
                                  (X.RETURN,)]))
        chain.append(_code(body, _ONE))
    chain.append(_code(body, _ONE))
    body[3] = chain + body[3]
    for row in body[5]:
        row[3] = [[k, b + len(chain)] for k, b in row[3]]
    body[5][0][3].append(["nested", 0])
    return _pack_body(body)


def test_lambda_nesting_is_bounded_when_loading():
    program = vm.load(_and_chain(X.MAX_LAMBDA_DEPTH))
    assert program.run({}, ScriptedHost({"*": "ok"}))["status"] == "success"
    with pytest.raises(VerifyError, match="nests lambdas deeper"):
        vm.load(_and_chain(X.MAX_LAMBDA_DEPTH + 1))


def _run_or_refuse(data: bytes) -> None:
    """A program loads or is refused with VerifyError; one that loads runs to a record."""
    try:
        program = vm.load(data)
    except VerifyError:
        return
    for script in ({"*": {"output": "ok"}}, {"*": ["x", {"error": "no"}]}):
        record = program.run({"input": "a\n---\nb", "x": "1"}, ScriptedHost(script), max_iterations=500)
        assert record["status"] in ("success", "failed")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corrupted_bytes_are_refused_or_run(data):
    original = data.draw(st.sampled_from([B_PROGRAM, D_PROGRAM]))
    raw = bytearray(original)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(1, len(raw)))
    _run_or_refuse(bytes(raw[:cut]))


def _containers(inner):
    return st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5) | st.binary(max_size=2), inner,
                                                         max_size=3)


msgpack_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10 ** 6) | st.floats() | st.text(max_size=8)
    | st.binary(max_size=8), _containers, max_leaves=8)


def _paths(value, path=()):
    yield path
    if isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))


# Strings a well-typed corruption draws: every primitive type, policies, ids of the programs.
WORDS = ["while", "foreach", "parallel", "race", "map_reduce", "cache", "reflect", "evaluate", "switch",
         "conditional", "guard", "assign", "transform", "llm_call", "tool_call", "connector_call", "vote",
         "human_approval", "wait_signal", "delay", "workflow_call", "extension", "skip", "fallback", "fail",
         "body", "workers", "vote", "map", "reduce", "child", "fetch", "route", "finalize", "classify",
         "extract_each_file", "finish", "op", "on", "condition", "max_iterations", "branch._default", "_default"]


def _same_kind(data, old):
    """A value of the same msgpack kind as ``old`` (a corruption that keeps the shape)."""
    if isinstance(old, str):
        return data.draw(st.sampled_from(WORDS) | st.text(max_size=4))
    if isinstance(old, bool) or old is None:
        return data.draw(st.sampled_from([None, True, False, "x", 0]))
    if isinstance(old, int):
        return data.draw(st.integers(0, 40))
    if isinstance(old, bytes):
        return bytes(data.draw(st.lists(st.integers(0, 40), max_size=8)))
    if isinstance(old, list) and old:
        return data.draw(st.permutations(old))
    return data.draw(msgpack_values)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corrupted_bodies_with_valid_checksums_are_refused_or_run(data):
    body = _body(data.draw(st.sampled_from([B_PROGRAM, D_PROGRAM])))
    for _ in range(data.draw(st.integers(1, 3))):
        # half of the time a field of the plan (roles, steps and edges), else anything
        paths = list(_paths(body))[1:]
        if data.draw(st.booleans()):
            paths = [p for p in paths if p[0] in (4, 5, 6) and len(p) > 1] or paths
        path = data.draw(st.sampled_from(paths))
        parent = body
        for key in path[:-1]:
            parent = parent[key]
        how = data.draw(st.sampled_from(["same kind", "same kind", "replace", "delete", "insert"]))
        if how == "same kind":
            parent[path[-1]] = _same_kind(data, parent[path[-1]])
        elif how == "replace":
            parent[path[-1]] = data.draw(msgpack_values)
        elif how == "delete":
            if isinstance(parent, list):
                del parent[path[-1]]
            else:
                parent.pop(path[-1])
        elif isinstance(parent, list):
            parent.insert(path[-1], data.draw(msgpack_values))
    _run_or_refuse(_pack_body(body))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corrupted_code_with_valid_checksums_is_refused_or_runs(data):
    body = _body(data.draw(st.sampled_from([B_PROGRAM, D_PROGRAM])))
    blocks = body[3]
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(blocks) - 1))
        code = bytearray(blocks[i])
        if code and data.draw(st.booleans()):
            code[data.draw(st.integers(0, len(code) - 1))] = data.draw(
                st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 12, 22, 0x7F, 0x80, 0xFF]))
        else:
            at = data.draw(st.integers(0, len(code)))
            code[at:at] = bytes(data.draw(st.lists(st.integers(0, 40), min_size=1, max_size=4)))
        blocks[i] = bytes(code)
    _run_or_refuse(_pack_body(body))


# ---------------------------------------------------------------- the loaded plan is the Python backend's

def _same_plan(workflow) -> None:
    from flowc.backends.vm.plan_assemble import bodies
    from flowc.plan import build_plan

    built = build_plan(workflow, bodies("kernel"), "kernel")
    loaded = vm.load(vm.compile_workflow(workflow)).plan
    assert loaded["edges"] == built["edges"]   # the fallthrough edges added back, in place
    plain = ("id", "type", "role", "capability", "name", "on_error", "retry", "default_output", "timeout_ms")
    for got, want in zip(loaded["nodes"], built["nodes"], strict=True):
        assert {k: got.get(k) for k in plain} == {k: want.get(k) for k in plain}
        assert [(name, g["edges"]) for name, g in got.get("regions") or ()] == \
            [(name, g["edges"]) for name, g in want.get("regions") or ()]


def test_corpus_programs_load_the_plan_the_python_backend_builds():
    checked = 0
    for path in sorted(DATA.rglob("*.yaml")):
        result = driver.compile_file(str(path))
        if result.ok:
            _same_plan(result.workflow)
            checked += 1
    assert checked > 100


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ir_workflows("aevatar"))
def test_generated_programs_load_the_plan_the_python_backend_builds(workflow):
    _same_plan(workflow)
