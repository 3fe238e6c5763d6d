"""The instruction printer: workflows with instruction semantics -> an agentd
dialect-3 document: the top-level keys in the reference's order, the
``steps`` map in dependency order (ties by id), each step ``kind`` first,
then ``description``, ``depends_on``, ``when``, the kind's fields, bodies,
and the cross-cutting policies. A workflow keeps the carrier it came in
(standalone file, ``workflows:`` config entry, ``:::!workflow`` container
or ``## !workflow`` section).
"""

from __future__ import annotations

from flowc.ir import expr as E
from flowc.ir.workflow import EdgeKind, Node, Region, Workflow
from flowc.translation import yamlout
from flowc.translation.instruction import text as P
from flowc.translation.instruction.flags import CEL_FIELDS, MAX_ITERATIONS
from flowc.translation.report import Report, Untranslatable
from flowc.translation.yamlout import Comment, Flow, Spaced

__all__ = ["print_document", "print_workflow"]

_TOP_META = ("version", "armed", "state", "concurrency", "limits", "priority", "unload", "durable")
_COMMON_EXTRA = ("on_replay", "idempotent", "budget", "skills", "cache", "otel", "output_schema")


def print_document(workflows: list[Workflow], report: Report) -> str:
    carrier = _carrier(workflows[0]) if workflows else "standalone"
    if carrier == "config" or (carrier == "standalone" and len(workflows) > 1):
        doc = {"config_version": "2",
               "workflows": Spaced([_Printer(wf, report).document(with_name=True) for wf in workflows])}
        return yamlout.dump(doc)
    if carrier in ("container", "section"):
        return "\n".join(_markdown_block(wf, report) for wf in workflows)
    return "\n".join(yamlout.dump(_Printer(wf, report).document(with_name=True)) for wf in workflows)


def print_workflow(wf: Workflow, report: Report) -> str:
    return print_document([wf], report)


def _carrier(wf: Workflow) -> str:
    carrier = (wf.metadata or {}).get("carrier")
    return carrier if carrier in ("standalone", "config", "container", "section") else "standalone"


def _markdown_block(wf: Workflow, report: Report) -> str:
    carrier = _carrier(wf)
    printer = _Printer(wf, report)
    if carrier == "container":
        body = yamlout.dump(printer.document(with_name=False))
        return f":::!workflow{{name={wf.name}}}\n{body}:::\n"
    description = wf.description or ""
    prose = _is_prose(description)
    body = yamlout.dump(printer.document(with_name=False, with_description=not prose))
    return f"## !workflow {wf.name}\n\n" + (description + "\n\n" if prose else "") + f"```yaml\n{body}```\n"


# A line of prose must not start what the section reader (or a Markdown
# renderer) takes for structure: a heading, a code fence, a container, HTML.
_STRUCTURE = ("#", "`", "~", ":", "<")
_BREAKS = frozenset("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def _is_prose(text: str) -> bool:
    """Can a section's description be written as the prose before its
    block, reading back as the same text? Otherwise it goes in the YAML
    (where a description wins over the prose): a description holding a
    fence or a heading, written as prose, would open a block or a section
    of its own and change the document's workflows."""
    if not text or text != text.strip() or any(ch in _BREAKS or (ch < " " and ch not in "\n\t") for ch in text):
        return False
    return not any(line.lstrip().startswith(_STRUCTURE) for line in text.split("\n"))


def _duration(ms: int) -> str:
    for unit, size in (("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def _topological(nodes: tuple[Node, ...], edges) -> list[Node]:
    """Dependencies before dependents. Among the steps that are ready, the
    one met first by a walk from the start nodes (switch cases in case
    order, dependents by id) comes first, so the order follows the graph
    and depends only on it."""
    by_id = {n.id: n for n in nodes}
    preds: dict[str, set[str]] = {n.id: set() for n in nodes}
    succ: dict[str, list[tuple]] = {n.id: [] for n in nodes}
    for e in edges:
        if e.source in by_id and e.target in by_id:
            if e.kind is EdgeKind.DEPENDENCY:
                preds[e.target].add(e.source)
            rank = (0, e.order, "") if e.kind is EdgeKind.BRANCH else (1, 0, e.target)
            succ[e.source].append((rank, e.target))
    seen: dict[str, int] = {}
    roots = sorted(i for i in by_id if not preds[i])
    stack = list(reversed(roots))
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen[current] = len(seen)
        stack.extend(t for _, t in sorted(succ[current], reverse=True) if t not in seen)
    for i in sorted(by_id):
        seen.setdefault(i, len(seen))
    done: list[Node] = []
    placed: set[str] = set()
    remaining = sorted(by_id, key=seen.__getitem__)
    while remaining:
        first = next((i for i in remaining if preds[i] <= placed), remaining[0])
        done.append(by_id[first])
        placed.add(first)
        remaining.remove(first)
    return done


class _Printer:
    def __init__(self, wf: Workflow, report: Report) -> None:
        self.wf = wf
        self.report = report

    def _try(self, fn, e, span=None, fallback=""):
        try:
            return fn(e)
        except Untranslatable as exc:
            self.report.finding("TRN101", exc.message, exc.span if exc.span.known else span)
            return fallback

    # ---------------------------------------------------------------- document
    def document(self, with_name: bool = True, with_description: bool = True) -> Spaced:
        wf = self.wf
        meta = wf.metadata or {}
        doc: dict = {Comment(c): None for c in self.report.comments.get("", ())}
        if with_name:
            doc["name"] = wf.name
        if "version" in meta:
            doc["version"] = meta["version"]
        if with_description and wf.description:
            doc["description"] = wf.description
        if meta.get("armed") is False:
            doc["armed"] = False
        if "inputs_schema" in meta:
            doc["inputs"] = {"schema": meta["inputs_schema"]}
        elif wf.inputs:
            doc["inputs"] = {"schema": P.inputs_schema(wf)}
        if "outputs_schema" in meta:
            doc["outputs"] = {"schema": meta["outputs_schema"]}
        for key in _TOP_META[2:]:
            if key in meta:
                doc[key] = meta[key]
        doc["steps"] = self.steps(wf.nodes, wf.edges)
        return Spaced(doc)

    def steps(self, nodes, edges) -> Spaced:
        # Each step's own edges, indexed once: a scan of every edge per
        # step made a 10,000-step translation quadratic (minutes).
        own: dict[str, list] = {}
        for e in edges:
            if e.kind is EdgeKind.DEPENDENCY:
                own.setdefault(e.target, []).append(e)
            elif e.kind is EdgeKind.BRANCH:
                own.setdefault(e.source, []).append(e)
        out = {}
        for node in _topological(nodes, edges):
            out[node.id] = self.step(node, own.get(node.id, ()))
        return Spaced(out)

    # ---------------------------------------------------------------- steps
    def step(self, node: Node, edges) -> dict:
        """``edges``: the dependency edges into ``node`` and the branch
        edges out of it."""
        out: dict = {}
        for comment in self.report.comments.get(node.id, ()):
            out[Comment(comment)] = None
        out["kind"] = node.kind
        if node.description is not None:
            out["description"] = node.description
        deps = sorted((e for e in edges if e.kind is EdgeKind.DEPENDENCY and e.target == node.id),
                      key=lambda e: e.order)
        if deps:
            out["depends_on"] = Flow([e.source for e in deps])
        if node.guard is not None:
            out["when"] = self._try(_cel_text, node.guard.expr, node.guard.span, "false")
        if node.inputs:
            out["inputs"] = {b.name: self.value(b.value) for b in node.inputs}
        if node.iteration is not None and node.op == "foreach":
            out["over"] = self.value(node.iteration.over)
        self.kind_fields(node, out)
        if node.op == "switch":
            self.cases(node, edges, out)
        self.regions(node, out)
        if node.retry is not None:
            retry: dict = {"max": node.retry.max_retries}
            if node.retry.delay_ms:
                retry["backoff"] = _duration(node.retry.delay_ms)
            out["retry"] = Flow(retry)
        if node.on_error.action == "continue":
            out["on_error"] = "continue"
        elif node.on_error.action == "goto":
            out["on_error"] = f"goto:{node.on_error.target}"
        return out

    def kind_fields(self, node: Node, out: dict) -> None:
        kind = node.kind
        names = [a.name for a in node.attrs]
        for i, a in enumerate(node.attrs):
            name, v = a.name, a.value
            if node.op == "call" and name in ("capability", "name") and i < 2:
                continue
            if name in ("truthiness", "ordering") or (name == "as" and kind == "foreach"):
                if name == "as":
                    out["as"] = v.value
                continue
            if name == "on_error" and isinstance(v, E.Literal):
                out["on_error"] = v.value
            elif name == "timeout_ms" and isinstance(v, E.Literal) and "timeout" not in out:
                out["timeout"] = _duration(v.value)
            elif name in _COMMON_EXTRA and name not in out:
                out[name] = self.value(v) if name == "cache" else _plain(v)
            elif kind == "sleep" and name == "duration_ms" and isinstance(v, E.Literal):
                out["duration"] = _duration(v.value)
            elif kind == "finish" and name == "status" and isinstance(v, E.Literal):
                kind_attrs = [n for n in names if n not in ("on_error", "timeout_ms", *_COMMON_EXTRA)]
                if not (v.value == "completed" and kind_attrs and kind_attrs[0] == "status"):
                    out["status"] = v.value
            elif kind in ("map", "filter", "reduce") and name == "expr" and isinstance(v, E.Lambda):
                item = v.params[1] if kind == "reduce" else v.params[0]
                if item != "item":
                    out["as"] = item
                if kind == "reduce" and v.params[0] != "acc":
                    out["acc"] = v.params[0]
                out["expr"] = self._try(_cel_text, v.body, a.span, "null")
            elif kind == "sort" and name == "direction" and isinstance(v, E.Literal):
                if v.value != "asc":
                    out["order"] = v.value
            elif kind == "iterate" and name == "max_iterations" and isinstance(v, E.Literal):
                if v.value != MAX_ITERATIONS:
                    out["max_iterations"] = v.value
            elif kind == "template" and name == "text":
                if isinstance(v, (E.Template, E.Literal)) and not (isinstance(v, E.Literal)
                                                                   and not isinstance(v.value, str)):
                    out["text"] = self.value(v, force_string=True)
                else:  # `text` must be a string in YAML: a computed or typed one is CEL
                    out["text"] = self._try(_prefixed_cel, v, a.span, "CEL: null")
            elif (kind, name) in CEL_FIELDS:
                if isinstance(v, E.Literal) and isinstance(v.value, bool):
                    out[name] = v.value
                else:
                    out[name] = self._try(_cel_text, v, a.span, "null")
            else:
                out[name] = self.value(v)

    def cases(self, node: Node, edges, out: dict) -> None:
        branch = sorted((e for e in edges if e.kind is EdgeKind.BRANCH and e.source == node.id),
                        key=lambda e: (e.label == "$default", e.order))
        cases = {e.label: e.target for e in branch if e.label != "$default"}
        if cases:
            out["cases"] = cases
        for e in branch:
            if e.label == "$default":
                out["default"] = e.target

    def regions(self, node: Node, out: dict) -> None:
        if not node.regions:
            return
        if node.op in ("parallel", "race"):
            out["branches"] = {r.name: self.graph(r) for r in node.regions}
        else:
            for r in node.regions:
                out[r.name] = self.graph(r)

    def graph(self, region: Region) -> dict:
        return {"steps": self.steps(region.nodes, region.edges)}

    # ---------------------------------------------------------------- values
    def value(self, e: E.Expr | None, force_string: bool = False):
        """A kind field's value: YAML data, a template, or ``CEL: ...``."""
        if e is None:
            return None
        if isinstance(e, E.Literal):
            if e.kind in ("uint", "bytes"):
                return self._try(_prefixed_cel, e, e.span, "CEL: null")
            if isinstance(e.value, str) and (e.value.lstrip().startswith("CEL:") or
                                             ("{{" in e.value and not _passthrough_only(e.value))):
                # Text that would read as CEL or as a template: write it as a CEL string.
                return "CEL: " + P.string(e.value)
            return e.value
        if isinstance(e, E.Template):
            text = self._try(P.template, e, e.span, "")
            if force_string and e.typed_whole:
                return text
            return text
        if isinstance(e, E.MapExpr) and all(isinstance(m.key, E.Literal) and isinstance(m.key.value, str)
                                            for m in e.entries) \
                and any(not isinstance(m.value, E.Literal) for m in e.entries):
            return {m.key.value: self.value(m.value) for m in e.entries}
        if isinstance(e, E.ListExpr) and any(not isinstance(i, E.Literal) for i in e.items):
            return [self.value(i) for i in e.items]
        return self._try(_prefixed_cel, e, e.span, "CEL: null")


def _cel_text(e: E.Expr, prefix: str = "") -> str:
    """``prefix`` and ``e`` in CEL: one line when short, else laid out over
    several lines (printer.cel_lines), which the YAML writer puts in a
    literal block (``|-``) where a reader gets the same string back."""
    lines = P.cel_lines(e, len(prefix))
    text = prefix + "\n".join(lines)
    if len(lines) > 1 and not yamlout.is_block_safe(text):
        # Characters a literal block cannot hold would make the writer
        # quote the text with `\n` escapes: one line reads better.
        return prefix + P.cel(e)
    return text


def _prefixed_cel(e: E.Expr) -> str:
    return _cel_text(e, "CEL: ")


def _passthrough_only(text: str) -> bool:
    """Does every ``{{`` of ``text`` open a ``secret:``/``secret-file:``/``config.`` passthrough?"""
    import re

    pos = 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            return True
        end = text.find("}}", start + 2)
        if end < 0 or not re.match(r"^\s*(secret:|secret-file:|config\.)", text[start + 2:end]):
            return False
        pos = end + 2


def _plain(e: E.Expr):
    if isinstance(e, E.Literal):
        return e.value
    raise Untranslatable("a computed value where the dialect takes data")


