"""flowc.runtime.wfs is WorkflowSkill's one set of value rules: generated
modules and the VM run on it, on CPython and on MicroPython. Where the two
interpreters differ it has a branch for each (MicroPython: no ``re`` for the
rules, ``repr`` of a float not the shortest, no stable sort, no UTF-16
codec, no ``str.isascii``): these tests run the MicroPython branches on
CPython against the CPython ones and against the regular expressions the
rules were written as."""

from __future__ import annotations

import re

import pytest
from flowc.runtime import wfs as W
from hypothesis import given, settings
from hypothesis import strategies as st

NUMBERS = st.one_of(st.integers(-2**60, 2**60), st.floats(allow_nan=True, allow_infinity=True))
STRINGS = st.one_of(st.text(max_size=8), st.sampled_from(["", " 12 ", "0x1F", "1e3", "-0", "Infinity", "1_0",
                                                          ".5", "5.", "0b101", "abc", "\u00e9", "\U0001f600",
                                                          "+.5e-3", "1e", "-Infinity", "e5", "."]))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, STRINGS)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(STRINGS, inner, max_size=3)),
                      max_leaves=8)

# The rules as regular expressions (MicroPython's re cannot run them)
DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)$")
JSON_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')


@settings(max_examples=400, deadline=None)
@given(STRINGS)
def test_the_decimal_test_is_the_regular_expression(s):
    assert W._decimal(s) == (DECIMAL.match(s) is not None)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=12))
def test_json_strings_escape_what_the_regular_expression_finds(s):
    def escape(m):
        ch = m.group(0)
        return W._JSON_SHORT.get(ch) or "\\u" + f"{ord(ch):04x}"

    assert W._json_string(s) == '"' + JSON_ESCAPE.sub(escape, s) + '"'
    assert W._json_plain(s) == (JSON_ESCAPE.search(s) is None) or max(s) >= "\ue000"


@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_shortest_digits_on_micropython_give_the_same_text(x):
    cpython = W.js_number_to_string(x)
    W._MICRO = True
    try:
        assert W.js_number_to_string(x) == cpython
    finally:
        W._MICRO = False


def test_shortest_digits_round_trip():
    for x in (0.1, 1 / 3, 1e21, 1e-7, 123456789.125, 5e-324, 1.7976931348623157e308):
        assert float(W._shortest(x)) == x


# ASCII and non-ASCII (BMP and astral) strings
TEXTS = st.sampled_from(["a", "B", "b", "10", "9", "", "\u00e9", "\uff5e", "\U0001f600", "\u00e9a", "a\u00e9"])


# Keys a total order sorts: numbers and booleans without NaN, or values that
# compare as strings (strings, arrays, objects); null and missing go last.
# (Where JavaScript's comparator is no order, NaN or a number against a
# string that is not numeric, the order depends on the sort algorithm.)
ORDERED_KEYS = st.one_of(
    st.lists(st.one_of(st.none(), st.integers(-3, 3), st.booleans(), st.floats(allow_nan=False)), max_size=8),
    st.lists(st.one_of(st.none(), TEXTS, st.lists(TEXTS, min_size=1, max_size=2), st.just({"o": 1})), max_size=8))


@settings(max_examples=400, deadline=None)
@given(ORDERED_KEYS, st.booleans(), st.booleans())
def test_the_micropython_sort_agrees(keys, nested, desc):
    items = [({"k": {"j": k}} if nested else {"k": k}) if k is not None else {} for k in keys]
    path = ("k", "j") if nested else ("k",)
    want = W.wfs_sort(items, path, desc)
    W._MICRO = True
    try:
        got = W.wfs_sort(items, path, desc)
    finally:
        W._MICRO = False
    assert [id(x) for x in got] == [id(x) for x in want]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(TEXTS, st.lists(TEXTS, min_size=1, max_size=2), st.just({"o": 1})), max_size=8),
       st.booleans(), st.booleans())
def test_sort_of_strings_arrays_and_objects_is_by_utf16(keys, desc, on_micropython):
    """All these compare as strings: the order is total, by UTF-16 code units, stable."""
    items = [{"k": k} for k in keys]
    text = [W._utf16(W.js_to_string(k) if not isinstance(k, dict) else "[object Object]") for k in keys]
    want = sorted(range(len(keys)), key=lambda i: (text[i] if not desc else _Desc(text[i]), i))
    W._MICRO = on_micropython
    try:
        got = W.wfs_sort(items, ("k",), desc)
    finally:
        W._MICRO = False
    assert [id(x) for x in got] == [id(items[i]) for i in want]


@given(st.text(max_size=6), st.text(max_size=6))
def test_utf16_keys_order_alike(a, b):
    W._MICRO = True
    try:
        units_a, units_b = W._utf16(a), W._utf16(b)
    finally:
        W._MICRO = False
    assert (units_a < units_b) == (a.encode("utf-16-be", "surrogatepass") < b.encode("utf-16-be", "surrogatepass"))


class _Desc:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return other.v < self.v

    def __eq__(self, other):
        return self.v == other.v


def test_a_non_json_value_is_an_expression_error():
    with pytest.raises(W.EvalError, match="not a JSON value: set"):
        W.js_json({"a": {1}})


@given(VALUES)
def test_transform_items(v):
    args = {"a": v, "b": [1]} if not isinstance(v, dict) else v
    got = W.transform_items(args)
    assert isinstance(got, list)
    if isinstance(args.get("items"), list):
        assert got is args["items"]
    assert W.transform_items(v if not isinstance(v, dict) else [v]) == []
