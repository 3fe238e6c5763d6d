"""The aevatar printer: a workflow with aevatar semantics -> an aevatar
workflow YAML (roles + steps), written the way the seed writes them:
``name``, ``description``, ``roles``, ``steps``; each step ``id``,
``type``, ``target_role``, ``parameters`` (every value a string), ``next``,
``branches``, then the policies. Parameters lifted from a step's root by
the engine are written under ``parameters``, where the engine reads them
first.
"""

from __future__ import annotations

from flowc.ir import expr as E
from flowc.ir.workflow import Actor, EdgeKind, Node, Workflow
from flowc.translation import yamlout
from flowc.translation.aevatar import text as P
from flowc.translation.report import Report, Untranslatable
from flowc.translation.yamlout import Comment, Flow, Spaced

__all__ = ["print_workflow"]

# Role attributes in the order the seed writes them.
_ROLE_ORDER = ("system_prompt", "provider", "model", "temperature", "max_tokens", "max_tool_rounds",
               "max_history_messages", "stream_buffer_capacity", "agent_kind", "allowed_tools", "tool_sets",
               "connectors", "event_modules", "event_routes", "extensions")
# Workflow metadata the document carries at its top level.
_TOP_META = ("when_to_use", "configuration", "on_failure")


def print_workflow(wf: Workflow, report: Report) -> str:
    return yamlout.dump(_Printer(wf, report).document())


def _implicit(actor: Actor) -> bool:
    return any(a.name == "implicit" for a in actor.attrs)


class _Printer:
    def __init__(self, wf: Workflow, report: Report) -> None:
        self.wf = wf
        self.report = report
        self.implicit = {a.id for a in wf.actors if _implicit(a)}
        self.out_edges: dict[str, list] = {}
        for edge in wf.edges:
            self.out_edges.setdefault(edge.source, []).append(edge)

    def _text(self, fn, e: E.Expr, span=None) -> str:
        try:
            return fn(e)
        except Untranslatable as exc:
            self.report.finding("TRN101", exc.message, exc.span if exc.span is not None and exc.span.known
                                else span)
            return ""

    def document(self):
        wf = self.wf
        doc: dict = {Comment(c): None for c in self.report.comments.get("", ())}
        doc["name"] = wf.name
        if wf.description:
            doc["description"] = wf.description
        meta = wf.metadata or {}
        for key in _TOP_META:
            if key in meta:
                doc[key] = meta[key]
        roles = [self.role(a) for a in wf.actors if not _implicit(a)]
        if roles:
            doc["roles"] = Spaced(roles)
        doc["steps"] = Spaced([self.step(n) for n in wf.nodes])
        return Spaced(doc)

    def role(self, actor: Actor) -> dict:
        out: dict = {"id": actor.id}
        if actor.name is not None and actor.name != actor.id:
            out["name"] = actor.name
        values = {a.name: a.value for a in actor.attrs}
        for key in [*_ROLE_ORDER, *(k for k in values if k not in _ROLE_ORDER)]:
            v = values.get(key)
            if v is None:
                continue
            if isinstance(v, E.ListExpr):
                out[key] = Flow([i.value if isinstance(i, E.Literal) else "" for i in v.items])
            elif isinstance(v, E.Literal):
                out[key] = v.value
        return out

    # ---------------------------------------------------------------- steps
    def step(self, node: Node) -> dict:
        out: dict = {}
        for comment in self.report.comments.get(node.id, ()):
            out[Comment(comment)] = None
        out["id"] = node.id
        out["type"] = node.kind
        if node.actor is not None and node.actor not in self.implicit:
            out["target_role"] = node.actor
        params = node.attr("parameters")
        if isinstance(params, E.MapExpr) and params.entries:
            out["parameters"] = self.parameters(node, params)
        for a in node.attrs:
            if a.name == "timeout_ms" and isinstance(a.value, E.Literal):
                out["timeout_ms"] = a.value.value
            elif a.name == "compensation" and isinstance(a.value, E.Literal):
                out["compensation"] = a.value.value
            elif a.name == "allowed_tools" and isinstance(a.value, E.ListExpr):
                out["allowed_tools"] = Flow([i.value for i in a.value.items if isinstance(i, E.Literal)])
        edges = self.out_edges.get(node.id, [])
        nxt = [e.target for e in edges if e.kind is EdgeKind.SEQUENCE]
        if nxt:
            out["next"] = nxt[0]
        branches = self._branches(node, edges)
        if branches:
            out["branches"] = branches
        children = (self.wf.metadata or {}).get("children", {}).get(node.id)
        if children:
            out["children"] = children  # kept as written: the engine validates but never runs them
        on_error = self._on_error(node)
        if on_error:
            out["on_error"] = on_error
        if node.retry is not None:
            r = node.retry
            out["retry"] = {"max_attempts": r.max_retries + 1,
                            "backoff": "exponential" if r.backoff == 2.0 else "fixed",
                            "delay_ms": r.delay_ms}
        return out

    def parameters(self, node: Node, params: E.MapExpr) -> dict:
        deferred = node.op == "while"
        out = {}
        for entry in params.entries:
            key = entry.key.value if isinstance(entry.key, E.Literal) else ""
            v = entry.value
            if deferred and key == "condition" and not isinstance(v, E.Template):
                out[key] = self._text(P.expression, v, entry.span)
            else:
                out[key] = self._text(P.template, v, entry.span)
        return out

    def _branches(self, node: Node, edges) -> dict:
        on_fail = None
        params = node.attr("parameters")
        if node.op == "assert" and isinstance(params, E.MapExpr):
            for entry in params.entries:
                if isinstance(entry.key, E.Literal) and entry.key.value == "branch_target" \
                        and isinstance(entry.value, E.Literal):
                    on_fail = entry.value.value
        out = {}
        for e in sorted((e for e in edges if e.kind is EdgeKind.BRANCH), key=lambda e: e.order):
            if e.label == "on_fail" and e.target == on_fail:
                continue  # derived from on_fail: branch + branch_target
            out[e.label or ""] = e.target
        return out

    def _on_error(self, node: Node) -> dict:
        out: dict = {}
        policy = node.on_error
        if policy.action == "skip":
            out["strategy"] = "skip"
        elif policy.action == "fallback":
            out["strategy"] = "fallback"
            out["fallback_step"] = policy.target
        default = node.attr("default_output")
        if isinstance(default, E.Literal):
            out.setdefault("strategy", "fail")
            out["default_output"] = default.value
        return out
