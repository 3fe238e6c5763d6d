"""translation/yamlout: the YAML the translation emitters write reads back as
the same data, in flowc's YAML 1.2 reader and in PyYAML (YAML 1.1), for
hostile strings too; and the same data always gives the same bytes."""

from __future__ import annotations

import math

import pytest
import yaml
from flowc.compiler import yamlsrc
from flowc.translation.yamlout import Comment, Flow, Spaced, dump, is_plain_safe, scalar
from hypothesis import example, given
from hypothesis import strategies as st

HOSTILE = [
    "yes", "no", "on", "off", "y", "n", "Yes", "ON", "true", "False", "null", "Null", "~", "",
    "010", "0o17", "0x1F", "1_000", "+1", "-1", "1e3", "1E3", ".5", "1.", ".inf", "-.inf", ".nan", "1:20",
    "2024-01-01", "2001-12-14t21:59:43.10-05:00", "=", "<<",
    " lead", "trail ", " ", "\t", "\ttab", "$x", "${x}", "$$100", "{a}", "[a]", "*a", "&a", "!a", "!!str",
    "%a", "@a", "`a", "|", ">", "'", '"', "'q'", '"q"', "a: b", "a:b", "a #b", "a#b", "#a", "- a", "-", "--",
    "---", "...", "--- a", "? a", "?", ":a", ": a", "a:", ",a", "a,b", "a]", "a}", "\\", "\\n",
    "a\nb", "a\n", "a\n\n", "\na", "\n", "\n\n", " a\nb", "  \n a", "a\r\nb", "\x00", "\x07", "\x1b",
    "\x7f", "\x85", "\xa0", "\ufeff", "\u2028", "\u2029", "é", "日本", "🙂", "a\u2028b", "a\tb",
    "line one\n  indented\nlast  \n", "#!/bin/sh\necho hi\n",
]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _read_12(text: str):
    node, diags = yamlsrc.load(text, "<test>")
    assert not diags, (text, diags)
    return node.plain() if node is not None else None


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_string_reads_back(text):
    for data in ({"k": text}, {text or "k": 1}, {"k": [text]}, {"k": Flow([text, "x"])},
                 {"k": Flow({"v": text})}):
        out = dump(data)
        plain = {k: (v.value if isinstance(v, Flow) else v) for k, v in data.items()}
        assert _same(_read_12(out), plain), out
        assert _same(yaml.safe_load(out), plain), out


def test_plain_only_when_safe():
    for text in HOSTILE:
        if is_plain_safe(text):
            assert yaml.safe_load(f"k: {text}\n") == {"k": text}
            assert _read_12(f"k: {text}\n") == {"k": text}
    assert scalar("gmail.search") == "gmail.search"
    assert scalar("yes") == '"yes"' and scalar("010") == '"010"' and scalar("$x") == '"$x"'
    assert scalar('say "hi"') == "say \"hi\"" and scalar('"hi"') == "'\"hi\"'"
    assert scalar(1.0) == "1.0" and scalar(1e20) == "1.0e+20" and scalar(float("inf")) == ".inf"


def test_layout():
    doc = Spaced({
        "inputs": {"url": {"type": "string"}},
        "steps": Spaced([{Comment("lowered"): None, "id": "a", "then": Flow(["b", "c"]),
                          "inputs": {"x": Flow({"type": "string", "value": "$inputs.url"})}},
                         {"id": "b", "text": "one\ntwo\n"}]),
    })
    assert dump(doc) == (
        "inputs:\n"
        "  url:\n"
        "    type: string\n"
        "\n"
        "steps:\n"
        "  # lowered\n"
        "  - id: a\n"
        "    then: [b, c]\n"
        "    inputs:\n"
        '      x: { type: string, value: "$inputs.url" }\n'
        "\n"
        "  - id: b\n"
        "    text: |\n"
        "      one\n"
        "      two\n"
    )
    assert _read_12(dump(doc))["steps"][1]["text"] == "one\ntwo\n"


_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2**63, 2**64 - 1),  # beyond 64 bits YAML integers read as doubles
    st.floats(allow_nan=False), st.text(), st.sampled_from(HOSTILE),
)
_data = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(st.text(min_size=0, max_size=12), st.sampled_from(HOSTILE)),
                                            inner, max_size=4)),
    max_leaves=12,
)


@given(st.dictionaries(st.text(max_size=10), _data, max_size=5))
def test_any_data_reads_back(data):
    out = dump(data)
    assert _same(_read_12(out), data), out
    assert dump(data) == out


@example("\n\t0")   # a tab opens the first line of text: the block says its indentation
@example("\tone\ntwo")
@given(st.text())
def test_any_string_reads_back_in_both_yaml_versions(text):
    out = dump({"k": text, "l": Flow([text]), "m": Flow({"k": text})})
    assert _read_12(out) == {"k": text, "l": [text], "m": {"k": text}}, out
    assert yaml.safe_load(out) == {"k": text, "l": [text], "m": {"k": text}}, out
