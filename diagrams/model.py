"""The picture's content, independent of the drawing language.

:func:`build` turns a workflow (and optionally the findings about it) into a
:class:`Picture`: boxes with a title and a few short lines, edges with a kind
and a label, clusters for regions, and which boxes a finding points at. The
DOT and Mermaid writers only decide how each of those looks.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable

import attrs
from flowc.diagrams.text import clip, expr_text, wrap
from flowc.ir import expr as E
from flowc.ir.diagnostics import Diagnostic, Severity
from flowc.ir.ops import OPERATIONS
from flowc.ir.workflow import Edge, EdgeKind, Node, Workflow

WIDTH = 34          # characters per label line
DETAIL_LINES = 2    # lines for a node's main expression

# What each category of box is, in the order the legend lists them.
CATEGORIES = ("start", "trigger", "call", "transform", "branch", "composite", "step", "exit",
              "terminal", "missing")

# Attributes worth a line when an operation has no specific summary.
_SUMMARY_ATTRS = ("condition", "on", "over", "while", "until", "check", "value", "text", "target",
                  "function", "duration_ms", "message", "prompt", "expr", "format")
# Attributes of a call worth a line: what is asked of the host.
_CALL_ATTRS = ("instruction", "prompt", "question", "url", "key")
# Source kinds that say no more than "a call" (WorkflowSkill's `tool`
# step): a call box does not repeat them after its head.
_PLAIN_CALL_KINDS = ("", "tool", "call")


@attrs.frozen
class Box:
    uid: str                       # id in the drawing (n0, n1 ...): safe in every language
    id: str                        # the node id in the IR
    category: str                  # one of CATEGORIES
    title: str
    op: str                        # operation line (op and a short detail)
    lines: tuple[str, ...] = ()    # the main expression, wrapped
    marks: tuple[str, ...] = ()    # each, guard, retry, on_error
    status: str = ""               # "", "warning", "error" or "unreachable"
    findings: tuple[str, ...] = ()  # "CODE: message" of each finding at this box


@attrs.frozen
class Line:
    source: str
    target: str
    kind: str                      # an EdgeKind value, "start", "body" or "layout" (invisible)
    label: str = ""
    cluster: str = ""              # for "body": the cluster the edge points into


@attrs.frozen
class Cluster:
    uid: str
    title: str
    boxes: tuple[str, ...]
    clusters: tuple[Cluster, ...] = ()


@attrs.frozen
class Picture:
    title: str
    subtitle: str
    boxes: tuple[Box, ...]
    lines: tuple[Line, ...]
    top: tuple[str, ...]           # boxes outside every cluster
    clusters: tuple[Cluster, ...]

    def box(self, uid: str) -> Box:
        for b in self.boxes:
            if b.uid == uid:
                return b
        raise KeyError(uid)


def build(workflow: Workflow, findings: Iterable[Diagnostic] = ()) -> Picture:
    return _Builder(workflow, list(findings)).picture()


def category(node: Node, workflow: Workflow | None = None) -> str:
    spec = OPERATIONS.get(node.op)
    if node.op == "trigger":
        return "trigger"
    if spec is not None and spec.terminal:
        return "terminal" if workflow is not None and node.id == workflow.terminal else "exit"
    if spec is not None and spec.branching:
        return "branch"
    if node.regions:
        return "composite"
    if spec is not None and spec.effect:
        return "call"
    if node.op.startswith("transform."):
        return "transform"
    return "step"


class _Builder:
    def __init__(self, workflow: Workflow, findings: list[Diagnostic]) -> None:
        self.wf = workflow
        self.dialect = workflow.dialect
        self.findings = findings
        self.boxes: list[Box] = []
        self.lines: list[Line] = []
        self.placed: list[tuple[Node, str]] = []   # for matching findings to boxes
        self._located: _SpanIndex | None = None
        self.counter = 0
        self.arms: dict[tuple[str, str | None], list[Edge]] = {}   # branch arms of the scope being drawn

    def uid(self, prefix: str = "n") -> str:
        self.counter += 1
        return f"{prefix}{self.counter - 1}"

    # ------------------------------------------------------------- structure
    def picture(self) -> Picture:
        wf = self.wf
        top, clusters, scope = self.scope(wf.nodes, wf.edges, top_level=True)
        entries = [scope[e] for e in wf.entry if e in scope]
        non_trigger = [u for u, e in zip(entries, wf.entry) if wf.node_map().get(e) is None
                       or category(wf.node_map()[e]) != "trigger"]
        if non_trigger:
            self.boxes.insert(0, Box("start", "", "start", "start", ""))
            top.insert(0, "start")
            for u in non_trigger:
                self.lines.insert(0, Line("start", u, "start"))
        self.apply_findings()
        sub = []
        if wf.inputs:
            sub.append("inputs: " + ", ".join(p.name for p in wf.inputs))
        if wf.outputs:
            sub.append("outputs: " + ", ".join(b.name for b in wf.outputs))
        return Picture(
            title=f"{wf.name} ({wf.dialect})",
            subtitle=clip("  ·  ".join(sub), 120),
            boxes=tuple(self.boxes), lines=tuple(self.lines), top=tuple(top),
            clusters=tuple(clusters),
        )

    def scope(self, nodes, edges, top_level: bool = False, path: str = ""):
        """Boxes and lines of one scope (the workflow or a region)."""
        ids: dict[str, str] = {}
        here: list[str] = []
        clusters: list[Cluster] = []
        for node in nodes:
            uid = self.uid()
            ids.setdefault(node.id, uid)
            self.boxes.append(self.box(node, uid, top_level))
            self.placed.append((node, uid))
            here.append(uid)
        for node in nodes:
            uid = ids[node.id]
            for region in node.regions:
                cuid = self.uid("cluster_")
                inner, inner_clusters, inner_ids = self.scope(region.nodes, region.edges,
                                                              path=f"{path}{node.id}.")
                clusters.append(Cluster(cuid, f"{path}{node.id} · {region.name}", tuple(inner),
                                        tuple(inner_clusters)))
                targets = {e.target for e in region.edges}
                roots = [inner_ids[n.id] for n in region.nodes if n.id not in targets] or inner[:1]
                if roots:
                    self.lines.append(Line(uid, roots[0], "body", region.name, cuid))
        self.arms: dict[tuple[str, str | None], list[Edge]] = {}
        for e in edges:
            if e.kind is EdgeKind.BRANCH:
                self.arms.setdefault((e.source, e.label), []).append(e)
        for arm in self.arms.values():
            arm.sort(key=lambda e: e.order)
        for edge in edges:
            self.lines.append(self.line(edge, ids, here))
        self.lines.extend(self.layout_lines(edges, ids))
        return here, clusters, ids

    def line(self, edge: Edge, ids: dict[str, str], here: list[str]) -> Line:
        ends = []
        for end in (edge.source, edge.target):
            if end not in ids:   # an edge to a node that does not exist: show it as missing
                uid = self.uid()
                ids[end] = uid
                self.boxes.append(Box(uid, end, "missing", end, "(no such step)", status="error"))
                here.append(uid)
            ends.append(ids[end])
        label = ""
        if edge.kind is EdgeKind.BRANCH:
            label = edge.label or ""
            arm = self._arm(edge)
            if len(arm) > 1:   # number the steps of an arm that runs several, in run order
                label = f"{label} {arm.index(edge) + 1}".strip()
        elif edge.kind is EdgeKind.ERROR:
            label = edge.label or "on error"
        elif edge.label:
            label = edge.label
        return Line(ends[0], ends[1], edge.kind.value, label)

    def _arm(self, edge: Edge) -> list[Edge]:
        """The BRANCH edges of ``edge``'s arm, in run order."""
        return self.arms.get((edge.source, edge.label), [])

    def layout_lines(self, edges, ids: dict[str, str]) -> list[Line]:
        """Invisible lines that stack each branch arm's targets in the order
        they run and lead from its last target to where control continues
        after the branch, so arms are drawn between the branch and its
        successor (layout only; these are not IR edges)."""
        after: dict[str, str] = {}
        for e in edges:
            if e.kind in (EdgeKind.SEQUENCE, EdgeKind.FALLTHROUGH):
                after.setdefault(e.source, e.target)
        arms: dict[tuple[str, str], list[Edge]] = {}
        for e in edges:
            if e.kind is EdgeKind.BRANCH:
                arms.setdefault((e.source, e.label or ""), []).append(e)
        out = []
        for (source, _), arm in sorted(arms.items()):
            chain = [e.target for e in sorted(arm, key=lambda e: e.order)]
            nxt = after.get(source)
            if nxt:
                chain.append(nxt)
            for a, b in itertools.pairwise(chain):
                if a in ids and b in ids and a != b:
                    out.append(Line(ids[a], ids[b], "layout"))
        return out

    # ----------------------------------------------------------------- boxes
    def box(self, node: Node, uid: str, top_level: bool) -> Box:
        cat = category(node, self.wf if top_level else None)
        if cat == "terminal" and node.id.startswith("$"):
            return Box(uid, node.id, cat, node.id.lstrip("$"), "")
        op, detail = self.summary(node)
        return Box(uid, node.id, cat, node.id, op, tuple(detail), tuple(self.marks(node)))

    def show(self, e: E.Expr | None) -> str:
        return expr_text(e, self.dialect)

    def summary(self, node: Node) -> tuple[str, list[str]]:
        op = node.op
        detail: list[str] = []

        def lit(name: str) -> str:
            v = node.attr(name)
            if isinstance(v, E.Literal) and v.value is not None:
                return str(v.value)
            return self.show(v) if v is not None else ""

        if op == "call":
            name, cap, kind = lit("name"), lit("capability"), node.kind or ""
            head = " ".join(filter(None, ("call", cap, name)))
            derivable = kind in (cap, name, *_PLAIN_CALL_KINDS) or (
                cap and kind.startswith((cap + ".", cap + "_")))
            if not derivable:
                head += f" ({kind})"
            if node.actor:
                detail.append(f"as {node.actor}")
            for key in _CALL_ATTRS:
                v = node.attr(key)
                if v is not None:
                    detail.extend(self.wrapped(f"{key}: {self.show(v)}"))
                    break
            return clip(head, WIDTH * 2), detail[:DETAIL_LINES]
        if op in ("transform.filter", "transform.map"):
            body = node.attr("where") if op == "transform.filter" else None
            body = body if body is not None else node.attr("expr")
            m = node.attr("expression")
            if isinstance(m, E.MapExpr):
                keys = ", ".join(str(x.key.value) if isinstance(x.key, E.Literal) else self.show(x.key)
                                 for x in m.entries)
                return op, self.wrapped("{" + keys + "}")
            if isinstance(body, E.Lambda):
                body = body.body
            if body is not None:
                word = "where " if op == "transform.filter" else ""
                return op, self.wrapped(word + self.show(body))
            return op, detail
        if op == "transform.sort":
            field, direction = lit("field") or lit("by"), lit("direction")
            return clip(f"transform.sort by {field} {direction}".strip(), WIDTH * 2), detail
        if op == "branch":
            return "branch", self.wrapped("if " + self.show(node.attr("condition")))
        if op == "exit":
            status = lit("status")
            out = node.attr("output")
            shown = self.show(out) if out is not None and not (
                isinstance(out, E.Literal) and out.value is None) else ""
            return f"exit {status}".strip(), self.wrapped(shown) if shown else []
        head = op if node.kind in (op, "", None) or node.kind == op.rsplit(".", 1)[-1] \
            else f"{op} ({node.kind})"
        for name in _SUMMARY_ATTRS:
            v = node.attr(name)
            if v is not None:
                return head, self.wrapped(f"{name}: {self.show(v)}")
        return head, detail

    def wrapped(self, text: str) -> list[str]:
        return wrap(text, WIDTH, DETAIL_LINES)

    def marks(self, node: Node) -> list[str]:
        out = []
        if node.iteration is not None:
            it = node.iteration
            out.extend(wrap("each " + self.show(it.over), WIDTH + 6, 2))
            pace = []
            if it.delay_ms:
                pace.append(f"{it.delay_ms}ms between items")
            if it.max_parallel != 1:
                pace.append(f"{it.max_parallel} at once")
            if pace:
                out.append(", ".join(pace))
        if node.guard is not None:
            out.extend(wrap("when " + self.show(node.guard.expr), WIDTH + 6, 2))
        extra = []
        if node.retry is not None:
            extra.append(f"retry ×{node.retry.max_retries}")
        if node.on_error.action != "fail":
            target = f" → {node.on_error.target}" if node.on_error.target else ""
            extra.append(f"on error: {node.on_error.action}{target}")
        if extra:
            out.append(", ".join(extra))
        return out

    # -------------------------------------------------------------- findings
    def apply_findings(self) -> None:
        rank = {"": 0, "warning": 1, "error": 2, "unreachable": 3}
        status: dict[str, str] = {}
        notes: dict[str, list[str]] = {}
        for d in self.findings:
            uid = self.locate(d)
            if uid is None:
                continue
            if d.code == "ANA402":
                s = "unreachable"
            elif d.severity is Severity.ERROR:
                s = "error"
            elif d.severity is Severity.WARNING:
                s = "warning"
            else:
                s = ""
            if rank[s] > rank[status.get(uid, "")]:
                status[uid] = s
            notes.setdefault(uid, []).append(f"{d.code}: {d.message}")
        if not status and not notes:
            return
        self.boxes = [attrs.evolve(b, status=status.get(b.uid, b.status),
                                   findings=tuple(notes.get(b.uid, ())))
                      if b.uid in status or b.uid in notes else b for b in self.boxes]

    def locate(self, d: Diagnostic) -> str | None:
        """The innermost node whose span holds the finding's start."""
        s = d.span
        if not s.known:
            return None
        if self._located is None:
            self._located = _SpanIndex(self.placed)
        return self._located.innermost(s.file, (s.line, s.col))


def _holds(n, point: tuple[int, int]) -> bool:
    return (n.line, n.col) <= point < (n.end_line, n.end_col) or (n.line, n.col) == point


class _SpanIndex:
    """The placed nodes by where they start, each with the innermost node
    that holds its start: a finding is placed by a binary search and a few
    steps out, not by a scan of every node (thousands of findings on
    thousands of steps took minutes). Node spans nest like the YAML they
    come from, so the last node starting at or before a point, or one of
    the nodes holding it, is the innermost node holding the point."""

    def __init__(self, placed: list[tuple[Node, str]]) -> None:
        self.by_file: dict[str, tuple[list[tuple[int, int]], list[tuple]]] = {}
        rows: dict[str, list[tuple]] = {}
        for index, (node, uid) in enumerate(placed):
            n = node.span
            if node.id.startswith("$") or not n.known:
                continue
            # Same start: the larger first, so the smaller (inner) is met last;
            # same span: the first placed last, as the first placed wins.
            key = (n.line, n.col, -n.end_line, -n.end_col, -index)
            rows.setdefault(n.file or "", []).append((key, n, uid))
        for file, entries in rows.items():
            entries.sort(key=lambda row: row[0])
            starts = [(row[1].line, row[1].col) for row in entries]
            parents: list[int] = []
            stack: list[int] = []
            for i, (_, n, _uid) in enumerate(entries):
                while stack and not _holds(entries[stack[-1]][1], (n.line, n.col)):
                    stack.pop()
                parents.append(stack[-1] if stack else -1)
                stack.append(i)
            self.by_file[file] = (starts, [(n, uid, parent) for (_, n, uid), parent in zip(entries, parents)])

    def innermost(self, file: str | None, point: tuple[int, int]) -> str | None:
        # A finding or a node without a file matches any file.
        if not file:
            tables = list(self.by_file.values())
        else:
            tables = [self.by_file[f] for f in (file, "") if f in self.by_file]
        best = None
        for starts, nodes in tables:
            i = bisect.bisect_right(starts, point) - 1
            while i >= 0 and not _holds(nodes[i][0], point):
                i = nodes[i][2]
            if i >= 0:
                n = nodes[i][0]
                size = (n.end_line - n.line, n.end_col - n.col)
                if best is None or size < best[0]:
                    best = (size, nodes[i][1])
        return best[1] if best else None
