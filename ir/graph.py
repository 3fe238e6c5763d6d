"""A workflow's control graph, and the few graph algorithms the analyses use.

This is the subset of networkx's ``MultiDiGraph`` and its algorithms that
``flowc check`` needs, in plain Python: importing networkx costs more than
checking a small workflow. The algorithms keep networkx's visiting order, so
a cycle is reported as networkx would report it (tests/test_ir_graph.py
compares them on random graphs).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from flowc.ir.workflow import Workflow

__all__ = ["Graph", "NoCycle", "Reachability", "ancestors", "control_graph", "descendants", "find_cycle",
           "strongly_connected_components"]


class NoCycle(Exception):
    """find_cycle found no cycle."""


class Graph:
    """A directed graph of hashable nodes, with parallel edges when
    ``multi`` (each edge has an integer key, as in networkx). ``nodes[n]``
    is the dict of node ``n``'s attributes."""

    def __init__(self, multi: bool = True, name: str = "") -> None:
        self.multi = multi
        self.name = name
        self.nodes: dict[Any, dict] = {}
        self._succ: dict[Any, dict[Any, dict[int, dict]]] = {}
        self._pred: dict[Any, dict[Any, dict[int, dict]]] = {}

    def add_node(self, n: Any, **attr: Any) -> None:
        if n not in self.nodes:
            self.nodes[n] = {}
            self._succ[n] = {}
            self._pred[n] = {}
        self.nodes[n].update(attr)

    def add_edge(self, u: Any, v: Any, **attr: Any) -> None:
        self.add_node(u)
        self.add_node(v)
        keys = self._succ[u].get(v)
        if keys is None:
            keys = self._succ[u][v] = {}
            self._pred[v][u] = keys
        elif not self.multi:
            keys[0].update(attr)
            return
        key = len(keys)
        while key in keys:
            key += 1
        keys[key] = dict(attr)

    def remove_edge(self, u: Any, v: Any, key: int) -> None:
        keys = self._succ[u][v]
        del keys[key]
        if not keys:
            del self._succ[u][v]
            del self._pred[v][u]

    def __contains__(self, n: Any) -> bool:
        return n in self.nodes

    def __iter__(self) -> Iterator:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def successors(self, n: Any) -> Iterator:
        return iter(self._succ[n])

    def predecessors(self, n: Any) -> Iterator:
        return iter(self._pred[n])

    def has_edge(self, u: Any, v: Any) -> bool:
        return u in self._succ and v in self._succ[u]

    def in_degree(self, n: Any) -> int:
        return sum(len(keys) for keys in self._pred[n].values())

    def out_edges(self, n: Any) -> Iterator[tuple]:
        """(n, v, key) in insertion order; (n, v) when not ``multi``."""
        for v, keys in self._succ[n].items():
            if self.multi:
                for key in keys:
                    yield n, v, key
            else:
                yield n, v

    def edges(self) -> Iterator[tuple]:
        for n in self.nodes:
            yield from self.out_edges(n)

    def selfloop_edges(self) -> list[tuple]:
        return [e for n in self.nodes if n in self._succ[n] for e in self.out_edges(n) if e[1] == n]

    def copy(self, multi: bool | None = None) -> Graph:
        """A copy; ``multi=False`` merges parallel edges (networkx's
        ``DiGraph(multigraph)``)."""
        out = Graph(self.multi if multi is None else multi, self.name)
        for n, attr in self.nodes.items():
            out.add_node(n, **attr)
        for n in self.nodes:
            for v, keys in self._succ[n].items():
                for attr in keys.values():
                    out.add_edge(n, v, **attr)
        return out

    def subgraph(self, nodes: Iterable) -> Graph:
        """The graph induced on ``nodes``, in this graph's order."""
        keep = set(nodes)
        out = Graph(self.multi, self.name)
        for n, attr in self.nodes.items():
            if n in keep:
                out.add_node(n, **attr)
        for n in out.nodes:
            for v, keys in self._succ[n].items():
                if v in keep:
                    for attr in keys.values():
                        out.add_edge(n, v, **attr)
        return out


def control_graph(workflow: Workflow) -> Graph:
    """Nodes are node ids (with the Node under ``"node"``); edges carry the
    Edge under ``"edge"`` and its kind under ``"kind"``. Edges naming an
    unknown node are left out: unresolved targets are reported elsewhere."""
    graph = Graph(multi=True, name=workflow.name)
    for node in workflow.nodes:
        graph.add_node(node.id, node=node)
    for edge in workflow.edges:
        if edge.source in graph and edge.target in graph:
            graph.add_edge(edge.source, edge.target, edge=edge, kind=edge.kind)
    return graph


def _reach(adjacency: dict, source: Any) -> set:
    seen = {source}
    stack = [source]
    while stack:
        for nxt in adjacency[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    seen.discard(source)  # as networkx: the source is not its own descendant, even on a cycle
    return seen


def descendants(graph: Graph, source: Any) -> set:
    """The nodes reachable from ``source``, without it."""
    return _reach(graph._succ, source)


def ancestors(graph: Graph, source: Any) -> set:
    """The nodes ``source`` is reachable from, without it."""
    return _reach(graph._pred, source)


def _edge_dfs(graph: Graph, start: Any, visited_nodes: set, visited_edges: set) -> Iterator[tuple]:
    """networkx's edge_dfs from one start node: every edge once, depth first."""
    edges: dict[Any, Iterator] = {}
    stack = [start]
    while stack:
        current = stack[-1]
        if current not in visited_nodes:
            edges[current] = graph.out_edges(current)
            visited_nodes.add(current)
        try:
            edge = next(edges[current])
        except StopIteration:
            stack.pop()
        else:
            if edge not in visited_edges:
                visited_edges.add(edge)
                stack.append(edge[1])
                yield edge


def find_cycle(graph: Graph, source: Any = None) -> list[tuple]:
    """The first cycle a depth-first search over the edges finds (from
    ``source``, else from every node in order), as a list of edges; raises
    :class:`NoCycle` when there is none. networkx's ``find_cycle``, ported."""
    explored: set = set()
    cycle: list[tuple] = []
    final_node = None
    starts = [source] if source is not None else list(graph.nodes)
    for start in starts:
        if start in explored:
            continue
        edges: list[tuple] = []
        seen = {start}
        active = {start}
        previous_head = None
        # networkx runs edge_dfs with fresh visited sets per start node
        for edge in _edge_dfs(graph, start, set(), set()):
            tail, head = edge[0], edge[1]
            if head in explored:
                continue
            if previous_head is not None and tail != previous_head:
                # backtrack: drop edges until the last one ends at tail
                while True:
                    try:
                        popped = edges.pop()
                    except IndexError:
                        edges = []
                        active = {tail}
                        break
                    else:
                        active.remove(popped[1])
                    if edges and tail == edges[-1][1]:
                        break
            edges.append(edge)
            if head in active:
                cycle.extend(edges)
                final_node = head
                break
            seen.add(head)
            active.add(head)
            previous_head = head
        if cycle:
            break
        explored.update(seen)
    else:
        raise NoCycle
    for i, edge in enumerate(cycle):
        if edge[0] == final_node:
            break
    return cycle[i:]


def strongly_connected_components(graph: Graph) -> Iterator[set]:
    """Tarjan's algorithm, iterative (deep graphs don't hit the recursion limit)."""
    index: dict[Any, int] = {}
    low: dict[Any, int] = {}
    on_stack: set = set()
    stack: list = []
    counter = 0
    for root in graph.nodes:
        if root in index:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(graph._succ[root]))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph._succ[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    yield component


class Reachability:
    """Whether one node reaches another, for many pairs: each strongly
    connected component's ancestors as a bit set, built once in topological
    order. A query is a bit test, where :func:`ancestors` walks the graph:
    a check asking once per reference was quadratic in the steps. Memory is
    at most n*n/8 bytes (12.5 MB for 10,000 nodes)."""

    def __init__(self, graph: Graph) -> None:
        components = list(strongly_connected_components(graph))[::-1]   # Tarjan gives sinks first
        self._component: dict[Any, int] = {}
        for i, members in enumerate(components):
            for n in members:
                self._component[n] = i
        self._cyclic = [len(members) > 1 or any(n in graph._succ[n] for n in members) for members in components]
        above = [0] * len(components)
        for i, members in enumerate(components):
            mask = 0
            for n in members:
                for p in graph._pred[n]:
                    j = self._component[p]
                    if j != i:
                        mask |= above[j] | (1 << j)
            above[i] = mask
        self._above = above

    def reaches(self, source: Any, target: Any) -> bool:
        """A path of one edge or more leads from ``source`` to ``target``
        (``target in descendants(graph, source)``, or ``source`` on a cycle
        when they are the same node)."""
        i, j = self._component[source], self._component[target]
        if i == j:
            return self._cyclic[i]
        return bool(self._above[j] & (1 << i))
