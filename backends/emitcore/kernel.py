"""Reading an aevatar workflow's control flow from the IR, for translation.

The engine's kernel runs one step at a time: a step's ``next``, else the
following step in document order (both explicit edges in the IR), with
``branches`` and error fallbacks choosing among several. A workflow whose
flow is one straight path translates step by step; anything else is
reported by the translating emitter.
"""

from __future__ import annotations

from flowc.ir.workflow import EdgeKind, Node, Workflow

__all__ = ["straight_path"]


def straight_path(wf: Workflow) -> tuple[list[Node], list[Node]]:
    """The steps the kernel runs, in order, when the flow has no choice;
    and the steps off that path or where the flow branches."""
    by_id = wf.node_map()
    succ: dict[str, list] = {}
    for e in wf.edges:
        succ.setdefault(e.source, []).append(e)
    path: list[Node] = []
    problems: list[Node] = []
    current = wf.entry[0] if wf.entry else None
    seen: set[str] = set()
    while current is not None and current in by_id and current not in seen:
        seen.add(current)
        node = by_id[current]
        path.append(node)
        out = succ.get(current, [])
        if any(e.kind in (EdgeKind.BRANCH, EdgeKind.ERROR) for e in out):
            problems.append(node)
        plain = [e for e in out if e.kind in (EdgeKind.SEQUENCE, EdgeKind.FALLTHROUGH)]
        current = plain[0].target if plain else None
    if current is not None and current in seen:
        problems.append(by_id[current])  # a loop back
    problems += [n for n in wf.nodes if n.id not in seen]
    return path, problems


def variable_sources(wf: Workflow) -> tuple[set[str], set[str]]:
    """Which aevatar variables steps write: (step ids, assign targets).
    Every other variable a workflow reads is a run parameter."""
    from flowc.ir import expr as E

    step_ids = {n.id for n in wf.nodes}
    targets: set[str] = set()
    for n in wf.nodes:
        if n.op == "assign":
            w = n.attr("writes")
            if isinstance(w, E.Literal) and isinstance(w.value, str):
                targets.add(w.value)
    return step_ids, targets


def parameters_of(node: Node) -> dict:
    """An aevatar step's parameters: name -> IR expression (in order)."""
    from flowc.ir import expr as E

    params = node.attr("parameters")
    out: dict = {}
    if isinstance(params, E.MapExpr):
        for m in params.entries:
            if isinstance(m.key, E.Literal):
                out[m.key.value] = m.value
    return out
