"""A translation that `flowc translate` writes (exit 0) checks clean in its
target: no id, name or key the target's front end rejects, for every
source -> target pair, including sources with hostile ids."""

from __future__ import annotations

import re

import pytest
from flowc.compiler.instruction.frontend import compile_instruction_all
from flowc.pipeline import driver, translate
from flowc.testing import strategies
from flowc.testing.hostile_ids import HOSTILE_IDS, hostile_ids, hostile_workflows
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

SOME = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
SOURCES = ("workflowskill", "aevatar", "instruction")


def target_errors(text: str, target: str, workflow) -> list[str]:
    """The errors `flowc check` reports for a translation, read as a file of its target."""
    name = "translated" + translate.output_suffix(target, workflow)
    if target == "instruction":
        _, diags = compile_instruction_all(text, name)
    else:
        diags = driver.compile_text(text, name, target).diagnostics
    return [f"{d.code} {d.span.line}:{d.span.col} {d.message}" for d in diags if d.is_error]


def translations_check_clean(text: strategies.WorkflowText) -> None:
    source = text.compile()
    assume(source.ok)
    for target in translate.TARGETS:
        result = translate.translate_text(str(text), text.file_name, target)
        assert result.ok, (target, [d.message for d in result.diagnostics if d.is_error])   # exit 0
        errors = target_errors(result.text, target, source.workflow)
        assert errors == [], f"{text.dialect} -> {target}:\n" + "\n".join(errors) + "\n\n" + result.text


@pytest.mark.parametrize("source", SOURCES)
def test_generated_workflows_translate_to_files_that_check_clean(source):
    @SOME
    @given(strategies.workflows(source, max_steps=5))
    def check(text):
        translations_check_clean(text)

    check()


@pytest.mark.parametrize("source", SOURCES)
def test_workflows_with_hostile_ids_translate_to_files_that_check_clean(source):
    @settings(SOME, max_examples=30)
    @given(hostile_workflows(source, max_steps=5))
    def check(text):
        translations_check_clean(text)

    check()


# ------------------------------------------------------------------ the strategy
def test_hostile_ids_cover_every_kind_of_trouble():
    kinds = {
        "quote": lambda n: "'" in n or '"' in n,
        "digit first": lambda n: n[:1].isdigit(),
        "unicode": lambda n: any(ord(c) > 127 for c in n),
        "space": lambda n: " " in n,
        "dot": lambda n: "." in n,
        "very long": lambda n: len(n) > 64,
    }
    for kind, test in kinds.items():
        assert any(test(n) for n in HOSTILE_IDS), kind


@SOME
@given(st.data())
def test_hostile_ids_of_a_dialect_are_ids_it_accepts(data):
    name = data.draw(hostile_ids("instruction"))
    assert re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_-]{0,63}", name)
    referable = data.draw(hostile_ids("workflowskill", referable=True))
    assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", referable)


@settings(SOME, max_examples=20)
@given(hostile_workflows("aevatar", max_steps=6))
def test_hostile_workflows_are_mostly_valid_and_hostile(text):
    # the generator means them to be valid: the front end agrees
    assert text.compile().ok, str(text)


# ------------------------------------------------------------------ cases found
HOSTILE_AEVATAR = """\
name: hostile
roles:
  - id: r
steps:
  - id: "1"
    type: llm_call
    target_role: r
    next: "a'b"
  - id: "a'b"
    type: assign
    parameters:
      target: "x y"
      value: "${steps.1.output}"
    next: LONG
  - id: LONG
    type: llm_call
    target_role: r
""".replace("LONG", "step-" + "é" * 120)


def test_aevatar_ids_dialect_3_rejects_are_renamed(tmp_path, capsys):
    source = tmp_path / "hostile.yaml"
    source.write_text(HOSTILE_AEVATAR, encoding="utf-8")
    assert driver.compile_file(str(source)).ok
    result = translate.translate_file(str(source), "instruction")
    assert result.ok
    assert target_errors(result.text, "instruction", result.workflow) == []
    renamed = {lw.how for lw in result.emission.lowerings if lw.construct in ("step id", "run variable")}
    assert {"'1' -> 's_1'", "\"a'b\" -> 'a_b'", "'x y' -> 'x_y'"} <= renamed
    assert "writes: x_y" in result.text and "steps.s_1.output" in result.text
    ids = re.findall(r"(?m)^  (\S+):$", result.text.split("\nsteps:\n", 1)[1])
    assert ids and all(len(i) <= 64 for i in ids)


def test_the_renamed_translation_runs_like_the_source():
    from flowc.testing.translation import cross_dialect

    source = driver.compile_text(HOSTILE_AEVATAR, "h.yaml", "aevatar")
    script = {"llm:r": [{"output": "first answer"}, {"output": "second answer"}], "*": {"output": "ok"}}
    # compared: the same outcome, outputs and host calls (it raises where they differ)
    assert cross_dialect(source.workflow, "instruction", {"input": "hello"}, script)


def test_an_input_read_by_index_has_its_declared_type():
    """dialect 3 -> WorkflowSkill writes an input whose name is not an
    identifier as `$inputs["a-b"]`; it is the input, not the inputs object."""
    text = """\
inputs:
  a-b: { type: string, default: x }
steps:
  - id: fetch
    type: tool
    tool: search
    inputs:
      q: { type: string, value: '$inputs["a-b"]' }
"""
    assert driver.compile_text(text, "w.yaml", "workflowskill").ok


def test_renamed_ids_do_not_clash_with_ids_that_fit():
    """`a-b` cannot be a WorkflowSkill reference; `a_b`, its renaming, is taken."""
    text = """\
name: clash
steps:
  start: { kind: manual }
  a-b: { kind: tool, depends_on: start, name: search, args: { q: x } }
  a_b: { kind: tool, depends_on: a-b, name: search, args: { q: "{{ steps.a-b.output }}" } }
  done: { kind: finish, depends_on: a_b, output: { r: "{{ steps.a_b.output }}" } }
"""
    result = translate.translate_text(text, "clash.yaml", "workflowskill")
    assert result.ok
    assert re.findall(r"(?m)^  - id: (\S+)$", result.text) == ["a_b_2", "a_b", "done"]
    assert target_errors(result.text, "workflowskill", result.workflow) == []


def test_a_transform_with_each_translates_to_dialect_3_that_checks_clean():
    """Dialect 3 has no form for `each` on a transform (TRN101): the step is
    written to run once, and its inputs must not read the loop's index."""
    text = strategies.WorkflowText(
        "inputs:\n  rows:\n    type: array\nsteps:\n  - id: s0\n    type: transform\n    each: $inputs.rows\n"
        "    operation: filter\n    where: '1'\n    inputs:\n      items:\n        type: array\n"
        "        value: $inputs.rows[$index]\n", "workflowskill")

    @SOME
    @given(st.just(text))
    def check(text):
        translations_check_clean(text)

    check()
