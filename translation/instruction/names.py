"""Step ids and run variables that dialect 3 accepts, for a lowered workflow.

Dialect 3 takes step ids and ``writes`` variables of
``[a-zA-Z_][a-zA-Z0-9_-]``, at most 64 characters (INS107, INS105). Another
dialect's ids are freer (aevatar: any text; WorkflowSkill warns only), and
the lowerings derive ids from them (``<id>_answer``, ``<id>_to_<target>``),
which may also be too long. :func:`fit_names` renames what does not fit with
the shared :class:`~flowc.translation.ids.IdRenamer`, everywhere the
name occurs: the step, its edges, ``goto:`` targets, ``steps.<id>`` and
``vars.<name>`` references, ``writes``, and the comments kept for the step.
A workflow whose names all fit is returned as it is.
"""

from __future__ import annotations

import attrs
from flowc.ir import expr as E
from flowc.ir.workflow import Edge, ErrorPolicy, Node, Workflow
from flowc.translation.ids import IdRenamer
from flowc.translation.instruction.flags import MAX_ID, STEP_ID
from flowc.translation.report import Report

__all__ = ["fit_names"]

_DISALLOWED = r"[^a-zA-Z0-9_-]"


def _nodes(nodes):
    for node in nodes:
        yield node
        for region in node.regions:
            yield from _nodes(region.nodes)


def _writes(node: Node) -> str | None:
    value = node.attr("writes") if node.op == "assign" else None
    return value.value if isinstance(value, E.Literal) and isinstance(value.value, str) else None


def fit_names(wf: Workflow, report: Report) -> Workflow:
    nodes = list(_nodes(wf.nodes))
    variables = [v for v in (_writes(n) for n in nodes) if v is not None]
    if all(STEP_ID.match(n.id) for n in nodes) and all(STEP_ID.match(v) for v in variables):
        return wf
    steps = IdRenamer(STEP_ID, _DISALLOWED, report, {n.id for n in nodes}, max_len=MAX_ID)
    for node in nodes:
        steps.rename(node.id, node.span)
    names = IdRenamer(STEP_ID, _DISALLOWED, report, set(variables), construct="run variable", max_len=MAX_ID,
                      prefix="v_")
    for name in variables:
        names.rename(name)
    for old, new in steps.names.items():
        if old != new and old in report.comments:
            report.comments[new] = report.comments.pop(old)
    return _Rewrite(steps.names, names.names).value(wf)


class _Rewrite:
    """The IR with every occurrence of a renamed step or variable renamed."""

    def __init__(self, steps: dict[str, str], variables: dict[str, str]) -> None:
        self.steps = steps
        self.variables = variables

    def step(self, sid):
        return self.steps.get(sid, sid) if isinstance(sid, str) else sid

    def value(self, v):
        if isinstance(v, E.Ref):
            return self.ref(v)
        if isinstance(v, Node):
            return self.node(v)
        if isinstance(v, Edge):
            return attrs.evolve(v, source=self.step(v.source), target=self.step(v.target))
        if isinstance(v, ErrorPolicy):
            return attrs.evolve(v, target=self.step(v.target)) if v.action == "goto" else v
        if isinstance(v, Workflow):
            out = self._fields(v)
            return attrs.evolve(out, entry=tuple(self.step(e) for e in v.entry), terminal=self.step(v.terminal))
        if isinstance(v, tuple):
            return tuple(self.value(x) for x in v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if attrs.has(type(v)):
            return self._fields(v)
        return v

    def _fields(self, v):
        changes = {}
        for f in attrs.fields(type(v)):
            if f.name == "metadata" or not f.init:
                continue
            old = getattr(v, f.name)
            new = self.value(old)
            if new is not old:
                changes[f.name] = new
        return attrs.evolve(v, **changes) if changes else v

    def node(self, node: Node) -> Node:
        out = self._fields(node)
        attrs_ = out.attrs
        if node.op == "assign":
            attrs_ = tuple(attrs.evolve(a, value=attrs.evolve(a.value, value=self.variables.get(a.value.value,
                                                                                              a.value.value)))
                           if a.name == "writes" and isinstance(a.value, E.Literal) and isinstance(a.value.value, str)
                           else a for a in attrs_)
        return attrs.evolve(out, id=self.step(node.id), attrs=attrs_)

    def ref(self, e: E.Ref) -> E.Ref:
        table = self.steps if e.root == "steps" else self.variables if e.root == "vars" else None
        if table and e.path and isinstance(e.path[0], E.Field) and e.path[0].name in table:
            head = attrs.evolve(e.path[0], name=table[e.path[0].name])
            return attrs.evolve(e, path=(head, *(self.value(p) for p in e.path[1:])))
        return self._fields(e)
