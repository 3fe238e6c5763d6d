"""Wiring types: infer what each step produces, check what each field receives.

The inference is deliberately forgiving: whatever it cannot know is
``any``, and ``any`` never produces a finding. What it can know (declared
types, declared outputs, arrays from `each`, transform results) it checks.
"""

from __future__ import annotations

from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.diagnostics import Diagnostic, error, warning
from flowc.ir.workflow import Node, Workflow

_BOOL_OPS = {"wfs.eq", "wfs.ne", "wfs.lt", "wfs.le", "wfs.gt", "wfs.ge", "wfs.contains",
             "wfs.and", "wfs.or", "wfs.not"}


def output_type(node: Node) -> T.Type:
    """The type of ``steps.<id>.output`` for a node."""
    if node.op.startswith("transform.") and node.attr("over") is not None:
        # The `over` form (instruction map/filter/sort/...): the result itself,
        # not wrapped in an object.
        return T.ARRAY if node.op in ("transform.map", "transform.filter", "transform.sort",
                                      "transform.dedupe", "transform.chunk") else T.ANY
    if node.op.startswith("transform."):
        if node.outputs:
            first = node.outputs[0].name
            fields = [(b.name, b.type if i else T.array_of(T.ANY) if b.type.kind != "array" else b.type)
                      for i, b in enumerate(node.outputs)]
            base = T.object_of(tuple(fields)) if any(b.value is not None for b in node.outputs) \
                else T.object_of(((first, T.ARRAY),))
        else:
            base = T.object_of((("items", T.ARRAY),))
    elif node.op == "call" and node.outputs:
        base = T.object_of(tuple((b.name, b.type) for b in node.outputs))
    else:
        base = T.ANY
    if node.iteration is not None:
        return T.array_of(base)
    return base


class _Checker:
    def __init__(self, workflow: Workflow) -> None:
        self.workflow = workflow
        self.inputs = {p.name: p.type for p in workflow.inputs}
        self.outputs = {n.id: output_type(n) for n in workflow.nodes}
        self.findings: list[Diagnostic] = []
        # JavaScript's `.length` of an array (WorkflowSkill) is its size.
        self.length_is_array_size = workflow.profile is not None and workflow.profile.array_length_field

    def type_of(self, expr: E.Expr) -> T.Type:
        if isinstance(expr, E.Literal):
            return T.of_value(expr.value)
        if isinstance(expr, E.Ref):
            return self.ref_type(expr)
        child_types = [self.type_of(child) for child in expr.children()]
        if isinstance(expr, (E.Binary, E.Unary)) and expr.op in _BOOL_OPS:
            return T.BOOL
        if isinstance(expr, E.Template):
            return child_types[0] if expr.typed_whole and child_types else T.STRING
        if isinstance(expr, E.MapExpr):
            return T.OBJECT
        if isinstance(expr, E.ListExpr):
            return T.ARRAY
        return T.ANY

    def ref_type(self, ref: E.Ref) -> T.Type:
        # `$inputs["a-b"]` names the input as `$inputs.a-b` would, were it spellable.
        path = [_as_field(seg) if i == 0 else seg for i, seg in enumerate(ref.path)]
        if ref.root == "inputs":
            if not path or not isinstance(path[0], E.Field):
                return T.OBJECT
            name = path.pop(0).name
            current = self.inputs.get(name, T.ANY)
            described = f"$inputs.{name}"
        elif ref.root == "steps":
            if len(path) < 2 or not isinstance(path[0], E.Field) or not isinstance(path[1], E.Field) \
                    or path[1].name != "output":
                return T.ANY
            step = path[0].name
            current = self.outputs.get(step, T.ANY)
            path = path[2:]
            described = f"$steps.{step}.output"
        elif ref.root == "index":
            return T.INT
        else:
            return T.ANY
        for seg in path:
            if current.kind == "any":
                return T.ANY
            if isinstance(seg, E.Field):
                if current.kind == "array":
                    if seg.name == "length" and self.length_is_array_size:
                        current, described = T.INT, described + ".length"
                        continue
                    self.findings.append(error(
                        "ANA504", f"{described} is an array; its field {seg.name!r} is always missing",
                        seg.span if seg.span.known else ref.span,
                        "index it ([0]) or reshape it with a transform"))
                    return T.ANY
                if current.kind == "object" and current.fields:
                    field = current.field(seg.name)
                    if field is None:
                        names = ", ".join(k for k, _ in current.fields)
                        self.findings.append(error(
                            "ANA503", f"{described} has no field {seg.name!r} (declared: {names})",
                            seg.span if seg.span.known else ref.span))
                        return T.ANY
                    current, described = field, f"{described}.{seg.name}"
                    continue
                return T.ANY
            # Index
            if current.kind == "array":
                current, described = current.item or T.ANY, described + "[...]"
                continue
            return T.ANY
        return current

    def check_binding(self, value: E.Expr | None, declared: T.Type, what: str) -> T.Type:
        if value is None:
            return T.ANY
        actual = self.type_of(value)
        if not T.is_assignable(actual, declared) and not _integral_literal(value, declared):
            self.findings.append(error("ANA501", f"{what} is declared {declared} but receives {actual}",
                                       value.span))
        return actual

    def run(self) -> list[Diagnostic]:
        for node in self.workflow.nodes:
            for b in node.inputs:
                self.check_binding(b.value, b.type, f"input {b.name!r} of step {node.id!r}")
            if node.op.startswith("transform.") and node.inputs and not any(
                    b.type.kind in ("array", "any") for b in node.inputs):
                self.findings.append(warning(
                    "ANA502", f"transform {node.id!r} has no array input; its first input is wrapped in a "
                    "one-element array", node.inputs[0].span))
            for b in node.outputs:
                if b.value is not None:
                    self.type_of(b.value)
            for attr in node.attrs:
                self.type_of_deep(attr.value)
            if node.guard is not None:
                self.type_of_deep(node.guard.expr)
            if node.iteration is not None:
                over = self.type_of(node.iteration.over)
                if over.kind not in ("any", "array", "null"):
                    self.findings.append(error("ANA502", f"`each` of step {node.id!r} must be an array, "
                                               f"not {over}", node.iteration.over.span))
        for b in self.workflow.outputs:
            self.check_binding(b.value, b.type, f"workflow output {b.name!r}")
        return self.findings

    def type_of_deep(self, expr: E.Expr) -> None:
        for sub in E.walk(expr):
            if isinstance(sub, E.Ref):
                self.ref_type(sub)


def _integral_literal(value: E.Expr, declared: T.Type) -> bool:
    return (declared.kind == "int" and isinstance(value, E.Literal)
            and isinstance(value.value, float) and value.value.is_integer())


def check_types(workflow: Workflow) -> list[Diagnostic]:
    return _Checker(workflow).run()


def _as_field(seg):
    """A constant string index as the field it selects."""
    if isinstance(seg, E.Index) and isinstance(seg.index, E.Literal) and isinstance(seg.index.value, str):
        return E.Field(seg.index.value, seg.span)
    return seg
