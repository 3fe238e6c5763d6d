"""The dataflow scheduling model (dialect 3's dependency graph) -> aevatar's
kernel path.

Dialect 3 runs one ready step at a time, the smallest id first; a step is
ready when its dependencies are resolved and not all of them were pruned.
A false ``when`` prunes the step, a ``switch`` prunes the arms it did not
choose, and so a step runs exactly when it is *live*: its ``when`` holds
and one of its dependencies is live (triggers are; a switch arm is live
when the switch is and chose it). A ``finish`` ends the run with its
output.

In aevatar the steps are written in that order. Liveness is a condition
known before each step: constant for most steps (written as they are), an
aevatar expression for the others (a ``conditional`` step ``<id>_if``
right before the step: ``true`` runs it, ``false`` goes on to the next
one). A step that ran has ``steps.<id>.success`` = ``true``; a switch and a
``noop`` are not written, their liveness is spelled out where it is used.
A switch's choice is exact for a constant ``on`` (then the arms it never
takes are left out) and for a value compared as :mod:`.conditions`
compares. A finish is an ``assign`` of the output text that jumps to the
end of the run; aevatar's run output has no name, so every finish must
output ``{<name>: <text>}`` with the same name.
"""

from __future__ import annotations

import itertools
import re

from flowc.ir import expr as E
from flowc.ir.workflow import Node, Workflow
from flowc.translation.aevatar.conditions import Conditions
from flowc.translation.aevatar.layout import END, Slot, fresh_id, place
from flowc.translation.aevatar.steps import (
    OUTPUT_RENAMED,
    ToAevatar,
    assign_step,
    conditional_step,
    lower_step,
    output_step,
    workflow_of,
)
from flowc.translation.control.dataflow import DataflowGraph, order_is_fixed, run_order
from flowc.translation.report import Report

__all__ = ["lower_dataflow"]

# A liveness condition: always, never, or an aevatar expression that is
# 'true' or 'false'.
Live = bool | E.Expr


def _and(a: Live, b: Live) -> Live:
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    return E.Call("aevatar.and", (a, b))


def _or(a: Live, b: Live) -> Live:
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    return E.Call("aevatar.or", (a, b))


def _ran(sid: str) -> E.Expr:
    """'true' once step ``sid`` has completed (the kernel's
    ``steps.<id>.success``); blank before."""
    return E.Call("aevatar.eq", (E.Ref("steps", (E.Field(sid), E.Field("success"))), E.Literal("true", "string")))


class _Lowering:
    def __init__(self, wf: Workflow, report: Report) -> None:
        self.wf = wf
        self.report = report
        self.conv = ToAevatar(report, wf)
        # CEL: a `when` must be a boolean, and it reads only values that exist.
        self.conds = Conditions(self.conv, js=False)
        self.by_id = wf.node_map()
        graph = DataflowGraph(wf)
        self.deps = graph.deps
        # switch id -> [(case label, target)], in case order ("$default" last)
        self.cases = graph.cases_default_last()
        self.arm_of = {t: s for s, cases in self.cases.items() for _, t in cases}
        self.taken = set(self.by_id) | {p.name for p in wf.inputs} | {"input"}
        self.conv.taken = self.taken
        self.live: dict[str, Live] = {}
        # The one key every finish output has: aevatar's unnamed run output.
        keys = {_output_key(n.attr("output")) for n in wf.nodes if n.op == "finish"}
        self.output_key = keys.pop() if len(keys) == 1 else None

    # ------------------------------------------------------------- liveness
    def reach(self, node: Node) -> Live:
        """Whether the step is ready (not pruned by its dependencies or a
        switch) once the steps before it have run."""
        if node.op == "trigger":
            return True
        switch = self.arm_of.get(node.id)
        if switch is not None:
            others = [d for d in self.deps.get(node.id, []) if d != switch]
            if others:
                self.report.finding("TRN101", "a switch arm with dependencies besides its switch runs as soon as "
                                    "the switch chooses it; that order has no aevatar form", node.span)
            return _and(self.live.get(switch, False), self.chosen(switch, node.id))
        out: Live = False
        for dep in self.deps.get(node.id, []):
            out = _or(out, self.live.get(dep, False))
        return out

    def chosen(self, switch: str, target: str) -> Live:
        node = self.by_id[switch]
        on = node.attr("on")
        cases = self.cases.get(switch, [])
        if node.attr("on_no_match") is not None:
            self.report.finding("TRN101", "a switch that fails when no case matches has no aevatar form",
                                node.span)
        if isinstance(on, E.Literal) and isinstance(on.value, str):
            label = on.value
            pick = next((t for c, t in cases if c == label), None) or next((t for c, t in cases if c == "$default"),
                                                                          None)
            return pick == target
        value = on.parts[0] if isinstance(on, E.Template) and on.typed_whole and len(on.parts) == 1 else on
        tests: list[tuple[str, Live]] = []
        for label, _t in cases:
            if label == "$default":
                continue
            test, why = self.conds.equals(E.Binary("cel.eq", value, self._label(value, label)))
            if why is not None:
                self.report.finding("TRN102", f"the switch may choose another case in aevatar: {why}", node.span)
            tests.append((label, test))
        out: Live = False
        for label, t in cases:
            if t != target:
                continue
            if label == "$default":
                none: Live = True
                for _label, test in tests:
                    none = _and(none, E.Call("aevatar.not", (test,)))
                out = _or(out, none)
            else:
                out = _or(out, dict(tests)[label])
        return out

    def _label(self, value: E.Expr, label: str) -> E.Literal:
        """A case label as the constant the switch value's text is compared
        with: dialect 3 matches a boolean or an integer by its text
        (``true``, ``3``)."""
        kind = self.conv.scalar(value)[0] if isinstance(value, E.Ref) else None
        if kind == "bool" and label in ("true", "false"):
            return E.Literal(label == "true", "bool")
        if kind == "int" and re.fullmatch(r"-?[1-9][0-9]*|0", label):
            return E.Literal(int(label), "int")
        return E.Literal(label, "string")

    def guard(self, node: Node) -> Live:
        if node.guard is None:
            return True
        test, why = self.conds.test(node.guard.expr)
        if why is None:
            self.report.lowered("when", "a conditional step before the step: true -> the step, false -> the next "
                                "step", node.guard.span)
            self.report.lowered("condition", "an aevatar expression that is 'true' or 'false'", node.guard.span)
        else:
            self.report.finding("TRN102", f"this condition may take another branch in aevatar: {why}",
                                node.guard.span)
        return test

    # ------------------------------------------------------------- steps
    def step(self, node: Node) -> tuple[Node, ...]:
        """The aevatar steps of ``node``, in the kernel's order (the last one
        under its id); none for a step that only steers."""
        if node.op == "finish":
            return (self.finish(node),)
        if node.op == "switch":
            self.report.lowered("switch", "conditions on the case targets", node.span)
            return ()
        return lower_step(node, self.conv, self.report)

    def finish(self, node: Node) -> Node:
        status = node.attr("status")
        if not (isinstance(status, E.Literal) and status.value == "completed"):
            self.report.finding("TRN101", "a finish with a status other than completed has no aevatar form; "
                                "written as an assign", node.span)
        value = node.attr("output")
        text = _output_value(value, self.output_key)
        if text is False:
            self.report.finding("TRN102", "aevatar has one text output; a finish output other than "
                                "{<name>: <text>}, with the same name at every finish, is not kept", node.span)
            return assign_step(node.id, self.conv.text(value) if value is not None else E.Literal("", "string"),
                               node.span)
        if self.output_key != "output":
            self.report.lowered("output name", OUTPUT_RENAMED, node.span)
        return output_step(node.id, text, self.conv, self.report, node.span, "finish")

    # ------------------------------------------------------------- the whole
    def workflow(self) -> Workflow:
        wf, report = self.wf, self.report
        items: list[tuple[Node, tuple[Node, ...], Live]] = []   # (source node, aevatar steps, liveness before them)
        always_finishes = False
        order = run_order(wf)
        fixed = order_is_fixed(wf, [n.id for n in order], self.deps, self.cases)
        if not fixed:
            report.finding("TRN102", "dialect 3 runs these steps in an order that depends on which steps are "
                           "pruned" if fixed is False else "too many guards and switches to tell whether dialect "
                           "3 always runs these steps in one order", wf.span)
        for node in order:
            if always_finishes:
                break  # the run has ended: dialect 3 cancels the rest
            report.current = node.id
            reach = self.reach(node)
            live = _and(reach, self.guard(node)) if reach is not False else False
            steps = self.step(node) if live is not False else ()
            if live is False and node.op not in ("trigger",):
                report.lowered("a step that never runs", "left out", node.span)
            if not steps:
                self.live[node.id] = live
                self.conv.unwritten.add(node.id)
                continue
            self.live[node.id] = True if live is True else _ran(node.id)
            if live is True:
                self.conv.always_run.add(node.id)
            items.append((node, steps, live))
            always_finishes = node.op == "finish" and live is True
        report.current = ""
        if not always_finishes:
            report.finding("TRN102", "a dialect-3 run that reaches no finish stalls; the aevatar run completes",
                           wf.span)
        slots: list[Slot] = []
        successor = END
        for node, steps, live in reversed(items):
            # the steps of one source step run one after the other
            here = [Slot(s, nxt.id) for s, nxt in itertools.pairwise(steps)]
            here.append(Slot(steps[-1], END if node.op == "finish" else successor))
            entry = steps[0].id
            if live is not True:
                gid = fresh_id(f"{node.id}_if", self.taken)
                here.insert(0, Slot(conditional_step(gid, live, node.span),
                                    branches=(("true", entry), ("false", successor))))
                entry = gid
            slots = here + slots
            successor = entry
        nodes, edges = place(slots, self.taken)
        if not nodes:
            nodes, edges = place([Slot(assign_step(fresh_id("end", self.taken), E.Literal("", "string"),
                                                   wf.span))], self.taken)
        return workflow_of(wf, nodes, edges, tuple(self.conv.roles.values()))


def _output_key(value: E.Expr | None) -> str | None:
    """The name of a finish output ``{<name>: <value>}``; None for any other."""
    if isinstance(value, E.MapExpr) and len(value.entries) == 1:
        key = value.entries[0].key
        return key.value if isinstance(key, E.Literal) and isinstance(key.value, str) else None
    if isinstance(value, E.Literal) and isinstance(value.value, dict) and len(value.value) == 1:
        return next(iter(value.value))
    return None


def _output_value(value: E.Expr | None, key: str | None) -> E.Expr | None | bool:
    """The text of a finish output ``{<key>: <text>}``; False for any
    other output (dialect 3's run output is the finish's whole value)."""
    if key is None or _output_key(value) != key:
        return False
    if isinstance(value, E.MapExpr):
        return value.entries[0].value
    if isinstance(value, E.Literal) and isinstance(value.value[key], str):
        return E.Literal(value.value[key], "string", value.span)
    return False


def lower_dataflow(wf: Workflow, report: Report) -> Workflow:
    return _Lowering(wf, report).workflow()
