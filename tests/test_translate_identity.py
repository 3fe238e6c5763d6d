"""Same-dialect translation is a canonical formatter.

For every corpus workflow of every dialect: ``translate --to <its own
dialect>`` parses back (under the same file name) to an IR equal to the
original's modulo spans, the output checks without errors, and translating
the output again gives the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from flowc.compiler.analyze import analyze
from flowc.compiler.instruction.frontend import compile_instruction_all
from flowc.ir.expr import strip_spans
from flowc.pipeline import driver, translate
from hypothesis import given, settings
from hypothesis import strategies as st

DATA = Path(__file__).resolve().parent / "data"


def _corpus(dialect: str) -> list[Path]:
    if dialect == "workflowskill":
        files = sorted((DATA / "workflowskill").rglob("*.md"))
    elif dialect == "aevatar":
        files = sorted(p for p in (DATA / "aevatar").rglob("*.yaml") if "negative" not in p.parts)
    else:
        files = sorted(p for p in (DATA / "instruction").iterdir() if p.suffix in (".yaml", ".md"))
    return [p for p in files if driver.compile_file(str(p), dialect).ok]


def _first_difference(a, b, path="workflow") -> str:
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, tuple):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    if attrs.has(type(a)):
        for f in attrs.fields(type(a)):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if x != y:
                return _first_difference(x, y, f"{path}.{f.name}")
    return f"{path}: {a!r} != {b!r}"


def assert_same_ir(original, again) -> None:
    a, b = strip_spans(original), strip_spans(again)
    assert a == b, _first_difference(a, b)
    assert a.metadata == b.metadata


@pytest.mark.parametrize(("dialect", "at_least"), [("workflowskill", 20), ("aevatar", 170), ("instruction", 5)])
def test_corpus_is_found(dialect, at_least):
    assert len(_corpus(dialect)) >= at_least


def _cases():
    for dialect in ("workflowskill", "aevatar"):
        for path in _corpus(dialect):
            yield pytest.param(dialect, path, id=f"{dialect}/{path.relative_to(DATA / dialect)}")


@pytest.mark.parametrize(("dialect", "path"), list(_cases()))
def test_own_dialect_is_identity_and_idempotent(dialect, path):
    source = driver.compile_file(str(path), dialect)
    first = translate.emit(source.workflow, dialect)
    assert first.ok and not first.diagnostics, first.diagnostics
    again = driver.compile_text(first.text, str(path), dialect)
    assert again.ok, [d for d in again.diagnostics if d.is_error]
    assert_same_ir(source.workflow, again.workflow)
    assert translate.emit(again.workflow, dialect).text == first.text



def _instruction_workflows():
    for path in _corpus("instruction"):
        workflows, _ = compile_instruction_all(path.read_text(encoding="utf-8"), str(path))
        for wf in workflows:
            yield pytest.param(path, wf.name, id=f"instruction/{path.name}/{wf.name}")


@pytest.mark.parametrize(("path", "name"), list(_instruction_workflows()))
def test_every_instruction_workflow_is_an_identity(path, name):
    """Documents hold several workflows (``workflows:`` entries, instruction.md
    blocks): each one, written alone in its carrier, parses back to itself."""
    text = path.read_text(encoding="utf-8")
    workflows, _ = compile_instruction_all(text, str(path))
    for wf in (w for w in workflows if w.name == name):
        first = translate.emit(wf, "instruction")
        assert first.ok and not first.diagnostics, first.diagnostics
        again, diags = compile_instruction_all(first.text, str(path))
        assert not [d for d in diags if d.is_error] and len(again) == 1, diags
        assert not [d for d in analyze(again[0]) if d.is_error]
        assert_same_ir(wf, again[0])
        assert translate.emit(again[0], "instruction").text == first.text


def test_whole_instruction_documents_format_as_one_document():
    for path in _corpus("instruction"):
        result = translate.translate_file(str(path), "instruction")
        workflows, _ = compile_instruction_all(path.read_text(encoding="utf-8"), str(path))
        again, diags = compile_instruction_all(result.text, str(path))
        assert not [d for d in diags if d.is_error]
        assert [strip_spans(w) for w in again] == [strip_spans(w) for w in workflows]
        assert translate.translate_text(result.text, str(path), "instruction").text == result.text


# ------------------------------------------------------------------ hostile text
_HOSTILE = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["$x", "$$100", "${inputs.a}", "a ${b} c", "$${", "${}", "yes", "010", "1e3", "null", "~",
                     "- a", "a: b", "# no", "{{ x }}", "CEL: 1", "'q'", '"q"', "line\nbreak\n", " pad ",
                     "\t", "}", "${inputs.a", "$", "$${inputs.a}"]),
)


def _identity(text: str, name: str, dialect: str) -> None:
    source = driver.compile_text(text, name, dialect)
    if not source.ok:
        return  # the generated text is not a valid workflow of the dialect (e.g. an id it refuses)
    first = translate.emit(source.workflow, dialect)
    assert first.ok, first.diagnostics
    again = driver.compile_text(first.text, name, dialect)
    assert again.ok, ([d for d in again.diagnostics if d.is_error], first.text)
    assert_same_ir(source.workflow, again.workflow)
    assert translate.emit(again.workflow, dialect).text == first.text


@settings(max_examples=60, deadline=None)
@given(value=_HOSTILE, description=_HOSTILE, label=_HOSTILE)
def test_workflowskill_identity_with_hostile_text(value, description, label):
    from flowc.translation import yamlout

    doc = {"inputs": {"a": {"type": "string", "default": label}},
           "outputs": {"out": {"type": "string", "value": value}},
           "steps": [{"id": "call", "type": "tool", "tool": "t", "description": description,
                      "inputs": {"v": {"type": "string", "value": value}, "w": {"type": "string", "value": label}}},
                     {"id": "done", "type": "exit", "status": "success", "output": {"out": value},
                      "inputs": {}, "outputs": {}}]}
    text = "---\n" + yamlout.dump({"name": "w", "description": description}) + "---\n\n```workflow\n" \
        + yamlout.dump(doc) + "```\n"
    _identity(text, "SKILL.md", "workflowskill")


@settings(max_examples=60, deadline=None)
@given(value=_HOSTILE, prompt=_HOSTILE)
def test_aevatar_identity_with_hostile_text(value, prompt):
    from flowc.translation import yamlout

    doc = {"name": "w", "roles": [{"id": "r", "system_prompt": prompt}],
           "steps": [{"id": "a", "type": "llm_call", "target_role": "r",
                      "parameters": {"prompt_prefix": value}},
                     {"id": "b", "type": "assign", "parameters": {"target": "x", "value": value}}]}
    _identity(yamlout.dump(doc), "workflow.yaml", "aevatar")


@settings(max_examples=60, deadline=None)
@given(value=_HOSTILE, text=_HOSTILE)
def test_instruction_identity_with_hostile_text(value, text):
    from flowc.translation import yamlout

    doc = {"name": "w", "steps": {"start": {"kind": "manual"},
                                  "t": {"kind": "template", "depends_on": ["start"], "text": text},
                                  "v": {"kind": "assign", "depends_on": ["t"], "value": value},
                                  "done": {"kind": "finish", "depends_on": ["v"], "output": {"x": value}}}}
    _identity(yamlout.dump(doc), "workflow.yaml", "instruction")
