"""What kinds of value an expression can have, as far as the IR tells.

The expression rewrite tables need this: ``a == b`` means the same in
WorkflowSkill and CEL unless a number meets a string, ``<`` means the same
only on numbers, ``&&`` the same only on booleans. A kind set is a
frozenset of ``string number bool null array object``; ``ANY`` is all of
them (nothing is known). The knowledge comes from literals, declared types
(workflow inputs, step outputs) and what operators return.
"""

from __future__ import annotations

import re

from flowc.ir import expr as E
from flowc.ir.types import Type
from flowc.ir.workflow import Workflow

__all__ = ["ANY", "BOOL", "NUMBER", "STRING", "Kinds", "kinds_of_type", "wfs_equality_is_cel"]

ANY = frozenset({"string", "number", "bool", "null", "array", "object"})
BOOL = frozenset({"bool"})
NUMBER = frozenset({"number"})
STRING = frozenset({"string"})
ARRAY = frozenset({"array"})
OBJECT = frozenset({"object"})

_BOOL_OPS = frozenset({
    "wfs.eq", "wfs.ne", "wfs.lt", "wfs.le", "wfs.gt", "wfs.ge", "wfs.contains", "wfs.and", "wfs.or",
    "wfs.not", "cel.eq", "cel.ne", "cel.lt", "cel.le", "cel.gt", "cel.ge", "cel.in", "cel.and", "cel.or",
    "cel.not",
})
_BOOL_FUNCS = frozenset({"cel.contains", "cel.startsWith", "cel.endsWith", "cel.matches", "cel.has",
                         "cel.all", "cel.exists", "cel.exists_one", "cel.bool", "cel.all2", "cel.exists2",
                         "cel.exists_one2", "cel.math.isNaN", "cel.math.isInf", "cel.math.isFinite"})
_NUMBER_FUNCS = frozenset({"cel.size", "cel.int", "cel.uint", "cel.double", "cel.getFullYear", "cel.getMonth",
                           "cel.getDate", "cel.getDayOfMonth", "cel.getDayOfWeek", "cel.getDayOfYear",
                           "cel.getHours", "cel.getMinutes", "cel.getSeconds", "cel.getMilliseconds",
                           "cel.indexOf", "cel.lastIndexOf"})
_STRING_FUNCS = frozenset({"cel.string", "cel.charAt", "cel.lowerAscii", "cel.upperAscii", "cel.replace",
                           "cel.substring", "cel.trim", "cel.join", "cel.reverse", "cel.format",
                           "cel.strings.quote", "cel.base64.encode"})


def kinds_of_type(t: Type | None) -> frozenset[str]:
    if t is None:
        return ANY
    k = t.kind
    if k in ("int", "float"):
        return NUMBER | {"null"}
    if k == "bool":
        return BOOL | {"null"}
    if k == "string":
        return STRING | {"null"}
    if k == "array":
        return ARRAY | {"null"}
    if k == "object":
        return OBJECT | {"null"}
    return ANY


def kinds_of_value(v) -> frozenset[str]:
    if v is None:
        return frozenset({"null"})
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, (int, float)):
        return NUMBER
    if isinstance(v, str):
        return STRING
    if isinstance(v, list):
        return ARRAY
    if isinstance(v, dict):
        return OBJECT
    return ANY


class Kinds:
    """Static kinds of a workflow's expressions. ``scope`` maps extra names
    (lambda parameters, ``item``, ``index``) to kind sets."""

    def __init__(self, wf: Workflow) -> None:
        self.inputs = {p.name: kinds_of_type(p.type) - ({"null"} if p.has_default and p.default is not None
                                                          else frozenset()) for p in wf.inputs}
        self.outputs: dict[str, dict[str, frozenset[str]]] = {}
        # Steps whose whole output has a known kind (dialect 3: a map, filter
        # or sort gives the list itself).
        self.whole: dict[str, frozenset[str]] = {}
        profile = wf.profile
        whole_lists = profile is not None and profile.transform_output == "whole"
        for node in wf.nodes:
            if node.outputs:
                self.outputs[node.id] = {b.name: kinds_of_type(b.type) for b in node.outputs}
            elif node.op in ("transform.filter", "transform.map", "transform.sort") and whole_lists:
                self.whole[node.id] = ARRAY | {"null"}
            elif node.op.startswith("transform."):
                self.outputs[node.id] = {"items": ARRAY}

    def of(self, e: E.Expr, scope: dict[str, frozenset[str]] | None = None) -> frozenset[str]:
        scope = scope or {}
        if isinstance(e, E.Literal):
            if e.kind in ("int", "uint", "float"):
                return NUMBER
            return kinds_of_value(e.value)
        if isinstance(e, (E.Binary, E.Unary)) and e.op in _BOOL_OPS:
            return BOOL
        if isinstance(e, E.Call):
            if e.func in _BOOL_FUNCS:
                return BOOL
            if e.func in _NUMBER_FUNCS:
                return NUMBER
            if e.func in _STRING_FUNCS:
                return STRING
            return ANY
        if isinstance(e, E.Template):
            if e.typed_whole and len(e.parts) == 1:
                return self.of(e.parts[0], scope)
            return STRING
        if isinstance(e, E.ListExpr):
            return ARRAY
        if isinstance(e, E.MapExpr):
            return OBJECT
        if isinstance(e, E.Ref):
            return self._ref(e, scope)
        return ANY

    def _ref(self, e: E.Ref, scope) -> frozenset[str]:
        path = e.path
        if e.root in scope and not path:
            return scope[e.root]
        if e.root == "index" and not path:
            return NUMBER
        if e.root == "inputs" and len(path) == 1 and isinstance(path[0], E.Field):
            return self.inputs.get(path[0].name, ANY)
        if e.root == "steps" and len(path) >= 2 and all(isinstance(s, E.Field) for s in path[:2]) \
                and path[1].name == "output":
            if path[0].name in self.whole and len(path) == 2:
                return self.whole[path[0].name]
            fields = self.outputs.get(path[0].name)
            if fields is None:
                return ANY
            if len(path) == 2:
                return OBJECT | {"null"}
            if len(path) == 3 and isinstance(path[2], E.Field):
                return fields.get(path[2].name, ANY)
            if len(path) == 4 and isinstance(path[2], E.Field) and isinstance(path[3], E.Field) \
                    and path[3].name == "length" and fields.get(path[2].name, ANY) <= ARRAY | {"null"}:
                return NUMBER
        if path and isinstance(path[-1], E.Field) and path[-1].name == "length":
            base = E.Ref(e.root, path[:-1])
            if self._ref(base, scope) <= ARRAY | {"null"}:
                return NUMBER
        return ANY


# Text JavaScript's Number() reads as a number (WorkflowSkill's == then compares numerically).
_NUMERIC_TEXT = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*\Z|\s*0[xX][0-9a-fA-F]+\s*\Z|\s*\Z")


def _may_be_number_text(e: E.Expr, kinds: frozenset[str]) -> bool:
    """Could this side be a string that JavaScript reads as a number?"""
    if isinstance(e, E.Literal):
        return isinstance(e.value, str) and bool(_NUMERIC_TEXT.match(e.value))
    return "string" in kinds


def wfs_equality_is_cel(left: E.Expr, left_kinds: frozenset[str], right: E.Expr,
                        right_kinds: frozenset[str]) -> bool:
    """Do WorkflowSkill's ``==`` and CEL's ``==`` agree on these operands
    (whichever dialect they are written in)? They do when one side is null,
    a boolean or non-numeric text, or when neither can be a number meeting
    numeric text nor two containers (which WorkflowSkill compares by
    identity)."""
    for e in (left, right):
        if isinstance(e, E.Literal) and (e.value is None or isinstance(e.value, bool)):
            return True
        if isinstance(e, E.Literal) and isinstance(e.value, str) and not _NUMERIC_TEXT.match(e.value):
            return True
    if left_kinds == ANY or right_kinds == ANY:
        return False
    number_vs_text = ("number" in left_kinds and _may_be_number_text(right, right_kinds)) or \
                     ("number" in right_kinds and _may_be_number_text(left, left_kinds))
    containers = bool(left_kinds & {"array", "object"}) and bool(right_kinds & {"array", "object"})
    return not number_vs_text and not containers
