"""`flowc check --workflows-from`: the registry an aevatar workflow_call
must name (AEV138), on the aevatar repository's own workflows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from flowc import cli
from flowc.pipeline import driver

ROOT = Path(cli.__file__).resolve().parents[1]
DEMOS = ROOT / "tests" / "data" / "aevatar" / "aevatarAI__aevatar" / "demos" / "Aevatar.Demos.Workflow" / "workflows"
TOP = DEMOS / "48_workflow_call_multilevel.yaml"      # calls 48_subworkflow_level1
LEVEL1 = DEMOS / "48_subworkflow_level1.yaml"         # calls 48_subworkflow_level2
LEVEL2 = DEMOS / "48_subworkflow_level2.yaml"         # calls 48_subworkflow_level3
LEVEL3 = DEMOS / "48_subworkflow_level3.yaml"
NEGATIVE = ROOT / "tests" / "data" / "aevatar" / "negative" / "16_validator_workflow_call_unregistered.yaml"


def check(capsys, *args: str) -> tuple[int, list[dict]]:
    code = cli.main(["check", "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def aev138(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["code"] == "AEV138"]


def test_the_demo_directory_is_its_own_registry(capsys):
    """Every workflow_call of the demos names a demo: checked together, none is reported."""
    calls = sum(path.read_text(encoding="utf-8").count("type: workflow_call") for path in DEMOS.glob("*.yaml"))
    assert calls >= 8
    _code, findings = check(capsys, str(DEMOS), "--workflows-from", str(DEMOS))
    assert aev138(findings) == []
    assert {Path(f["file"]).name for f in findings if f["severity"] == "error"} <= {"03_conditional.yaml",
                                                                                   "conditional.yaml"}


def test_a_call_outside_the_registry_is_an_error_at_the_call(capsys):
    code, findings = check(capsys, str(TOP), str(LEVEL2), "--workflows-from", str(LEVEL1))
    assert code == 1
    [finding] = aev138(findings)
    assert Path(finding["file"]) == LEVEL2
    # the span is the call's `workflow` value: `workflow: "48_subworkflow_level3"` on line 8
    line = LEVEL2.read_text(encoding="utf-8").splitlines()[finding["line"] - 1]
    assert line[finding["col"] - 1:finding["end_col"] - 1] == '"48_subworkflow_level3"'
    assert "48_subworkflow_level3" in finding["message"] and "引用未注册工作流" in finding["message"]
    names, _ = driver.workflow_registry([str(LEVEL1)], [str(TOP), str(LEVEL2)])
    result = driver.compile_text(LEVEL2.read_text(encoding="utf-8"), str(LEVEL2), known_workflows=names)
    [diag] = [d for d in result.diagnostics if d.code == "AEV138"]
    assert diag.notes == ('did you mean "48_subworkflow_level2"?',)


def test_text_output_shows_the_call_and_the_suggestion(capsys):
    assert cli.main(["check", str(LEVEL2), "--workflows-from", str(LEVEL1)]) == 1
    out = capsys.readouterr().out
    assert f"{LEVEL2}:8:17: error[AEV138]" in out
    assert 'note: did you mean "48_subworkflow_level2"?' in out


def test_without_a_registry_nothing_is_reported(capsys):
    code, findings = check(capsys, str(TOP), str(LEVEL2), str(NEGATIVE))
    assert code == 0 and aev138(findings) == []


def test_the_checked_files_are_registered_too(capsys):
    code, findings = check(capsys, str(TOP), str(LEVEL1), str(LEVEL2), "--workflows-from", str(LEVEL3))
    assert code == 0 and aev138(findings) == []
    # ... and one file less leaves exactly its callers unresolved
    code, findings = check(capsys, str(TOP), str(LEVEL2), "--workflows-from", str(LEVEL3))
    assert [(Path(f["file"]).name, f["line"]) for f in aev138(findings)] == [(TOP.name, 8)]


def test_the_option_repeats_and_takes_files_and_directories(capsys, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(LEVEL2, lib / LEVEL2.name)
    (lib / "README.md").write_text("# not a workflow\n", encoding="utf-8")
    code, findings = check(capsys, str(TOP), "--workflows-from", str(lib), "--workflows-from", str(LEVEL1))
    assert code == 0 and aev138(findings) == []
    code, findings = check(capsys, str(TOP), "--workflows-from", str(lib))
    assert [f["line"] for f in aev138(findings)] == [8]


def test_names_and_file_names_register_ignoring_case(capsys, tmp_path):
    """The engine's file loader registers a file by its name without the
    extension; other sources by the workflow's `name`; its sets ignore case."""
    by_name = tmp_path / "by_name"
    by_name.mkdir()
    (by_name / "anything.yaml").write_text(LEVEL3.read_text(encoding="utf-8"), encoding="utf-8")
    by_file = tmp_path / "by_file"
    by_file.mkdir()
    (by_file / "48_SubWorkflow_Level3.yml").write_text(
        LEVEL3.read_text(encoding="utf-8").replace("name: 48_subworkflow_level3", "name: renamed"),
        encoding="utf-8")
    for registry in (by_name, by_file):
        code, findings = check(capsys, str(LEVEL2), "--workflows-from", str(registry))
        assert code == 0 and aev138(findings) == [], registry.name


def test_the_engine_negative_case_with_its_registry(capsys, tmp_path):
    """WorkflowValidatorCoverageTests: registry {another_flow}, a call to sub_flow."""
    (tmp_path / "another_flow.yaml").write_text(
        "name: another_flow\nsteps:\n  - id: a\n    type: transform\n", encoding="utf-8")
    code, findings = check(capsys, str(NEGATIVE), "--workflows-from", str(tmp_path))
    assert code == 1
    [finding] = aev138(findings)
    assert "sub_flow" in finding["message"] and "call-sub" in finding["message"]


def test_same_findings_on_several_processes(capsys):
    args = [str(TOP), str(LEVEL1), str(LEVEL2), str(NEGATIVE), "--workflows-from", str(LEVEL1)]
    one = check(capsys, *args, "--jobs", "1")
    two = check(capsys, *args, "--jobs", "2")
    assert one == two and len(aev138(one[1])) == 2


def test_a_missing_registry_path_is_a_usage_error(capsys, tmp_path):
    assert cli.main(["check", str(TOP), "--workflows-from", str(tmp_path / "missing")]) == 2
    assert "--workflows-from" in capsys.readouterr().err


def test_the_registry_of_a_directory_skips_other_dialects():
    names, problem = driver.workflow_registry([str(ROOT / "examples")], [str(LEVEL3)])
    assert problem is None
    # examples/ holds WorkflowSkill, instruction and one aevatar workflow
    # (examples/mcp/clocks.aevatar.yaml, registered by its name and its file name)
    assert names == {"48_subworkflow_level3", "clocks", "clocks.aevatar"}


def test_checked_files_are_registered_by_the_dialect_they_are_read_as():
    assert driver.workflow_registry([], [str(LEVEL3)], "aevatar")[0] == {"48_subworkflow_level3"}
    assert driver.workflow_registry([], [str(LEVEL3)], "instruction")[0] == frozenset()
    # a registry directory's files are always recognised from their content
    assert driver.workflow_registry([str(LEVEL3)], [], "instruction")[0] == {"48_subworkflow_level3"}
