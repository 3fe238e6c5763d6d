"""`flowc schema`: JSON Schemas generated from the checker's tables.

Every valid corpus file validates against its dialect's schema; files the
checker rejects for their shape do not.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from flowc import cli
from flowc.compiler import schema as schemas
from flowc.compiler import yamlsrc
from flowc.compiler.codes import CODES
from flowc.compiler.schema import workflowskill as wfs_schema
from flowc.compiler.workflowskill.markdown import split_skill
from flowc.pipeline import driver

ROOT = Path(cli.__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
EXTRA_WFS = [ROOT / "examples" / "triage" / "SKILL.md", DATA / "graph" / "release-train.md"]
# Codes about the shape of the document: a wrong example of one of these
# must also fail the schema.
SHAPE_CODES = ("WFS103", "WFS104", "WFS105", "WFS106", "WFS107", "WFS108", "WFS109", "WFS111",
               "WFS112", "WFS113")


def validator(dialect: str):
    return jsonschema.Draft202012Validator(schemas.schema(dialect))


def workflow_data(text: str, file: str):
    """The workflow document as plain data, read with flowc's YAML 1.2 rules."""
    if file.endswith(".md"):
        text = split_skill(text).workflow or ""
    root, diags = yamlsrc.load(text, file)
    assert not diags, diags
    return root.plain() if root is not None else None


def errors(dialect: str, data) -> list[str]:
    return [f"{list(e.path)}: {e.message}" for e in validator(dialect).iter_errors(data)]


@pytest.mark.parametrize("dialect", sorted(schemas.available()))
def test_schema_is_valid_2020_12(dialect):
    s = schemas.schema(dialect)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(s)


def test_every_valid_workflowskill_corpus_file_validates(clean_path):
    data = workflow_data(clean_path.read_text(encoding="utf-8"), str(clean_path))
    assert errors("workflowskill", data) == []


@pytest.mark.parametrize("path", EXTRA_WFS, ids=lambda p: p.name)
def test_bundled_workflowskill_files_validate(path):
    assert driver.compile_file(str(path)).ok
    assert errors("workflowskill", workflow_data(path.read_text(encoding="utf-8"), str(path))) == []


def test_the_malformed_schema_fixture_does_not_validate(wfs_fixtures_dir):
    path = wfs_fixtures_dir / "malformed-bad-schema.md"
    assert errors("workflowskill", workflow_data(path.read_text(encoding="utf-8"), str(path)))


def _is_workflow_file(text: str) -> bool:
    """Some right examples describe a fix in prose instead of giving a file."""
    return not (text.lstrip().startswith("#") and "steps" not in text)


@pytest.mark.parametrize("code", [c for c in CODES if c.startswith(("WFS", "ANA")) and CODES[c].right
                                  and CODES[c].example_file.endswith((".yaml", ".md"))
                                  and _is_workflow_file(CODES[c].right)])
def test_right_examples_validate(code):
    info = CODES[code]
    assert errors("workflowskill", workflow_data(info.right, info.example_file)) == []


@pytest.mark.parametrize("code", SHAPE_CODES)
def test_wrong_shape_examples_do_not_validate(code):
    info = CODES[code]
    assert errors("workflowskill", workflow_data(info.wrong, info.example_file))


def test_every_table_key_has_a_shape():
    missing = wfs_schema.table_keys() - set(wfs_schema.SHAPES)
    assert not missing, f"keys of fields.py with no entry in SHAPES: {sorted(missing)}"


def test_closed_sets_come_from_the_tables():
    from flowc.compiler.workflowskill import fields as F

    s = schemas.schema("workflowskill")
    defs = s["$defs"]
    assert defs["input"]["properties"]["type"]["enum"] == list(F.TYPE_NAMES)
    assert set(defs["input"]["properties"]) == set(F.INPUT_KEYS)
    step_types = {d["properties"]["type"]["const"] for name, d in defs.items()
                  if "properties" in d and "const" in d["properties"].get("type", {})}
    assert step_types == set(F.STEP_TYPES)
    assert set(defs["retry"]["required"]) == set(F.RETRY_KEYS)
    assert set(defs["tool"]["properties"]) == set(F.COMMON_STEP_KEYS + F.STEP_TYPE_KEYS["tool"])


def test_completion_hints_have_descriptions():
    tool = schemas.schema("workflowskill")["$defs"]["tool"]["properties"]
    assert all(p.get("description") for p in tool.values())


# ------------------------------------------------------------- the command
def test_flowc_schema_prints_the_schema(capsys):
    assert cli.main(["schema", "workflowskill"]) == 0
    assert json.loads(capsys.readouterr().out) == schemas.schema("workflowskill")


def test_flowc_schema_writes_a_file(tmp_path):
    out = tmp_path / "wfs.schema.json"
    assert cli.main(["schema", "workflowskill", "-o", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["title"].startswith("WorkflowSkill")


@pytest.mark.parametrize("dialect", ["aevatar", "instruction"])
def test_other_dialects_have_a_schema_or_say_so(capsys, dialect):
    code = cli.main(["schema", dialect])
    out, err = capsys.readouterr()
    if dialect in schemas.available():
        assert code == 0 and json.loads(out) == schemas.schema(dialect)
    else:
        assert code == 2 and f"no schema for the {dialect} dialect" in err


# ------------------------------------------------- the other dialects' corpora
def _documents(dialect: str, text: str, path: str) -> list:
    """The workflow documents of a file, as plain data."""
    if dialect == "instruction":
        from flowc.compiler.instruction import carriers
        found, _ = carriers.locate(text, path)
        return [carriers.body_map(c).plain() for c in found if carriers.body_map(c) is not None]
    root, diags = yamlsrc.load(text, path)
    assert not diags
    return [root.plain()]


# Corpus files the checker rightly rejects (see tests/test_aevatar_corpus.py).
KNOWN_BROKEN = {
    "aevatar": {"03_conditional.yaml", "conditional.yaml", "onboarding.yaml"},
    "instruction": set(),
}


def _corpus(dialect: str) -> list[Path]:
    folder = DATA / dialect
    return sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml", ".md", ".json")
                  and p.name != "README.md" and not {"negative", "expressions"} & set(p.parts)) if folder.is_dir() else []


@pytest.mark.parametrize("dialect, path", [(d, p) for d in ("aevatar", "instruction") for p in _corpus(d)],
                         ids=lambda v: v if isinstance(v, str) else f"{v.parent.name}/{v.name}")
def test_every_valid_corpus_document_of_the_other_dialects_validates(dialect, path):
    assert dialect in schemas.available()
    text = path.read_text(encoding="utf-8")
    result = driver.compile_text(text, str(path), dialect)
    if any(d.is_error for d in result.diagnostics):
        # Only valid files must validate; the broken ones are listed (with the
        # reason) by the dialect's corpus tests.
        assert path.name in KNOWN_BROKEN[dialect], [d.code for d in result.diagnostics if d.is_error]
        return
    documents = _documents(dialect, text, str(path))
    assert documents
    for data in documents:
        assert errors(dialect, data) == []


# ------------------------------------------- instruction: whole files, every carrier
# Codes about the shape of an instruction document: a wrong example of one
# of these must also fail the schema (as a whole file).
INSTRUCTION_SHAPE_CODES = ("INS101", "INS102", "INS103", "INS104", "INS106", "INS107", "INS108", "INS110")


def _whole_file(text: str, path: str):
    root, diags = yamlsrc.load(text, path)
    assert not diags and root is not None
    return root.plain()


def _instruction_files() -> list[Path]:
    """Every YAML/JSON file of the dialect in the repository's data and examples."""
    out = []
    for folder in (DATA / "instruction", ROOT / "examples"):
        for p in sorted(folder.rglob("*")):
            if p.suffix in (".yaml", ".yml", ".json") and \
                    driver.detect_dialect(p.read_text(encoding="utf-8"), str(p)) == "instruction":
                out.append(p)
    return out


@pytest.mark.parametrize("path", _instruction_files(), ids=lambda p: p.name)
def test_every_valid_instruction_file_validates_as_a_whole(path):
    """The schema takes the file an editor opens, in either carrier: a
    workflow document, or a config document with `workflows:` entries."""
    text = path.read_text(encoding="utf-8")
    assert driver.compile_text(text, str(path), "instruction").ok
    assert errors("instruction", _whole_file(text, str(path))) == []


def test_the_corpus_has_both_yaml_carriers():
    carriers = {"workflows" in _whole_file(p.read_text(encoding="utf-8"), str(p)) for p in _instruction_files()}
    assert carriers == {True, False}


def test_a_config_document_is_checked_entry_by_entry():
    path = DATA / "instruction" / "01-agentd-hiring-intake.yaml"
    data = _whole_file(path.read_text(encoding="utf-8"), str(path))
    assert data["workflows"] and "agent" in data     # the agent's own configuration is left alone
    broken = {**data, "workflows": [*data["workflows"][:-1], {**data["workflows"][-1], "stepz": {}}]}
    assert errors("instruction", broken)
    assert errors("instruction", {**data, "workflows": []})
    assert errors("instruction", {**data, "workflows": {"job-posted": data["workflows"][0]}})
    first = data["workflows"][0]
    assert errors("instruction", first) == []        # an entry alone is a workflow document


def _instruction_examples(which: str) -> list[str]:
    return [c for c in CODES if c.startswith(("INS", "CEL")) and getattr(CODES[c], which)
            and CODES[c].example_file.endswith((".yaml", ".json"))]


@pytest.mark.parametrize("code", _instruction_examples("right"))
def test_instruction_right_examples_validate(code):
    info = CODES[code]
    assert errors("instruction", _whole_file(info.right, info.example_file)) == []


@pytest.mark.parametrize("code", INSTRUCTION_SHAPE_CODES)
def test_instruction_wrong_shape_examples_do_not_validate(code):
    info = CODES[code]
    assert errors("instruction", _whole_file(info.wrong, info.example_file))


def test_generated_instruction_documents_validate_in_both_carriers():
    from flowc.testing import strategies
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategies.documents("instruction", max_steps=4))
    def check(doc):
        assert errors("instruction", doc) == []
        assert errors("instruction", {"config_version": "2", "workflows": [doc, doc]}) == []

    check()
