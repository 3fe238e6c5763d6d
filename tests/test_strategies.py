"""The public hypothesis strategies (flowc.testing.strategies): what they
generate is valid, runnable, restricted by `features`, small when shrunk,
and printed as YAML."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from flowc.compiler import yamlsrc
from flowc.host import ScriptedHost
from flowc.ir.workflow import Workflow
from flowc.testing import strategies as wst
from flowc.testing.yamltext import dump
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.vendor.pretty import pretty

SOME = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DIALECTS = wst.dialects()


def _errors(result) -> list[str]:
    return [f"{d.code} {d.message}" for d in result.diagnostics if d.is_error]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_generated_workflows_check_clean(dialect):
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(wst.workflows(dialect))
    def check(text):
        result = text.compile()
        assert result.ok, (_errors(result), str(text))
        assert result.dialect == dialect

    check()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_documents_are_plain_data_that_renders_to_the_same_text(dialect):
    @SOME
    @given(wst.documents(dialect))
    def check(doc):
        text = dump(doc)
        assert yaml.safe_load(text) == doc
        node, diags = yamlsrc.load(text, "f.yaml")
        assert diags == []
        assert node.plain() == doc

    check()


@SOME
@given(wst.workflows("ir"))
def test_ir_strategy_gives_compiled_workflows(wf):
    assert isinstance(wf, Workflow)
    assert wf.nodes


@SOME
@given(wst.workflows("workflowskill", max_steps=2, features={"tool", "filter"}))
def test_features_and_max_steps_restrict_what_is_generated(text):
    doc = yaml.safe_load(text.split("```workflow\n")[-1].split("```")[0]) if "```" in text else yaml.safe_load(text)
    assert 1 <= len(doc["steps"]) <= 2
    for step in doc["steps"]:
        assert step["type"] in ("tool", "transform")
        assert step.get("operation", "filter") == "filter"
        assert not {"each", "retry", "condition", "on_error", "outputs"} & set(step)


def test_unknown_dialect_and_feature_are_errors():
    with pytest.raises(ValueError, match="no workflow generator"):
        wst.workflows("cobol")
    with pytest.raises(ValueError, match="unknown workflowskill feature"):
        wst.workflows("workflowskill", features={"loops"})
    with pytest.raises(ValueError, match="unknown workflowskill mutation operator"):
        wst.invalid_workflows("workflowskill", operators=["nope"])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_runnable_workflows_have_an_answer_for_every_call(dialect):
    @SOME
    @given(wst.runnable_workflows(dialect))
    def check(case):
        host = ScriptedHost(case.host_script)
        record = case.run()
        assert record["status"] in ("success", "failed", "completed", "refused", "cancelled", "stalled")
        for call in record["calls"]:
            assert host._spec_for(call["capability"], call["name"]) is not None, call

    check()


def test_host_scripts_exercise_errors_failures_and_sequences():
    def spec_kinds(script):
        kinds = set()
        for spec in script.values():
            for one in spec if isinstance(spec, list) else [spec]:
                kinds.update(k for k in ("error", "throw", "output") if isinstance(one, dict) and k in one)
            if isinstance(spec, list):
                kinds.add("sequence")
        return kinds

    found = set()

    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None,
              derandomize=True)
    @given(wst.runnable_workflows("workflowskill"))
    def collect(case):
        found.update(spec_kinds(case.host_script))

    collect()
    assert {"error", "throw", "output", "sequence"} <= found


def test_a_failing_example_shrinks_small_and_prints_as_yaml():
    """Hypothesis shrinks "a workflow with a conditional" to a few plain
    steps with short ids, and prints it as the YAML it is."""

    @settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), database=None,
              derandomize=True)
    @given(wst.workflows("workflowskill", max_steps=4, features={"tool", "exit", "conditional", "guard",
                                                                "retry", "outputs"}))
    def no_conditionals(text):
        assert "type: conditional" not in text

    with pytest.raises(AssertionError) as info:
        no_conditionals()
    notes = "\n".join(getattr(info.value, "__notes__", []))
    # Older hypothesis says "Falsifying example", newer "Failing test case".
    assert "Falsifying example" in notes or "Failing test case" in notes
    assert "# workflowskill: workflow.yaml\n" in notes
    shown = notes[notes.index("# workflowskill"):notes.index("\'\'\'", notes.index("# workflowskill"))]
    doc = yaml.safe_load(shown)
    assert 2 <= len(doc["steps"]) <= 3, shown
    assert all(step["id"] in ("s0", "s1", "s2") for step in doc["steps"]), shown
    optional = {"each", "delay", "retry", "on_error", "description", "outputs", "inputs"}
    assert not any(optional & set(step) for step in doc["steps"]), shown


def test_workflow_text_and_runnable_print_as_yaml():
    text = wst.WorkflowText("steps:\n  - id: a\n    type: tool\n    tool: t\n", "workflowskill")
    shown = pretty(text)
    assert "# workflowskill: workflow.yaml\nsteps:\n  - id: a\n" in shown
    case = wst.Runnable(text, {"n": 1}, {"t": {"output": 1}}, "workflowskill")
    shown = pretty(case)
    assert "  - id: a" in shown and '# inputs: {"n": 1}' in shown and '# host script: {"t"' in shown


def test_dump_quotes_what_yaml_1_2_would_not_read_as_a_string():
    doc = {"a": "0o17", "b": "1e3", "c": "yes", "d": "null", "e": "0x1F", "f": ".inf", "g": "plain"}
    node, diags = yamlsrc.load(dump(doc), "f.yaml")
    assert diags == []
    assert node.plain() == doc


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_malformed_texts_are_strings_with_a_file_name(data):
    text = data.draw(wst.malformed_texts())
    assert isinstance(text, str)
    assert text.file_name


def test_the_worked_example_of_docs_fuzzing_runs():
    page = (Path(__file__).resolve().parent.parent / "docs" / "fuzzing.md").read_text(encoding="utf-8")
    block = re.search(r'```python title="test_my_runtime.py"\n(.*?)```', page, re.DOTALL)
    assert block, "docs/fuzzing.md lost its worked example"
    code = block.group(1).replace("max_examples=100", "max_examples=15")
    namespace: dict = {}
    exec(compile(code, "docs/fuzzing.md", "exec"), namespace)  # noqa: S102 - the page's own code
    tests = [v for k, v in namespace.items() if k.startswith("test_") and callable(v)]
    assert len(tests) == 2
    for test in tests:
        test()
