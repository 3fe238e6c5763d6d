"""One fuel accounting (flowc.runtime.fuel) for every scheduler and backend.

- The Fuel object alone: each budget, its message, its default.
- Every scheduler's kernel owns one (``run.fuel``) and charges it; the
  dialects' differences (the step budget, the step a failure names) are
  named fields of their DialectProfile, and the schedulers agree with them.
- The same budget gives the same failed record on the generated module and
  on the VM, for each dialect, budget and limit swept from 0 up, in the
  sync and the virtual-time drivers.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from flowc.backends import vm
from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.ir import limits, semantics
from flowc.pipeline import driver
from flowc.runtime import dataflow_run, drivers, fuel, kernel, routing_run
from flowc.runtime.fuel import Fuel, OutOfFuel

from tests.test_runtime_limits import AEVATAR, INSTRUCTION, WFS, WFS_SCRIPT

# --------------------------------------------------------------- the Fuel object


def test_the_defaults_are_ir_limits():
    f = Fuel()
    assert (f.max_iterations, f.max_host_calls, f.max_instructions) == (
        limits.DEFAULT_MAX_ITERATIONS, limits.DEFAULT_MAX_HOST_CALLS, limits.DEFAULT_MAX_INSTRUCTIONS)
    assert f.max_steps is None and f.steps_left is None


def test_iterations_are_charged_until_the_budget_is_passed():
    f = Fuel(iterations=5)
    f.iterate(3)
    f.iterate()
    f.iterate()
    assert f.iterations_left == 0  # exactly the budget is within it
    with pytest.raises(OutOfFuel) as e:
        f.iterate()
    assert e.value.message == str(e.value) == "fuel exhausted: more than 5 iterations"


def test_take_pays_for_what_is_left_and_then_nothing():
    f = Fuel(iterations=10)
    assert f.take(4) == 4 and f.iterations_left == 6
    assert f.take(8) == 6 and f.iterations_left == 0
    assert f.take(1) == 0
    assert f.out_of_iterations().message == "fuel exhausted: more than 10 iterations"


def test_host_calls():
    f = Fuel(host_calls=2)
    f.call()
    f.call()
    with pytest.raises(OutOfFuel, match="^fuel exhausted: more than 2 host calls$"):
        f.call()


def test_instructions_are_a_budget_the_interpreter_loops_draw_on():
    f = Fuel(instructions=50)
    assert f.instructions_left == 50
    assert f.out_of_instructions().message == "fuel exhausted: more than 50 instructions"


@pytest.mark.parametrize("rule, message", [
    ("workflow_limit", "limits.steps: the run may start at most 2 steps"),
    ("dispatches", "step budget exhausted (2 dispatches)"),
])
def test_a_step_budget_has_its_dialects_message(rule, message):
    f = Fuel(steps=2, step_budget=rule)
    f.step()
    f.step()
    with pytest.raises(OutOfFuel) as e:
        f.step()
    assert e.value.message == message


def test_without_a_step_budget_steps_are_free():
    f = Fuel()
    for _ in range(1000):
        f.step()
    assert f.steps_left is None


def test_out_of_fuel_is_no_step_error():
    """No step policy catches it: it is none of the exceptions a step's on_error catches."""
    from flowc.runtime import sequence_run

    assert not issubclass(OutOfFuel, sequence_run.STEP_ERRORS)
    assert kernel.OutOfFuel is OutOfFuel


# --------------------------------------------------------------- one fuel per kernel

def test_the_kernel_owns_the_fuel():
    assert isinstance(kernel.Kernel().fuel, Fuel)


def test_the_step_budget_rules_are_the_profiles():
    assert set(fuel.STEP_BUDGET_MESSAGES) == set(semantics.STEP_BUDGETS) - {"none"}
    assert dataflow_run.STEP_BUDGET == semantics.INSTRUCTION.step_budget
    assert routing_run.STEP_BUDGET == semantics.AEVATAR.step_budget
    assert semantics.WORKFLOWSKILL.step_budget == "none"
    for profile in semantics.PROFILES.values():
        assert profile.step_budget in semantics.STEP_BUDGETS
        assert profile.fuel_failure_step in semantics.FUEL_FAILURE_STEPS


def _workflow(text: str, name: str, dialect: str):
    result = driver.compile_text(textwrap.dedent(text), name, dialect)
    assert result.ok, [(d.code, d.message) for d in result.diagnostics if d.is_error]
    return result.workflow


CASES = {
    "workflowskill": (WFS, "fuel.md", {}, WFS_SCRIPT),
    # a short loop: the host-call budgets are reached after it
    "instruction": (INSTRUCTION.replace("max_iterations: 10000", "max_iterations: 6").replace("max: 1000", "max: 30"),
                    "w.yaml", {}, {"flaky": {"error": "down"}}),
    "aevatar": (AEVATAR, "w.yaml", {}, {"llm:assistant": {"output": "ok"}}),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def programs(request):
    text, name, inputs, script = CASES[request.param]
    wf = _workflow(text, name, request.param)
    return request.param, load_module(compile_workflow(wf)), vm.load(vm.compile_workflow(wf)), inputs, script


@pytest.mark.parametrize("budget", ["max_iterations", "max_host_calls"])
def test_every_scheduler_charges_its_kernels_fuel(programs, budget):
    """The run's kernel holds the Fuel its budgets made, on both backends."""
    _dialect, module, program, inputs, script = programs
    for run in (module.new_run(inputs, **{budget: 7}), program.new_run(inputs, **{budget: 7})):
        assert isinstance(run, kernel.Kernel) and isinstance(run.fuel, Fuel)
        assert getattr(run.fuel, budget) == 7
        record = drivers.drive_sync(run, ScriptedHost(script))
        assert record["status"] == "failed"
        assert record["error"]["message"].startswith("fuel exhausted: more than 7 ")
        left = run.fuel.iterations_left if budget == "max_iterations" else run.fuel.calls_left
        assert left < 0 or (budget == "max_iterations" and left == 0)


def _records(module, program, inputs, script, **budget):
    py = module.run(inputs, ScriptedHost(script), **budget)
    on_vm = program.run(inputs, ScriptedHost(script), **budget)
    py_virtual = module.run_virtual(inputs, script, **budget)
    vm_virtual = program.run_virtual(inputs, script, **budget)
    return (json.dumps(py, sort_keys=True), json.dumps(on_vm, sort_keys=True),
            json.dumps(py_virtual, sort_keys=True), json.dumps(vm_virtual, sort_keys=True))


FAILURE_STEPS = {  # the step each dialect's fuel failure names (its profile's fuel_failure_step)
    "workflowskill": {"keep", "each_call", "flaky"},
    "instruction": {"loop", "call"} | {f"loop[{i}].sq" for i in range(6)},
    "aevatar": {"a", "b", "c"},
}


@pytest.mark.parametrize("budget", ["max_iterations", "max_host_calls"])
def test_the_same_budget_fails_the_same_on_module_and_vm(programs, budget):
    dialect, module, program, inputs, script = programs
    failures = set()
    for n in range(30):
        py, on_vm, py_virtual, vm_virtual = _records(module, program, inputs, script, **{budget: n})
        assert py == on_vm, (dialect, budget, n)
        assert py_virtual == vm_virtual, (dialect, budget, n)
        record = json.loads(py)
        if record["status"] == "failed" and "fuel exhausted" in record["error"]["message"]:
            what = "iterations" if budget == "max_iterations" else "host calls"
            assert record["error"]["message"] == f"fuel exhausted: more than {n} {what}"
            assert record["error"]["step"] in FAILURE_STEPS[dialect], record["error"]
            failures.add(n)
    assert failures, "no budget in the sweep ran out"


def test_an_instruction_step_limit_fails_the_same_on_module_and_vm():
    text = """\
    name: limited
    limits: { steps: LIMIT }
    steps:
      start: { kind: manual }
      a: { kind: assign, depends_on: start, value: 1 }
      b: { kind: assign, depends_on: a, value: 2 }
      c: { kind: assign, depends_on: b, value: 3 }
      done: { kind: finish, depends_on: c, status: completed }
    """
    for limit in (1, 2, 3, 4, 5, 6):  # five steps start, the trigger included
        wf = _workflow(text.replace("LIMIT", str(limit)), "w.yaml", "instruction")
        module, program = load_module(compile_workflow(wf)), vm.load(vm.compile_workflow(wf))
        py, on_vm, py_virtual, vm_virtual = _records(module, program, {}, {})
        assert py == on_vm and py_virtual == vm_virtual
        record = json.loads(py)
        if limit < 5:
            assert record["status"] == "failed"
            assert record["error"]["message"] == f"limits.steps: the run may start at most {limit} steps"
        else:
            assert record["status"] == "completed", record["error"]


def test_the_aevatar_dispatch_budget_fails_the_same_on_module_and_vm():
    """A loop no budget but the engine's dispatch bound ends: the run fails
    at the step the budget runs out on."""
    wf = _workflow(AEVATAR, "w.yaml", "aevatar")  # a -> b -> c -> a ... (c's condition is false)
    module, program = load_module(compile_workflow(wf)), vm.load(vm.compile_workflow(wf))
    script = {"llm:assistant": {"output": "ok"}}
    py = module.run({"input": "q"}, ScriptedHost(script))
    assert json.dumps(program.run({"input": "q"}, ScriptedHost(script))) == json.dumps(py)
    assert py["status"] == "failed"
    step = "abc"[routing_run.MAX_STEPS % 3]  # the dispatch one past the budget
    assert py["error"] == {"message": f"step budget exhausted ({routing_run.MAX_STEPS} dispatches)", "step": step}
    assert len(py["steps"]) == routing_run.MAX_STEPS
