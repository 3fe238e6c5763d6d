"""The VM's WorkflowSkill value semantics (wfs_values) equal flowc.runtime.wfs's
(the VM restates them without `re` so that MicroPython runs them)."""

from __future__ import annotations

import math

from flowc.backends.vm import wfs_values as V
from flowc.runtime import sequence_run as R
from hypothesis import given, settings
from hypothesis import strategies as st

NUMBERS = st.one_of(st.integers(-2**60, 2**60), st.floats(allow_nan=True, allow_infinity=True))
STRINGS = st.one_of(st.text(max_size=8), st.sampled_from(["", " 12 ", "0x1F", "1e3", "-0", "Infinity", "1_0",
                                                          ".5", "5.", "0b101", "abc", "\u00e9", "\U0001f600"]))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, STRINGS)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(STRINGS, inner, max_size=3)),
                      max_leaves=8)


def _vm(v):
    return V.MISSING if v is R.MISSING else v


def _same(a, b):
    if a is R.MISSING or b is V.MISSING:
        return (a is R.MISSING) == (b is V.MISSING)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b and type(a) is type(b)


@settings(max_examples=400, deadline=None)
@given(VALUES, VALUES)
def test_operators_agree(a, b):
    assert R.wfs_eq(a, b) == V.wfs_eq(a, b)
    assert R.wfs_lt(a, b) == (V._to_number(a) < V._to_number(b))
    assert R.wfs_ge(a, b) == (V._to_number(a) >= V._to_number(b))
    assert R.wfs_contains(a, b) == V.wfs_contains(a, b)
    assert R.wfs_truthy(a) == V.wfs_truthy(a)
    assert R.js_boolean(a) == V.js_boolean(a)
    assert R.wfs_stringify(a) == V.stringify(a)
    assert R.js_to_string(a) == V.to_string(a)
    assert _same(R.wfs_get_index(a, b), V.get_index(a, b))
    if isinstance(b, str):
        assert _same(R.wfs_get_field(a, b), V.get_field(a, b))


@settings(max_examples=400, deadline=None)
@given(NUMBERS, STRINGS)
def test_numbers_agree(x, s):
    assert R.js_number_to_string(x) == V.number_to_string(x)
    assert _same(R.js_to_number(s), V.to_number(s))


# Sort keys: any values, and mixes of ASCII and non-ASCII (BMP and astral) strings with
# arrays and objects (which compare as strings) and numbers (which compare with nothing).
TEXTS = st.sampled_from(["a", "B", "b", "10", "9", "", "\u00e9", "\uff5e", "\U0001f600", "\u00e9a", "a\u00e9"])
SORT_KEYS = st.one_of(VALUES, TEXTS, st.lists(TEXTS, min_size=1, max_size=2), st.just({"o": 1}),
                      st.integers(-2, 11), st.sampled_from([True, 2.5]))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["k", "j"]), SORT_KEYS, max_size=2), max_size=8),
       st.sampled_from([("k",), ("k", "j"), ("k", "0")]), st.booleans())
def test_sort_agrees(items, path, desc):
    want = R.wfs_sort(items, path, desc)
    got = V.sort_items(items, path, desc)
    assert [id(x) for x in got] == [id(x) for x in want]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(TEXTS, st.lists(TEXTS, min_size=1, max_size=2), st.just({"o": 1})), max_size=8),
       st.booleans())
def test_sort_of_strings_arrays_and_objects_is_by_utf16(keys, desc):
    """All these compare as strings: the order is total, by UTF-16 code units, stable."""
    items = [{"k": k} for k in keys]
    text = [V._utf16(R.js_to_string(k) if not isinstance(k, dict) else "[object Object]") for k in keys]
    want = sorted(range(len(keys)), key=lambda i: (text[i] if not desc else _Desc(text[i]), i))
    got = R.wfs_sort(items, ("k",), desc)
    assert [id(x) for x in got] == [id(items[i]) for i in want]
    assert [id(x) for x in V.sort_items(items, ("k",), desc)] == [id(items[i]) for i in want]


class _Desc:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return other.v < self.v

    def __eq__(self, other):
        return self.v == other.v


@given(VALUES)
def test_transform_input_agrees(v):
    args = {"a": v, "b": [1]} if not isinstance(v, dict) else v
    assert V.transform_input(args) is R.transform_items(args) or V.transform_input(args) == R.transform_items(args)
