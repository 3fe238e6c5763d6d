"""The WorkflowSkill printer: a workflow with WorkflowSkill semantics -> a
SKILL.md with a ```workflow block.

The printer writes a workflow as YAML in the
dialect's own key order and idioms (``{ type: ..., value: ... }`` bindings,
``then: [a, b]``), inside the frontmatter and Markdown the workflow came
with. A workflow that already has WorkflowSkill semantics is printed as it
is, which makes ``translate --to workflowskill`` a canonical formatter.
"""

from __future__ import annotations

import unicodedata

from flowc.ir import expr as E
from flowc.ir.types import Type
from flowc.ir.workflow import EdgeKind, Node, Workflow
from flowc.translation import yamlout
from flowc.translation.report import Report, Untranslatable
from flowc.translation.workflowskill import text as P
from flowc.translation.yamlout import Comment, Flow, Spaced

__all__ = ["print_workflow"]

_TYPE_NAMES = {"string": "string", "int": "int", "float": "float", "bool": "boolean", "array": "array",
               "object": "object"}
_DEFAULT_BEFORE = "\n\n# {name}\n\n"


# ------------------------------------------------------------------ document
def print_workflow(wf: Workflow, report: Report, own_carrier: bool = False) -> str:
    """``own_carrier``: ``wf`` is printed as it came, not converted from
    another model (a workflow without frontmatter came as bare YAML or
    under a Markdown heading it keeps; a converted one gets frontmatter)."""
    printer = _Printer(wf, report)
    body = yamlout.dump(printer.document())
    meta = wf.metadata or {}
    markdown = meta.get("markdown") if isinstance(meta.get("markdown"), dict) else {}
    if own_carrier and not markdown and "frontmatter" not in meta:
        return body  # it came as a bare YAML workflow
    fm = _frontmatter(wf, own_carrier)
    out = []
    if fm is not None:
        out.append("---\n" + (yamlout.dump(fm) if fm else "") + "---")
    before = markdown.get("before")
    if not isinstance(before, str):
        before = _DEFAULT_BEFORE.format(name=_prose(wf.name, one_line=True))
        if fm is None:
            before = before.lstrip("\n")
        if wf.description and fm is None:
            before += _prose(wf.description.strip()) + "\n\n"
    out.append(before)
    out.append("```workflow\n" + body + "```")
    after = markdown.get("after")
    out.append(after if isinstance(after, str) else "\n")
    return "".join(out)


def _prose(text: str, one_line: bool = False) -> str:
    """Workflow text as Markdown prose around the block: backticks escaped
    (a fence in a name must not open or close the ```workflow block),
    control characters dropped, and with ``one_line`` every line break a
    space (a heading)."""
    if one_line:
        text = " ".join(text.split())
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")
    return text.replace("\\", "\\\\").replace("`", "\\`")


def _frontmatter(wf: Workflow, own_carrier: bool) -> dict | None:
    """The frontmatter mapping: the one the workflow came with (name and
    description updated), or name and description; None for a workflow
    that came without one."""
    meta = wf.metadata or {}
    fm = meta.get("frontmatter")
    if isinstance(fm, dict):
        fm = dict(fm)
        if _fm_name(fm) != wf.name:
            fm["name"] = wf.name
        if wf.description is not None and fm.get("description") != wf.description:
            fm["description"] = wf.description
        return fm
    if own_carrier:
        return None  # it had no frontmatter: the name comes from the file
    fm = {"name": wf.name}
    if wf.description:
        fm["description"] = wf.description
    return fm


def _fm_name(fm: dict):
    name = fm.get("name")
    return name if isinstance(name, str) and name.strip() else None


def type_name(t: Type) -> str:
    name = _TYPE_NAMES.get(t.kind)
    if name is None:
        raise Untranslatable(f"type {t} has no WorkflowSkill name")
    return name


class _Printer:
    def __init__(self, wf: Workflow, report: Report) -> None:
        self.wf = wf
        self.report = report
        self.arms: dict[str, dict[str, list[str]]] = {}
        for edge in sorted((e for e in wf.edges if e.kind is EdgeKind.BRANCH),
                           key=lambda e: (e.source, e.label or "", e.order)):
            self.arms.setdefault(edge.source, {}).setdefault(edge.label or "", []).append(edge.target)

    # ---------------------------------------------------------------- helpers
    def _try(self, fn, *args, span=None, fallback=None):
        try:
            return fn(*args)
        except Untranslatable as exc:
            self.report.finding("TRN101", exc.message, exc.span if exc.span.known else span)
            return fallback

    def _type(self, t: Type, span) -> str:
        try:
            return type_name(t)
        except Untranslatable as exc:
            self.report.finding("TRN101", exc.message, span)
            return "object"

    # ---------------------------------------------------------------- document
    def document(self):
        wf = self.wf
        doc: dict = {Comment(c): None for c in self.report.comments.get("", ())}
        if wf.inputs:
            doc["inputs"] = {p.name: self.param(p) for p in wf.inputs}
        if wf.outputs:
            doc["outputs"] = {b.name: self.output(b) for b in wf.outputs}
        doc["steps"] = Spaced([self.step(n) for n in wf.nodes if n.op != "end"])
        return Spaced(doc)

    def param(self, p) -> dict:
        out: dict = {"type": self._type(p.type, p.span)}
        if p.has_default:
            out["default"] = p.default
        if p.description is not None:
            out["description"] = p.description
        return out

    def output(self, b) -> dict:
        out: dict = {"type": self._type(b.type, b.span)}
        if b.value is not None:
            out["value"] = self._try(P.value, b.value, span=b.span, fallback="")
        return out

    def bindings(self, items) -> dict:
        out = {}
        for b in items:
            entry: dict = {"type": self._type(b.type, b.span)}
            if b.value is not None:
                entry["value"] = self._try(P.value, b.value, span=b.span,
                                           fallback=[] if b.type.kind == "array" else None)
            out[b.name] = Flow(entry)
        return out

    # ---------------------------------------------------------------- steps
    def step(self, node: Node) -> dict:
        out: dict = {}
        for comment in self.report.comments.get(node.id, ()):
            out[Comment(comment)] = None
        out["id"] = node.id
        out["type"] = _KIND_OF_OP.get(node.op, "tool")
        if node.description is not None:
            out["description"] = node.description
        kind = out["type"]
        if kind == "tool":
            name = node.attr("name")
            out["tool"] = name.value if isinstance(name, E.Literal) else ""
            self._guard(node, out)
        elif kind == "transform":
            self._transform(node, out)
            self._guard(node, out)
        elif kind == "conditional":
            cond = node.attr("condition")
            if cond is not None:
                out["condition"] = self._try(P.expression, cond, span=node.span, fallback="$inputs")
            arms = self.arms.get(node.id, {})
            out["then"] = Flow(list(arms.get("then", [])))
            if arms.get("else"):
                out["else"] = Flow(list(arms["else"]))
        else:
            self._guard(node, out)
            status = node.attr("status")
            if isinstance(status, E.Literal):
                out["status"] = status.value
            output = node.attr("output")
            if output is not None and not (isinstance(output, E.Literal) and output.value is None):
                out["output"] = self._exit_output(output, node)
        if node.iteration is not None:
            it = node.iteration
            out["each"] = self._try(P.expression, it.over, span=it.span, fallback="$inputs")
            if it.delay_ms:
                out["delay"] = _duration(it.delay_ms)
        if node.inputs or kind in ("conditional", "exit"):
            out["inputs"] = self.bindings(node.inputs)
        if node.outputs or kind in ("conditional", "exit"):
            out["outputs"] = self.bindings(node.outputs)
        if node.on_error.action != "fail":
            out["on_error"] = node.on_error.action
        if node.retry is not None:
            r = node.retry
            out["retry"] = {"max": r.max_retries, "delay": _duration(r.delay_ms), "backoff": float(r.backoff)}
        return out

    def _guard(self, node: Node, out: dict) -> None:
        if node.guard is not None:
            out["condition"] = self._try(P.expression, node.guard.expr, span=node.guard.span,
                                         fallback="$inputs")

    def _transform(self, node: Node, out: dict) -> None:
        op = node.op.split(".", 1)[1] if node.op.startswith("transform.") else "filter"
        out["operation"] = op
        if op == "filter":
            where = node.attr("where")
            if where is not None:
                out["where"] = self._try(P.expression, where, span=node.span, fallback="$item")
        elif op == "map":
            expr = node.attr("expression")
            if isinstance(expr, E.MapExpr):
                out["expression"] = self._map_expression(expr)
        elif op == "sort":
            field = node.attr("field")
            if isinstance(field, E.Literal):
                out["field"] = field.value
            direction = node.attr("direction")
            if isinstance(direction, E.Literal) and direction.value != "asc":
                out["direction"] = direction.value

    def _map_expression(self, m: E.MapExpr) -> dict:
        out = {}
        for entry in m.entries:
            key = entry.key.value if isinstance(entry.key, E.Literal) else str(entry.key)
            v = entry.value
            if isinstance(v, E.MapExpr):
                out[key] = self._map_expression(v)
            elif isinstance(v, E.Literal):
                if isinstance(v.value, str) and v.value.startswith("$"):
                    self.report.finding("TRN101", "a map expression value that is text starting with `$` has "
                                        "no WorkflowSkill form", v.span)
                out[key] = v.value
            else:
                text = self._try(P.expression, v, span=entry.span, fallback="$item")
                if not text.startswith("$"):
                    self.report.finding("TRN101", "a map expression value must start with a `$` reference "
                                        "in WorkflowSkill", v.span)
                out[key] = text
        return out

    def _exit_output(self, output: E.Expr, node: Node):
        if isinstance(output, E.MapExpr):
            out = {}
            for entry in output.entries:
                key = entry.key.value if isinstance(entry.key, E.Literal) else str(entry.key)
                out[key] = self._try(P.value, entry.value, span=entry.span, fallback="")
            return out
        return self._try(P.expression, output, span=node.span, fallback="$inputs")


_KIND_OF_OP = {"call": "tool", "transform.filter": "transform", "transform.map": "transform",
               "transform.sort": "transform", "branch": "conditional", "exit": "exit"}


def _duration(ms: int) -> str:
    return f"{ms // 1000}s" if ms % 1000 == 0 and ms else f"{ms}ms"
