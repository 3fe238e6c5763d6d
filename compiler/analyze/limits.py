"""The expression and value limits every backend relies on (LIM101, LIM102).

Whatever ``flowc check`` accepts must compile and run on both backends, and
the backends have hard limits of their own: Python refuses source that nests
more than about 200 brackets, and the VMs verify a program's stack need
against a fixed stack size. Both are guaranteed by two limits checked here,
on the IR, for every dialect at once:

- **depth** (``MAX_EXPR_DEPTH``, LIM101): the nesting of one expression. Each
  operator, call, list, map, template and conditional is a level; a
  reference is one level per path segment (``a.b[0]`` nests like CEL's
  select and index); a constant adds its own nesting (``MAX_VALUE_DEPTH`` for
  a constant outside any expression, such as an input's default).
- **items** (``MAX_EXPR_ITEMS``, LIM102): the arguments of one call, the
  elements of one list, the entries of one map, the parts of one template,
  the segments of one path.

A value waiting on a VM stack is always an operand of an enclosing level
that is still being built, so an expression within both limits needs at
most ``MAX_EXPR_DEPTH * (2 * MAX_EXPR_ITEMS + 1)`` stack slots (a map entry
is two values); the VMs' stack sizes are at least that (a test keeps them
so). Conditional steps that sit in each other's arms (WorkflowSkill's sequential
scheduling) run as nested calls on both backends, so their nesting is a
limit too (``MAX_BRANCH_DEPTH``, LIM101); it is measured on the branch
edges without recursion.

The walk stops descending past the limit, so it is linear and its own
recursion is bounded by the limit, however deep the IR is.
"""

from __future__ import annotations

from flowc.ir.diagnostics import Diagnostic, error
from flowc.ir.limit_checks import expr_limit_findings, value_limit_findings
from flowc.ir.limits import MAX_BRANCH_DEPTH
from flowc.ir.semantics import PROFILES
from flowc.ir.workflow import EdgeKind, Node, Region, Workflow

__all__ = ["check_limits", "expr_limit_findings", "value_limit_findings"]


def check_limits(workflow: Workflow) -> list[Diagnostic]:
    """Every expression and constant of the workflow, within the limits."""
    out: list[Diagnostic] = []
    for p in workflow.inputs:
        if p.has_default:
            out.extend(value_limit_findings(p.default, p.span))
    for b in workflow.outputs:
        if b.value is not None:
            out.extend(expr_limit_findings(b.value, b.span))
    for actor in workflow.actors:
        for a in actor.attrs:
            out.extend(expr_limit_findings(a.value, a.span))
    _nodes(workflow.nodes, out)
    profile = PROFILES.get(workflow.semantics)
    if profile is not None and profile.scheduling == "sequential":
        out.extend(_branch_depth(workflow))
    return out


def _branch_depth(workflow: Workflow) -> list[Diagnostic]:
    """LIM101 for the first conditional whose arms nest deeper than
    MAX_BRANCH_DEPTH (depth: 1 + the deepest conditional in its arms)."""
    nodes = workflow.node_map()
    arms: dict[str, list[str]] = {}
    for edge in workflow.edges:
        if edge.kind == EdgeKind.BRANCH and edge.target in nodes and nodes[edge.target].op == "branch":
            arms.setdefault(edge.source, []).append(edge.target)
    depth: dict[str, int] = {}
    for start in arms:
        # Iterative post-order; a node met again while open is a cycle,
        # which check_structure reports (it counts as depth 1 here).
        stack: list[tuple[str, int]] = [(start, 0)]
        open_: set[str] = set()
        while stack:
            node_id, i = stack.pop()
            targets = arms.get(node_id, [])
            if i == 0:
                if node_id in depth:
                    continue
                open_.add(node_id)
            if i < len(targets):
                stack.append((node_id, i + 1))
                t = targets[i]
                if t not in depth and t not in open_:
                    stack.append((t, 0))
                continue
            open_.discard(node_id)
            depth[node_id] = 1 + max((depth.get(t, 1) for t in targets), default=0)
    deep = [n for n, d in depth.items() if d > MAX_BRANCH_DEPTH]
    if not deep:
        return []
    # Report the outermost: the one with the greatest depth, first in the file.
    worst = max(deep, key=lambda n: (depth[n], -nodes[n].span.line))
    return [error("LIM101", f"conditional step {worst!r} nests {depth[worst]} conditionals in its arms; "
                  f"the limit is {MAX_BRANCH_DEPTH}", nodes[worst].span,
                  "put later conditionals after the conditional instead of inside its arms")]


def _nodes(nodes: tuple[Node, ...], out: list[Diagnostic]) -> None:
    for node in nodes:
        if node.guard is not None:
            out.extend(expr_limit_findings(node.guard.expr, node.guard.span))
        if node.iteration is not None:
            out.extend(expr_limit_findings(node.iteration.over, node.iteration.span))
        for a in node.attrs:
            out.extend(expr_limit_findings(a.value, a.span))
        for b in node.inputs + node.outputs:
            if b.value is not None:
                out.extend(expr_limit_findings(b.value, b.span))
        for region in node.regions:
            _region(region, out)


def _region(region: Region, out: list[Diagnostic]) -> None:
    _nodes(region.nodes, out)
