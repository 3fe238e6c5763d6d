"""The control graph of aevatar's step kernel, as every target reads it.

The engine's kernel runs one step at a time: a step's ``next``, else the
following step in document order (both explicit edges in the IR), with
``branches`` (a ``switch``'s keys, a ``conditional``'s ``true`` and
``false``) and error fallbacks choosing among several. :class:`KernelGraph`
is that graph as every target sees it; what the target
cannot express (branches of other primitives, error fallbacks it does not
translate, loops back) is reported once, here.
"""

from __future__ import annotations

import itertools
import json

from flowc.ir import expr as E
from flowc.ir.semantics import KERNEL_PRIMITIVES
from flowc.ir.workflow import EdgeKind, ErrorPolicy, Node, Workflow
from flowc.translation.report import Report

__all__ = ["KernelGraph", "StraightPath", "capability_is", "json_object", "keys_out", "parameters_of", "primitive", "switch_candidates",
           "variable_sources", "written_type"]



def primitive(node: Node) -> str:
    """The aevatar primitive a kernel step runs (canonical: aliases resolved):
    the front end's attr ``primitive``, else its op's one primitive, else the
    name of an extension primitive."""
    for name in ("primitive", "name"):
        value = node.attr(name)
        if isinstance(value, E.Literal) and isinstance(value.value, str) and \
                (name == "primitive" or _is_extension(node)):
            return value.value
    return KERNEL_PRIMITIVES.get(node.op, node.op)


def written_type(node: Node) -> str:
    """A kernel step's type as its author spelt it (trimmed, lower-cased; an
    alias stays an alias): the name findings and closest forms show. Rules
    read :func:`primitive`."""
    return node.kind.strip().lower()


def _is_extension(node: Node) -> bool:
    capability = node.attr("capability")
    return isinstance(capability, E.Literal) and capability.value == "extension"


class KernelGraph:
    """Where the kernel goes after each step: ``next`` or document order,
    or by a branch key. ``routes`` holds each branching step's keys in the
    kernel's matching order; ``static`` the key of a step that always takes
    one branch; ``recovers`` the steps whose error policy the target
    translates (their fallback is an edge too). An edge back to a step on
    the current path (a loop) is cut, with a finding. ``postorder`` lists
    the reachable steps, each after every step it can reach (once loops are
    cut); a step never reached is left out, a lowering.

    ``no_form`` and ``no_loop`` finish the findings' sentences ("... have
    no WorkflowSkill form"); ``attach`` puts each finding's comment on its
    step rather than on the document."""

    def __init__(self, wf: Workflow, report: Report, no_form: str, no_loop: str, attach: bool = False,
                 recovers: dict[str, ErrorPolicy] | None = None) -> None:
        self.wf = wf
        self.by_id = wf.node_map()
        self.index = {n.id: i for i, n in enumerate(wf.nodes)}
        self.plain: dict[str, str] = {}
        branch_edges: dict[str, list] = {}
        for e in wf.edges:
            if e.kind in (EdgeKind.SEQUENCE, EdgeKind.FALLTHROUGH):
                self.plain.setdefault(e.source, e.target)
            elif e.kind is EdgeKind.BRANCH:
                branch_edges.setdefault(e.source, []).append((e.order, e.label or "", e.target))
        self.branches = {sid: [(label, target) for _, label, target in sorted(items, key=lambda t: t[0])]
                         for sid, items in branch_edges.items()}

        def finding(sid: str, message: str, span) -> None:
            report.current = sid if attach else ""
            report.finding("TRN101", message, span)

        self.routes: dict[str, list[str]] = {}
        for n in wf.nodes:
            if n.op == "switch":
                self.routes[n.id] = switch_candidates(n, self.branches.get(n.id, []))
            elif n.op == "branch":
                self.routes[n.id] = ["true", "false"]
            elif n.id in self.branches:
                finding(n.id, f"step {n.id!r}: the branches of a {primitive(n)} step have {no_form}; the step "
                        "continues to the next one", n.span)
        self.static = self.static_keys()
        self.recovers = recovers or {}
        for e in wf.edges:
            if e.kind is EdgeKind.ERROR and e.source not in self.recovers:
                finding(e.source, f"step {e.source!r}: an error fallback has {no_form}; a failure fails the run",
                        self.by_id[e.source].span if e.source in self.by_id else e.span)
        for n in wf.nodes:
            if n.on_error.action not in ("fail", "fallback") and n.id not in self.recovers:
                finding(n.id, f"step {n.id!r}: on_error {n.on_error.action} has {no_form}; a failure fails the "
                        "run", n.span)
        self.cut: set[tuple[str, str]] = set()
        self.postorder = self._walk(finding, no_loop)
        report.current = ""
        for n in wf.nodes:
            if n.id not in self.reached:
                report.lowered("a step the kernel never reaches", "left out", n.span)

    def static_keys(self) -> dict[str, str]:
        """The key of each branching step that takes the same branch in
        every run (none here; an emitter that can tell says so)."""
        return {}

    def following(self, sid: str) -> str | None:
        """Where the kernel goes on from ``sid`` without a branch."""
        target = self.plain.get(sid)
        if target is None and sid not in self.plain and sid in self.routes:
            i = self.index[sid] + 1
            target = self.wf.nodes[i].id if i < len(self.wf.nodes) else None
        if target is None or target not in self.by_id or (sid, target) in self.cut:
            return None
        return target

    def route(self, sid: str, key: str) -> str | None:
        """Where the branch ``key`` of ``sid`` goes (its `_default`, else on)."""
        for label in (key, "_default"):
            for k, target in self.branches.get(sid, []):
                if k == label and target in self.by_id:
                    return None if (sid, target) in self.cut else target
        return self.following(sid)

    def fallback(self, sid: str) -> str | None:
        """The step a translated ``on_error`` fallback of ``sid`` goes to."""
        policy = self.recovers.get(sid)
        if policy is None or policy.action != "fallback" or (sid, policy.target) in self.cut:
            return None
        return policy.target

    def successors(self, sid: str) -> list[str]:
        if sid in self.static:
            out = [self.route(sid, self.static[sid])]
        elif sid in self.routes:
            out = [self.route(sid, k) for k in keys_out(self.routes[sid])]
        else:
            out = [self.following(sid)]
        out.append(self.fallback(sid))
        return list(dict.fromkeys(t for t in out if t is not None))

    def _walk(self, finding, no_loop: str) -> list[str]:
        """Depth first from the entry: an edge back to a step on the
        current path is a loop, cut with a finding."""
        self.reached: set[str] = set()
        if not self.wf.entry or self.wf.entry[0] not in self.by_id:
            return []
        entry = self.wf.entry[0]
        state = {entry: 1}
        stack = [(entry, iter(self.successors(entry)))]
        post: list[str] = []
        while stack:
            sid, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[sid] = 2
                post.append(sid)
                stack.pop()
            elif state.get(nxt) == 1:
                finding(sid, f"step {sid!r} loops back to {nxt!r}: loops have {no_loop}; the loop body runs once",
                        self.by_id[nxt].span)
                self.cut.add((sid, nxt))
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(self.successors(nxt))))
        self.reached = set(state)
        return post


    def kahn_order(self) -> list[Node]:
        """The reachable steps in Kahn's order, document order among ready steps."""
        reachable = [n for n in self.wf.nodes if n.id in self.reached]
        indegree = {n.id: 0 for n in reachable}
        for n in reachable:
            for t in self.successors(n.id):
                indegree[t] += 1
        ready = [n for n in reachable if indegree[n.id] == 0]
        order: list[Node] = []
        while ready:
            ready.sort(key=lambda n: self.index[n.id])
            n = ready.pop(0)
            order.append(n)
            for t in self.successors(n.id):
                indegree[t] -= 1
                if indegree[t] == 0:
                    ready.append(self.by_id[t])
        return order

    def post_dominators(self, order: list[str]) -> dict[str, str | None]:
        """Each step's join: the first step every path from it meets (None:
        the end); ``order`` puts each step after every step that can precede it.

        The graph has no loops (the kernel cut them), so one pass from the
        last step back finds each join as the meeting point of its
        successors' joins on the tree of joins (Cooper, Harvey and
        Kennedy's intersection). Whole sets of post-dominators, as before,
        took memory quadratic in the steps: a 10,000-step chain ran out.
        """
        rank = {sid: i for i, sid in enumerate(order)}
        ipdom: dict[str, str | None] = {}

        def meet(a: str | None, b: str | None) -> str | None:
            # A step's join comes later in the order than the step itself.
            while a != b:
                if a is None or (b is not None and rank[a] > rank[b]):
                    a, b = b, a
                a = ipdom[a]
            return a

        for sid in reversed(order):
            succ = self.successors(sid)
            if not succ:
                ipdom[sid] = None
                continue
            join: str | None = succ[0]
            for s in succ[1:]:
                join = meet(join, s)
            ipdom[sid] = join
        return ipdom


class StraightPath:
    """The steps the kernel can run, one after the other in an order where
    each comes after every step that can precede it: a graph without
    choices, for a target that cannot nest a workflow's branches."""

    def __init__(self, wf: Workflow, order: list[str]) -> None:
        self.by_id = wf.node_map()
        self.order = order
        self.next = dict(itertools.pairwise(self.order))
        self.routes: dict[str, list[str]] = {}
        self.ipdom: dict[str, str | None] = {}

    def following(self, sid: str) -> str | None:
        return self.next.get(sid)

    def successors(self, sid: str) -> list[str]:
        return [t for t in (self.next.get(sid),) if t is not None]


def keys_out(keys: list[str]) -> list[str]:
    """Every key a switch or conditional can give: its candidates and `_default`."""
    return keys + ([] if "_default" in keys or keys == ["true", "false"] else ["_default"])


def switch_candidates(node: Node, arms: list[tuple[str, str]]) -> list[str]:
    """The switch's keys in the kernel's matching order: its branch.* parameters, then its branches."""
    out = [k[len("branch."):] for k in parameters_of(node) if k.lower().startswith("branch.")]
    for k, _ in arms:
        if k not in out:
            out.append(k)
    return out


def variable_sources(wf: Workflow) -> tuple[set[str], set[str]]:
    """Which aevatar variables steps write: (step ids, assign targets).
    Every other variable a workflow reads is a run parameter."""
    step_ids = {n.id for n in wf.nodes}
    targets: set[str] = set()
    for n in wf.nodes:
        if n.op == "assign":
            w = n.attr("writes")
            if isinstance(w, E.Literal) and isinstance(w.value, str):
                targets.add(w.value)
    return step_ids, targets


def capability_is(node: Node, capability: str) -> bool:
    """Is ``node`` a call of the host's ``capability`` (``tool``, ``llm`` ...)?"""
    value = node.attr("capability")
    return isinstance(value, E.Literal) and value.value == capability


def json_object(text) -> dict | None:
    """A tool_call's ``arguments`` text as the JSON object it holds, else None."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def parameters_of(node: Node) -> dict:
    """An aevatar step's parameters: name -> IR expression (in order)."""
    params = node.attr("parameters")
    out: dict = {}
    if isinstance(params, E.MapExpr):
        for m in params.entries:
            if isinstance(m.key, E.Literal):
                out[m.key.value] = m.value
    return out
