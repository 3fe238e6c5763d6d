"""The sequential scheduling model (WorkflowSkill's) -> a dialect-3 dependency graph.

The run starts at a ``manual`` trigger. Top-level steps become a chain of
``depends_on`` edges; a step after one that may be pruned (a guard) also
depends on the chain's anchor, because in dialect 3 a step all of whose
dependencies are pruned is pruned too, while in WorkflowSkill the next
step still runs. Each construct's translation is recorded as a lowering
where it is made, and each operator's rule is in
:data:`.wfs_cel.OPERATOR_RULES` (expressions are rewritten by
:mod:`.wfs_cel`); docs/translation.md lists them.

Shapes that differ are rebuilt exactly with small ``template`` steps that
keep the source step's id (so ``steps.<id>.output`` means the same):

- a tool step with output mappings or ``on_error: ignore``: the call is
  ``<id>_call`` and ``<id>`` maps its result (``{k: result.f}``, or null
  after an ignored failure);
- a transform: the operation is ``<id>_items`` and ``<id>`` is
  ``{"items": ...}`` (WorkflowSkill's transform result);
- a conditional: a ``switch`` (``<id>_switch``) routes to a ``noop`` entry
  of each arm; ``<id>`` joins the arms and takes the output of the last
  listed step of the arm that ran;
- an exit: ``finish`` with the declared outputs; the end: a ``finish``
  that resolves the workflow outputs as WorkflowSkill does.

A path WorkflowSkill may read as *undefined* (a field of a value that is
not an object, an absent key, a step that has not run) is written with a
test and read as null otherwise (:mod:`.absent`); an undefined argument or
object key is left out, as WorkflowSkill leaves it out. Declared step
output types are checked after the call, as WorkflowSkill checks them.
"""

from __future__ import annotations

import attrs
from flowc.ir import expr as E
from flowc.ir.span import Span
from flowc.ir.workflow import (
    Attr,
    Edge,
    EdgeKind,
    ErrorPolicy,
    Guard,
    Iteration,
    Node,
    Param,
    Region,
    RetryPolicy,
    Workflow,
)
from flowc.translation.control.sequence import SequenceGraph
from flowc.translation.instruction import absent
from flowc.translation.instruction import text as P
from flowc.translation.instruction.flags import PROFILE
from flowc.translation.instruction.graph import DependencyGraph, workflow_name
from flowc.translation.instruction.wfs_cel import Converted, WfsToCel, lit
from flowc.translation.kinds import ANY, ARRAY, NUMBER, OBJECT, Kinds
from flowc.translation.report import Report

__all__ = ["lower_sequence"]


def _attr(name: str, value: E.Expr) -> Attr:
    return Attr(name, value)


class _Lowering:
    def __init__(self, wf: Workflow, report: Report) -> None:
        self.wf = wf
        self.report = report
        self.kinds = Kinds(wf)
        self.cel = WfsToCel(report, self.kinds)
        self.by_id = wf.node_map()
        self.control = SequenceGraph(wf)
        self.arms = self.control.arms
        # Steps whose output may be null: skipped by a guard, or failed under on_error: ignore.
        self.cel.guarded = {n.id for n in wf.nodes if n.guard is not None or n.on_error.action == "ignore"}
        self.cel.sources = set(self.by_id)
        self.cel.int_inputs = {p.name for p in wf.inputs if p.type.kind == "int"}
        self.cel.each_steps = {n.id for n in wf.nodes if n.iteration is not None}
        self.cel.raw_steps = {n.id for n in wf.nodes if n.op == "call" and not any(
            b.value is not None for b in n.outputs)}
        # A transform that always runs has its result array under its first output's key.
        self.cel.transform_results = {
            n.id: n.outputs[0].name if n.outputs else "items" for n in wf.nodes
            if n.op.startswith("transform.") and n.id not in self.cel.guarded and n.iteration is None}
        self.placed: set[str] = set()

    def run(self) -> Workflow:
        wf = self.wf
        graph = DependencyGraph({n.id for n in wf.nodes})
        start = graph.fresh("start")
        graph.add(Node(start, "trigger", "manual", wf.span), [])
        self.report.lowered("run start", "a manual trigger", wf.span)
        chain = self.control.chain()
        last, may_prune = self.sequence(graph, [i for i in chain if self.by_id[i].op != "end"], start, start)
        self.report.current = ""
        if not chain or self.by_id[chain[-1]].op == "end":
            done = graph.fresh("done")
            deps = [last] + ([start] if may_prune else [])
            graph.add(Node(done, "finish", "finish", wf.span,
                           attrs=(_attr("status", lit("completed")), _attr("output", self.outputs(last)))), deps)
            self.report.lowered("workflow outputs", "a finish step that resolves them", wf.span)
        params = tuple(Param(p.name, p.type, p.default, p.has_default, p.description, p.span) for p in wf.inputs)
        meta = {"carrier": "standalone", "armed": True}
        if wf.inputs:
            meta["inputs_schema"] = P.inputs_schema(wf, nullable=True)
        return Workflow(name=workflow_name(wf.name, self.report, wf.span), dialect=wf.dialect,
                        semantics=PROFILE.name, nodes=tuple(sorted(graph.nodes, key=lambda n: n.id)),
                        edges=tuple(graph.edges), entry=(start,), terminal=None, inputs=params, outputs=(),
                        description=wf.description, metadata=meta, span=wf.span)

    # ---------------------------------------------------------------- sequences
    def sequence(self, graph: DependencyGraph, ids: list[str], prev: str, anchor: str) -> tuple[str, bool]:
        """Chain ``ids`` after ``prev``; returns the last step and whether it may be pruned."""
        may_prune = False
        for sid in ids:
            node = self.by_id[sid]
            if sid in self.placed:
                self.report.finding("TRN101", f"step {sid!r} runs in more than one place (it is listed in "
                                    "several branch arms); dialect 3 steps run once", node.span)
                continue
            self.placed.add(sid)
            self.report.current = sid
            deps = [prev] + ([anchor] if may_prune else [])
            prev = self.step(graph, node, deps)
            self.cel.ready.add(sid)
            may_prune = node.guard is not None
        return prev, may_prune

    def step(self, graph: DependencyGraph, node: Node, deps: list[str]) -> str:
        """``node`` lowered by its op family (:data:`_OP_LOWERINGS`); returns the id later steps depend on."""
        lowering = _OP_LOWERINGS.get(node.op.partition(".")[0], _Lowering.no_form)
        return lowering(self, graph, node, deps)

    def no_form(self, graph: DependencyGraph, node: Node, deps: list[str]) -> str:
        self.report.finding("TRN101", f"operation {node.op} has no instruction form", node.span)
        graph.add(Node(node.id, "noop", "noop", node.span), deps)
        return node.id

    def _guard(self, node: Node) -> Guard | None:
        if node.guard is None:
            return None
        self.report.lowered("guard", "`when` (with the chain kept alive past a pruned step)", node.guard.span)
        return Guard(self.cel.truthy(node.guard.expr, node.guard.truthiness), "cel_bool", node.guard.span,
                     on_false="prune")

    def _policies(self, node: Node) -> tuple[RetryPolicy | None, list[str]]:
        if node.retry is not None:
            self.report.finding("TRN103", "retry: WorkflowSkill retries tool errors only and waits delay * "
                                f"backoff^(k-1) ({node.retry.backoff:g}); dialect 3 retries any failure and "
                                "doubles the wait with +-20% jitter", node.retry.span if node.retry.span.known
                                else node.span)
            return RetryPolicy(node.retry.max_retries, node.retry.delay_ms, 2.0, "any", node.retry.span, 0.2), []
        return None, []

    # ---------------------------------------------------------------- tools
    def tool(self, graph: DependencyGraph, node: Node, deps: list[str]) -> str:
        name = node.attr("name")
        tool_name = name.value if isinstance(name, E.Literal) else ""
        self.cel.scope = {}
        item_scope = node.iteration is not None
        if item_scope:
            self.cel.scope = {"item": ANY, "index": NUMBER}
        args = self.cel.object([(b.name, b.value) for b in node.inputs if b.value is not None], node.span,
                               self.value)
        retry, _ = self._policies(node)
        mapped = any(b.value is not None for b in node.outputs)
        checked = bool(self.declared_types(node))
        ignore = node.on_error.action == "ignore"
        guard = self._guard(node)
        call_attrs = (_attr("capability", lit("tool")), _attr("name", lit(tool_name)),
                      _attr("name", lit(tool_name)), _attr("args", _args_value(args)))
        if node.iteration is None:
            if not (mapped or ignore or checked):
                graph.add(Node(node.id, "call", "tool", node.span, node.description, attrs=call_attrs,
                               guard=guard, retry=retry), deps)
                return node.id
            call_id = graph.fresh(f"{node.id}_call")
            graph.add(Node(call_id, "call", "tool", node.span, node.description, attrs=call_attrs, guard=guard,
                           retry=retry, on_error=ErrorPolicy("continue" if ignore else "fail")), deps)
            self.report.lowered("step outputs" if mapped or checked else "on_error: ignore",
                                "a template step that maps the call's result", node.span)
            before = call_id
            if checked and not ignore:
                # WorkflowSkill fails the step when an output has another type than declared.
                before = graph.fresh(f"{node.id}_check")
                graph.add(Node(before, "assert", "assert", node.span, attrs=(
                    _attr("condition", self.types_hold(node, call_id)),
                    _attr("message", lit(f"step {node.id!r}: an output has another type than declared")))),
                    [call_id])
                self.report.lowered("declared output types", "an assert on the types", node.span)
            graph.add(Node(node.id, "assign", "template", node.span,
                           attrs=(_attr("value", self.result_value(node, call_id, ignore)),)), [before])
            return node.id
        # each: a foreach whose body calls the tool once per item
        over = self.value(node.iteration.over)
        self.report.lowered("each", "foreach with the call in its body", node.iteration.span)
        if node.iteration.delay_ms:
            self.report.finding("TRN103", f"delay: dialect 3 has no pause between foreach items "
                                f"({node.iteration.delay_ms} ms are not waited)", node.iteration.span)
        body = DependencyGraph(set())
        body.add(Node("call", "call", "tool", node.span, attrs=call_attrs, retry=retry,
                      on_error=ErrorPolicy("continue")), [])
        if ignore:
            # A failed item is null and the loop goes on: the body never fails.
            body.add(Node("result", "assign", "template", node.span,
                          attrs=(_attr("value", self.result_value(node, "call", True)),)), ["call"])
            graph.add(Node(node.id, "foreach", "foreach", node.span, node.description, guard=guard,
                           iteration=Iteration(over, "item", "index", 0, 1, "fail", node.iteration.span),
                           regions=(Region("body", tuple(body.nodes), tuple(body.edges), node.span),)), deps)
            return node.id
        # on_error: fail: every item runs (a failed one is null), then the step
        # fails if one did. The body gives {result, failed} per item; a check
        # after the loop fails the step, and <id> keeps the results.
        self.report.lowered("each with on_error: fail", "items that cannot fail the loop, then a check",
                            node.iteration.span)
        body.add(Node("result", "assign", "template", node.span,
                      attrs=(_attr("value", self.result_value(node, "call", True)),)), ["call"])
        body.add(Node("failed", "assign", "template", node.span,
                      attrs=(_attr("value", self.item_failed(node, "call")),)), ["call"])
        loop_id = graph.fresh(f"{node.id}_items")
        graph.add(Node(loop_id, "foreach", "foreach", node.span, node.description, guard=guard,
                       iteration=Iteration(over, "item", "index", 0, 1, "fail", node.iteration.span),
                       regions=(Region("body", tuple(body.nodes), tuple(body.edges), node.span),)), deps)
        results = E.Ref("steps", (E.Field(loop_id), E.Field("output")))
        check_id = graph.fresh(f"{node.id}_check")
        none_failed = E.Unary("cel.not", E.Call("cel.exists", (results, E.Lambda(("r",), E.Ref(
            "r", (E.Field("failed"),))))))
        graph.add(Node(check_id, "assert", "assert", node.span, attrs=(
            _attr("condition", none_failed), _attr("message", lit(f"step {node.id!r}: an item failed")))),
            [loop_id])
        graph.add(Node(node.id, "assign", "template", node.span, attrs=(_attr("value", E.Call(
            "cel.map", (results, E.Lambda(("r",), E.Ref("r", (E.Field("result"),)))))),)), [check_id])
        return node.id

    @staticmethod
    def declared_types(node: Node) -> list[tuple[str, str]]:
        """The outputs whose declared type WorkflowSkill checks after the step (codegen._dispatch)."""
        return [(b.name, b.type.kind) for b in node.outputs if b.type.kind in _TYPE_TESTS]

    def _output_entries(self, node: Node, raw: E.Ref) -> list[tuple[str, E.Expr | Converted]]:
        """The mapped step output's entries: a mapped value, or the raw
        result's key (null when absent or the result is no object)."""
        entries: list[tuple[str, E.Expr | Converted]] = []
        for b in node.outputs:
            if b.value is not None:
                entries.append((b.name, b.value))
            else:
                entries.append((b.name, Converted(_key_or_null(raw, b.name))))
        return entries

    def types_hold(self, node: Node, call_id: str) -> E.Expr:
        """Do the step's outputs have their declared types (null and absent
        outputs always do)? Over the mapped output, or the raw result when
        it is an object."""
        raw = E.Ref("steps", (E.Field(call_id), E.Field("output")))
        declared = self.declared_types(node)
        self.cel.result_ref = raw
        try:
            if any(b.value is not None for b in node.outputs):
                values = {}
                for key, value in self._output_entries(node, raw):
                    values[key] = value.expr if isinstance(value, Converted) else self.cel.expr(value)
                tests = [_type_test(values[name], kind) for name, kind in declared]
                return _all(tests)
            tests = [_type_test(_key_or_null(raw, name), kind) for name, kind in declared]
            return E.Binary("cel.or", E.Unary("cel.not", absent.type_is(raw, "map")), _all(tests))
        finally:
            self.cel.result_ref = None

    def item_failed(self, node: Node, call_id: str) -> E.Expr:
        """Did the call fail, or its outputs break their declared types?"""
        failed: E.Expr = E.Binary("cel.ne", E.Ref("steps", (E.Field(call_id), E.Field("error"))),
                                  E.Literal(None, "null"))
        if self.declared_types(node):
            failed = E.Binary("cel.or", failed, E.Unary("cel.not", self.types_hold(node, call_id)))
        return failed

    def result_value(self, node: Node, call_id: str, ignore: bool) -> E.Expr:
        """The step's output from the call's raw result (WorkflowSkill's output mapping)."""
        raw = E.Ref("steps", (E.Field(call_id), E.Field("output")))
        self.cel.result_ref = raw
        if any(b.value is not None for b in node.outputs):
            value: E.Expr = self.cel.object(self._output_entries(node, raw), node.span)
        else:
            value = raw
        self.cel.result_ref = None
        if ignore:
            value = E.Conditional("cel.ternary", self.item_failed(node, call_id), E.Literal(None, "null"), value,
                                  node.span)
        return value

    def value(self, e: E.Expr) -> E.Expr:
        """A value position: data stays data, a lone reference becomes a
        ``{{ path }}`` template (which keeps the value's type)."""
        if isinstance(e, E.Literal):
            return e
        if isinstance(e, E.Ref) and self.cel.missing(e) is not None:
            self.cel.expr(e)  # reports what the path needs reported
            path = self.cel.placeholder(e)
            if path is not None:
                return E.Template((path,), "json", True, e.span)
        out = _as_data(self.cel.expr(e))
        if isinstance(out, E.Ref) and all(isinstance(s, E.Field) or (
                isinstance(s.index, E.Literal) and isinstance(s.index.value, int)) for s in out.path):
            return E.Template((out,), "json", True, out.span)
        return out

    # ---------------------------------------------------------------- transforms
    def transform(self, graph: DependencyGraph, node: Node, deps: list[str]) -> str:
        op = node.op.split(".", 1)[1]
        self.cel.scope = {}
        if node.iteration is not None:
            self.report.finding("TRN101", "each on a transform step has no instruction form; the step is "
                                "written to run once, reading the each's item and index as null", node.span)
            node = _without_loop_variables(node)
        over = self.transform_items(node)
        guard = self._guard(node)
        items_id = graph.fresh(f"{node.id}_items")
        self.cel.scope = {"item": ANY, "index": NUMBER}
        if op == "filter":
            where = node.attr("where")
            body = self.cel.truthy(where, "js_boolean") if where is not None else E.Literal(True, "bool")
            attrs = (_attr("expr", E.Lambda(("item", "index"), body)), _attr("truthiness", lit("cel_bool")),
                     _attr("over", over))
            kind = "filter"
        elif op == "map":
            m = node.attr("expression")
            body = self.cel.expr(m) if isinstance(m, E.MapExpr) else E.MapExpr(())
            attrs = (_attr("expr", E.Lambda(("item", "index"), body)), _attr("over", over))
            kind = "map"
        else:
            field = node.attr("field")
            direction = node.attr("direction")
            attrs = (_attr("direction", direction if isinstance(direction, E.Literal) else lit("asc")),
                     _attr("ordering", lit("cel")), _attr("over", over),
                     _attr("by", field if isinstance(field, E.Literal) else lit("")))
            kind = "sort"
            self.report.finding("TRN102", "sort: WorkflowSkill orders mixed types with JavaScript's < and text by "
                                "UTF-16 units; CEL orders by its own rules (the same for numbers, and for text "
                                "without characters outside the Basic Multilingual Plane)", node.span)
        self.cel.scope = {}
        graph.add(Node(items_id, node.op, kind, node.span, node.description, attrs=attrs, guard=guard), deps)
        self.report.lowered(f"transform {op}", f"{kind} with the result wrapped as {{items: ...}}", node.span)
        out_name = node.outputs[0].name if node.outputs else "items"
        wrapped: E.Expr = E.MapExpr((E.MapEntry(lit(out_name), E.Ref("steps", (E.Field(items_id),
                                                                                  E.Field("output")))),))
        if any(b.value is not None for b in node.outputs):
            self.cel.result_ref = None
            self.report.finding("TRN101", "output mappings on a transform step are not translated", node.span)
        graph.add(Node(node.id, "assign", "template", node.span, attrs=(_attr("value", wrapped),)), [items_id])
        return node.id

    def transform_items(self, node: Node) -> E.Expr:
        """The array a transform works on (runtime.transform_items): the
        ``items`` input if it is an array, else the first input that is an
        array, else the first input in a list (none when it is null or
        undefined)."""
        bound = [b for b in node.inputs if b.value is not None]
        if not bound:
            return E.ListExpr((), node.span)
        order = sorted(bound, key=lambda b: b.name != "items")
        kinds = {b.name: self.cel.kinds_of(b.value) for b in bound}
        first = bound[0]
        if kinds[order[0].name] <= ARRAY:
            return self.value(order[0].value)
        values = {b.name: self.cel.expr(b.value) for b in bound}
        self.report.lowered("transform input", "a list test that takes the first array or wraps a single value",
                            node.span)
        v, k = values[first.name], kinds[first.name]
        out: E.Expr = E.ListExpr((v,)) if "null" not in k else E.ListExpr(()) if k <= {"null"} else \
            E.Conditional("cel.ternary", E.Binary("cel.eq", v, E.Literal(None, "null")), E.ListExpr(()),
                          E.ListExpr((v,)))
        if len(order) == 1 and k <= ARRAY | {"null"}:
            out = E.ListExpr(())
        for b in reversed(order):
            if "array" in kinds[b.name]:
                test = absent.type_is(values[b.name], "list") if not (len(order) == 1 and kinds[b.name] <= ARRAY | {
                    "null"}) else E.Binary("cel.ne", values[b.name], E.Literal(None, "null"))
                out = E.Conditional("cel.ternary", test, values[b.name], out)
        return out

    # ---------------------------------------------------------------- control
    def branch(self, graph: DependencyGraph, node: Node, deps: list[str]) -> str:
        cond = node.attr("condition")
        self.cel.scope = {}
        on = self.cel.truthy(cond, "js_boolean") if cond is not None else E.Literal(False, "bool")
        switch_id = graph.fresh(f"{node.id}_switch")
        graph.add(Node(switch_id, "switch", "switch", node.span, node.description, attrs=(_attr("on", on),)), deps)
        self.report.lowered("conditional", "a switch on true/false with a join", node.span)
        ends: list[str] = []
        lasts: dict[str, str | None] = {}
        entries: dict[str, str] = {}
        for i, label in enumerate(("then", "else")):
            entry = entries[label] = graph.fresh(f"{node.id}_{label}")
            graph.add(Node(entry, "noop", "noop", node.span), [switch_id])
            graph.edges.append(Edge(switch_id, entry, EdgeKind.BRANCH, "true" if label == "then" else "false", i,
                                    node.span))
            targets = self.arms.get(node.id, {}).get(label, [])
            self.cel.arm_entry.update((t, entry) for t in targets if t not in self.placed)
            last, _ = self.sequence(graph, targets, entry, entry)
            ends += [last, entry]
            lasts[label] = targets[-1] if targets else None
        value: E.Expr = E.Literal(None, "null")
        for label in ("else", "then"):
            target = lasts[label]
            if target is None:
                continue
            ran = E.Binary("cel.eq", E.Ref("steps", (E.Field(entries[label]), E.Field("status"))),
                           lit("done"))
            value = E.Conditional("cel.ternary", ran, E.Ref("steps", (E.Field(target), E.Field("output"))), value)
        graph.add(Node(node.id, "assign", "template", node.span, attrs=(_attr("value", value),)), ends)
        return node.id

    def exit(self, graph: DependencyGraph, node: Node, deps: list[str]) -> str:
        status = node.attr("status")
        status_text = "failed" if isinstance(status, E.Literal) and status.value == "failed" else "completed"
        output = node.attr("output")
        self.cel.scope = {}
        keys = [b.name for b in self.wf.outputs]
        if isinstance(output, E.MapExpr):
            given = {m.key.value: m.value for m in output.entries if isinstance(m.key, E.Literal)}
            value: E.Expr = _as_data(E.MapExpr(tuple(E.MapEntry(lit(k), self.value(given[k]) if k in given
                                                                 else E.Literal(None, "null")) for k in keys)))
        elif output is None or (isinstance(output, E.Literal) and output.value is None):
            value = self._key_matched(E.Literal(None, "null"), frozenset({"null"}), keys, node.span)
        elif (test := self.cel.missing(output)) is not None:
            # An undefined output gives no outputs at all (runtime.exit_outputs).
            ref = output.parts[0] if isinstance(output, E.Template) else output
            self.cel.expr(output)  # reports what the path needs reported
            access = self.cel.access(ref, report=False)
            value = E.Conditional("cel.ternary", test, self._key_matched(
                access.value, self.cel.static_kinds(ref), keys, node.span), E.MapExpr(()), node.span)
        else:
            value = self._key_matched(self.cel.expr(output), self.cel.kinds_of(output), keys, node.span)
        self.report.lowered("exit", "finish", node.span)
        graph.add(Node(node.id, "finish", "finish", node.span, node.description, guard=self._guard(node),
                       attrs=(_attr("status", lit(status_text)), _attr("output", value))), deps)
        return node.id

    def _key_matched(self, value: E.Expr, kinds, keys: list[str], span: Span) -> E.Expr:
        """WorkflowSkill's outputs from one value: an object gives its keys
        (null when absent), anything else goes to the first output."""
        if not keys:
            return E.MapExpr(())
        by_key = E.MapExpr(tuple(E.MapEntry(lit(k), E.Conditional(
            "cel.ternary", E.Binary("cel.in", lit(k), value), E.Binary("cel.index", value, lit(k)),
            E.Literal(None, "null"))) for k in keys))
        # Anything but an object is the first output; the others are absent.
        first = E.MapExpr((E.MapEntry(lit(keys[0]), value),))
        if kinds <= OBJECT:
            return by_key
        if "object" not in kinds:
            return first
        is_map = E.Binary("cel.eq", E.Call("cel.type", (value,)), E.Ref("map", ()))
        return E.Conditional("cel.ternary", is_map, by_key, first, span)

    def outputs(self, last: str) -> E.Expr:
        """The workflow outputs at the normal end (WorkflowSkill's `$end`)."""
        keys = [b.name for b in self.wf.outputs]
        last_value = E.Ref("steps", (E.Field(last), E.Field("output")))
        if last == "start" or last not in self.by_id:
            last_value = E.Literal(None, "null")
        self.cel.scope = {}
        if any(b.value is not None for b in self.wf.outputs):
            entries: list[tuple[str, E.Expr | Converted]] = []
            for b in self.wf.outputs:
                if b.value is not None:
                    entries.append((b.name, b.value))
                else:
                    entries.append((b.name, Converted(E.Conditional(
                        "cel.ternary", E.Binary("cel.and", E.Binary("cel.eq", E.Call("cel.type", (last_value,)),
                                                                     E.Ref("map", ())),
                                                 E.Binary("cel.in", lit(b.name), last_value)),
                        E.Binary("cel.index", last_value, lit(b.name)), E.Literal(None, "null")))))
            return _as_data(self.cel.object(entries, self.wf.span, self.value))
        last_kinds = self.cel.static_kinds(last_value) if isinstance(last_value, E.Ref) else frozenset({"null"})
        if last in self.cel.transform_results:
            last_kinds = OBJECT
        return self._key_matched(last_value, last_kinds, keys, self.wf.span)


# Declared type -> the CEL test that a value has it (runtime.type_matches:
# null fits every type; a whole double is an int, as JSON cannot tell).
_TYPE_TESTS: dict[str, tuple[str, ...]] = {
    "string": ("string",), "bool": ("bool",), "array": ("list",), "object": ("map",),
    "float": ("int", "double"), "int": ("int", "whole double"),
}


def _type_test(value: E.Expr, kind: str) -> E.Expr:
    """``value`` is null or has the declared type ``kind`` (bound once, as ``x``)."""
    x = E.Ref("x", ())
    test: E.Expr = E.Binary("cel.eq", x, E.Literal(None, "null"))
    for name in _TYPE_TESTS[kind]:
        if name == "whole double":
            test = E.Binary("cel.or", test, E.Binary("cel.and", absent.type_is(x, "double"), _whole_double(x)))
        else:
            test = E.Binary("cel.or", test, absent.type_is(x, name))
    return E.Call("cel.all", (E.ListExpr((value,)), E.Lambda(("x",), test)))


def _whole_double(v: E.Expr) -> E.Expr:
    """``v`` (a double) is a whole number: in the exact range, it survives
    int(); beyond 2**53 every finite double is whole."""
    big = E.Literal(9.0e15, "float")
    top = E.Literal(1.7976931348623157e308, "float")
    exact = E.Binary("cel.and", E.Binary("cel.and", E.Binary("cel.gt", v, E.Unary("cel.neg", big)),
                                         E.Binary("cel.lt", v, big)),
                     E.Binary("cel.eq", E.Call("cel.double", (E.Call("cel.int", (v,)),)), v))
    high = E.Binary("cel.and", E.Binary("cel.ge", v, big), E.Binary("cel.le", v, top))
    low = E.Binary("cel.and", E.Binary("cel.le", v, E.Unary("cel.neg", big)),
                   E.Binary("cel.ge", v, E.Unary("cel.neg", top)))
    return E.Binary("cel.or", E.Binary("cel.or", exact, high), low)


def _all(tests: list[E.Expr]) -> E.Expr:
    out = tests[0]
    for t in tests[1:]:
        out = E.Binary("cel.and", out, t)
    return out


def _key_or_null(value: E.Ref, key: str) -> E.Expr:
    """``value[key] ?? null`` for an object, null for anything else (runtime.key_or_null)."""
    seg = E.Field(key) if absent.cel_name(key) else E.Index(lit(key))
    return E.Conditional("cel.ternary", E.Binary("cel.and", absent.type_is(value, "map"),
                                                 E.Binary("cel.in", lit(key), value)),
                         E.Ref(value.root, value.path + (seg,)), E.Literal(None, "null"))


def _as_data(e: E.Expr) -> E.Expr:
    """An object or list built from constants only, as one constant (the
    form dialect 3 gives a YAML mapping or list without placeholders)."""
    if isinstance(e, E.MapExpr) and all(isinstance(m.key, E.Literal) and isinstance(m.key.value, str)
                                        for m in e.entries):
        values = [_as_data(m.value) for m in e.entries]
        if all(isinstance(v, E.Literal) and v.kind not in ("uint", "bytes") for v in values):
            return E.Literal({m.key.value: v.value for m, v in zip(e.entries, values, strict=True)}, "object",
                             e.span)
        return E.MapExpr(tuple(E.MapEntry(m.key, v, m.span) for m, v in zip(e.entries, values, strict=True)),
                         e.span)
    if isinstance(e, E.ListExpr):
        items = [_as_data(i) for i in e.items]
        if all(isinstance(i, E.Literal) and i.kind not in ("uint", "bytes") for i in items):
            return E.Literal([i.value for i in items], "list", e.span)
        return E.ListExpr(tuple(items), e.span)
    return e


def _args_value(args: E.Expr) -> E.Expr:
    if not isinstance(args, E.MapExpr):
        return args
    if all(isinstance(m.value, E.Literal) and m.value.kind not in ("uint", "bytes") for m in args.entries):
        return E.Literal({m.key.value: m.value.value for m in args.entries}, "object", args.span)
    return args


# IR op family (the op before its first dot) -> how a step of it is lowered.
_OP_LOWERINGS = {
    "call": _Lowering.tool,
    "transform": _Lowering.transform,
    "branch": _Lowering.branch,
    "exit": _Lowering.exit,
}


def lower_sequence(wf: Workflow, report: Report) -> Workflow:
    return _Lowering(wf, report).run()


def _without_loop_variables(node: Node) -> Node:
    """``node`` without its ``each``, its inputs and guard reading the
    each's item and index as null: the target has no loop to bind them."""
    names = {node.iteration.item_var, node.iteration.index_var}

    def rewrite(value):
        if isinstance(value, E.Ref) and value.root in names:
            return E.Literal(None, "null", value.span)
        if isinstance(value, tuple):
            return tuple(rewrite(v) for v in value)
        if attrs.has(type(value)):
            changes = {a.name: rewrite(getattr(value, a.name)) for a in attrs.fields(type(value))
                       if isinstance(getattr(value, a.name), tuple) or attrs.has(type(getattr(value, a.name)))}
            return attrs.evolve(value, **changes) if changes else value
        return value

    guard = node.guard and attrs.evolve(node.guard, expr=rewrite(node.guard.expr))
    return attrs.evolve(node, iteration=None, guard=guard, inputs=rewrite(node.inputs))
