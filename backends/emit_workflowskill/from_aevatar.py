"""aevatar IR -> WorkflowSkill IR.

The kernel's straight path (``next`` and document order) becomes the step
list; the run prompt is the input ``input`` and the run's output the output
``output`` (the last step's output); a step's ``${input}`` is the previous
step's output. WorkflowSkill has no roles, no variables and no functions:
an ``llm_call`` becomes a tool step (another host call: a finding), an
``assign`` or a function call has no form. :data:`STEP_RULES` lists what
translates.
"""

from __future__ import annotations

import itertools
import json

from flowc.backends.emitcore import Report
from flowc.backends.emitcore.kernel import parameters_of, straight_path, variable_sources
from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.ops import END_NODE_ID
from flowc.ir.span import Span
from flowc.ir.workflow import Attr, Binding, Edge, EdgeKind, Node, Param, Workflow

__all__ = ["STEP_RULES", "lower_aevatar"]

STEP_RULES = {
    "tool_call": "a tool step (constant JSON arguments become inputs)",
    "llm_call": "a tool step named llm.<role> (another host call: a finding)",
}


class AevatarToWfs:
    def __init__(self, report: Report, wf: Workflow) -> None:
        self.report = report
        self.step_ids, self.targets = variable_sources(wf)
        self.previous: str | None = None
        self.params: set[str] = set()

    def _finding(self, message: str, span: Span, code: str = "TRN101") -> None:
        self.report.finding(code, message, span)

    def input_ref(self, span: Span) -> E.Ref:
        if self.previous is None:
            return E.Ref("inputs", (E.Field("input"),), span)
        return E.Ref("steps", (E.Field(self.previous), E.Field("output")), span)

    def ref(self, e: E.Ref) -> E.Expr:
        if e.root == "input":
            return self.input_ref(e.span)
        if e.root == "steps" and len(e.path) >= 2 and isinstance(e.path[1], E.Field):
            sid, field = e.path[0].name, e.path[1].name
            if field == "output" and len(e.path) == 2:
                return E.Ref("steps", (E.Field(sid), E.Field("output")), e.span)
            if field == "json":
                self.report.lowered("steps.<id>.json.<f>", "a field of the step's output", e.span)
                return E.Ref("steps", (E.Field(sid), E.Field("output")) + e.path[2:], e.span)
        if e.root == "vars" and e.path and isinstance(e.path[0], E.Field):
            name = e.path[0].name
            if name in self.step_ids:
                return E.Ref("steps", (E.Field(name), E.Field("output")), e.span)
            if name not in self.targets:
                self.params.add(name)
                return E.Ref("inputs", (E.Field(name),), e.span)
        self._finding(f"{e.root} {'.'.join(getattr(s, 'name', '[]') for s in e.path)} has no WorkflowSkill form "
                      "(it has no variables)", e.span)
        return E.Literal("", "string", e.span)

    def value(self, e: E.Expr) -> E.Expr:
        if isinstance(e, E.Literal):
            return e
        if isinstance(e, E.Template):
            parts = []
            for p in e.parts:
                if isinstance(p, E.Literal):
                    parts.append(p)
                elif isinstance(p, E.Ref):
                    parts.append(self.ref(p))
                else:
                    self._finding(f"{getattr(p, 'func', None) or getattr(p, 'op', '')} has no WorkflowSkill form "
                                  "(WorkflowSkill has no functions)", p.span)
                    parts.append(E.Literal("", "string", p.span))
            return E.Template(tuple(parts), "wfs", len(parts) == 1 and not isinstance(parts[0], E.Literal), e.span)
        if isinstance(e, E.Ref):
            return self.ref(e)
        self._finding("this aevatar expression has no WorkflowSkill form", e.span)
        return E.Literal("", "string", e.span)


def _is(e, text: str) -> bool:
    return isinstance(e, E.Literal) and e.value == text


def lower_aevatar(wf: Workflow, report: Report) -> Workflow:
    path, problems = straight_path(wf)
    for node in problems:
        report.finding("TRN101", f"step {node.id!r}: branches, loops back, error fallbacks and steps off the "
                       "straight path have no translation yet; the steps are written in the order the kernel "
                       "runs them without choices", node.span)
    conv = AevatarToWfs(report, wf)
    nodes: list[Node] = []
    for node in path:
        report.current = node.id
        params = parameters_of(node)
        inputs: list[Binding] = []
        if node.op == "call" and _is(node.attr("capability"), "tool"):
            name = node.attr("name")
            tool = name.value if isinstance(name, E.Literal) else ""
            args = params.get("arguments")
            data = _json_object(args.value) if isinstance(args, E.Literal) else None
            if data is not None:
                inputs = [Binding(k, _type(v), E.Literal(v, _kind(v))) for k, v in data.items()]
                report.lowered("tool_call", STEP_RULES["tool_call"], node.span)
            else:
                report.finding("TRN102", "tool_call arguments that are not a constant JSON object are parsed at run "
                               "time by aevatar", node.span)
                inputs = [Binding("arguments", T.STRING, conv.value(args) if args is not None
                                  else conv.input_ref(node.span))]
            report.finding("TRN102", "an aevatar step's output is text (a tool's JSON result serialised); in "
                           "WorkflowSkill it is the result itself", node.span)
        elif node.op == "call" and _is(node.attr("capability"), "llm"):
            tool = f"llm.{node.actor or 'assistant'}"
            prefix = params.get("prompt_prefix")
            inputs = [Binding("prompt", T.STRING, conv.input_ref(node.span))]
            if prefix is not None:
                inputs.insert(0, Binding("prompt_prefix", T.STRING, conv.value(prefix)))
            report.finding("TRN104", "llm_call: WorkflowSkill has no roles or LLM steps; written as a tool step "
                           f"{tool!r}, which the host is asked for by another name and with other arguments",
                           node.span)
        else:
            tool = node.kind.strip().lower()
            report.finding("TRN101", f"{tool}: this aevatar primitive has no WorkflowSkill form; written as a tool "
                           "step of that name", node.span)
        if node.retry is not None:
            report.finding("TRN103", "retry: aevatar retries every failure but a timeout; WorkflowSkill only tool "
                           "errors", node.span)
        nodes.append(Node(node.id, "call", "tool", node.span, node.description,
                          attrs=(Attr("capability", E.Literal("tool", "string")), Attr("name", E.Literal(tool))),
                          inputs=tuple(inputs)))
        conv.previous = node.id
    report.current = ""
    nodes.append(Node(END_NODE_ID, "end", "end", wf.span))
    edges = tuple(Edge(a.id, b.id, EdgeKind.SEQUENCE) for a, b in itertools.pairwise(nodes))
    last = path[-1].id if path else None
    outputs = (Binding("output", T.STRING, E.Ref("steps", (E.Field(last), E.Field("output"))) if last
                       else E.Ref("inputs", (E.Field("input"),))),)
    report.lowered("the run's output", "the output `output` (the last step's output)", wf.span)
    inputs = [Param("input", T.STRING, "", True, "the run prompt")]
    inputs += [Param(p, T.STRING, "", True, "a run parameter") for p in sorted(conv.params)]
    return Workflow(name=wf.name, dialect=wf.dialect, semantics="workflowskill", nodes=tuple(nodes), edges=edges,
                    entry=(nodes[0].id,), terminal=END_NODE_ID, inputs=tuple(inputs), outputs=outputs,
                    description=wf.description or None,
                    metadata={"frontmatter": {"name": wf.name, **({"description": wf.description}
                                                                  if wf.description else {})}}, span=wf.span)


def _json_object(text):
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def _kind(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    return "list" if isinstance(v, list) else "object"


def _type(v) -> T.Type:
    return {"null": T.OBJECT, "bool": T.BOOL, "int": T.INT, "float": T.FLOAT, "string": T.STRING,
            "list": T.ARRAY, "object": T.OBJECT}[_kind(v)]
