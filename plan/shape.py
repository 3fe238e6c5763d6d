"""What every plan shares: the error, the backend's body interface, the edge row."""

from __future__ import annotations

from typing import Any, Protocol

from flowc.ir import expr as E
from flowc.ir.workflow import Edge, Node

__all__ = ["NO_BODIES", "Bodies", "PlanError", "edge_row"]


class PlanError(Exception):
    """The workflow uses something its scheduling model does not run."""


class Bodies(Protocol):
    """How a backend represents a node's bodies in the plan."""

    def params(self, node: Node, entries: list[tuple[str, E.Expr]], ci: bool) -> Any:
        """A kernel step's parameters (``(name, expression)`` pairs in the
        engine's order; ``ci``: variables are looked up case-insensitively)."""

    def expression(self, node: Node, expr: E.Expr, what: str, ci: bool) -> Any:
        """One expression of ``node`` (``what`` names it in messages)."""


class _NoBodies:
    """For a plan whose bodies the backend generates itself (sequential
    scheduling): asked for one, it refuses."""

    def params(self, node: Node, entries: list[tuple[str, E.Expr]], ci: bool) -> Any:
        raise PlanError(f"step {node.id!r}: this plan holds no bodies")

    def expression(self, node: Node, expr: E.Expr, what: str, ci: bool) -> Any:
        raise PlanError(f"step {node.id!r}: this plan holds no bodies")


NO_BODIES: Bodies = _NoBodies()


def edge_row(edge: Edge) -> list:
    """The plan's row for one IR edge: ``[source, target, kind, label]``."""
    return [edge.source, edge.target, edge.kind.value, edge.label]
