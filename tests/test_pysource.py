"""The one function through which workflow data enters generated Python."""

from __future__ import annotations

import math

import pytest
from flowc.backends.python.pysource import NotAConstant, const


class Sneaky(str):
    def __repr__(self) -> str:  # a subclass must not choose what is written
        return "__import__('os').system('echo pwned')"


@pytest.mark.parametrize("value", [None, True, False, 0, -7, 2**70, 1.5, -0.0, "", "a'b\"c", "\u2028\n\\", '"""'])
def test_constants_evaluate_to_themselves(value):
    source = const(value)
    back = eval(source, {"__builtins__": {}})
    assert back == value and type(back) is type(value)


def test_subclasses_are_written_by_the_base_type_repr():
    assert const(Sneaky("x")) == "'x'"


def test_non_finite_floats():
    assert const(math.inf, "_rt") == "_rt.INF"
    assert const(-math.inf, "_rt") == "(-_rt.INF)"
    assert const(math.nan, "_rt") == "_rt.NAN"
    assert math.isnan(eval(const(math.nan)))
    assert eval(const(-math.inf)) == -math.inf


@pytest.mark.parametrize("value", [[1], {"a": 1}, b"x", object()])
def test_anything_else_is_refused(value):
    with pytest.raises(NotAConstant):
        const(value)
