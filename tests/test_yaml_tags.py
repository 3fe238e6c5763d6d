"""YAML tags: only the core schema's are read, and only for values that fit
them; any other tag is a finding (YAML006), never an object or a silent drop."""

from __future__ import annotations

import pytest
from flowc.compiler.yamlsrc import load


def _read(text: str):
    node, diags = load(text, "t.yaml")
    return (node.plain() if node is not None else None), [(d.code, d.span.line) for d in diags]


@pytest.mark.parametrize("text", [
    "a: !!python/object/apply:os.system [echo hi]\n",
    "a: !!python/name:os.system\n",
    "a: !!int notanint\n",
    "a: !!float abc\n",
    "a: !!bool maybe\n",
    "a: !!null x\n",
    "a: !!binary aGk=\n",
    "a: !!set {x: null}\n",
    "a: !!omap [x: 1]\n",
    "a: !local text\n",
    "a: !<tag:example.com,2000:x> text\n",
    "a: !!map [1]\n",
    "a: !!seq {b: 1}\n",
    "a: !!str [1]\n",
])
def test_unsupported_or_unfit_tags_are_findings(text):
    value, diags = _read(text)
    assert diags == [("YAML006", 1)]
    assert isinstance(value, dict) and set(value) == {"a"}
    assert not callable(value["a"])


@pytest.mark.parametrize("text, expected", [
    ("a: !!str 10\n", "10"),
    ("a: !!str true\n", "true"),
    ("a: !!int 10\n", 10),
    ("a: !!int '10'\n", 10),
    ("a: !!float 1\n", 1.0),
    ("a: !!bool true\n", True),
    ("a: !!null ''\n", None),
    ("a: !!seq [1]\n", [1]),
    ("a: !!map {b: 1}\n", {"b": 1}),
    ("a: ! text\n", "text"),
])
def test_core_schema_tags_that_fit_are_honoured(text, expected):
    value, diags = _read(text)
    assert diags == [] and value == {"a": expected}


def test_the_cli_reports_a_tag_in_a_workflow(tmp_path, capsys):
    from flowc.cli import main

    path = tmp_path / "w.yaml"
    path.write_text("steps:\n  - id: s\n    type: tool\n    tool: !!python/object/apply:os.system [x]\n")
    assert main(["check", str(path)]) == 1
    assert "error[YAML006]" in capsys.readouterr().out
