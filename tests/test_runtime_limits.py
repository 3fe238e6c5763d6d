"""Run-time budgets (fuel) and the run command lines under hostile input.

- Every backend and dialect stops a run that exceeds its iteration,
  host-call (retries included) or instruction budget with a failed record
  ("fuel exhausted: more than N ..."), the same on both backends; a retry
  policy of a billion attempts ends quickly, in bounded memory.
- The budgets are configurable the same way everywhere, and their defaults
  are ir/limits.py's (the standalone VM and run-time modules keep copies).
- ``flowc exec``, ``flowc run`` and a generated module's own command
  line exit 0 for a completed run, 1 for a failed one, 2 for a usage or
  input error (one line on stderr), and never print a traceback: deeply
  nested JSON, NaN, non-object inputs, a malformed host script, a closed
  output pipe.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs
import flowc
import pytest
from flowc.backends import vm
from flowc.backends.python import compile_workflow, load_module
from flowc.backends.vm import expr_vm
from flowc.backends.vm import format as vm_format
from flowc.host import MAX_JSON_DEPTH, ScriptedHost
from flowc.ir import limits
from flowc.pipeline import driver
from flowc.runtime import dataflow_run, fuel, routing_run, sequence_run

ROOT = Path(flowc.__file__).resolve().parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT.parent))

# --------------------------------------------------------------- workflows

WFS = """\
---
name: fuel
description: An each over a tool, a filter, and a retried tool.
---

```workflow
inputs:
  items:
    type: array
    default: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
outputs:
  kept:
    type: array
    value: $steps.keep.output.kept
steps:
  - id: keep
    type: transform
    operation: filter
    inputs:
      items:
        type: array
        value: $inputs.items
    outputs:
      kept:
        type: array
    where: $item >= 3
  - id: each_call
    type: tool
    tool: echo
    each: $steps.keep.output.kept
    inputs:
      n:
        type: int
        value: $item
    outputs:
      n:
        type: int
  - id: flaky
    type: tool
    tool: flaky_api
    retry:
      max: 1000
      delay: "1ms"
      backoff: 1.0
    inputs: {}
    outputs:
      data:
        type: object
```
"""
WFS_SCRIPT = {"echo": {"echo": True}, "flaky_api": {"error": "down"}}

INSTRUCTION = """\
name: fuel
steps:
  start: { kind: manual }
  loop:
    kind: iterate
    depends_on: start
    while: "CEL: true"
    max_iterations: 10000
    body: { steps: { sq: { kind: assign, value: "CEL: iteration * iteration" } } }
  call:
    kind: tool
    depends_on: loop
    name: flaky
    on_error: continue
    retry: { max: 1000, backoff: 1ms }
  done: { kind: finish, depends_on: call, output: "{{ steps.loop.output }}" }
"""

AEVATAR = """\
name: spin
steps:
  - id: a
    type: assign
    parameters: {target: x, value: "${concat(x, '1')}"}
    next: b
  - id: b
    type: llm_call
    parameters: {prompt_prefix: "again"}
    next: c
  - id: c
    type: conditional
    parameters: {condition: "false"}
    branches: {"true": d, "false": a}
  - id: d
    type: assign
    parameters: {target: x, value: "done"}
"""


def wfs_workflow(max_retries: int | None = None):
    wf = driver.compile_text(WFS, "fuel.md", "workflowskill").workflow
    if max_retries is None:
        return wf
    # Whatever the plan says: a retry count no front end accepts
    nodes = tuple(attrs.evolve(n, retry=attrs.evolve(n.retry, max_retries=max_retries)) if n.retry else n
                  for n in wf.nodes)
    return attrs.evolve(wf, nodes=nodes)


def compiled(text: str, name: str, dialect: str):
    result = driver.compile_text(textwrap.dedent(text), name, dialect)
    assert result.ok, [(d.code, d.message) for d in result.diagnostics if d.is_error]
    return result.workflow


def both(workflow, inputs, script, **budgets):
    """(Python record, VM record) as JSON text."""
    py = load_module(compile_workflow(workflow)).run(inputs, ScriptedHost(script), **budgets)
    on_vm = vm.load(vm.compile_workflow(workflow)).run(inputs, ScriptedHost(script), **budgets)
    return json.dumps(py, sort_keys=True), json.dumps(on_vm, sort_keys=True)


# --------------------------------------------------------------- the budgets

def test_every_copy_of_the_budgets_is_ir_limits():
    for module in (fuel, sequence_run, dataflow_run, routing_run, vm_format):
        assert module.DEFAULT_MAX_ITERATIONS == limits.DEFAULT_MAX_ITERATIONS, module.__name__
        assert module.DEFAULT_MAX_HOST_CALLS == limits.DEFAULT_MAX_HOST_CALLS, module.__name__
    for module in (fuel, expr_vm, vm_format):
        assert module.DEFAULT_MAX_INSTRUCTIONS == limits.DEFAULT_MAX_INSTRUCTIONS, module.__name__
    assert MAX_JSON_DEPTH == limits.MAX_VALUE_DEPTH


def test_a_run_within_budget_is_unchanged_by_fuel():
    wf = wfs_workflow()
    script = dict(WFS_SCRIPT, flaky_api=[{"error": "down"}, {"output": {"ok": True}}])
    py, on_vm = both(wf, {}, script)
    assert py == on_vm
    record = json.loads(py)
    assert record["status"] == "success" and len(record["calls"]) == 8 + 2
    # exactly enough fuel is enough
    assert both(wf, {}, script, max_iterations=10 + 8, max_host_calls=10) == (py, py)


@pytest.mark.parametrize("budgets, message, step, calls", [
    ({"max_iterations": 5}, "fuel exhausted: more than 5 iterations", "keep", 0),
    ({"max_iterations": 12}, "fuel exhausted: more than 12 iterations", "each_call", 2),
    ({"max_host_calls": 4}, "fuel exhausted: more than 4 host calls", "each_call", 4),
    ({"max_host_calls": 20}, "fuel exhausted: more than 20 host calls", "flaky", 20),
])
def test_workflowskill_fuel_fails_the_run_the_same_on_both_backends(budgets, message, step, calls):
    py, on_vm = both(wfs_workflow(), {}, WFS_SCRIPT, **budgets)
    assert py == on_vm
    record = json.loads(py)
    assert record["status"] == "failed" and record["outputs"] == {}
    assert record["error"] == {"message": message, "step": step}
    assert len(record["calls"]) == calls


def test_vm_instruction_fuel():
    record = vm.load(vm.compile_workflow(wfs_workflow())).run({}, ScriptedHost(WFS_SCRIPT), max_instructions=50)
    assert record["status"] == "failed"
    assert record["error"]["message"] == "fuel exhausted: more than 50 instructions"


def test_a_billion_retries_end_quickly_in_bounded_memory():
    """The Python backend runs any plan; the VM's verifier caps retries at a
    million, which the default host-call budget stops."""
    module = load_module(compile_workflow(wfs_workflow(max_retries=10**9)))
    tracemalloc.start()
    try:
        record = module.run({}, ScriptedHost(WFS_SCRIPT), max_host_calls=20_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert record["error"] == {"message": "fuel exhausted: more than 20000 host calls", "step": "flaky"}
    assert len(record["calls"]) == 20_000 and len(record["sleeps_ms"]) == 20_000 - 8
    assert peak < 40 * 1024 * 1024, peak
    py, on_vm = both(wfs_workflow(max_retries=10**6), {}, WFS_SCRIPT, max_host_calls=3000)
    assert py == on_vm and '"fuel exhausted: more than 3000 host calls"' in py


@pytest.mark.parametrize("budgets, message, step", [
    ({"max_iterations": 40}, "fuel exhausted: more than 40 iterations", "loop"),
    ({"max_host_calls": 7}, "fuel exhausted: more than 7 host calls", "call"),
])
def test_dataflow_fuel_fails_the_run_the_same_on_both_backends(budgets, message, step):
    """An endless iterate and a long retry: no on_error swallows fuel."""
    wf = compiled(INSTRUCTION, "w.yaml", "instruction")
    py, on_vm = both(wf, {}, {"flaky": {"error": "down"}}, **budgets)
    assert py == on_vm
    record = json.loads(py)
    assert record["status"] == "failed"
    assert record["error"] == {"message": message, "step": step}
    assert {s["id"]: s["status"] for s in record["steps"]}["done"] == "cancelled"


def test_dataflow_instruction_fuel_is_per_run_on_the_vm():
    wf = compiled(INSTRUCTION, "w.yaml", "instruction")
    program = vm.load(vm.compile_workflow(wf))
    record = program.run({}, ScriptedHost({"flaky": {"output": 1}}), max_instructions=300)
    assert record["status"] == "failed"
    assert record["error"] == {"message": "fuel exhausted: more than 300 instructions", "step": "loop[49].sq"}
    # a run within budget completes, and the budget does not outlive the run
    record = program.run({}, ScriptedHost({"flaky": {"output": 1}}), max_iterations=20_000)
    assert record["status"] == "completed", record["error"]
    assert program.machine.per_run is False


_LIST = "[" + ", ".join(str(i) for i in range(100)) + "]"
NESTED_MAPS = f"{_LIST}.map(a, {_LIST}.map(b, {_LIST}.map(c, {_LIST}.map(d, a + b + c + d)))).size() > 0"
COMPREHENSION_BOMB = f"""\
name: bomb
steps:
  start: {{ kind: once }}
  s:
    kind: assign
    depends_on: [start]
    when: "{NESTED_MAPS}"
    value: 1
    writes: x
  done: {{ kind: finish, depends_on: [s], status: completed }}
"""


def test_nested_cel_comprehensions_spend_the_run_budget():
    """10**8 elements asked for by four nested maps: the comprehensions pay
    for what they visit, so the run stops at its budget on both backends."""
    wf = compiled(COMPREHENSION_BOMB, "bomb.yaml", "instruction")
    py, on_vm = both(wf, {}, {}, max_iterations=50_000)
    assert py == on_vm
    record = json.loads(py)
    assert record["status"] == "failed"
    assert record["error"] == {"message": "fuel exhausted: more than 50000 iterations", "step": "s"}


@pytest.mark.parametrize("backend", ["python", "vm"])
def test_flowc_eval_of_a_comprehension_bomb_is_a_clean_error(backend, capsys):
    from flowc import cli

    assert cli.main(["eval", "--lang", "cel", "--backend", backend, NESTED_MAPS]) == 1
    out = capsys.readouterr()
    assert "fuel exhausted" in out.out + out.err and "Traceback" not in out.out + out.err


@pytest.mark.parametrize("budgets, message, step", [
    ({"max_iterations": 7}, "fuel exhausted: more than 7 iterations", "b"),
    ({"max_host_calls": 3}, "fuel exhausted: more than 3 host calls", "b"),
])
def test_aevatar_fuel_fails_the_run_the_same_on_both_backends(budgets, message, step):
    wf = compiled(AEVATAR, "w.yaml", "aevatar")
    py, on_vm = both(wf, {}, {"llm:assistant": {"output": "ok"}}, **budgets)
    assert py == on_vm
    record = json.loads(py)
    assert record["status"] == "failed"
    assert record["error"] == {"message": message, "step": step}


# --------------------------------------------------------------- the command lines

@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Programs of each kind, and hostile input files."""
    d = tmp_path_factory.mktemp("limits")
    wfs = d / "wfs.md"
    wfs.write_text(WFS, encoding="utf-8")
    dag = d / "dag.yaml"
    dag.write_text(INSTRUCTION, encoding="utf-8")
    ok_dag = d / "ok.yaml"
    ok_dag.write_text((ROOT / "examples" / "instruction" / "pipeline.yaml").read_text(encoding="utf-8"),
                      encoding="utf-8")
    (d / "wfs.wfb").write_bytes(vm.compile_workflow(wfs_workflow()))
    (d / "ok.wfb").write_bytes(vm.compile_workflow(driver.compile_file(str(ok_dag)).workflow))
    (d / "wfs.py").write_text(compile_workflow(wfs_workflow()), encoding="utf-8")
    (d / "ok.py").write_text(compile_workflow(driver.compile_file(str(ok_dag)).workflow), encoding="utf-8")
    texts = {
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "deep_object.json": '{"a": ' + "[" * 64 + "]" * 64 + "}",   # 65 levels
        "fine.json": '{"a": ' + "[" * 63 + "]" * 63 + "}",          # 64 levels
        "nan.json": "NaN",
        "nan_in.json": '{"x": NaN}',
        "infinity.json": '{"x": -Infinity}',
        "list.json": "[1, 2]",
        "bad_script.json": '{"a": []}',
        "script.json": json.dumps(WFS_SCRIPT),
        "throw.json": json.dumps(dict(WFS_SCRIPT, flaky_api={"throw": "down"})),
        "bigint.json": '{"x": ' + "9" * 5000 + "}",
        "broken.json": '{"a": ',
    }
    for name, text in texts.items():
        (d / name).write_text(text, encoding="utf-8")
    return d


def _exec(d, program, *args):
    return [sys.executable, "-m", "flowc", "exec", str(d / program), *args]


def _run(d, workflow, *args):
    return [sys.executable, "-m", "flowc", "run", str(d / workflow), *args]


def _module(d, module, *args):
    return [sys.executable, str(d / module), *args]


CLIS = {"exec": (_exec, "wfs.wfb"), "run": (_run, "wfs.md"), "module": (_module, "wfs.py")}


def call(argv, closed_stdout=False):
    if closed_stdout:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, text=True)
        proc.stdout.close()   # the reader is gone before the record is written
        err = proc.stderr.read()
        proc.wait(timeout=120)
        proc.stderr.close()
        return proc.returncode, "", err
    proc = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=120, check=False)
    return proc.returncode, proc.stdout, proc.stderr


INPUT_ERRORS = [
    ("--inputs", "deep.json", "nests more than 64 levels deep"),
    ("--inputs", "deep_object.json", "nests more than 64 levels deep"),
    ("--host", "deep.json", "nests more than 64 levels deep"),
    ("--inputs", "nan.json", "NaN is not a JSON value"),
    ("--inputs", "nan_in.json", "NaN is not a JSON value"),
    ("--host", "infinity.json", "-Infinity is not a JSON value"),
    ("--inputs", "list.json", "must hold a JSON object, not an array"),
    ("--host", "bad_script.json", "a list of results must not be empty"),
    ("--inputs", "bigint.json", "is not valid JSON"),
    ("--inputs", "broken.json", "is not valid JSON"),
    ("--inputs", "missing.json", "cannot read the inputs file"),
]


@pytest.mark.parametrize("cli", sorted(CLIS))
def test_input_errors_exit_2_with_one_line(files, cli):
    make, program = CLIS[cli]
    with ThreadPoolExecutor(4) as pool:   # fresh interpreters mostly wait on imports
        results = list(pool.map(call, [make(files, program, flag, str(files / name))
                                       for flag, name, _ in INPUT_ERRORS]))
    for (_flag, name, words), (rc, out, err) in zip(INPUT_ERRORS, results):
        assert rc == 2, (cli, name, err)
        assert words in err and len(err.strip().splitlines()) == 1, (cli, name, err)
        assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("cli", sorted(CLIS))
def test_budget_flags_and_exit_statuses(files, cli):
    make, program = CLIS[cli]
    script = str(files / "script.json")
    rc, out, err = call(make(files, program, "--host", script, "--inputs", str(files / "fine.json"),
                             "--max-host-calls", "5", *(["--json"] if cli == "run" else [])))
    assert rc == 1 and "Traceback" not in err
    record = json.loads(out)
    assert record["error"] == {"message": "fuel exhausted: more than 5 host calls", "step": "each_call"}
    rc, out, err = call(make(files, program, "--host", script, "--max-iterations", "3",
                             *(["--json"] if cli == "run" else [])))
    assert rc == 1 and json.loads(out)["error"]["message"] == "fuel exhausted: more than 3 iterations"
    for bad in ("-1", "x", "1e3"):
        rc, out, err = call(make(files, program, "--max-iterations", bad))
        assert rc == 2 and "Traceback" not in err and out == "", (bad, err)


@pytest.mark.parametrize("cli", sorted(CLIS))
def test_a_closed_output_pipe_is_quiet(files, cli):
    make, program = CLIS[cli]
    rc, _, err = call(make(files, program, "--host", str(files / "throw.json")), closed_stdout=True)
    assert err == "" and rc == 1   # the run failed (its flaky tool); the pipe changes nothing


def test_completed_dataflow_runs_exit_0(files):
    assert call(_exec(files, "ok.wfb"))[0] == 0
    assert call(_run(files, "ok.yaml", "--backend", "vm"))[0] == 0
    assert call(_module(files, "ok.py"))[0] == 0
    # the budget flags are options for every program kind, never a trigger or payload
    for args, message in ((["--max-instructions", "10", "--max-host-calls", "2"], "10 instructions"),
                          (["--max-iterations=2"], "2 iterations")):
        rc, out, err = call(_exec(files, "ok.wfb", *args))
        assert rc == 1 and "Traceback" not in err
        assert json.loads(out)["error"]["message"] == "fuel exhausted: more than " + message


def test_vm_usage_errors_exit_2(files):
    usage = "usage: flowc"   # argparse: the usage, then the error
    for argv, start in (([], usage), (["--inputs"], usage), ([str(files / "ok.wfb"), str(files / "ok.wfb")], usage),
                        ([str(files / "ok.wfb"), "-x"], usage), ([str(files / "nan.json")], "flowc: error: "),
                        ([str(files / "missing.wfb")], "flowc: error: cannot read ")):
        rc, out, err = call([sys.executable, "-m", "flowc", "exec", *argv])
        assert rc == 2 and out == "" and "Traceback" not in err and err.startswith(start), (argv, err)
    rc, out, err = call(_run(files, "wfs.md", "--max-instructions", "5"))
    assert rc == 2 and out == "" and "--backend vm" in err
