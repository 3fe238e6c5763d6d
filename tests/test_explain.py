"""`flowc explain`: every finding code has a wrong and a right example, and
the wrong one really produces the code.

The examples live in compiler/codes_examples.py (codes no dialect owns) and
each dialect's compiler/<dialect>/code_examples.py. A code whose finding no
file's text can produce is listed, with the reason, in NOT_STANDALONE; only
those skip the check that the wrong example produces the code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flowc import cli
from flowc.compiler.codes import CODES, EXAMPLES, NOT_STANDALONE
from flowc.compiler.codes_examples import example_dialect
from flowc.pipeline import driver

ALL = sorted(CODES)
STANDALONE = [c for c in ALL if c not in NOT_STANDALONE]
CODE_RE = re.compile(r"""["']((?:FLC|YAML|WFS|ANA|AEV|INS|CEL|HST)\d{3})["']""")
PACKAGE = Path(cli.__file__).resolve().parents[1]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("code", ALL)
def test_every_code_has_a_wrong_and_a_right_example(code):
    info = CODES[code]
    assert info.title and info.explanation, f"{code} needs a title and an explanation"
    assert info.wrong.strip(), f"{code} has no wrong example (add it to the code_examples.py of its package)"
    assert info.right.strip(), f"{code} has no right example (add it to the code_examples.py of its package)"
    assert info.wrong != info.right


def _check(code: str, text: str):
    example = EXAMPLES[code]
    if example.translate_to is not None:  # a translation finding: translate the file
        from flowc.pipeline import translate

        return translate.translate_text(text, example.file, example.translate_to,
                                        dialect=example_dialect(code, example)).diagnostics
    return driver.compile_text(text, example.file, example_dialect(code, example)).diagnostics


@pytest.mark.parametrize("code", STANDALONE)
def test_wrong_example_produces_its_code(code):
    found = {d.code for d in _check(code, CODES[code].wrong)}
    assert code in found, f"the wrong example of {code} reports {sorted(found)} instead"


@pytest.mark.parametrize("code", STANDALONE)
def test_right_example_is_clean(code):
    diags = _check(code, CODES[code].right)
    assert not [d for d in diags if d.is_error or d.code == code], \
        f"the right example of {code} reports {[(d.code, d.message) for d in diags]}"


def test_not_standalone_list_is_explicit_and_small():
    assert set(NOT_STANDALONE) <= set(CODES), "NOT_STANDALONE names codes that do not exist"
    assert all(reason.strip() for reason in NOT_STANDALONE.values())
    assert sorted(NOT_STANDALONE) == ["AEV138", "ANA404", "ANA405", "FLC002", "FLC003", "HST001", "HST002", "INS401",
                                     "INS402", "LIM001", "LIM002"]


def test_every_example_belongs_to_a_code():
    assert set(EXAMPLES) <= set(CODES), f"examples for unknown codes: {sorted(set(EXAMPLES) - set(CODES))}"


def test_every_code_the_compiler_reports_is_registered():
    """A finding code used in the source must be in the table (and so be explained)."""
    used: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in ("tests", "build", "docs", "benchmarks") or "codes" in path.stem:
            continue
        for code in CODE_RE.findall(path.read_text(encoding="utf-8")):
            used.setdefault(code, str(rel))
    missing = {c: f for c, f in used.items() if c not in CODES}
    assert not missing, f"codes reported but not registered in compiler/codes.py: {missing}"


# ---------------------------------------------------------------- the command
def test_explain_prints_title_explanation_and_both_examples(capsys):
    code, out, _ = run(capsys, "explain", "WFS205")
    assert code == 0
    assert out.startswith("WFS205: reference to a later step\n")
    assert "Wrong (workflow.yaml):" in out and "Right:" in out
    assert "flowc check reports:" in out and "error[WFS205]" in out
    assert "    steps:" in out  # examples are indented as code


def test_explain_is_case_insensitive(capsys):
    assert run(capsys, "explain", "wfs205")[1] == run(capsys, "explain", "WFS205")[1]


def test_explain_unknown_code_exits_2_with_a_suggestion(capsys):
    code, out, err = run(capsys, "explain", "WFS2055")
    assert code == 2 and out == ""
    assert "unknown finding code" in err and "did you mean" in err


def test_explain_without_a_code_lists_every_code(capsys):
    code, out, _ = run(capsys, "explain")
    assert code == 0
    listed = [line.split()[0] for line in out.splitlines()]
    assert listed == list(CODES)


@pytest.mark.parametrize("code", ALL)
def test_explain_works_for_every_code(capsys, code):
    status, out, _ = run(capsys, "explain", code)
    assert status == 0 and out.startswith(f"{code}: ")
