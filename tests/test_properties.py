"""The fuzzing properties on a bounded number of examples (``flowc fuzz``
checks the same ones at scale): backend equivalence, round trips,
determinism, never crashing; and the ``flowc fuzz`` command itself."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from flowc import cli
from flowc.pipeline import driver
from flowc.testing import campaign, properties, translation
from flowc.testing import strategies as wst
from flowc.testing.properties import PropertyFailure
from hypothesis import HealthCheck, Phase, assume, given, settings

SOME = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
DIALECTS = wst.dialects()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_valid_workflow_properties(dialect):
    """Valid, both backends agree, IR and bytecode round-trip, deterministic."""

    @SOME
    @given(wst.runnable_workflows(dialect))
    def check(case):
        result = properties.check_valid(str(case.text), case.file_name, case.dialect)
        if properties.vm_unsupported(result.workflow) is None:
            properties.backend_equivalence(result.workflow, case.inputs, case.host_script)
            properties.bytecode_round_trip(result.workflow)
        else:
            properties.python_runs(result.workflow, case.inputs, case.host_script)
        properties.ir_round_trip(result.workflow)
        properties.determinism(str(case.text), case.file_name, case.dialect)

    check()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_malformed_input_never_crashes(dialect):
    @settings(SOME, max_examples=60)
    @given(wst.malformed_texts(dialect))
    def check(text):
        properties.check_never_crashes(str(text), text.file_name, None)
        properties.check_never_crashes(str(text), text.file_name, text.dialect)

    check()


def test_a_property_failure_names_its_property():
    with pytest.raises(PropertyFailure) as info:
        properties.check_valid("steps: []\n", "f.yaml", "workflowskill")
    assert info.value.prop == "valid" and "WFS109" in info.value.message
    assert not info.value.crash


def test_nested_conditionals_reach_the_end():
    """A branch target that is itself a conditional nests arms; its own
    targets continue after the outer conditional (was a false ANA404)."""
    text = textwrap.dedent("""\
        inputs:
          n: {type: int, default: 1}
        steps:
          - id: outer
            type: conditional
            condition: $inputs.n > 0
            then: [inner]
          - id: inner
            type: conditional
            condition: $inputs.n > 1
            then: [work]
          - id: work
            type: tool
            tool: t
          - id: after
            type: tool
            tool: t
        """)
    result = driver.compile_text(text, "nested.yaml", "workflowskill")
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
    for n, skipped in ((2, set()), (1, {"work"}), (0, {"inner", "work"})):
        record = properties.backend_equivalence(result.workflow, {"n": n}, {"t": {"output": 1}})
        statuses = {s["id"]: s["status"] for s in record["steps"]}
        assert statuses == {i: "skipped" if i in skipped else "success" for i in ("outer", "inner", "work", "after")}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_translation_to_the_own_dialect_round_trips(dialect):
    @SOME
    @given(wst.workflows(dialect))
    def check(text):
        properties.translate_round_trip(text.compile().workflow, dialect, text.file_name)

    check()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_exact_translations_run_the_same(dialect):
    @settings(SOME, phases=(Phase.explicit, Phase.reuse, Phase.generate))
    @given(wst.runnable_workflows(dialect))
    def check(case):
        workflow = case.workflow()
        assume(translation.inputs_have_declared_shapes(workflow, case.inputs))
        for target in properties.translation_targets(workflow):
            properties.cross_dialect(workflow, target, case.inputs, case.host_script)

    check()


# ------------------------------------------------------------------ flowc fuzz
@pytest.fixture(autouse=False)
def no_translation(monkeypatch):
    """The command's own tests do not depend on the translators."""
    monkeypatch.setattr(properties, "translation_unavailable", lambda dialect: "not in this test")


def _fuzz(capsys, *argv):
    code = cli.main(["fuzz", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_fuzz_command_summary(tmp_path, capsys, no_translation):
    code, out, err = _fuzz(capsys, "--dialect", "workflowskill", "--examples", "45", "--seed", "3",
                           "--out", str(tmp_path / "crashes"))
    assert code == 0, out + err
    assert "flowc fuzz: workflowskill, 45 examples in" in out
    assert "seed 3, 1 job" in out
    for line in ("valid workflows", "mutants", "malformed inputs", "properties checked:", "mutation score:",
                 "findings: 0", "crashes: 0"):
        assert line in out
    for prop in ("valid", "never-crash", "mutant-caught", "backend-equivalence", "ir-round-trip",
                 "bytecode-round-trip", "determinism"):
        assert f"ok    {prop} " in out
    assert not (tmp_path / "crashes").exists()


def test_fuzz_command_json_and_replay(tmp_path, capsys, no_translation):
    args = ("--dialect", "workflowskill", "--examples", "12", "--seed", "11", "--json", "--out", str(tmp_path))
    code, out, _ = _fuzz(capsys, *args)
    first = json.loads(out)
    code_again, out_again, _ = _fuzz(capsys, *args)
    again = json.loads(out_again)
    assert code == code_again == 0
    assert first["examples"] == again["examples"] == {"valid": 4, "mutant": 4, "malformed": 4}
    assert first["checked"] == again["checked"]
    assert first["mutation_score"]["caught"] == first["mutation_score"]["tried"] == 4


def test_fuzz_command_writes_a_minimal_reproducer(tmp_path, capsys, monkeypatch):
    """A crash in the compiler is shrunk and written as a workflow file."""
    real = driver.compile_text

    def broken(text, path, dialect=None, strict=False):
        if "type: transform" in text:
            raise RuntimeError("boom")
        return real(text, path, dialect, strict)

    monkeypatch.setattr(driver, "compile_text", broken)
    result = campaign.run_campaign("workflowskill", 60, 5, out_dir=str(tmp_path), kinds=("valid",))
    crashes = [f for f in result.failures if f.crash]
    assert crashes and crashes[0].prop == "valid"
    path = crashes[0].reproducer
    assert path.startswith(str(tmp_path)) and path.endswith((".yaml", ".md"))
    text = Path(path).read_text(encoding="utf-8")
    assert "type: transform" in text
    assert text.count("  - id: ") <= 2, text
    base = path.rsplit(".", 1)[0]
    assert Path(base + ".inputs.json").read_text().strip().startswith("{")
    assert "RuntimeError: boom" in Path(base + ".failure.txt").read_text()
    summary = campaign.summary(result, 1.0, 5, 1)
    assert "crashes: 1" in summary and f"reproducer: {path}" in summary


def test_fuzz_command_exit_status_on_failure(tmp_path, capsys, monkeypatch, no_translation):
    monkeypatch.setattr(properties, "ir_round_trip", _always_fails)
    code, out, _ = _fuzz(capsys, "--dialect", "workflowskill", "--examples", "9", "--seed", "2",
                         "--out", str(tmp_path))
    assert code == 1
    assert "FAIL  ir-round-trip" in out and "findings: 1" in out and "replay with: flowc fuzz" in out


def _always_fails(workflow):
    raise PropertyFailure("ir-round-trip", "injected")


def test_fuzz_command_usage_errors(capsys):
    assert _fuzz(capsys, "--dialect", "cobol", "--examples", "3")[0] == 2
    assert _fuzz(capsys, "--dialect", "workflowskill", "--examples", "0")[0] == 2


def test_fuzz_jobs_split_the_campaign(tmp_path, no_translation):
    result = campaign.run_campaign("workflowskill", 24, 9, jobs=2, out_dir=str(tmp_path))
    assert result.examples == {"valid": 8, "mutant": 8, "malformed": 8}
    assert not result.failures


def test_hang_is_reported_as_a_crash():
    import time

    with pytest.raises(PropertyFailure) as info:
        campaign._limited(lambda: time.sleep(5), 0.2, "sleeping")
    assert info.value.crash and "hang" in info.value.message
