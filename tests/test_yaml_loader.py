"""flowc.compiler.yamlsrc: YAML 1.2 core-schema values, spans, and hostile
documents reported as findings instead of crashes."""

from __future__ import annotations

import math
import time

import pytest
from flowc.compiler import yamlsrc
from flowc.compiler.yamlsrc import YMap, YScalar, YSeq


def load_ok(text: str, line_offset: int = 0):
    root, diags = yamlsrc.load(text, "f.yaml", line_offset)
    assert diags == []
    return root


def codes(text: str) -> list[str]:
    return [d.code for d in yamlsrc.load(text, "f.yaml")[1]]


# ------------------------------------------------------------------ values
@pytest.mark.parametrize("text, value", [
    ("yes", "yes"), ("no", "no"), ("on", "on"), ("off", "off"), ("Y", "Y"),
    ("true", True), ("True", True), ("FALSE", False),
    ("null", None), ("~", None), ("", None), ("NULL", None),
    ("10", 10), ("010", 10), ("-3", -3), ("+7", 7),
    ("0o10", 8), ("0x1F", 31), ("0b11", "0b11"),
    ("1.5", 1.5), ("1e3", 1000.0), (".5", 0.5), ("1_000", "1_000"),
    ("2001-12-14", "2001-12-14"), ("12:30", "12:30"),
    ('"10"', "10"), ("'true'", "true"), ("!!str 10", "10"), ("!!int 5", 5), ("!!float 3", 3.0),
])
def test_core_schema_scalars(text, value):
    root = load_ok(f"v: {text}\n")
    got = root.get("v").value
    assert got == value and type(got) is type(value)


def test_special_floats():
    root = load_ok("a: .inf\nb: -.Inf\nc: .NaN\n")
    assert root.get("a").value == math.inf
    assert root.get("b").value == -math.inf
    assert math.isnan(root.get("c").value)


def test_quoted_flag_and_text():
    root = load_ok("a: 'x'\nb: x\nc: \"010\"\n")
    assert root.get("a").quoted and not root.get("b").quoted
    assert root.get("c").text == "010" and root.get("c").value == "010"


def test_node_kinds_and_plain():
    root = load_ok("a: [1, {b: two}]\nc:\n  - x\n")
    assert isinstance(root, YMap)
    assert isinstance(root.get("a"), YSeq) and isinstance(root.get("a").items[1], YMap)
    assert root.plain() == {"a": [1, {"b": "two"}], "c": ["x"]}
    assert root.keys() == ["a", "c"]
    assert "a" in root and "z" not in root
    assert root.get("z") is None and root.key_node("z") is None


def test_type_names():
    root = load_ok("m: {}\ns: []\nn: ~\nb: true\ni: 1\nf: 1.5\nt: x\n")
    names = {k.value: yamlsrc.type_name(v) for k, v in root.items}
    assert names == {"m": "a mapping", "s": "a list", "n": "null", "b": "a boolean", "i": "an integer",
                     "f": "a number", "t": "a string"}
    assert yamlsrc.type_name(None) == "nothing"


def test_empty_documents():
    for text in ("", "# only a comment\n", "\n\n"):
        assert yamlsrc.load(text, "f.yaml") == (None, [])
    # An explicit document with no content is a null scalar.
    root, diags = yamlsrc.load("---\n", "f.yaml")
    assert diags == [] and isinstance(root, YScalar) and root.value is None


# ------------------------------------------------------------------ spans
def test_spans_are_one_based_and_exclusive_at_the_end():
    text = "steps:\n  - id: fetch\n    tool: \"web\"\n"
    root = load_ok(text)
    step = root.get("steps").items[0]
    key = step.key_node("id")
    assert (key.span.line, key.span.col, key.span.end_line, key.span.end_col) == (2, 5, 2, 7)
    value = step.get("id")
    assert (value.span.line, value.span.col, value.span.end_col) == (2, 9, 14)
    quoted = step.get("tool")
    assert (quoted.span.line, quoted.span.col, quoted.span.end_col) == (3, 11, 16)  # quotes included
    assert step.span.line == 2 and step.span.col == 5
    assert all(s.file == "f.yaml" for s in (key.span, value.span, step.span))


def test_line_offset_shifts_lines_not_columns():
    root = load_ok("a:\n  b: c\n", line_offset=10)
    b = root.get("a").key_node("b")
    assert (b.span.line, b.span.col) == (12, 3)


def test_line_offset_applies_to_findings():
    _, diags = yamlsrc.load("a: 1\na: 2\n", "f.md", 7)
    assert [(d.code, d.span.line) for d in diags] == [("YAML002", 9)]
    assert diags[0].notes == ("first defined at line 8, column 1",)


# ------------------------------------------------------------------ findings
def test_duplicate_key_keeps_the_first_value():
    root, diags = yamlsrc.load("a: 1\nb: 0\na: 2\n", "f.yaml")
    assert root.plain() == {"a": 1, "b": 0}
    assert [(d.code, d.span.line, d.span.col) for d in diags] == [("YAML002", 3, 1)]


def test_duplicate_key_in_flow_mapping():
    _, diags = yamlsrc.load("{a: 1, a: 2}\n", "f.yaml")
    assert [(d.code, d.span.line, d.span.col) for d in diags] == [("YAML002", 1, 8)]


def test_int_and_string_keys_are_different():
    root, diags = yamlsrc.load("1: a\n'1': b\n", "f.yaml")
    assert diags == [] and len(root.items) == 2


@pytest.mark.parametrize("text", ["[a]: 1\n", "1.5: x\n", "? {a: 1}\n: 2\n"])
def test_non_string_keys(text):
    root, diags = yamlsrc.load(text, "f.yaml")
    assert [d.code for d in diags] == ["YAML003"]
    assert root.plain() == {}


def test_merge_key_is_not_supported():
    root, diags = yamlsrc.load("base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n", "f.yaml")
    assert [(d.code, d.span.line, d.span.col) for d in diags] == [("YAML004", 3, 3)]
    assert root.plain()["use"] == {"y": 2}


def test_aliases_expand():
    root = load_ok("a: &x [1, 2]\nb: *x\n")
    assert root.plain() == {"a": [1, 2], "b": [1, 2]}


@pytest.mark.parametrize("text", ["a: &x [1, *x]\n", "- &a [*a]\n", "a: &m {k: *m}\n"])
def test_recursive_alias(text):
    root, diags = yamlsrc.load(text, "f.yaml")
    assert root is None
    assert [d.code for d in diags] == ["YAML005"]
    assert "recursive" in diags[0].message


def test_deep_nesting_is_rejected():
    _, diags = yamlsrc.load("a: " + "[" * 300 + "]" * 300 + "\n", "f.yaml")
    assert [d.code for d in diags] == ["YAML005"]
    assert "deeper" in diags[0].message


@pytest.mark.parametrize("text", [
    "a: " + "[" * 60_000 + "]" * 60_000 + "\n",
    "a: " + "{b: " * 60_000 + "}" * 60_000 + "\n",
    "- " * 60_000 + "x\n",
])
def test_very_deep_nesting_does_not_crash(text):
    """Nesting deep enough to exhaust the C stack of a recursive composer."""
    root, diags = yamlsrc.load(text, "f.yaml")
    assert root is None
    assert [d.code for d in diags] == ["YAML005"]


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_rejected_quickly():
    started = time.perf_counter()
    root, diags = yamlsrc.load(billion_laughs(), "f.yaml")
    elapsed = time.perf_counter() - started
    assert root is None
    assert [d.code for d in diags] == ["YAML005"]
    assert elapsed < 2.0, f"took {elapsed:.1f}s to reject"


@pytest.mark.parametrize("text, line, col", [
    ("a: [1, 2\n", 1, 4),                      # unclosed: reported at the bracket
    ("a: {b: 1\nc: 2\n", 1, 4),
    ('a: "abc\nb: 1\n', 1, 4),
    ("a: b: c\n", 1, 5),
    ("a:\n\tb: 1\n", 2, 1),
    ("x: [a]]\n", 1, 7),
    ("a: *nope\n", 1, 4),
])
def test_invalid_yaml_is_yaml001_at_the_problem(text, line, col):
    root, diags = yamlsrc.load(text, "f.yaml")
    assert root is None
    assert [(d.code, d.span.line, d.span.col) for d in diags] == [("YAML001", line, col)]
    assert diags[0].message.startswith("invalid YAML: ")


def test_unclosed_bracket_notes_where_the_parser_stopped():
    _, diags = yamlsrc.load("steps:\n  - tool: [x\n    inputs: {\n", "f.yaml", 8)
    (d,) = diags
    assert (d.span.line, d.span.col) == (10, 11)
    assert "unclosed flow sequence" in d.message
    assert d.notes == ("did not find expected ',' or ']' at line 11, column 11",)


def test_control_characters_are_yaml001():
    assert codes("a: \x00\n") == ["YAML001"]
    assert codes("a: b\x07\n") == ["YAML001"]


def test_multiple_documents_are_yaml001():
    assert codes("a: 1\n---\nb: 2\n") == ["YAML001"]


def test_all_structural_findings_are_reported():
    text = "a: 1\na: 2\n[k]: 3\nb:\n  <<: {c: 1}\n  d: 1\n  d: 2\n"
    root, diags = yamlsrc.load(text, "f.yaml")
    assert [(d.code, d.span.line) for d in diags] == [
        ("YAML002", 2), ("YAML003", 3), ("YAML004", 5), ("YAML002", 7)]
    assert root is not None


def test_yscalar_repr():
    root = load_ok("a: x\n")
    assert repr(root.get("a")) == "YScalar('x')"
    assert isinstance(root.get("a"), YScalar)
