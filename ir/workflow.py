"""Workflows, nodes and edges: the typed DAG every dialect compiles to.

See docs/ARCHITECTURE.md for how each dialect's constructs map onto these
classes. All classes are frozen; passes build new values instead of
mutating.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs
from flowc.ir.expr import Expr
from flowc.ir.semantics import PROFILES, DialectProfile
from flowc.ir.span import NO_SPAN, Span
from flowc.ir.types import ANY, Type


class EdgeKind(str, enum.Enum):
    SEQUENCE = "sequence"          # explicit successor (WorkflowSkill order, aevatar `next`)
    FALLTHROUGH = "fallthrough"    # implicit successor by document order, made explicit
    BRANCH = "branch"              # chosen by a branching node; `label` names the arm
    DEPENDENCY = "dependency"      # dialect-3 depends_on: target waits for source
    ERROR = "error"                # on_error goto / error route


@attrs.frozen
class Param:
    """A declared workflow input."""

    name: str
    type: Type = ANY
    default: Any = None
    has_default: bool = False
    description: str | None = None
    span: Span = NO_SPAN


@attrs.frozen
class Binding:
    """A named, typed value: a step input (``value`` is what feeds it), a step
    output (``value`` maps the raw result) or a workflow output."""

    name: str
    type: Type = ANY
    value: Expr | None = None
    span: Span = NO_SPAN


@attrs.frozen
class Guard:
    """Run the node only when ``expr`` holds under ``truthiness``."""

    expr: Expr
    truthiness: str  # key of semantics.TRUTHINESS
    span: Span = NO_SPAN
    # What a false guard does: "skip" (the node is skipped and its output is
    # null; WorkflowSkill, aevatar) or "prune" (the node is pruned, and so is
    # every node all of whose dependencies are pruned; instruction dialect).
    on_false: str = "skip"


@attrs.frozen
class Iteration:
    """Run the node once per element of ``over``."""

    over: Expr
    item_var: str = "item"
    index_var: str = "index"
    delay_ms: int = 0            # pause between iterations, not after the last
    max_parallel: int = 1        # 1 = sequential
    # What a failed iteration does: "null_and_continue" (WorkflowSkill: the
    # slot becomes null, the loop goes on, the step fails at the end).
    on_item_error: str = "null_and_continue"
    span: Span = NO_SPAN


@attrs.frozen
class ErrorPolicy:
    """What a failure of the node does to the run.

    ``fail``: the run fails. ``ignore``: the node's output becomes null (or
    the partial array) and the run goes on. ``continue``: the node counts as
    done with ``{"error": ...}`` output (dialect 3). ``goto``: route to
    ``target`` (dialect 3).
    """

    action: str = "fail"
    target: str | None = None
    span: Span = NO_SPAN


@attrs.frozen
class RetryPolicy:
    """``max_retries`` further attempts after the first, sleeping
    ``delay_ms * backoff**(k-1)`` before retry k. ``retry_on`` names which
    failures are retried (``tool_error``: a host call that reported an
    error result; never expression or host failures)."""

    max_retries: int
    delay_ms: int
    backoff: float = 1.0
    retry_on: str = "tool_error"
    span: Span = NO_SPAN
    # Relative spread of each delay (0.2 = +-20 %), drawn deterministically
    # from the run id and attempt number; 0 = exact delays.
    jitter: float = 0.0


@attrs.frozen
class Attr:
    """A typed, operation-specific attribute (``tool``, ``where``, ``status`` ...)."""

    name: str
    value: Expr
    span: Span = NO_SPAN


@attrs.frozen
class Region:
    """A nested body: its own nodes and edges (foreach bodies, parallel
    branches, composite primitives)."""

    name: str
    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()
    span: Span = NO_SPAN
    # How the body becomes a value: "sinks" (the output of the one node
    # nothing depends on, or an object keyed by sink id when there are
    # several; instruction dialect), "last" (the last node's output),
    # "join" (the outputs joined, aevatar).
    result: str = "sinks"


@attrs.frozen
class Node:
    """One step of a workflow.

    ``op`` is the IR operation (a key of ops.OPERATIONS: ``call``,
    ``transform.filter``, ``branch``, ``exit`` ...); ``kind`` keeps the
    dialect's own spelling (``tool``, ``llm_call``, ``mcp.tool``) for
    messages and translation.
    """

    id: str
    op: str
    kind: str
    span: Span = NO_SPAN
    description: str | None = None
    actor: str | None = None
    attrs: tuple[Attr, ...] = ()
    inputs: tuple[Binding, ...] = ()
    outputs: tuple[Binding, ...] = ()
    guard: Guard | None = None
    iteration: Iteration | None = None
    on_error: ErrorPolicy = ErrorPolicy()
    retry: RetryPolicy | None = None
    regions: tuple[Region, ...] = ()

    def attr(self, name: str) -> Expr | None:
        for a in self.attrs:
            if a.name == name:
                return a.value
        return None


@attrs.frozen
class Edge:
    source: str
    target: str
    kind: EdgeKind
    label: str | None = None   # branch arm ("then", "else", a switch key)
    order: int = 0             # position among edges of the same source and label
    span: Span = NO_SPAN


@attrs.frozen
class Actor:
    """Who performs a step (aevatar roles); ``attrs`` hold prompt, model ..."""

    id: str
    name: str | None = None
    attrs: tuple[Attr, ...] = ()
    span: Span = NO_SPAN


@attrs.frozen
class Workflow:
    name: str
    dialect: str                       # dialect of origin
    semantics: str                     # key of semantics.PROFILES
    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()
    entry: tuple[str, ...] = ()        # node ids where a run starts
    # The single normal terminal node; None when the dialect ends runs with
    # one or more terminal nodes of its own (instruction `finish`), see
    # semantics.DialectProfile.terminal_nodes.
    terminal: str | None = None
    inputs: tuple[Param, ...] = ()
    outputs: tuple[Binding, ...] = ()
    actors: tuple[Actor, ...] = ()
    description: str | None = None
    metadata: dict = attrs.field(factory=dict, hash=False)
    span: Span = NO_SPAN

    @property
    def profile(self) -> DialectProfile | None:
        """The named flags of the workflow's semantics (None for a key
        :data:`~flowc.ir.semantics.PROFILES` does not hold). Execution code
        reads these flags, never ``semantics`` or ``dialect`` themselves."""
        return PROFILES.get(self.semantics)

    def node(self, node_id: str) -> Node | None:
        for n in self.nodes:
            if n.id == node_id:
                return n
        return None

    def node_map(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}
