"""A networkx view of a workflow's control graph, for the analyses."""

from __future__ import annotations

import networkx as nx
from flowc.ir.workflow import Workflow


def control_graph(workflow: Workflow) -> nx.MultiDiGraph:
    """Nodes are node ids (with the Node under ``"node"``); edges carry the
    Edge under ``"edge"`` and its kind under ``"kind"``. Edges naming an
    unknown node are left out: unresolved targets are reported elsewhere."""
    graph = nx.MultiDiGraph(name=workflow.name)
    for node in workflow.nodes:
        graph.add_node(node.id, node=node)
    for edge in workflow.edges:
        if edge.source in graph and edge.target in graph:
            graph.add_edge(edge.source, edge.target, edge=edge, kind=edge.kind)
    return graph
