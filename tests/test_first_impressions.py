"""What a new user runs into first: eval of a template, a picture written
under the wrong suffix, a file saved as UTF-16."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from flowc import cli
from flowc.cli.eval import eval_command
from flowc.host import encoding_hint, load_json_file

ROOT = Path(cli.__file__).resolve().parents[1]
TRIAGE = str(ROOT / "examples" / "triage" / "SKILL.md")


def _eval(lang: str, text: str, mode: str | None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = eval_command(lang, text, None, mode, False, io.StringIO(), out, stderr=err)
    return status, out.getvalue().strip(), err.getvalue()


@pytest.mark.parametrize("lang, text, value", [
    ("aevatar", "${concat('a','b')}", '"ab"'),
    ("workflowskill", "Hi ${inputs.n}", '"Hi "'),
])
def test_a_template_without_mode_is_evaluated_as_one_and_says_so(lang, text, value):
    status, out, err = _eval(lang, text, None)
    assert status == 0 and out == value
    assert "template" in err and "--mode" in err


def test_an_explicit_mode_is_obeyed_silently():
    status, out, err = _eval("aevatar", "${concat('a','b')}", "expression")
    assert (status, out, err) == (0, '""', "")
    assert _eval("aevatar", "concat('a','b')", None) == (0, '"ab"', "")


def test_graph_refuses_a_format_that_contradicts_the_suffix(tmp_path, capsys):
    out = tmp_path / "x.png"
    assert cli.main(["graph", TRIAGE, "--format", "svg", "-o", str(out)]) == 2
    assert not out.exists()
    err = capsys.readouterr().err
    assert "--format svg" in err and "x.svg" in err


def test_graph_takes_the_format_from_the_suffix(tmp_path):
    out = tmp_path / "x.dot"
    assert cli.main(["graph", TRIAGE, "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("digraph")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_utf16_workflow_is_named_as_such(tmp_path, capsys, encoding):
    path = tmp_path / "SKILL.md"
    path.write_bytes(Path(TRIAGE).read_text(encoding="utf-8").encode(encoding))
    assert cli.main(["check", str(path)]) == 2
    out = capsys.readouterr().out
    assert "FLC003" in out and "looks UTF-" in out and "save it as UTF-8" in out


def test_a_utf16_inputs_file_is_named_as_such(tmp_path):
    path = tmp_path / "in.json"
    path.write_bytes(json.dumps({"a": 1}).encode("utf-16"))
    with pytest.raises(ValueError, match="looks UTF-16, not UTF-8: save it as UTF-8"):
        load_json_file(str(path), "inputs file")


@pytest.mark.parametrize("data", [b"", b"abc", "ĉu vi? ünïcödé".encode(), b"\xef\xbb\xbfname: x\n", b"a\x00b"])
def test_utf8_text_gets_no_hint(data):
    assert encoding_hint(data) is None
