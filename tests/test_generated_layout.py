"""Generated dataflow modules are laid out for people: steps in dependency
order, each with its expressions, lines within about 100 columns, constants
written as constants. The plan itself (and so the run) is unchanged."""

from __future__ import annotations

import re
from pathlib import Path

from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.pipeline import driver
from flowc.plan import build_plan

ROOT = Path(driver.__file__).resolve().parents[1]
PIPELINE = ROOT / "examples" / "instruction" / "pipeline.yaml"


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
