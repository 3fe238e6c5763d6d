"""Placing steps so that aevatar's kernel runs the source's path.

The kernel runs a step, then goes to the target of the branch key the step
produced (``branches``), else to its ``next``, else to the following step
in document order; after the last step in document order the run ends with
that step's output (docs/aevatar.md, the kernel). A lowered workflow is
built as a list of :class:`Slot` values in document order, each naming
where the run goes after it: a step id, or :data:`END` (the run ends).
:func:`place` turns that into edges: a successor that is the following
slot is plain fall-through (nothing written), any other is ``next``; a
slot that must end the run but is not the last one jumps to a final
pass-through step (an identity ``transform``: the run's output is the
output of the step that jumped there).
"""

from __future__ import annotations

import attrs
from flowc.ir import expr as E
from flowc.ir.workflow import Attr, Edge, EdgeKind, Node

__all__ = ["END", "Slot", "fresh_id", "place"]

END = "\x00end"  # not an id any dialect allows


@attrs.frozen
class Slot:
    """One aevatar step and where the run goes after it. ``branches``
    (label -> target) replaces ``successor`` for a step that produces a
    branch key for every label it can produce."""

    node: Node
    successor: str = END
    branches: tuple[tuple[str, str], ...] = ()


def fresh_id(base: str, taken: set[str]) -> str:
    """An id not in ``taken`` (which it joins): aevatar step ids are also
    variable names, so it must not meet a step id or a run parameter."""
    candidate, n = base, 2
    while candidate in taken:
        candidate = f"{base}_{n}"
        n += 1
    taken.add(candidate)
    return candidate


def _end_step(sid: str) -> Node:
    params = E.MapExpr((E.MapEntry(E.Literal("op", "string"), E.Literal("identity", "string")),))
    return Node(sid, "transform.apply", "transform",
                attrs=(Attr("parameters", params), Attr("function", E.Literal("aevatar.transform.identity",
                                                                              "string"))))


def place(slots: list[Slot], taken: set[str]) -> tuple[list[Node], list[Edge]]:
    """The steps in document order and the edges that make the kernel
    follow each slot's successor (an end step appended when needed)."""
    # A branch target must be a step; a plain successor only when the slot
    # is not the last one (the last one ends the run by itself).
    ends_early = any(any(t == END for _, t in s.branches) or (s.successor == END and i + 1 < len(slots)
                                                              and not s.branches)
                     for i, s in enumerate(slots))
    end_id = fresh_id("end", taken) if ends_early else None
    nodes = [s.node for s in slots] + ([_end_step(end_id)] if end_id else [])
    index = {n.id: i for i, n in enumerate(nodes)}

    def resolve(target: str) -> str:
        return end_id if target == END and end_id else target

    # Steps something routes to explicitly (a branch, a jump): a step that
    # merely falls into one says `next` too, so that no arm falls through
    # into a sibling arm or a join by document order alone (AEV302/AEV303).
    joins = {resolve(t) for s in slots for _, t in s.branches}
    joins |= {resolve(s.successor) for i, s in enumerate(slots)
              if not s.branches and resolve(s.successor) != END and index.get(resolve(s.successor)) != i + 1}
    edges: list[Edge] = []
    for i, slot in enumerate(slots):
        if slot.branches:
            for order, (label, target) in enumerate(slot.branches):
                edges.append(Edge(slot.node.id, resolve(target), EdgeKind.BRANCH, label, order))
            continue
        target = resolve(slot.successor)
        if target == END:
            continue  # the last step: the run ends after it
        kind = EdgeKind.FALLTHROUGH if index.get(target) == i + 1 and target not in joins else EdgeKind.SEQUENCE
        edges.append(Edge(slot.node.id, target, kind))
    return nodes, edges
