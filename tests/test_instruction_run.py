"""Running instruction workflows: the dataflow scheduler on both backends
(the generated Python module and the VM's dataflow program), the two
agentd end-to-end pipelines, and the scheduling rules one by one."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from flowc import cli
from flowc.backends.python import compile_workflow, load_module
from flowc.backends.vm import VerifyError, device, plan_vm
from flowc.backends.vm import compile_workflow as compile_bytecode
from flowc.backends.vm import load as load_program
from flowc.host import ScriptedHost, ToolError
from flowc.pipeline import driver
from flowc.runtime.dataflow_run import jitter_factor, schema_errors

from tests.program_bytes import open_program

DATA = Path(__file__).resolve().parent / "data" / "instruction"
BACKENDS = ("python", "vm")


def workflow_of(text: str):
    result = driver.compile_text(textwrap.dedent(text), "w.yaml", "instruction")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    return result.workflow


def run(workflow, backend: str, inputs=None, script=None, **kw):
    host = script if isinstance(script, ScriptedHost) else ScriptedHost(script or {})
    if backend == "python":
        return load_module(compile_workflow(workflow)).run(inputs or {}, host, **kw)
    return load_program(compile_bytecode(workflow)).run(inputs or {}, host, **kw)


def both(workflow, inputs=None, script=None, **kw):
    """The record, after checking both backends give the same one."""
    py = run(workflow, "python", inputs, script, **kw)
    vm = run(workflow, "vm", inputs, script, **kw)
    assert json.dumps(py, sort_keys=True) == json.dumps(vm, sort_keys=True)
    return py


def statuses(record) -> dict:
    return {s["id"]: s["status"] for s in record["steps"]}


# ------------------------------------------------------------------ the end-to-end pipelines

def test_data_pipeline_completes_on_both_backends():
    wf = driver.compile_file(str(DATA / "02-agentd-e2e-data-pipeline.yaml")).workflow
    record = both(wf)
    assert record["status"] == "completed" and record["error"] is None
    assert record["outputs"] == {
        "tags": ["b0:0=2", "b0:1=4", "b1:2=6", "b1:3=8", "b2:4=10", "b2:5=12"],
        "sorted": [6, 5, 4],
        "sum": 15,
        "n": 3,
        "iterations": 3,
        "chunks": ["one two", "three four", "five"],
        "csv": [{"k": "a", "v": "1"}, {"k": "b", "v": "2"}],
        "uniq": [1, 2, 3],
    }
    assert [s["id"] for s in record["steps"]][:4] == ["start", "items", "each[0].double", "each[0].tag"]
    assert record["calls"] == [] and record["sleeps_ms"] == []


def test_control_flow_pipeline_completes_on_both_backends():
    wf = driver.compile_file(str(DATA / "03-agentd-e2e-control-flow.yaml")).workflow
    record = both(wf)
    assert record["status"] == "completed" and record["error"] is None
    assert record["outputs"] == {
        "par": {"a": "A", "b": None, "c": 2, "_errors": {"b": "b breaks"}},
        "race": "fast",
        "sub": "sub saw fast path",
        "guard": "guard ran",
        "skipped": "pruned",
        "rec": "recovered",
    }
    s = statuses(record)
    assert s["par{b}.y"] == "failed" and s["par"] == "done"
    assert s["took_slow"] == s["took_default"] == "pruned" and s["took_fast"] == "done"
    assert s["flaky"] == "done" and s["skipped"] == "pruned" and s["goto_src"] == "failed"
    assert s["recover"] == "done" and s["done"] == "done"
    assert record["sleeps_ms"] == [30000]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["02-agentd-e2e-data-pipeline.yaml", "03-agentd-e2e-control-flow.yaml"])
def test_flowc_run_completes(capsys, backend, name):
    assert cli.main(["run", "--backend", backend, "--json", str(DATA / name)]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "completed"


def test_the_generated_module_runs_from_a_shell(tmp_path):
    module = tmp_path / "pipe.py"
    assert cli.main(["compile", str(DATA / "03-agentd-e2e-control-flow.yaml"), "-o", str(module)]) == 0
    done = subprocess.run([sys.executable, str(module)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"


def test_compilation_is_deterministic():
    wf = driver.compile_file(str(DATA / "02-agentd-e2e-data-pipeline.yaml")).workflow
    again = driver.compile_file(str(DATA / "02-agentd-e2e-data-pipeline.yaml")).workflow
    assert compile_workflow(wf) == compile_workflow(again)
    assert compile_bytecode(wf) == compile_bytecode(again)


def test_the_hiring_workflows_run_with_a_scripted_host():
    path = DATA / "01-agentd-hiring-intake.yaml"
    from flowc.compiler.instruction.frontend import compile_instruction_all

    workflows, _ = compile_instruction_all(path.read_text(encoding="utf-8"), str(path))
    intake = workflows[1]
    script = {
        "mcp:ashby/get_application": {"output": {"name": "Ada"}},
        "mcp:ashby/get_resume_text": {"output": "CV text"},
        "memory:get": {"output": {"value": "the JD"}},
        "llm:extract": {"output": {"candidate_name": "Ada", "overall_fit": 80}},
        "llm:judge": {"output": {"verdict": "clean", "evidence": ""}},
        "a2a:send": {"output": {"ok": True}},
    }
    payload = {"body": {"application": {"id": "a1"}, "job": {"id": "j1"}}}
    record = both(intake, script=script, payload=payload)
    assert record["status"] == "completed"
    s = statuses(record)
    assert s["record"] == "done" and s["flag"] == "pruned" and s["record_flagged"] == "pruned"
    sent = [c for c in record["calls"] if c["capability"] == "a2a"]
    assert sent[0]["args"]["parts"][0]["data"]["agentd"]["candidate"] == "Ada"
    get_cv = next(c for c in record["calls"] if c["name"] == "ashby/get_resume_text")
    assert get_cv["args"]["args"] == {"application_id": "a1"}


# ------------------------------------------------------------------ scheduling rules

BASE = """\
name: t
steps:
  start: { kind: manual }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_join_stays_alive_with_one_live_parent_and_dies_with_none(backend):
    wf = workflow_of(BASE + """\
  a: { kind: assign, depends_on: start, value: 1, when: "false" }
  b: { kind: assign, depends_on: start, value: 2 }
  join: { kind: noop, depends_on: [a, b] }
  c: { kind: noop, depends_on: a }
  d: { kind: noop, depends_on: c }
  done: { kind: finish, depends_on: [join, d], output: "{{ steps.b.output }}" }
""")
    record = run(wf, backend)
    s = statuses(record)
    assert (s["a"], s["join"], s["c"], s["d"]) == ("pruned", "done", "pruned", "pruned")
    assert record["status"] == "completed" and record["outputs"] == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failed_step_fails_the_run_and_blocks_its_dependents(backend):
    wf = workflow_of(BASE + """\
  boom: { kind: fail, depends_on: start, message: nope }
  after: { kind: noop, depends_on: boom }
  done: { kind: finish, depends_on: after }
""")
    record = run(wf, backend)
    assert record["status"] == "failed"
    assert record["error"] == {"message": "nope", "step": "boom"}
    assert statuses(record) == {"start": "done", "boom": "failed", "after": "cancelled", "done": "cancelled"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_on_error_continue_records_the_error(backend):
    wf = workflow_of(BASE + """\
  boom: { kind: fail, depends_on: start, message: nope, on_error: continue }
  done: { kind: finish, depends_on: boom, output: { out: "{{ steps.boom.output }}", err: "{{ steps.boom.error }}" } }
""")
    assert run(wf, backend)["outputs"] == {"out": {"error": "nope"}, "err": "nope"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_nothing_ready_and_no_finish_is_stalled(backend):
    wf = workflow_of(BASE + """\
  guard: { kind: assign, depends_on: start, value: 1, when: "false" }
  done: { kind: finish, depends_on: guard }
""")
    record = run(wf, backend)
    assert record["status"] == "stalled" and statuses(record)["done"] == "pruned"


@pytest.mark.parametrize("backend", BACKENDS)
def test_finish_status_and_the_first_finish_wins(backend):
    wf = workflow_of(BASE + """\
  a_bad: { kind: finish, depends_on: start, status: refused, reason: "not today" }
  b_good: { kind: finish, depends_on: start }
""")
    record = run(wf, backend)
    assert record["status"] == "refused" and record["error"] == {"message": "not today", "step": "a_bad"}
    assert statuses(record)["b_good"] == "cancelled"


@pytest.mark.parametrize("backend", BACKENDS)
def test_switch_routes_and_prunes(backend):
    text = BASE + """\
  sw: { kind: switch, depends_on: start, on: "{{ inputs.pick }}", cases: { x: left, y: right }, default: other }
  left: { kind: assign, depends_on: sw, value: L }
  right: { kind: assign, depends_on: sw, value: R }
  other: { kind: assign, depends_on: sw, value: O }
  done: { kind: finish, depends_on: [left, right, other], output: "{{ steps.sw.output }}" }
"""
    wf = workflow_of(text)
    record = run(wf, backend, {"pick": "y"})
    assert statuses(record)["right"] == "done" and statuses(record)["left"] == "pruned"
    record = run(wf, backend, {"pick": "zzz"})
    assert statuses(record)["other"] == "done" and record["outputs"] == "zzz"


@pytest.mark.parametrize("backend", BACKENDS)
def test_triggers_the_payload_and_sibling_skipping(backend):
    wf = workflow_of("""\
name: t
steps:
  a: { kind: manual }
  b: { kind: event, on: "x.y" }
  use: { kind: assign, depends_on: [a, b], value: "{{ steps.b.output.n }}" }
  done: { kind: finish, depends_on: use, output: "{{ steps.use.output }}" }
""")
    record = run(wf, backend, trigger="b", payload={"n": 7})
    assert record["outputs"] == 7 and statuses(record)["a"] == "skipped"


@pytest.mark.parametrize("backend", BACKENDS)
def test_retries_sleep_with_deterministic_jitter(backend):
    wf = workflow_of(BASE + """\
  call: { kind: tool, depends_on: start, name: flaky, retry: { max: 3, backoff: 1s } }
  done: { kind: finish, depends_on: call, output: "{{ steps.call.output }}" }
""")
    script = {"flaky": [{"error": "down"}, {"error": "down"}, {"output": "ok"}]}
    record = run(wf, backend, script=script)
    assert record["status"] == "completed" and record["outputs"] == "ok"
    assert len(record["calls"]) == 3
    first, second = record["sleeps_ms"]
    assert 800 <= first <= 1200 and 1600 <= second <= 2400
    assert record["sleeps_ms"] == run(wf, backend, script=script)["sleeps_ms"]
    assert jitter_factor("t", "call", 1, 0.2) == jitter_factor("t", "call", 1, 0.2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_host_failures_and_expression_errors_fail_the_step(backend):
    wf = workflow_of(BASE + """\
  call: { kind: tool, depends_on: start, name: missing, on_error: continue }
  bad: { kind: assign, depends_on: call, value: "{{ inputs.nope }}", on_error: continue }
  guard: { kind: noop, depends_on: bad, when: "inputs.x > 1", on_error: continue }
  done: { kind: finish, depends_on: guard, output: ["{{ steps.call.error }}", "{{ steps.bad.error }}", "{{ steps.guard.error }}"] }
""")
    record = run(wf, backend, {"x": "a"})
    call_error, bad_error, guard_error = record["outputs"]
    assert "not registered" in call_error
    assert bad_error == "no such key: nope"
    assert guard_error.startswith("when: no such overload")


@pytest.mark.parametrize("backend", BACKENDS)
def test_template_defaults_and_typed_values(backend):
    wf = workflow_of(BASE + """\
  v: { kind: assign, depends_on: start, value: { n: "{{ inputs.n | 5 }}", s: "n={{ inputs.n | 5 }}", j: "{{ inputs.o }}" } }
  done: { kind: finish, depends_on: v, output: "{{ steps.v.output }}" }
""")
    assert run(wf, backend, {"o": {"k": [1]}})["outputs"] == {"n": 5, "s": "n=5", "j": {"k": [1]}}


@pytest.mark.parametrize("backend", BACKENDS)
def test_foreach_errors_become_objects_under_continue(backend):
    wf = workflow_of(BASE + """\
  each:
    kind: foreach
    depends_on: start
    over: [1, 0, 2]
    on_error: continue
    body: { steps: { div: { kind: assign, value: "CEL: 10 / item" } } }
  done: { kind: finish, depends_on: each, output: "{{ steps.each.output }}" }
""")
    record = run(wf, backend)
    assert record["outputs"] == [10, {"index": 1, "error": "division by zero"}, 5]


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_iterate_and_collect(backend):
    wf = workflow_of(BASE + """\
  groups:
    kind: batch
    depends_on: start
    over: [1, 2, 3, 4, 5]
    size: 2
    body: { steps: { n: { kind: assign, value: "CEL: size(item)" } } }
  loop:
    kind: iterate
    depends_on: groups
    while: "CEL: iteration < 3"
    collect: true
    body: { steps: { sq: { kind: assign, value: "CEL: iteration * iteration" } } }
  done: { kind: finish, depends_on: loop, output: ["{{ steps.groups.output }}", "{{ steps.loop.output }}"] }
""")
    assert run(wf, backend)["outputs"] == [[2, 2, 1], [0, 1, 4]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_parallel_fails_without_continue_and_race_picks_the_least_sleep(backend):
    wf = workflow_of(BASE + """\
  race:
    kind: race
    depends_on: start
    branches:
      a: { steps: { s: { kind: sleep, duration: 2s }, v: { kind: assign, depends_on: s, value: A } } }
      b: { steps: { s: { kind: sleep, duration: 1s }, v: { kind: assign, depends_on: s, value: B } } }
  par:
    kind: parallel
    depends_on: race
    branches:
      ok: { steps: { v: { kind: assign, value: 1 } } }
      bad: { steps: { v: { kind: fail, message: broken } } }
  done: { kind: finish, depends_on: par }
""")
    record = run(wf, backend)
    assert record["status"] == "failed" and record["error"] == {"message": "branch bad: broken", "step": "par"}
    race = next(s for s in record["steps"] if s["id"] == "race")
    assert race["status"] == "done"


@pytest.mark.parametrize("backend", BACKENDS)
def test_data_steps(backend):
    wf = workflow_of(BASE + """\
  parsed: { kind: parse, depends_on: start, text: '{"a": [3, 1, 2]}', format: json }
  lines: { kind: parse, depends_on: start, text: "x\\ny", format: lines }
  sorted: { kind: sort, depends_on: parsed, over: "{{ steps.parsed.output.a }}" }
  people: { kind: sort, depends_on: start, over: [{n: b, a: 2}, {n: a, a: 1}, {n: c}], by: a, order: desc }
  uniq: { kind: dedupe, depends_on: people, over: [{k: 1, v: a}, {k: 1, v: b}, {k: 2}], by: k }
  chars: { kind: chunk, depends_on: start, value: abcdefg, size: 3, overlap: 1 }
  ok: { kind: validate, depends_on: start, value: { n: 1 }, schema: { type: object, required: [n] } }
  bad: { kind: validate, depends_on: start, value: { n: x }, schema: { properties: { n: { type: integer } } }, on_error: continue }
  mapped: { kind: map, depends_on: start, over: [1, 2], as: x, expr: "x * 10 + index" }
  check: { kind: assert, depends_on: mapped, condition: "steps.mapped.output == [10, 21]" }
  done:
    kind: finish
    depends_on: [parsed, lines, sorted, people, uniq, chars, ok, bad, check]
    output: ["{{ steps.sorted.output }}", "{{ steps.people.output }}", "{{ steps.uniq.output }}",
             "{{ steps.chars.output }}", "{{ steps.ok.output }}", "{{ steps.bad.error }}", "{{ steps.lines.output }}"]
""")
    record = run(wf, backend)
    assert record["status"] == "completed", record["error"]
    assert record["outputs"] == [
        [1, 2, 3],
        [{"n": "b", "a": 2}, {"n": "a", "a": 1}, {"n": "c"}],
        [{"k": 1, "v": "a"}, {"k": 2}],
        ["abc", "cde", "efg"],
        {"n": 1},
        "validate: $.n: expected integer, got string",
        ["x", "y"],
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_assign_reducers_from_state(backend):
    wf = workflow_of("""\
name: t
state:
  seen: { reducer: append }
steps:
  start: { kind: manual }
  a: { kind: assign, depends_on: start, value: 1, writes: seen }
  b: { kind: assign, depends_on: a, value: [2, 3], writes: seen }
  c: { kind: assign, depends_on: b, value: { x: 1 }, writes: m, mode: merge }
  d: { kind: assign, depends_on: c, value: { y: 2 }, writes: m, mode: merge }
  done: { kind: finish, depends_on: d, output: ["{{ vars.seen }}", "{{ vars.m }}"] }
""")
    assert run(wf, backend)["outputs"] == [[1, 2, 3], {"x": 1, "y": 2}]


@pytest.mark.parametrize("backend", BACKENDS)
def test_call_arguments_are_the_kind_fields(backend):
    wf = workflow_of(BASE + """\
  ask: { kind: human, depends_on: start, question: "Ship {{ inputs.v }}?", timeout: 1h }
  done: { kind: finish, depends_on: ask, output: "{{ steps.ask.output.ok }}" }
""")
    record = run(wf, backend, {"v": "1.2"}, {"human:ask": {"output": {"ok": True}}})
    assert record["calls"] == [{"capability": "human", "name": "ask", "args": {"question": "Ship 1.2?"}}]
    assert record["outputs"] is True


def test_a_timeout_routes_to_on_timeout():
    class Timeout(ToolError):
        timeout = True

    class Host(ScriptedHost):
        def call(self, capability, name, args):
            if capability == "signal":
                raise Timeout("timeout")
            return super().call(capability, name, args)

    wf = workflow_of(BASE + """\
  w: { kind: wait, depends_on: start, on: signal, signal: go, timeout: 5m, on_timeout: late }
  late: { kind: assign, value: late }
  ok: { kind: assign, depends_on: w, value: ok }
  done: { kind: finish, depends_on: late, output: "{{ steps.late.output }}" }
  fine: { kind: finish, depends_on: ok }
""")
    for backend in BACKENDS:
        record = run(wf, backend, script=Host({}))
        assert record["status"] == "completed" and record["outputs"] == "late"
        assert statuses(record)["w"] == "failed"


# ------------------------------------------------------------------ the VM's dataflow programs

def test_dataflow_programs_are_verified():
    wf = driver.compile_file(str(DATA / "03-agentd-e2e-control-flow.yaml")).workflow
    data = compile_bytecode(wf)
    assert open_program(data)[0] == "dataflow"
    assert isinstance(load_program(data), plan_vm.Program)
    with pytest.raises(VerifyError):
        load_program(data[: len(data) // 2])
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0x01
    with pytest.raises(VerifyError):
        load_program(bytes(flipped))


def test_bad_expression_blocks_are_refused():
    from flowc.backends.vm import expr_vm as V

    sizes, keys = (1, 1, 1, 1), ["cel.add"]
    V.verify_block(0, bytes([V.CONST, 0, V.RETURN]), sizes, keys, 0, V.PROFILES["cel"])
    for code in (bytes([V.RETURN]),                             # empty stack at RETURN
                 bytes([V.CONST, 0]),                           # no RETURN
                 bytes([V.CONST, 5, V.RETURN]),                 # const out of range
                 bytes([V.JUMP, 7, V.CONST, 0, V.RETURN]),      # jump into nowhere
                 bytes([V.CONST, 0, V.CALL, 0, 2, V.RETURN]),   # underflow
                 bytes([0xEE, V.RETURN])):                      # unknown opcode
        with pytest.raises(VerifyError):
            V.verify_block(0, code, sizes, keys, 0, V.PROFILES["cel"])


def test_fuel_bounds_expressions():
    from flowc.backends.vm import expr_vm as V
    from flowc.backends.vm.plan_assemble import assemble_expressions
    from flowc.compiler.instruction.cel import parse_cel

    program = device.load(assemble_expressions([parse_cel("[1, 2, 3].map(x, [1, 2, 3].map(y, x * y))")]))
    program.machine.fuel = 20
    with pytest.raises(V.OutOfFuel):
        program.evaluate(0, {})


def test_schema_subset():
    assert schema_errors({"a": [1, "x"]}, {"type": "object", "properties": {"a": {
        "type": "array", "items": {"type": "integer"}}}}) == ["$.a[1]: expected integer, got string"]
    assert schema_errors(3, {"minimum": 5}) == ["$: below the minimum"]
    assert schema_errors("b", {"enum": ["a"]}) == ["$: not one of the allowed values"]


# ------------------------------------------------------------------ MicroPython

MP_DIR = Path(__file__).resolve().parent / "micropython"
MP_PACKAGE = MP_DIR / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"


def test_dataflow_programs_run_on_micropython(tmp_path):
    """The VM bundle (cel, dataflow_run, the CEL machine, the dataflow loader
    and the kernel in one file) on MicroPython (WebAssembly port under node)
    gives the same records as CPython. Missing node or `npm ci` is a
    failure, as for the WorkflowSkill VM."""
    import shutil

    import msgpack
    from flowc.backends.vm.bundle import write_bundle

    node = shutil.which("node")
    assert node, "node is not installed: the MicroPython test needs node (v18+)"
    assert MP_PACKAGE.is_dir(), f"{MP_PACKAGE} is missing: run `npm ci` in {MP_DIR}"
    jobs = []
    for name in ("02-agentd-e2e-data-pipeline.yaml", "03-agentd-e2e-control-flow.yaml"):
        wf = driver.compile_file(str(DATA / name)).workflow
        jobs.append([name, compile_bytecode(wf), {}, {}, None, None])
    retry = workflow_of(BASE + """\
  call: { kind: tool, depends_on: start, name: flaky, retry: { max: 3, backoff: 1s } }
  check: { kind: assert, depends_on: call, condition: "steps.call.output.n * 2 == 84 && [1u, 2u].exists(x, x > 1u)" }
  done: { kind: finish, depends_on: check, output: { n: "{{ steps.call.output.n }}", sleeps: "CEL: 1.5 * 2.0" } }
""")
    jobs.append(["retry", compile_bytecode(retry), {}, {"flaky": [{"error": "down"}, {"output": {"n": 42}}]},
                 None, None])
    failing = workflow_of(BASE + """\
  boom: { kind: assign, depends_on: start, value: "CEL: 9223372036854775807 + 1" }
  done: { kind: finish, depends_on: boom }
""")
    jobs.append(["overflow", compile_bytecode(failing), {}, {}, None, None])
    jobs_file = tmp_path / "jobs.bin"
    jobs_file.write_bytes(msgpack.packb(jobs, use_bin_type=True))
    bundle, _ = write_bundle(tmp_path)
    modules = [str(bundle)]
    proc = subprocess.run([node, str(MP_DIR / "run_dataflow.mjs"), str(MP_DIR / "mp_dataflow.py"),
                           str(jobs_file), *modules],
                          check=False, capture_output=True, text=True, timeout=600, cwd=MP_DIR)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert [x["name"] for x in lines] == [j[0] for j in jobs], proc.stdout[-2000:]

    class Host:
        def __init__(self, script):
            self.script, self.turn = script, {}

        def call(self, capability, name, args):
            spec = self.script.get(f"{capability}:{name}", self.script.get(name))
            if isinstance(spec, list):
                n = self.turn.get(name, 0)
                self.turn[name] = n + 1
                spec = spec[min(n, len(spec) - 1)]
            if spec is None or "error" in spec:
                raise ToolError(spec["error"] if spec else "not scripted")
            return spec.get("output")

        def sleep(self, ms):
            pass

    for job, got in zip(jobs, lines, strict=True):
        name, data, inputs, script, trigger, payload = job
        want = load_program(data).run(inputs, Host(script), trigger, payload)
        assert "record" in got, got
        assert json.dumps(got["record"], sort_keys=True) == json.dumps(want, sort_keys=True), name
    assert lines[2]["record"]["status"] == "completed" and lines[3]["record"]["status"] == "failed"


def test_flowc_disasm_lists_a_dataflow_program(tmp_path, capsys):
    program = tmp_path / "pipeline.wfb"
    assert cli.main(["compile", "--target", "bytecode", str(DATA / "03-agentd-e2e-control-flow.yaml"),
                     "-o", str(program)]) == 0
    assert cli.main(["disasm", str(program)]) == 0
    text = capsys.readouterr().out
    assert text.startswith('flowc program, format version 8, scheduling model dataflow\nworkflow: "pipe"\n')
    assert "route: switch (switch) after race" in text and "case '$default' -> took_default" in text
    assert "region c (sinks: z2)" in text and "LOAD" not in text.split("\nexpressions (")[0]
    # the blocks: expression code with the access rule and the builtin keys named
    blocks = text.split("\nexpressions (")[1]
    assert "LOAD               cel, " in blocks and "CALL " in blocks and "(cel." in blocks


def test_workflow_picks_one_workflow_of_a_document(capsys):
    path = str(DATA / "06-instruction-md-deploy-runbook.workflows.md")
    assert cli.main(["compile", path, "--workflow", "rollback"]) == 0
    assert "WORKFLOW = 'rollback'" in capsys.readouterr().out
    assert cli.main(["compile", path]) == 0
    assert "WORKFLOW = 'deploy'" in capsys.readouterr().out
    assert cli.main(["run", path, "--workflow", "nope"]) == 2
    assert "has no workflow named 'nope' (it has: deploy, rollback, nightly-health)" in capsys.readouterr().err
    assert cli.main(["run", str(DATA / "03-agentd-e2e-control-flow.yaml"), "--workflow", "pipe"]) == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_trigger_inputs_mapping_and_the_input_schema(backend):
    wf = workflow_of("""\
name: t
inputs:
  schema:
    type: object
    required: [who]
    properties: { who: { type: string }, n: { type: integer, default: 2 } }
steps:
  hook: { kind: webhook, path: /x, inputs: { who: "{{ payload.body.user }}" } }
  done: { kind: finish, depends_on: hook, output: ["{{ inputs.who }}", "{{ inputs.n }}"] }
""")
    record = run(wf, backend, payload={"body": {"user": "ada"}})
    assert record["status"] == "completed" and record["outputs"] == ["ada", 2]
    refused = run(wf, backend, payload={"body": {"user": 7}})
    assert refused["status"] == "refused"
    assert refused["error"] == {"message": "inputs.who: expected string, got int", "step": "hook"}
    assert statuses(refused) == {"done": "cancelled", "hook": "cancelled"}


def test_the_deploy_runbook_runs_in_production():
    path = DATA / "06-instruction-md-deploy-runbook.workflows.md"
    from flowc.compiler.instruction.frontend import compile_instruction_all

    deploy = compile_instruction_all(path.read_text(encoding="utf-8"), str(path))[0][0]
    script = {"llm:agent": {"output": "ok"}, "human:ask": {"output": {"approved": True}},
              "mcp:deploy/wave_start": {"output": {"ok": True}}, "mcp:deploy/wave_verify": {"output": {"ok": True}}}
    record = both(deploy, {"release": "v2", "environment": "production"}, script)
    assert record["status"] == "completed"
    assert [c["name"] for c in record["calls"]] == [
        "agent", "ask", "deploy/wave_start", "deploy/wave_verify", "ask", "deploy/wave_start",
        "deploy/wave_verify", "agent"]
    # In staging the gates are pruned, and so is everything that depends only on them:
    # agentd's rule (one live parent keeps a step alive; none prunes it), so the run stalls.
    staging = both(deploy, {"release": "v2", "environment": "staging"}, script)
    assert staging["status"] == "stalled" and statuses(staging)["wave1"] == "pruned"
