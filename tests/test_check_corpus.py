"""The WorkflowSkill corpus through the library API (flowc.pipeline.driver).

Every fixture and example the reference runtime runs must compile without
errors; the three it rejects must fail with a finding that names the real
problem at the right line.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml
from flowc.compiler.codes import CODES
from flowc.compiler.workflowskill.markdown import split_skill
from flowc.ir.diagnostics import Severity
from flowc.ir.ops import END_NODE_ID, OPERATIONS
from flowc.pipeline import driver

# file name -> (code, line, col, words the message must contain)
MALFORMED_EXPECTED = {
    # `type: tool` without `tool`; the step mapping starts at `id` on line 10.
    "malformed-bad-schema.md": ("WFS104", 10, 5, ("tool",)),
    # `tool: [invalid yaml structure` opens a flow sequence at line 12,
    # column 11 that is never closed.
    "malformed-bad-yaml.md": ("YAML001", 12, 11, ("flow sequence",)),
    "malformed-no-block.md": ("WFS101", 1, 1, ("```workflow",)),
}

_OP_FOR_TYPE = {"tool": "call", "conditional": "branch", "exit": "exit"}


def _declared_steps(text: str) -> list[dict]:
    """The steps of a SKILL.md as plain YAML, read independently of flowc."""
    block = split_skill(text).workflow
    return yaml.safe_load(block)["steps"]


def test_corpus_is_complete(wfs_fixtures_dir, wfs_examples_dir):
    assert len(list(wfs_fixtures_dir.glob("*.md"))) == 20
    assert len(list(wfs_examples_dir.glob("*.md"))) == 3


def test_clean_file_compiles(clean_path):
    result = driver.compile_file(str(clean_path))
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors == [], "\n".join(f"{d.code} {d.span.line}:{d.span.col} {d.message}" for d in errors)
    assert result.ok
    assert result.dialect == "workflowskill"
    wf = result.workflow
    assert wf is not None
    assert wf.dialect == "workflowskill" and wf.semantics == "workflowskill"

    # Every declared step becomes one node, in order, plus the synthetic end.
    steps = _declared_steps(clean_path.read_text(encoding="utf-8"))
    assert [n.id for n in wf.nodes] == [s["id"] for s in steps] + [END_NODE_ID]
    for node, step in zip(wf.nodes, steps):
        assert node.kind == step["type"]
        expected_op = _OP_FOR_TYPE.get(step["type"]) or f"transform.{step['operation']}"
        assert node.op == expected_op
        assert node.op in OPERATIONS
        assert node.span.file == str(clean_path) and node.span.line > 0
    assert wf.terminal == END_NODE_ID
    assert len(wf.entry) == 1 and wf.node(wf.entry[0]) is not None

    # Findings are sorted, known codes, and point into this file.
    for d in result.diagnostics:
        assert d.code in CODES
        assert d.severity is Severity.WARNING
        assert d.span.file == str(clean_path)
        assert d.span.line >= 1 and d.span.col >= 1
    keys = [d.sort_key() for d in result.diagnostics]
    assert keys == sorted(keys)


def test_clean_file_names_the_workflow(clean_path):
    text = clean_path.read_text(encoding="utf-8")
    wf = driver.compile_file(str(clean_path)).workflow
    fm = re.match(r"\A---\n([\s\S]*?)\n---", text)
    if fm:
        front = yaml.safe_load(fm.group(1))
        assert wf.name == front["name"]
        assert wf.description == front["description"]
    else:
        assert wf.name == clean_path.stem


def test_malformed_file_fails_with_located_finding(malformed_path):
    code, line, col, words = MALFORMED_EXPECTED[malformed_path.name]
    result = driver.compile_file(str(malformed_path))
    assert not result.ok
    errors = [d for d in result.diagnostics if d.is_error]
    # One problem, one error: no cascade of follow-on findings.
    assert [d.code for d in errors] == [code]
    err = errors[0]
    assert (err.span.line, err.span.col) == (line, col)
    assert err.span.file == str(malformed_path)
    for word in words:
        assert word in err.message


def test_bad_yaml_names_where_the_parser_gave_up(wfs_fixtures_dir):
    """The unclosed `[` is the primary location; the place the parser
    stopped (line 13) is kept as a note."""
    result = driver.compile_file(str(wfs_fixtures_dir / "malformed-bad-yaml.md"))
    (err,) = result.diagnostics
    assert any("line 13" in note for note in err.notes)


def test_bad_schema_workflow_is_not_lowered_to_a_runnable_call(wfs_fixtures_dir):
    result = driver.compile_file(str(wfs_fixtures_dir / "malformed-bad-schema.md"))
    # The step is still known to the IR, so later checks can see it...
    assert result.workflow is not None
    node = result.workflow.node("missing_fields")
    assert node is not None and node.op == "call"
    # ...but it has no tool name, and the result is not ok.
    assert node.attr("name") is None
    assert not result.ok


def test_no_frontmatter_checks_with_a_warning(wfs_fixtures_dir):
    path = wfs_fixtures_dir / "malformed-no-frontmatter.md"
    result = driver.compile_file(str(path))
    assert result.ok
    wfs110 = [d for d in result.diagnostics if d.code == "WFS110"]
    assert len(wfs110) == 1
    assert wfs110[0].severity is Severity.WARNING
    assert (wfs110[0].span.line, wfs110[0].span.col) == (1, 1)
    assert result.workflow.name == "malformed-no-frontmatter"
    assert [n.id for n in result.workflow.nodes] == ["echo", END_NODE_ID]


def test_every_case_file_exists_and_matches_its_outcome(wfs_dir):
    """cases.json records what the reference runtime did with each file:
    a parse-phase failure there is an error here, anything else compiles."""
    cases = json.loads((wfs_dir / "cases.json").read_text(encoding="utf-8"))
    assert len(cases) >= 20
    for case in cases:
        path = wfs_dir / case["file"]
        assert path.is_file(), case["file"]
        result = driver.compile_file(str(path))
        parse_failed = case["expected"].get("error", {}).get("phase") == "parse"
        assert result.ok is not parse_failed, (case["case"], [d.code for d in result.diagnostics])


def test_compile_text_equals_compile_file(corpus_path):
    text = corpus_path.read_text(encoding="utf-8")
    by_text = driver.compile_text(text, str(corpus_path))
    by_file = driver.compile_file(str(corpus_path))
    assert by_text == by_file


def test_compile_file_is_deterministic(corpus_path):
    first = driver.compile_file(str(corpus_path))
    second = driver.compile_file(str(corpus_path))
    assert first == second


def test_crlf_and_bom_do_not_move_findings(tmp_path, wfs_fixtures_dir):
    source = wfs_fixtures_dir / "malformed-bad-schema.md"
    text = source.read_text(encoding="utf-8")
    crlf = tmp_path / "crlf.md"
    crlf.write_bytes(("\ufeff" + text.replace("\n", "\r\n")).encode("utf-8"))
    plain = driver.compile_file(str(source))
    other = driver.compile_file(str(crlf))
    assert [(d.code, d.span.line, d.span.col) for d in other.diagnostics] == \
        [(d.code, d.span.line, d.span.col) for d in plain.diagnostics]


def test_detect_dialect_of_corpus(corpus_path):
    assert driver.detect_dialect(corpus_path.read_text(encoding="utf-8"), str(corpus_path)) == "workflowskill"


def test_bare_yaml_workflow_is_detected(wfs_fixtures_dir):
    block = split_skill((wfs_fixtures_dir / "two-step-pipe.md").read_text(encoding="utf-8")).workflow
    assert driver.detect_dialect(block, "two-step-pipe.yaml") == "workflowskill"
    result = driver.compile_text(block, "two-step-pipe.yaml")
    assert result.ok
    assert result.workflow.name == "two-step-pipe"


def test_missing_file_is_flc003(tmp_path):
    result = driver.compile_file(str(tmp_path / "nope.md"))
    assert result.workflow is None
    assert [d.code for d in result.diagnostics] == ["FLC003"]


def test_non_utf8_file_is_flc003(tmp_path):
    path = tmp_path / "latin1.md"
    path.write_bytes(b"```workflow\nsteps: []\n```\n\xff\xfe caf\xe9\n")
    result = driver.compile_file(str(path))
    assert [d.code for d in result.diagnostics] == ["FLC003"]
    assert "UTF-8" in result.diagnostics[0].message


@pytest.mark.parametrize("text", ["hello: world\n", "just some text\n", "[1, 2, 3]\n", ""])
def test_unrecognisable_text_is_flc001(text):
    result = driver.compile_text(text, "thing.yaml")
    assert result.workflow is None
    assert [d.code for d in result.diagnostics] == ["FLC001"]
    assert result.diagnostics[0].span.line == 1
    assert result.diagnostics[0].notes  # says how to force a dialect


def test_forced_unsupported_dialect_is_flc002(wfs_fixtures_dir, monkeypatch):
    monkeypatch.delitem(driver.FRONT_ENDS, "aevatar")  # a dialect this build lacks
    path = wfs_fixtures_dir / "echo.md"
    result = driver.compile_file(str(path), dialect="aevatar")
    assert [d.code for d in result.diagnostics] == ["FLC002"]


WORKFLOW_MD = "```workflow\nsteps:\n  - id: a\n    type: tool\n    tool: t\n```\n"


def test_expand_paths_walks_directories(tmp_path, wfs_examples_dir):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.md").write_text(WORKFLOW_MD, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(WORKFLOW_MD.split("\n", 1)[1].rsplit("```", 1)[0], encoding="utf-8")
    (tmp_path / "notes.txt").write_text(WORKFLOW_MD, encoding="utf-8")
    (tmp_path / "README.md").write_text("# not a workflow\n", encoding="utf-8")
    (tmp_path / "package.json").write_text('{"name": "x"}\n', encoding="utf-8")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "two.md").write_text(WORKFLOW_MD, encoding="utf-8")
    found = driver.expand_paths([str(tmp_path), str(wfs_examples_dir / "hello-world.md")])
    # Top-down: a directory's own files (sorted), then its subdirectories (sorted).
    assert found == [str(tmp_path / "b.yaml"), str(tmp_path / "a" / "one.md"),
                     str(wfs_examples_dir / "hello-world.md")]


def test_expand_paths_keeps_explicit_files(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# not a workflow\n", encoding="utf-8")
    missing = tmp_path / "missing.md"
    assert driver.expand_paths([str(readme), str(missing)]) == [str(readme), str(missing)]


def test_a_yaml_file_holding_a_fence_in_a_string_is_still_yaml():
    """A ``` inside a description must not turn a .yaml file into Markdown."""
    text = "steps:\n  - id: s0\n    type: tool\n    tool: t\n    description: \"```\\n\\n\"\n"
    result = driver.compile_text(text, "workflow.yaml")
    assert result.ok, [d.code for d in result.diagnostics]
    assert result.workflow.nodes[0].description == "```\n\n"
