"""Lossless plain-data form of the IR (cattrs).

``from_data(to_data(wf)) == wf`` for every workflow. Expression nodes carry
a ``"node"`` tag naming their class so the recursive expression union
structures unambiguously.
"""

from __future__ import annotations

import functools
import typing

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn
from flowc.ir import expr as E
from flowc.ir.types import Type
from flowc.ir.workflow import Workflow

_TAGGED: dict[str, type] = {cls.__name__: cls for cls in (*E.EXPR_CLASSES, E.Field, E.Index)}


def _is_tagged_base(t) -> bool:
    return t is E.Expr or t == E.Segment or t == (E.Expr | None)


@functools.cache
def converter() -> cattrs.Converter:
    conv = cattrs.Converter()
    for cls in _TAGGED.values():
        attrs.resolve_types(cls)
    attrs.resolve_types(Type)

    unstructure_fns: dict[type, typing.Callable] = {}
    structure_fns: dict[type, typing.Callable] = {}

    def unstructure_tagged(obj):
        cls = type(obj)
        fn = unstructure_fns.get(cls)
        if fn is None:
            fn = unstructure_fns[cls] = make_dict_unstructure_fn(cls, conv)
        data = fn(obj)
        data["node"] = cls.__name__
        return data

    def structure_tagged(data, _type):
        if data is None:
            return None
        if not isinstance(data, dict) or data.get("node") not in _TAGGED:
            raise ValueError(f"not an IR expression: {data!r:.80}")
        cls = _TAGGED[data["node"]]
        fn = structure_fns.get(cls)
        if fn is None:
            fn = structure_fns[cls] = make_dict_structure_fn(cls, conv)
        return fn({k: v for k, v in data.items() if k != "node"}, cls)

    def is_tagged(t) -> bool:
        return _is_tagged_base(t) or t in _TAGGED.values()

    conv.register_unstructure_hook_func(
        is_tagged, lambda obj: None if obj is None else unstructure_tagged(obj))
    conv.register_structure_hook_func(is_tagged, structure_tagged)
    conv.register_structure_hook(typing.Any, lambda v, _t: v)
    return conv


def to_data(workflow: Workflow) -> dict:
    return converter().unstructure(workflow)


def from_data(data: dict) -> Workflow:
    return converter().structure(data, Workflow)
