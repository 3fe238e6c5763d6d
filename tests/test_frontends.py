"""The front-end table (pipeline/frontends.py): a rule about one dialect's
documents is a field of its FrontEnd record, read by the driver, the
translation and the command line.

A record registered under another name behaves as the original (nothing
reads the name), and flipping one of its fields changes exactly what the
field says: so the field is what the pipeline reads.
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import attrs
import pytest
from flowc.cli.eval import eval_command
from flowc.cli.options import DIALECTS
from flowc.ir import semantics
from flowc.pipeline import driver, evaluate, frontends, translate

DATA = Path(__file__).resolve().parent / "data"
# An aevatar step of an unknown type: a warning (AEV150), an error when strict.
EXTENSION = textwrap.dedent("""\
    name: p
    steps:
      - id: a
        type: openclaw
        parameters: {args: "x"}
    """)
# An instruction document of several workflows.
SEVERAL = DATA / "instruction" / "01-agentd-hiring-intake.yaml"
ECHO = DATA / "workflowskill" / "fixtures" / "echo.md"


def _fence(path: Path) -> str:
    """The YAML inside a WorkflowSkill Markdown file's ```workflow fence."""
    text = path.read_text(encoding="utf-8")
    return text.split("```workflow\n", 1)[1].split("```", 1)[0]


def _as(monkeypatch, dialect: str, name: str, **fields) -> frontends.FrontEnd:
    front_end = attrs.evolve(frontends.FRONT_ENDS[dialect], name=name, **fields)
    monkeypatch.setitem(frontends.FRONT_ENDS, name, front_end)
    return front_end


def _codes(result, errors_only: bool = False) -> list[str]:
    return sorted(d.code for d in result.diagnostics if d.is_error or not errors_only)


def test_every_dialect_has_a_front_end_and_a_profile():
    assert set(frontends.FRONT_ENDS) == set(semantics.PROFILES)
    assert all(name == fe.name for name, fe in frontends.FRONT_ENDS.items())
    assert DIALECTS == driver.DIALECTS == ("workflowskill", "aevatar", "instruction")
    assert driver.FRONT_ENDS is frontends.FRONT_ENDS


def test_strict_is_what_passes_strict_to_the_front_end(monkeypatch):
    plain = driver.compile_text(EXTENSION, "w.yaml", "aevatar")
    strict = driver.compile_text(EXTENSION, "w.yaml", "aevatar", strict=True)
    assert "AEV150" not in _codes(plain, errors_only=True) and "AEV150" in _codes(strict, errors_only=True)
    _as(monkeypatch, "aevatar", "renamed")
    assert _codes(driver.compile_text(EXTENSION, "w.yaml", "renamed", strict=True)) == _codes(strict)
    _as(monkeypatch, "aevatar", "lenient", strict=False)
    assert _codes(driver.compile_text(EXTENSION, "w.yaml", "lenient", strict=True)) == _codes(plain)


CALLER = textwrap.dedent("""\
    name: caller
    steps:
      - id: call
        type: workflow_call
        parameters: {workflow: "nowhere"}
    """)


def test_registry_names_is_what_checks_workflow_calls(monkeypatch, tmp_path):
    callee = tmp_path / "callee.yaml"
    callee.write_text("name: callee\nsteps:\n  - id: a\n    type: llm_call\n", encoding="utf-8")
    names, problem = driver.workflow_registry([str(callee)])
    assert problem is None and names == {"callee"}
    assert "AEV138" in _codes(driver.compile_text(CALLER, "c.yaml", "aevatar", known_workflows=names))
    _as(monkeypatch, "aevatar", "renamed")
    assert driver.workflow_registry([str(callee)], dialect="renamed")[0] == names
    assert "AEV138" in _codes(driver.compile_text(CALLER, "c.yaml", "renamed", known_workflows=names))
    _as(monkeypatch, "aevatar", "no_calls", registry_names=None)
    assert driver.workflow_registry([], [str(callee)], dialect="no_calls")[0] == frozenset()
    assert "AEV138" not in _codes(driver.compile_text(CALLER, "c.yaml", "no_calls", known_workflows=names))


def test_compile_all_is_what_writes_a_document_of_several_workflows_back_whole(monkeypatch):
    text = SEVERAL.read_text(encoding="utf-8")
    whole = translate.translate_text(text, str(SEVERAL), "instruction")
    first = translate.translate_text(text, str(SEVERAL), "aevatar")
    assert whole.ok and whole.text.count("- name:") >= 2
    assert "TRN001" in _codes(first) and "TRN001" not in _codes(whole)
    # Read as a dialect whose documents hold one workflow: only the first
    # is written, without a note.
    _as(monkeypatch, "instruction", "single", compile_all=None, document_names=None)
    single = translate.translate_text(text, str(SEVERAL), "instruction", dialect="single")
    assert single.ok and single.text != whole.text and "TRN001" not in _codes(single)
    assert single.text.count("- name:") < whole.text.count("- name:")


def test_a_workflow_is_picked_by_name_only_where_documents_hold_several(monkeypatch):
    text = SEVERAL.read_text(encoding="utf-8")
    names = frontends.FRONT_ENDS["instruction"].document_names(text, str(SEVERAL))
    assert len(names) > 1
    picked = driver.compile_text(text, str(SEVERAL), "instruction", workflow=names[1])
    assert picked.workflow is not None and picked.workflow.name == names[1]
    _as(monkeypatch, "instruction", "single", compile_all=None, document_names=None)
    first = driver.compile_text(text, str(SEVERAL), "single", workflow=names[1])
    assert first.workflow is not None and first.workflow.name == names[0]


def test_suffix_and_bare_yaml_are_what_name_a_translation(monkeypatch):
    bare = driver.compile_text(_fence(ECHO), "echo.yaml", "workflowskill").workflow
    marked = driver.compile_file(str(ECHO)).workflow
    assert bare is not None and marked is not None
    assert translate.output_suffix("workflowskill", bare) == ".yaml"
    assert translate.output_suffix("workflowskill", marked) == ".md"
    assert translate.output_suffix("aevatar", bare) == translate.output_suffix("instruction", bare) == ".yaml"
    _as(monkeypatch, "workflowskill", "workflowskill", bare_yaml=False)
    assert translate.output_suffix("workflowskill", bare) == ".md"
    _as(monkeypatch, "aevatar", "aevatar", suffix=".yml")
    assert translate.output_suffix("aevatar", bare) == ".yml"


@pytest.mark.parametrize(("lang", "templates"), [("workflowskill", True), ("aevatar", True), ("cel", False)])
def test_templates_is_what_makes_a_dollar_brace_text_a_value(monkeypatch, lang, templates):
    assert evaluate.LANGUAGES[lang].templates is templates

    def note(flag: bool) -> str:
        monkeypatch.setitem(evaluate.LANGUAGES, lang, attrs.evolve(evaluate.LANGUAGES[lang], templates=flag))
        stderr = io.StringIO()
        eval_command(lang, "'${'", None, None, False, io.StringIO(), io.StringIO(), stderr=stderr)
        return stderr.getvalue()

    assert ("--mode value" in note(templates)) is templates
    assert ("--mode value" in note(not templates)) is not templates


def test_a_language_without_an_evaluator_is_an_error_line():
    assert evaluate.evaluate_text("instruction", "1") == ("error", "language not supported yet: instruction")
    assert evaluate.run_batch(['{"expr": "1"}'], "nope") == ['{"error": "language not supported yet: nope"}']
