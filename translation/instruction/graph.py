"""The dependency graph a conversion into dialect 3 builds, whatever the
source's scheduling model: its nodes, their ``depends_on`` edges in order,
and ids and names that fit dialect 3's rules."""

from __future__ import annotations

import re

from flowc.ir.span import Span
from flowc.ir.workflow import Edge, EdgeKind, Node
from flowc.translation.instruction.flags import STEP_ID
from flowc.translation.report import Report

__all__ = ["DependencyGraph", "workflow_name"]


class DependencyGraph:
    """The dialect-3 graph a conversion builds: nodes and their `depends_on`
    edges, and fresh ids that fit dialect 3's rule."""


    def __init__(self, taken: set[str]) -> None:
        self.nodes: list[Node] = []
        self.edges: list[Edge] = []
        self.taken = taken

    def fresh(self, base: str) -> str:
        candidate = base[:64]
        n = 2
        while candidate in self.taken:
            candidate = f"{base[:60]}_{n}"
            n += 1
        self.taken.add(candidate)
        return candidate

    def add(self, node: Node, deps: list[str]) -> None:
        self.nodes.append(node)
        for i, d in enumerate(dict.fromkeys(deps)):
            self.edges.append(Edge(d, node.id, EdgeKind.DEPENDENCY, None, i, node.span))


def workflow_name(name: str, report: Report, span: Span) -> str:
    """``name`` if dialect 3 takes it as a workflow name, else its renaming (a lowering)."""
    if STEP_ID.match(name):
        return name
    fixed = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "workflow"
    if not re.match(r"[a-zA-Z_]", fixed):
        fixed = "w_" + fixed[:62]
    report.lowered("workflow name", f"{fixed!r} (dialect 3 names are [a-zA-Z_][a-zA-Z0-9_-]*)", span)
    return fixed
