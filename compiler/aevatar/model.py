"""What the aevatar front end knows about a document's steps, shared by the
front end (which builds it) and the checks (which read it)."""

from __future__ import annotations

import attrs
from flowc.compiler.aevatar import primitives as P
from flowc.compiler.yamlsrc import YMap, YNode, YScalar
from flowc.ir import expr as E
from flowc.ir.span import Span


@attrs.define
class Branch:
    key: str
    target: str
    key_node: YNode
    target_node: YNode
    order: int


@attrs.define
class StepInfo:
    """What the front end knows about one step (top-level or child)."""

    id: str
    index: int                      # position among top-level steps; -1 for children
    node: YMap
    raw_type: str
    canonical: str
    prim: P.Primitive | None
    role: str | None = None
    role_node: YNode | None = None
    params: dict[str, str] = attrs.Factory(dict)
    param_nodes: dict[str, YNode | None] = attrs.Factory(dict)
    param_keys: dict[str, YScalar | None] = attrs.Factory(dict)
    next: str | None = None
    next_node: YNode | None = None
    branches: list[Branch] = attrs.Factory(list)
    is_child: bool = False
    extension: bool = False
    lowered: dict[str, E.Expr] = attrs.Factory(dict)

    @property
    def span(self) -> Span:
        return self.node.span

    def id_span(self) -> Span:
        n = self.node.get("id")
        return n.span if n is not None else self.node.span

    def type_span(self) -> Span:
        n = self.node.get("type")
        return n.span if n is not None else self.id_span()

    def param_span(self, key: str) -> Span:
        n = self.param_nodes.get(key)
        return n.span if n is not None else self.id_span()

    def key_span(self, key: str) -> Span:
        k = self.param_keys.get(key)
        return k.span if k is not None else self.param_span(key)


@attrs.frozen
class StepTable:
    """The steps of one document, as :mod:`flowc.compiler.aevatar.checks` reads them."""

    steps: list[StepInfo]        # top level, document order
    children: list[StepInfo]     # sub-steps of composite primitives
    by_id: dict[str, StepInfo]
