"""`flowc check --format sarif`: SARIF 2.1.0 for code-scanning dashboards."""

from __future__ import annotations

import json

from flowc import __version__, cli
from flowc.cli import reporting
from flowc.compiler.codes import CODES
from flowc.ir.diagnostics import error, warning
from flowc.ir.span import NO_SPAN, Span


def sarif(capsys, *paths: str) -> tuple[int, dict, list[dict]]:
    code = cli.main(["check", "--format", "sarif", *paths])
    out = capsys.readouterr().out
    log = json.loads(out)
    assert cli.main(["check", "--format", "json", *paths]) == code
    return code, log, json.loads(capsys.readouterr().out)


def test_structure_on_the_corpus(capsys, monkeypatch, wfs_dir):
    monkeypatch.chdir(wfs_dir.parent)   # relative paths, as in a repository checkout
    code, log, findings = sarif(capsys, wfs_dir.name)
    assert code == 1
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "flowc" and driver["version"] == __version__
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids)) and ids == sorted(ids)
    assert set(ids) == {f["code"] for f in findings}
    for rule in rules:
        info = CODES[rule["id"]]
        assert rule["shortDescription"]["text"] == info.title
        assert rule["fullDescription"]["text"] == info.explanation
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert "flowc explain" in rule["help"]["text"]
    results = run["results"]
    assert len(results) == len(findings)
    for result, finding in zip(results, findings, strict=True):
        assert result["ruleId"] == finding["code"]
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == finding["severity"]
        assert result["message"]["text"].startswith(finding["message"])
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == finding["file"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        region = physical["region"]
        assert region["startLine"] == finding["line"] >= 1
        assert region["startColumn"] == finding["col"] >= 1


def test_clean_file_gives_an_empty_run(capsys, wfs_fixtures_dir):
    code, log, findings = sarif(capsys, str(wfs_fixtures_dir / "branch.md"))
    assert code == 0 and findings == []
    run = log["runs"][0]
    assert run["results"] == [] and run["tool"]["driver"]["rules"] == []


def test_rule_help_has_the_examples():
    log = json.loads(reporting.render_sarif([error("WFS205", "m", Span("a.md", 3, 4, 3, 9))]))
    rule = log["runs"][0]["tool"]["driver"]["rules"][0]
    assert "Wrong:" in rule["help"]["markdown"] and "Right:" in rule["help"]["markdown"]
    assert rule["name"] == "ReferenceToALaterStep"


def test_locations_paths_and_notes():
    diags = [
        warning("ANA402", "unreachable", Span("./skills/a b.md", 2, 5, 2, 9), "a note"),
        error("FLC001", "what dialect", Span("/abs/x.yaml", 1, 1, 1, 2)),
        error("FLC003", "cannot read", Span("gone.md", 0, 0, 0, 0)),
        error("ANA404", "no terminal", NO_SPAN),
    ]
    results = json.loads(reporting.render_sarif(diags))["runs"][0]["results"]
    first = results[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"]["uri"] == "skills/a%20b.md"
    assert first["region"] == {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 9}
    assert results[0]["message"]["text"] == "unreachable\na note"
    assert results[0]["level"] == "warning"
    assert results[1]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "file:///abs/x.yaml"}
    assert "region" not in results[2]["locations"][0]["physicalLocation"]   # a file but no line
    assert "locations" not in results[3]                                   # nowhere at all


def test_unknown_code_still_gives_a_rule():
    log = json.loads(reporting.render_sarif([error("ZZZ999", "m", Span("a", 1, 1, 1, 2))]))
    assert log["runs"][0]["tool"]["driver"]["rules"] == [
        {"id": "ZZZ999", "defaultConfiguration": {"level": "error"}}]
