"""The control graph of a dataflow workflow (a dependency graph with
pruning), as every target reads it.

A step starts when each dependency is done, skipped or pruned; a step
whose dependencies were all pruned is pruned; a switch prunes the cases it
does not choose, a false ``when`` its step. :class:`DataflowGraph` reads
dependencies and switch cases from the IR's edges once;
:func:`run_order`, :func:`ran_in_order` and :func:`order_is_fixed` follow
dialect 3's scheduler (the ready step with the smallest id first) so that a
target that runs steps one after the other can tell whether one order
serves every run.
"""

from __future__ import annotations

import itertools

from flowc.ir.workflow import EdgeKind, Node, Workflow

__all__ = ["DataflowGraph", "order_is_fixed", "ran_in_order", "run_order"]


class DataflowGraph:
    """Each step's dependencies (in ``depends_on`` order) and each switch's
    cases (``(label, target)`` in case order; ``$default`` is a label)."""

    def __init__(self, wf: Workflow) -> None:
        self.wf = wf
        self.by_id = wf.node_map()
        self.deps: dict[str, list[str]] = {n.id: [] for n in wf.nodes}
        self.cases: dict[str, list[tuple[str, str]]] = {}
        for e in sorted(wf.edges, key=lambda e: e.order):
            if e.kind is EdgeKind.DEPENDENCY and e.target in self.deps:
                self.deps[e.target].append(e.source)
            elif e.kind is EdgeKind.BRANCH:
                self.cases.setdefault(e.source, []).append((e.label or "", e.target))

    def cases_default_last(self) -> dict[str, list[tuple[str, str]]]:
        """The cases with ``$default`` after the named ones (the order a
        switch tests them in)."""
        out: dict[str, list[tuple[str, str]]] = {}
        for e in sorted((e for e in self.wf.edges if e.kind is EdgeKind.BRANCH),
                        key=lambda e: (e.label == "$default", e.order)):
            out.setdefault(e.source, []).append((e.label or "", e.target))
        return out

    def prunable(self) -> set[str]:
        """Steps that may be pruned: a `when`, a switch case target, or all
        dependencies prunable."""
        out = {n.id for n in self.wf.nodes if n.guard is not None and n.op != "trigger"}
        out |= {t for cases in self.cases.values() for _, t in cases}
        changed = True
        while changed:
            changed = False
            for sid, deps in self.deps.items():
                if sid not in out and deps and all(d in out for d in deps):
                    out.add(sid)
                    changed = True
        return out

    def choices(self, switch: str) -> frozenset[str]:
        """What a switch can choose: its cases and `$default` (no case)."""
        return frozenset(label for label, _ in self.cases.get(switch, [])) | {"$default"}

    def first_labels(self, switch: str, target: str) -> frozenset[str]:
        """The choices of ``switch`` that lead to ``target`` (a label listed
        twice chooses its first target)."""
        first: dict[str, str] = {}
        for label, t in self.cases.get(switch, []):
            first.setdefault(label, t)
        return frozenset(label for label, t in first.items() if t == target)

    def trigger_first_order(self) -> list[str]:
        """Dialect 3's run order from its first trigger: the ready step
        with the smallest id first (a step without dependencies, once the
        trigger has run, only when nothing is ready)."""
        placed: set[str] = set()
        out: list[str] = []
        remaining = sorted(self.deps)
        triggers = [i for i in remaining if self.by_id[i].op == "trigger"]
        if triggers:
            out.append(triggers[0])
            placed.update(triggers)
            remaining = [i for i in remaining if i not in triggers]
        while remaining:
            ready = [i for i in remaining if self.deps[i] and all(d in placed for d in self.deps[i])]
            nxt = ready[0] if ready else remaining[0]
            out.append(nxt)
            placed.add(nxt)
            remaining.remove(nxt)
        return out


def run_order(wf: Workflow) -> list[Node]:
    """Dialect 3's run order when every step runs: the ready step with the
    smallest id first."""
    by_id = wf.node_map()
    deps: dict[str, set[str]] = {n.id: set() for n in wf.nodes}
    for e in wf.edges:
        if e.kind is EdgeKind.DEPENDENCY and e.target in deps:
            deps[e.target].add(e.source)
    out, placed = [], set()
    remaining = sorted(deps)
    while remaining:
        ready = [i for i in remaining if deps[i] <= placed]
        nxt = ready[0] if ready else remaining[0]
        out.append(by_id[nxt])
        placed.add(nxt)
        remaining.remove(nxt)
    return out


_MAX_CHOICES = 8  # pruning outcomes to try: 2**8 short runs at most


def ran_in_order(wf: Workflow, deps: dict[str, list[str]], cases: dict[str, list[tuple[str, str]]],
                  outcome: dict[str, object]) -> list[str]:
    """The steps dialect 3 runs, in order, when each guard and switch
    decides as ``outcome`` says (a step id -> its when's value or the arm
    its switch chose): its scheduler, without the work."""
    ids = [n.id for n in wf.nodes]  # sorted by id, as the scheduler scans
    by_id = wf.node_map()
    state: dict[str, str] = {}
    forced: list[str] = []
    out: list[str] = []
    triggers = [i for i in ids if by_id[i].op == "trigger"]
    for t in triggers:
        state[t] = "done"
    while True:
        ready = None
        progress = True
        while progress and ready is None:
            progress = False
            for sid in ids:
                if sid in state:
                    continue
                d = deps.get(sid, [])
                if sid in forced:
                    verdict = "ready"
                elif not d or any(state.get(x) is None for x in d):
                    verdict = "wait"
                else:
                    verdict = "pruned" if all(state[x] == "pruned" for x in d) else "ready"
                if verdict == "pruned":
                    state[sid] = "pruned"
                    progress = True
                elif verdict == "ready" and ready is None:
                    ready = sid
        if ready is None:
            return out
        if ready in forced:
            forced.remove(ready)
        node = by_id[ready]
        if node.guard is not None and not outcome.get(ready, True):
            state[ready] = "pruned"
            continue
        state[ready] = "done"
        out.append(ready)
        if node.op == "finish":
            return out
        if node.op == "switch":
            chosen = outcome.get(ready)
            for _case, target in cases.get(ready, []):
                if target != chosen and target not in state:
                    state[target] = "pruned"
            if chosen is not None and chosen not in state:
                forced.append(chosen)


def order_is_fixed(wf: Workflow, order: list[str], deps, cases) -> bool | None:
    """Whether every run runs its steps in ``order`` (skipping the pruned
    ones), whatever the guards and switches decide: a step pruned because
    all its dependencies were is settled early, which can let a later step
    overtake. None: too many outcomes to try."""
    choices: list[tuple[str, list]] = []
    for n in wf.nodes:
        if n.op == "switch":
            choices.append((n.id, [t for _, t in cases.get(n.id, [])] + [None]))
        elif n.guard is not None:
            choices.append((n.id, [True, False]))
    if len(choices) > _MAX_CHOICES:
        return None
    for values in itertools.product(*(c for _, c in choices)):
        outcome = dict(zip((i for i, _ in choices), values, strict=True))
        ran = ran_in_order(wf, deps, cases, outcome)
        position = {sid: k for k, sid in enumerate(order)}
        if [position.get(sid, -1) for sid in ran] != sorted(position.get(sid, -1) for sid in ran):
            return False
    return True
