"""`flowc translate`: output, files, exit status, --strict, findings with
source spans, comments in the output, and the corpus matrix in the README
and docs/translation.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flowc import cli
from flowc.compiler.codes import CODES
from flowc.compiler.instruction.frontend import compile_instruction_all
from flowc.pipeline import driver, translate

ROOT = Path(cli.__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
TRIAGE = ROOT / "examples" / "triage" / "SKILL.md"


def test_formats_to_stdout(capsys):
    assert cli.main(["translate", str(TRIAGE), "--to", "workflowskill"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("---\nname: inbox-triage\n") and "```workflow\n" in out


def test_writes_into_a_directory(tmp_path, capsys):
    assert cli.main(["translate", str(TRIAGE), "--to", "aevatar", "-o", str(tmp_path)]) == 0
    written = tmp_path / "SKILL.yaml"
    assert written.exists()
    assert driver.compile_file(str(written), "aevatar").ok
    assert "warning[TRN" in capsys.readouterr().err


def test_strict_refuses_what_has_no_equivalent(tmp_path, capsys):
    out = tmp_path / "out.yaml"
    assert cli.main(["translate", str(TRIAGE), "--to", "instruction", "--strict", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "error[TRN" in err and "not translated" in err
    assert not out.exists()


def test_a_source_with_errors_is_not_translated(capsys):
    bad = DATA / "workflowskill" / "fixtures" / "malformed-bad-schema.md"
    assert cli.main(["translate", str(bad), "--to", "instruction"]) == 1
    assert "WFS104" in capsys.readouterr().err


def test_usage_errors(capsys, tmp_path):
    assert cli.main(["translate", str(tmp_path / "missing.md"), "--to", "aevatar"]) == 2
    with pytest.raises(SystemExit) as exc:
        cli.main(["translate", str(TRIAGE), "--to", "yaml"])
    assert exc.value.code == 2


def test_findings_point_at_the_source_and_are_registered():
    result = translate.translate_file(str(TRIAGE), "instruction")
    findings = [d for d in result.emission.diagnostics if d.code.startswith("TRN")]
    assert findings
    text = TRIAGE.read_text(encoding="utf-8").splitlines()
    for d in findings:
        assert d.code in CODES
        assert d.span.file == str(TRIAGE) and 1 <= d.span.line <= len(text)
    # ... and the closest form says so where it is written.
    assert "# flowc TRN" in result.text


def test_same_input_same_bytes():
    a = translate.translate_file(str(TRIAGE), "instruction").text
    b = translate.translate_file(str(TRIAGE), "instruction").text
    assert a == b


def _without_finding_comments(text: str) -> str:
    return re.sub(r"(?m)^ *# flowc TRN.*\n(\n(?=\S))?", "", text)


def test_cross_dialect_output_is_itself_canonical():
    """Formatting a translation in its own dialect changes nothing but the
    finding comments (YAML comments are not part of the IR)."""
    for target in ("aevatar", "instruction", "workflowskill"):
        for path in (TRIAGE, DATA / "instruction" / "03-agentd-e2e-control-flow.yaml"):
            first = translate.translate_file(str(path), target)
            name = "workflow" + translate.output_suffix(target, None)
            again = translate.translate_text(first.text, name, target, dialect=target)
            assert again.ok
            assert again.text == _without_finding_comments(first.text), (path.name, target)


# ------------------------------------------------------------------ the matrix
def corpus_workflows() -> dict[str, list]:
    out: dict[str, list] = {}
    out["workflowskill"] = [r.workflow for r in (driver.compile_file(str(p), "workflowskill")
                                                  for p in sorted((DATA / "workflowskill").rglob("*.md"))) if r.ok]
    out["aevatar"] = [r.workflow for r in (driver.compile_file(str(p), "aevatar")
                                           for p in sorted((DATA / "aevatar").rglob("*.yaml"))
                                           if "negative" not in p.parts) if r.ok]
    out["instruction"] = []
    for p in sorted(x for x in (DATA / "instruction").iterdir() if x.suffix in (".yaml", ".md")):
        workflows, diags = compile_instruction_all(p.read_text(encoding="utf-8"), str(p))
        if not any(d.is_error for d in diags):
            out["instruction"] += workflows
    return out


@pytest.mark.parametrize("page", ["README.md", "docs/translation.md"])
def test_the_matrix_on_the_page_is_current(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    m = re.search(r"<!-- translation-matrix -->\n(.*?)\n<!-- /translation-matrix -->", text, re.DOTALL)
    assert m, f"{page} has no translation matrix"
    expected = translate.render_matrix(translate.matrix(corpus_workflows()))
    assert m.group(1) == expected, f"{page}: the matrix is stale; it should read\n{expected}"
