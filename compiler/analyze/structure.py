"""Structural analyses over the control graph."""

from __future__ import annotations

from collections import Counter

from flowc.ir import expr as E
from flowc.ir import graph as G
from flowc.ir.diagnostics import Diagnostic, error, warning
from flowc.ir.graph import control_graph
from flowc.ir.ops import OPERATIONS
from flowc.ir.semantics import PROFILES
from flowc.ir.workflow import EdgeKind, Node, Workflow

MAX_NODES = 100_000
MAX_ID_LENGTH = 256


def check_structure(workflow: Workflow) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    nodes = workflow.node_map()
    out.extend(_duplicates(workflow))
    out.extend(_caps(workflow))
    for edge in workflow.edges:
        for end in (edge.source, edge.target):
            if end not in nodes:
                out.append(error("ANA405", f"edge {edge.source} -> {edge.target} names unknown node {end!r}",
                                 edge.span))
    graph = control_graph(workflow)
    out.extend(_reachability(workflow, graph))
    # Dialects whose engines loop through `next`/branches (aevatar) allow
    # control cycles; a loop that never gets out is still ANA404.
    profile = PROFILES.get(workflow.semantics)
    cycles_allowed = profile is not None and profile.control_cycles_allowed
    if not cycles_allowed:
        out.extend(_control_cycles(graph, _duplicate_ids(workflow)))
    out.extend(_terminal(workflow, graph))
    if not cycles_allowed:
        out.extend(_data_cycles(workflow))
    return out


def _duplicates(workflow: Workflow) -> list[Diagnostic]:
    seen: dict[str, Node] = {}
    out = []
    for node in workflow.nodes:
        if node.id in seen:
            out.append(error("ANA401", f"duplicate step id {node.id!r}", node.span,
                             f"first declared at line {seen[node.id].span.line}"))
        else:
            seen[node.id] = node
    return out


def _caps(workflow: Workflow) -> list[Diagnostic]:
    out = []
    if len(workflow.nodes) > MAX_NODES:
        out.append(error("ANA406", f"the workflow has {len(workflow.nodes)} steps; the limit is {MAX_NODES}",
                         workflow.span))
    for node in workflow.nodes:
        if len(node.id) > MAX_ID_LENGTH:
            out.append(error("ANA406", f"step id is {len(node.id)} characters long; the limit is "
                             f"{MAX_ID_LENGTH}", node.span))
    return out


def _reachability(workflow: Workflow, graph: G.Graph) -> list[Diagnostic]:
    profile = PROFILES.get(workflow.semantics)
    report = error if profile is not None and profile.unreachable_steps == "error" else warning
    if not workflow.entry:
        # No entry at all: one finding, not one per step.
        return [report("ANA402", "the workflow has no entry node, so no step is reachable",
                       workflow.span)] if workflow.nodes else []
    reached: set[str] = set()
    for entry in workflow.entry:
        if entry in graph:
            reached.add(entry)
            reached.update(G.descendants(graph, entry))
    out = []
    for node in workflow.nodes:
        if node.id not in reached and not node.id.startswith("$"):
            notes = () if graph.in_degree(node.id) else (
                "nothing leads to it: it has no incoming edge (dependency, branch or route)",)
            out.append(report("ANA402", f"step {node.id!r} is unreachable: no path from the start leads "
                              "to it", node.span, *notes))
    return out


def _duplicate_ids(workflow: Workflow) -> set[str]:
    counts = Counter(n.id for n in workflow.nodes)
    return {node_id for node_id, count in counts.items() if count > 1}


def _control_cycles(graph: G.Graph, duplicate_ids: set[str]) -> list[Diagnostic]:
    # Two nodes with one id collapse into one graph node, so an edge between
    # them becomes a self-loop: that is the duplicate (ANA401), not a cycle.
    loops = [(u, v, k) for u, v, k in graph.selfloop_edges() if u in duplicate_ids]
    if loops:
        graph = graph.copy()
        for u, v, k in loops:
            graph.remove_edge(u, v, k)
    try:
        cycle = G.find_cycle(graph)
    except G.NoCycle:
        return []
    ids = [u for u, *_ in cycle] + [cycle[0][0]]
    node = graph.nodes[ids[0]]["node"]
    return [error("ANA403", "control flow cycle: " + " -> ".join(ids), node.span)]


def _augmented(workflow: Workflow, graph: G.Graph) -> G.Graph:
    """The control graph plus the implicit returns of structured branches:
    an arm of a `branch` node continues at the branch's sequence successor.
    In dialects whose arms route on by their own edges (aevatar), nothing is added."""
    g = graph.copy(multi=False)
    profile = PROFILES.get(workflow.semantics)
    if profile is not None and profile.branch_arms_route_on:
        return g
    successors: dict[str, list[str]] = {}
    for edge in workflow.edges:
        if edge.kind in (EdgeKind.SEQUENCE, EdgeKind.FALLTHROUGH):
            successors.setdefault(edge.source, []).append(edge.target)
    # An arm continues where its branch continues. A branch that is itself
    # an arm (a nested conditional) continues where its enclosing branch
    # does, so continuations propagate until nothing changes.
    arms = [(e.source, e.target) for e in workflow.edges if e.kind is EdgeKind.BRANCH and e.target in g]
    changed = True
    while changed:
        changed = False
        for source, target in arms:
            for after in list(successors.get(source, ())):
                known = successors.setdefault(target, [])
                if after in g and after != target and after not in known:
                    g.add_edge(target, after)
                    known.append(after)
                    changed = True
    return g


def _terminal(workflow: Workflow, graph: G.Graph) -> list[Diagnostic]:
    profile = PROFILES.get(workflow.semantics)
    if profile is not None and profile.terminal_nodes == "at_least_one":
        return _terminals_at_least_one(workflow, graph)
    out = []
    normal = [n for n in workflow.nodes if n.op in ("end", "finish")]
    if workflow.terminal is None or workflow.terminal not in graph:
        out.append(error("ANA404", "the workflow has no terminal", workflow.span))
        return out
    if len(normal) > 1:
        for extra in normal[1:]:
            out.append(error("ANA404", f"a second terminal {extra.id!r}; a workflow ends at exactly one",
                             extra.span))
    g = _augmented(workflow, graph)
    terminals = {n.id for n in workflow.nodes if OPERATIONS.get(n.op) and OPERATIONS[n.op].terminal}
    # The terminal may be an ordinary node (aevatar: the last step in document order).
    terminals.add(workflow.terminal)
    reaches: set[str] = set()
    for t in terminals:
        if t in g:
            reaches.add(t)
            reaches.update(G.ancestors(g, t))
    for node in workflow.nodes:
        if node.id not in reaches:
            out.append(error("ANA404", f"step {node.id!r} never reaches the end of the workflow",
                             node.span))
    return out


def _terminals_at_least_one(workflow: Workflow, graph: G.Graph) -> list[Diagnostic]:
    """Dialects that end runs at terminal nodes of their own (instruction
    `finish`): one or more of them, and no `Workflow.terminal`. A step from
    which no terminal can be reached still runs, but nothing waits for it:
    a warning."""
    terminals = [n.id for n in workflow.nodes if OPERATIONS.get(n.op) and OPERATIONS[n.op].terminal]
    if not terminals:
        return [error("ANA404", "the workflow has no terminal node (an end or finish step)", workflow.span)]
    reaches: set[str] = set()
    for t in terminals:
        reaches.add(t)
        reaches.update(G.ancestors(graph, t))
    return [warning("ANA404", f"step {node.id!r} never reaches a terminal node; nothing waits for its "
                    "result", node.span)
            for node in workflow.nodes if node.id not in reaches]


def _data_cycles(workflow: Workflow) -> list[Diagnostic]:
    """Steps that read each other's outputs in a cycle (through `$steps`).
    One finding per strongly connected component, so this stays linear."""
    known = workflow.node_map()
    g = G.Graph(multi=False)
    spans = {}
    for node in workflow.nodes:
        for expr in node_expressions(node):
            for ref in E.refs(expr):
                target = ref.step_id()
                if target in known:
                    g.add_edge(target, node.id)
                    spans.setdefault((target, node.id), ref.span)
    out = []
    for component in G.strongly_connected_components(g):
        first = min(component)
        if len(component) == 1 and not g.has_edge(first, first):
            continue
        cycle = [u for u, *_ in G.find_cycle(g.subgraph(component), source=first)]
        path = " -> ".join(cycle + [cycle[0]])
        span = spans.get((cycle[-1], cycle[0])) or known[first].span
        out.append(error("ANA403", f"steps read each other's outputs in a cycle: {path}", span))
    return sorted(out, key=Diagnostic.sort_key)


def node_expressions(node: Node):
    """Every expression a node evaluates (guard, iteration, attrs, bindings)."""
    if node.guard is not None:
        yield node.guard.expr
    if node.iteration is not None:
        yield node.iteration.over
    for attr in node.attrs:
        yield attr.value
    for b in node.inputs:
        if b.value is not None:
            yield b.value
    for b in node.outputs:
        if b.value is not None:
            yield b.value
