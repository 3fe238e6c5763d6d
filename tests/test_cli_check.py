"""`flowc check`: exit codes, text and JSON output, directory walking, --dialect."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from flowc import cli

TEXT_HEAD = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|note)"
                       r"\[(?P<code>[A-Z]+\d{3})\]: (?P<msg>.+)$")
JSON_KEYS = {"code", "severity", "message", "file", "line", "col", "end_line", "end_col"}

BAD_SCHEMA = "malformed-bad-schema.md"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> tuple[int, list[dict]]:
    code, out, _ = run(capsys, "check", "--format", "json", *argv)
    return code, json.loads(out)


# ------------------------------------------------------------------ exit codes
def test_clean_file_exits_0(capsys, clean_path):
    code, out, err = run(capsys, "check", str(clean_path))
    assert code == 0
    assert " error[" not in out
    assert "checked 1 file: 0 errors" in err


def test_malformed_file_exits_1(capsys, malformed_path):
    code, out, err = run(capsys, "check", str(malformed_path))
    assert code == 1
    assert f"{malformed_path}:" in out and " error[" in out
    assert re.search(r"checked 1 file: [1-9]\d* errors?", err)


def test_missing_file_exits_2(capsys, tmp_path):
    missing = tmp_path / "nope.md"
    code, out, _ = run(capsys, "check", str(missing))
    assert code == 2
    assert "error[FLC003]" in out and str(missing) in out


def test_missing_file_beside_clean_file_exits_2(capsys, tmp_path, wfs_fixtures_dir):
    code, findings = run_json(capsys, str(wfs_fixtures_dir / "echo.md"), str(tmp_path / "nope.md"))
    assert code == 2
    assert [f["code"] for f in findings if f["severity"] == "error"] == ["FLC003"]


def test_missing_file_beside_bad_file_exits_1(capsys, tmp_path, wfs_fixtures_dir):
    # Real findings outrank the I/O problem: the exit code says "errors".
    code, findings = run_json(capsys, str(wfs_fixtures_dir / BAD_SCHEMA), str(tmp_path / "nope.md"))
    assert code == 1
    assert sorted(f["code"] for f in findings) == ["FLC003", "WFS104"]


@pytest.mark.parametrize("argv", [
    [],
    ["check"],
    ["check", "--format", "xml", "x.md"],
    ["check", "--dialect", "bogus", "x.md"],
    ["frobnicate", "x.md"],
    ["check", "--no-such-flag", "x.md"],
])
def test_usage_errors_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    _, err = capsys.readouterr()
    assert "usage:" in err
    assert "Traceback" not in err


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    from flowc import __version__
    assert __version__ in capsys.readouterr().out


# ------------------------------------------------------------------ text format
def test_text_format_has_location_source_line_and_caret(capsys, wfs_fixtures_dir):
    path = wfs_fixtures_dir / BAD_SCHEMA
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1
    lines = out.splitlines()
    head = TEXT_HEAD.match(lines[0])
    assert head, lines[0]
    assert head["file"] == str(path)
    assert (int(head["line"]), int(head["col"])) == (10, 5)
    assert (head["sev"], head["code"]) == ("error", "WFS104")
    assert "tool" in head["msg"]
    # Source line with the line number in the gutter, then the caret under col 5.
    source = path.read_text(encoding="utf-8").splitlines()[9]
    assert lines[1] == f"  10 | {source}"
    gutter, _, caret = lines[2].partition(" | ")
    assert gutter.strip() == ""
    assert caret.index("^") == 4
    assert set(caret.strip()) == {"^"}


def test_text_format_caret_width_follows_the_span(capsys, write_workflow):
    path = write_workflow("""\
        steps:
          - id: a
            type: tool
            tool: t
            on_eror: ignore
        """)
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1
    lines = out.splitlines()
    assert TEXT_HEAD.match(lines[0])["code"] == "WFS105"
    assert lines[1] == "  5 |     on_eror: ignore"
    assert lines[2] == "    |     ^^^^^^^"  # exactly under `on_eror`
    assert lines[3] == '   = note: did you mean "on_error"?'


def test_text_format_lists_every_finding(capsys, write_workflow):
    path = write_workflow("""\
        steps:
          - id: a
            type: tool
            tool: t
            on_eror: ignore
          - id: b
            type: tool
          - id: c
            type: transform
            operation: reduce
        """)
    code, out, err = run(capsys, "check", str(path))
    assert code == 1
    heads = [TEXT_HEAD.match(line) for line in out.splitlines()]
    found = [(h["code"], int(h["line"])) for h in heads if h]
    assert found == [("WFS105", 5), ("WFS104", 6), ("WFS106", 10)]
    assert "3 errors" in err


def test_warnings_are_printed_but_exit_0(capsys, wfs_fixtures_dir):
    path = wfs_fixtures_dir / "malformed-no-frontmatter.md"
    code, out, err = run(capsys, "check", str(path))
    assert code == 0
    assert f"{path}:1:1: warning[WFS110]:" in out
    assert "0 errors" in err and "warning" in err


# ------------------------------------------------------------------ JSON format
def test_json_format_shape(capsys, corpus_path):
    code, findings = run_json(capsys, str(corpus_path))
    assert isinstance(findings, list)
    assert code == (1 if any(f["severity"] == "error" for f in findings) else 0)
    for f in findings:
        assert set(f) == JSON_KEYS
        assert f["severity"] in ("error", "warning", "note")
        assert f["file"] == str(corpus_path)
        assert re.fullmatch(r"[A-Z]+\d{3}", f["code"])
        assert f["line"] >= 1 and f["col"] >= 1  # 1-based
        assert (f["end_line"], f["end_col"]) >= (f["line"], f["col"])


def test_json_format_of_malformed_files(capsys, wfs_fixtures_dir):
    names = ("malformed-bad-schema.md", "malformed-bad-yaml.md", "malformed-no-block.md")
    code, findings = run_json(capsys, *(str(wfs_fixtures_dir / n) for n in names))
    assert code == 1
    got = [(Path(f["file"]).name, f["code"], f["line"], f["col"]) for f in findings]
    assert got == [
        ("malformed-bad-schema.md", "WFS104", 10, 5),
        ("malformed-bad-yaml.md", "YAML001", 12, 11),
        ("malformed-no-block.md", "WFS101", 1, 1),
    ]


def test_json_format_of_clean_files_is_an_empty_error_list(capsys, wfs_examples_dir):
    code, findings = run_json(capsys, str(wfs_examples_dir))
    assert code == 0
    assert [f for f in findings if f["severity"] == "error"] == []


def test_json_missing_file(capsys, tmp_path):
    code, findings = run_json(capsys, str(tmp_path / "nope.md"))
    assert code == 2
    assert [f["code"] for f in findings] == ["FLC003"]
    assert set(findings[0]) == JSON_KEYS


# ------------------------------------------------------------------ directories
def test_directory_walk_checks_every_workflow(capsys, wfs_fixtures_dir):
    code, findings = run_json(capsys, str(wfs_fixtures_dir))
    assert code == 1
    errors = sorted((Path(f["file"]).name, f["code"]) for f in findings if f["severity"] == "error")
    # malformed-no-block.md has no ```workflow block, so the walk does not
    # take it for a workflow; named explicitly it is an error (above).
    assert errors == [("malformed-bad-schema.md", "WFS104"), ("malformed-bad-yaml.md", "YAML001")]
    warned = {Path(f["file"]).name for f in findings}
    assert "malformed-no-frontmatter.md" in warned


def test_directory_walk_counts_files(capsys, wfs_dir):
    code, _, err = run(capsys, "check", str(wfs_dir / "examples"), str(wfs_dir / "fixtures"))
    assert code == 1
    # 3 examples + 19 fixtures (not malformed-no-block.md); cases.json is not visited.
    assert "checked 22 files" in err


def test_directory_walk_nested_and_hidden(capsys, tmp_path, wfs_fixtures_dir):
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    good = (wfs_fixtures_dir / "echo.md").read_text(encoding="utf-8")
    bad = (wfs_fixtures_dir / BAD_SCHEMA).read_text(encoding="utf-8")
    (tmp_path / "deep" / "er" / "bad.md").write_text(bad, encoding="utf-8")
    (tmp_path / "good.md").write_text(good, encoding="utf-8")
    (tmp_path / ".git" / "bad.md").write_text(bad, encoding="utf-8")
    code, findings = run_json(capsys, str(tmp_path))
    assert code == 1
    assert {f["file"] for f in findings if f["severity"] == "error"} == \
        {str(tmp_path / "deep" / "er" / "bad.md")}


def test_empty_directory(capsys, tmp_path):
    code, out, err = run(capsys, "check", str(tmp_path))
    assert code == 0
    assert out.strip() == ""
    assert "checked 0 files" in err


# ------------------------------------------------------------------ dialects
def test_unrecognisable_file_is_flc001(capsys, tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("name: thing\nsettings:\n  verbose: true\n", encoding="utf-8")
    code, findings = run_json(capsys, str(path))
    assert code == 1
    assert [(f["code"], f["line"]) for f in findings] == [("FLC001", 1)]


def test_dialect_flag_forces_workflowskill(capsys, tmp_path):
    # A bare YAML workflow whose step types are flow-style, so the content
    # sniffing has nothing to go on.
    path = tmp_path / "flow.yaml"
    path.write_text("steps: [{id: a, type: tool, tool: t}]\n", encoding="utf-8")
    code, findings = run_json(capsys, str(path))
    assert (code, [f["code"] for f in findings]) == (1, ["FLC001"])
    code, findings = run_json(capsys, "--dialect", "workflowskill", str(path))
    assert code == 0
    assert [f for f in findings if f["severity"] == "error"] == []


def test_dialect_flag_forces_an_unsupported_dialect(capsys, wfs_fixtures_dir, monkeypatch):
    from flowc.pipeline import driver

    monkeypatch.delitem(driver.FRONT_ENDS, "aevatar")  # a dialect this build lacks
    code, findings = run_json(capsys, "--dialect", "aevatar", str(wfs_fixtures_dir / "echo.md"))
    assert code == 1
    assert [f["code"] for f in findings] == ["FLC002"]


def test_dialect_flag_applies_to_every_file(capsys, tmp_path):
    for name in ("a.yaml", "b.yml"):
        (tmp_path / name).write_text("steps: [{id: a, type: tool}]\n", encoding="utf-8")
    code, findings = run_json(capsys, "--dialect", "workflowskill", str(tmp_path / "a.yaml"),
                              str(tmp_path / "b.yml"))
    assert code == 1
    assert sorted((Path(f["file"]).name, f["code"]) for f in findings) == [
        ("a.yaml", "WFS104"), ("b.yml", "WFS104")]


# ------------------------------------------------------------------ subprocess
def test_python_dash_m_flowc_check(wfs_fixtures_dir):
    """The installed entry point, end to end, in a fresh interpreter."""
    path = wfs_fixtures_dir / BAD_SCHEMA
    proc = subprocess.run([sys.executable, "-m", "flowc", "check", str(path)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith(f"{path}:10:5: error[WFS104]: ")
    assert "  10 |   - id: missing_fields" in proc.stdout
    assert "checked 1 file: 1 error, 0 warnings" in proc.stderr
    assert "Traceback" not in proc.stderr
