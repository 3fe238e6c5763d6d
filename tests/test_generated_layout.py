"""Generated dataflow modules are laid out for people: steps in dependency
order, each with its expressions, lines within about 100 columns, constants
written as constants. The plan itself (and so the run) is unchanged.

Generated WorkflowSkill modules hold their sequential plan (``PLAN``) and a
table of step functions (``STEPS``), and no code for the top-level order:
the run walks the plan's sequence edges (flowc.runtime.sequence_run)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.pipeline import driver
from flowc.plan import NO_BODIES, build_plan
from flowc.runtime import sequence_run

ROOT = Path(driver.__file__).resolve().parents[1]
PIPELINE = ROOT / "examples" / "instruction" / "pipeline.yaml"
WFS_DIR = ROOT / "tests" / "data" / "workflowskill"


def _source() -> tuple[str, object]:
    workflow = driver.compile_file(str(PIPELINE)).workflow
    return compile_workflow(workflow), workflow


def test_steps_come_in_dependency_order_and_the_plan_keeps_its_own():
    source, workflow = _source()
    ids = re.findall(r"^    'id': '([a-z_]+)',$", source, re.MULTILINE)
    assert ids.index("start") < ids.index("items") < ids.index("evens") < ids.index("label") < ids.index("done")
    assert ids.index("total") < ids.index("label")
    module = load_module(source)
    plan = build_plan(workflow, NoBodies())
    assert [n["id"] for n in module.PLAN["nodes"]] == [n["id"] for n in plan["nodes"]]
    assert module.PLAN["edges"] == plan["edges"]


class NoBodies:
    """Bodies as None: the plan's nodes and edges alone."""

    def params(self, node, entries, ci):
        return None

    def expression(self, node, expr, what, ci):
        return None


def test_lines_are_short_and_constants_are_constants():
    source, _ = _source()
    assert [line for line in source.splitlines() if len(line) > 100] == []
    assert "return 'cel_bool'" not in source and "_const('cel_bool')" in source
    assert compile_workflow(driver.compile_file(str(PIPELINE)).workflow) == source  # deterministic


def test_the_module_still_runs():
    source, _ = _source()
    record = load_module(source).run({}, ScriptedHost({}))
    assert record["status"] == "completed", record


# ------------------------------------------------------------------ WorkflowSkill

def _wfs_files() -> list[Path]:
    return [p for p in sorted(WFS_DIR.glob("*/*.md")) if driver.compile_file(str(p)).ok]


@pytest.mark.parametrize("path", _wfs_files(), ids=lambda p: p.name)
def test_a_workflowskill_module_holds_its_plan_and_a_table_of_its_steps(path):
    workflow = driver.compile_file(str(path)).workflow
    source = compile_workflow(workflow)
    module = load_module(source)
    assert module.PLAN == build_plan(workflow, NO_BODIES, "sequential")
    step_ids = [n.id for n in workflow.nodes if n.op != "end"]
    assert list(module.STEPS) == step_ids
    for step_id, (function, generator) in module.STEPS.items():
        assert function.__name__.startswith("_step_")
        assert generator == inspect.isgeneratorfunction(function), step_id
    assert any(generator for _, generator in module.STEPS.values()) == ("ctx.call(" in source)
    assert "def _main" not in source and "ctx.settle(" not in source  # the order is the plan's, not code
    tables = re.findall(r"^(?:PLAN|STEPS) = \{\n.*?^\}$", source, re.MULTILINE | re.DOTALL)
    assert len(tables) == 2
    assert [line for table in tables for line in table.splitlines() if len(line) > 100] == []


PIPE = """
inputs:
  n: {type: int, default: 2}
steps:
  - id: first
    type: tool
    tool: one
  - id: second
    type: transform
    operation: map
    inputs:
      items: {type: array, value: [1, 2]}
    expression: {v: $item}
  - id: third
    type: tool
    tool: three
"""


SCRIPT = {"*": {"output": {"ok": True}}}


def _pipe():
    result = driver.compile_text("---\nname: pipe\n---\n```workflow" + PIPE + "```\n", "pipe.md")
    assert result.ok, [d.message for d in result.diagnostics if d.is_error]
    return load_module(compile_workflow(result.workflow))


def _run_with(module, plan):
    ctx = sequence_run.Run(None, {}, module.INPUT_DEFAULTS, module.STEP_IDS, module.BRANCH_STEP_IDS)
    run = sequence_run.SkillRun(ctx, module.INPUT_TYPES, plan, module.STEPS, module._end)
    return sequence_run.drive_sync(run, ScriptedHost(SCRIPT))


def test_the_run_walks_the_plans_sequence_edges():
    """The same module with its plan's sequence edges redrawn runs the steps
    in the new order: the order is read from the plan at run time."""
    module = _pipe()
    record = module.run({}, ScriptedHost(SCRIPT))
    assert [s["id"] for s in record["steps"]] == ["first", "second", "third"]
    assert [c["name"] for c in record["calls"]] == ["one", "three"]
    assert _run_with(module, module.PLAN) == record
    end = module.PLAN["terminal"]
    redrawn = dict(module.PLAN, entry="third",
                   edges=[["third", "second", "sequence", None], ["second", end, "sequence", None]])
    record = _run_with(module, redrawn)
    assert [(s["id"], s["status"]) for s in record["steps"]] == [
        ("third", "success"), ("second", "success"), ("first", "skipped")]
    assert [c["name"] for c in record["calls"]] == ["three"]
    assert record["status"] == "success"
