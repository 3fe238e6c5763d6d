"""flowc.ir.graph against networkx, on random graphs: the same reachable
sets, components and (edge for edge) the same cycle found first, so the
analyses report exactly what they reported over networkx."""

from __future__ import annotations

import networkx as nx
from flowc.ir import graph as G
from hypothesis import given, settings
from hypothesis import strategies as st

NODES = st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=8, unique=True)


@st.composite
def graphs(draw):
    nodes = draw(NODES)
    edges = draw(st.lists(st.tuples(st.sampled_from(nodes), st.sampled_from(nodes)), max_size=20))
    return nodes, edges


def _both(nodes, edges, multi=True):
    ours = G.Graph(multi=multi)
    theirs = nx.MultiDiGraph() if multi else nx.DiGraph()
    for n in nodes:
        ours.add_node(n)
        theirs.add_node(n)
    for u, v in edges:
        ours.add_edge(u, v)
        theirs.add_edge(u, v)
    return ours, theirs


def _cycle(find, *args, **kwargs):
    try:
        return [tuple(e) for e in find(*args, **kwargs)]
    except (G.NoCycle, nx.NetworkXNoCycle):
        return None


@settings(max_examples=300, deadline=None)
@given(graphs(), st.booleans())
def test_the_same_as_networkx(graph, multi):
    nodes, edges = graph
    ours, theirs = _both(nodes, edges, multi)
    assert list(ours.edges()) == list(theirs.edges(keys=True) if multi else theirs.edges())
    for n in nodes:
        assert G.descendants(ours, n) == nx.descendants(theirs, n)
        assert G.ancestors(ours, n) == nx.ancestors(theirs, n)
        assert ours.in_degree(n) == theirs.in_degree(n)
        assert list(ours.successors(n)) == list(theirs.successors(n))
        assert _cycle(G.find_cycle, ours, source=n) == _cycle(nx.find_cycle, theirs, source=n)
    assert _cycle(G.find_cycle, ours) == _cycle(nx.find_cycle, theirs)
    assert sorted(map(sorted, G.strongly_connected_components(ours))) == \
        sorted(map(sorted, nx.strongly_connected_components(theirs)))
    simple = ours.copy(multi=False)
    assert list(simple.edges()) == list(nx.DiGraph(theirs).edges())
    part = nodes[: len(nodes) // 2 + 1]
    assert _cycle(G.find_cycle, ours.subgraph(part), source=part[0]) == \
        _cycle(nx.find_cycle, theirs.subgraph(part), source=part[0])


def test_removing_self_loops_keeps_the_other_edges():
    ours = G.Graph()
    ours.add_edge("a", "a")
    ours.add_edge("a", "b")
    ours.add_edge("a", "a")
    assert ours.selfloop_edges() == [("a", "a", 0), ("a", "a", 1)]
    for u, v, k in ours.selfloop_edges():
        ours.remove_edge(u, v, k)
    assert list(ours.edges()) == [("a", "b", 0)]
    assert not ours.has_edge("a", "a")


def test_deep_chains_do_not_recurse():
    ours = G.Graph(multi=False)
    for i in range(20_000):
        ours.add_edge(i, i + 1)
    ours.add_edge(20_000, 0)
    assert [len(c) for c in G.strongly_connected_components(ours)] == [20_001]
    assert len(G.find_cycle(ours)) == 20_001
