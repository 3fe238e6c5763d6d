"""The plan-run models (kernel routing, dataflow) share one code generator
(backends/python/plan_codegen.py); on the VM every model (WorkflowSkill's
sequential one too) has one assembler (backends/vm/plan_assemble.py) and
one loader (backends/vm/plan_vm.py). What differs between the models is a
row of tables keyed by the plan's model in each; these tests keep the
modules' rows, the container format and the plan's models in step, and
check the loader's shared entry points on programs of the models."""

from __future__ import annotations

import textwrap

import pytest
from flowc.backends.python import compile_workflow as compile_module
from flowc.backends.python import load_module, plan_codegen
from flowc.backends.vm import VerifyError, device, plan_assemble, plan_vm
from flowc.backends.vm import compile_workflow as compile_bytecode
from flowc.backends.vm import format as F
from flowc.host import ScriptedHost
from flowc.pipeline import driver
from flowc.plan import MODELS as PLAN_MODELS

from tests.program_bytes import open_program, pack_program

PLAN_RUN = {"kernel", "dataflow"}   # the Python backend generates WorkflowSkill's steps as code
VM_MODELS = set(F.MODELS)           # the VM runs every model by its plan


def test_every_plan_run_model_has_a_row_in_each_module():
    assert set(PLAN_MODELS) - {"sequential"} == PLAN_RUN
    assert set(plan_codegen.MODELS) == PLAN_RUN
    assert set(plan_assemble.MODELS) == set(plan_vm.MODELS) == set(PLAN_MODELS) == VM_MODELS
    assert set(plan_vm.EXPRESSIONS) == set(plan_vm.LAYOUTS) == VM_MODELS
    assert set(device.LOADERS) == set(F.MODELS)


def test_the_loader_reads_the_sections_the_format_gives_each_model():
    for model in VM_MODELS:
        required, optional = F.MODEL_SECTIONS[model]
        row = plan_vm.EXPRESSIONS[model]
        read = {"consts", "names", "code", "plan", row["keys"]} | \
            ({"exprs"} if row["exprs"] is plan_vm._section_exprs else set())
        assert read == set(required)
        assert set(optional) == ({"srcmap"} if model == "sequential" else set())   # a listing's source lines


def test_the_loader_and_the_format_agree_on_the_codes():
    assert plan_vm.KERNEL_ON_ERROR == F.KERNEL_ON_ERROR
    assert plan_vm.DATAFLOW_OPS == F.DATAFLOW_OPS
    assert plan_vm.SEQUENTIAL_OPS == F.SEQUENTIAL_OPS
    assert plan_vm.TYPES == F.TYPES


def _layouts(model: str) -> dict[str, tuple[int, list[int] | None]]:
    """The loader's row layouts of ``model``: (fixed fields, optional fields' value counts)."""
    return {name: (len(layout["fixed"]), None if layout["optional"] is None
                   else [count for count, _field in layout["optional"]])
            for name, layout in plan_vm.LAYOUTS[model].items()}


def _assembled_layouts(model: str) -> dict[str, tuple[int, list[int] | None]]:
    """The assembler's row layouts of ``model``, in the same terms."""
    multi = {"retry": {"kernel": 3, "dataflow": 4, "sequential": 3}[model], "inputs": 1, "sort": 2}
    out = {}
    for name, layout in plan_assemble.MODELS[model].rows.layouts.items():
        counts = None if layout.optional is None else [multi.get(keys[0], len(keys)) for _bit, keys in layout.optional]
        out[name] = (len(layout.fixed), counts)
    return out


@pytest.mark.parametrize("model", sorted(VM_MODELS))
def test_the_assembler_and_the_loader_agree_on_the_row_layouts(model):
    assert _layouts(model) == _assembled_layouts(model)


def _compiled(text: str, dialect: str):
    result = driver.compile_text(textwrap.dedent(text), f"flow.{dialect}.yaml", dialect)
    assert result.ok, result.diagnostics
    return result.workflow


KERNEL = """\
name: two
roles:
  - id: writer
steps:
  - id: draft
    type: llm_call
    role: writer
    parameters: { prompt: "write about ${input}" }
  - id: shout
    type: transform
    parameters: { op: uppercase }
"""

DATAFLOW = """\
name: pipe
steps:
  start: { kind: manual }
  hook: { kind: webhook, path: /x, inputs: { who: "{{ payload.body.user }}" } }
  call: { kind: tool, depends_on: [start, hook], name: greet, args: { who: "CEL: inputs.who" } }
  done: { kind: finish, depends_on: call, output: "CEL: steps.call.output" }
"""


def test_one_loader_runs_both_models_with_their_options():
    kernel = device.load(compile_bytecode(_compiled(KERNEL, "aevatar")))
    dataflow = device.load(compile_bytecode(_compiled(DATAFLOW, "instruction")))
    assert type(kernel) is type(dataflow) is plan_vm.Program
    assert (kernel.model, dataflow.model) == ("kernel", "dataflow")
    host = {"*": "hello"}
    # positional options in each model's order (plan_vm MODELS "options"), or keywords
    by_position = kernel.run({"input": "q"}, ScriptedHost(host), None, 50)
    by_keyword = kernel.run({"input": "q"}, ScriptedHost(host), max_iterations=50)
    assert by_position == by_keyword and by_position["status"] == "success"
    answered = {"tool:greet": "hi"}
    with_trigger = dataflow.run({}, ScriptedHost(answered), "hook", {"body": {"user": "ann"}})
    assert with_trigger == dataflow.run({}, ScriptedHost(answered), trigger="hook", payload={"body": {"user": "ann"}})
    with pytest.raises(TypeError, match="unexpected argument 'trigger'"):
        kernel.run({"input": "q"}, ScriptedHost(host), trigger="hook")
    # on a virtual clock, the record of the Python backend's module
    module = load_module(compile_module(_compiled(KERNEL, "aevatar")))
    script = {"llm:writer": {"output": "hello", "latency_ms": 5}}
    assert kernel.run_virtual({"input": "q"}, script) == module.run_virtual({"input": "q"}, script)


def test_a_device_refuses_a_model_it_has_no_loader_for(monkeypatch):
    data = compile_bytecode(_compiled(KERNEL, "aevatar"))
    monkeypatch.delitem(device.LOADERS, "kernel")
    with pytest.raises(VerifyError, match="a kernel program: this device runs"):
        device.load(data)


def test_a_plan_program_without_a_plan_is_refused_unless_its_model_allows_it():
    _model, name, sections = open_program(compile_bytecode(_compiled(KERNEL, "aevatar")))
    del sections["plan"]
    with pytest.raises(VerifyError):
        device.load(pack_program("kernel", name, sections))
    bare = device.load(plan_assemble.assemble_expressions([]))
    assert bare.plan is None and bare.model == "dataflow"
    with pytest.raises(VerifyError, match="expressions only"):
        bare.run({}, ScriptedHost({}))
