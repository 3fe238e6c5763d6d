"""The control graph of a sequential workflow (steps in document order with
branch arms), as every target reads it.

A branch step lists the steps of each arm (``then``, ``else``: BRANCH
edges, in arm order); the top level runs from the entry by SEQUENCE edges.
A step listed in an arm runs there, not at the top level.
"""

from __future__ import annotations

from flowc.ir.workflow import EdgeKind, Workflow

__all__ = ["SequenceGraph"]


class SequenceGraph:
    def __init__(self, wf: Workflow) -> None:
        self.wf = wf
        self.by_id = wf.node_map()
        # branch step id -> arm label -> step ids in arm order
        self.arms: dict[str, dict[str, list[str]]] = {}
        self.next: dict[str, str] = {}
        ranked: dict[str, dict[str, list[tuple[int, str]]]] = {}
        for e in wf.edges:
            if e.kind is EdgeKind.BRANCH:
                ranked.setdefault(e.source, {}).setdefault(e.label or "", []).append((e.order, e.target))
            elif e.kind is EdgeKind.SEQUENCE:
                self.next[e.source] = e.target
        for sid, labels in ranked.items():
            self.arms[sid] = {label: [t for _, t in sorted(items)] for label, items in labels.items()}

    def then_else(self, sid: str) -> tuple[list[str], list[str]]:
        """A conditional's two arms (empty lists for a step without arms)."""
        arms = self.arms.get(sid, {})
        return arms.get("then", []), arms.get("else", [])

    def in_arms(self) -> set[str]:
        """Every step some arm lists."""
        return {t for labels in self.arms.values() for targets in labels.values() for t in targets}

    def top_level(self) -> list[str]:
        """The steps no arm lists, in document order, without the end node."""
        inside = self.in_arms()
        return [n.id for n in self.wf.nodes if n.op != "end" and n.id not in inside]

    def chain(self) -> list[str]:
        """The steps from the entry by SEQUENCE edges, up to a step met twice."""
        out: list[str] = []
        current = self.wf.entry[0] if self.wf.entry else None
        seen: set[str] = set()
        while current is not None and current not in seen and current in self.by_id:
            seen.add(current)
            out.append(current)
            current = self.next.get(current)
        return out
