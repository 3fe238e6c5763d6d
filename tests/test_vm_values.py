"""The VM's embedded value semantics equal flowc.backends.python.runtime's
(the VM restates them without `re` so that MicroPython runs them)."""

from __future__ import annotations

import math

from flowc.backends.python import runtime as R
from flowc.backends.vm import vm as V
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


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["k", "j"]), VALUES, max_size=2), max_size=6),
       st.sampled_from([("k",), ("k", "j"), ("k", "0")]), st.booleans())
def test_sort_agrees(items, path, desc):
    try:
        want = R.wfs_sort(items, path, desc)
    except TypeError:  # runtime.py's mixed ASCII/non-ASCII string comparison
        return
    got = V.sort_items(items, path, desc)
    assert [id(x) for x in got] == [id(x) for x in want]


@given(VALUES)
def test_transform_input_agrees(v):
    args = {"a": v, "b": [1]} if not isinstance(v, dict) else v
    assert V.transform_input(args) is R.transform_items(args) or V.transform_input(args) == R.transform_items(args)
