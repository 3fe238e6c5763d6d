"""The sequential scheduling model (WorkflowSkill's) -> aevatar's kernel path.

WorkflowSkill runs its top-level steps in declaration order; a
conditional runs the steps its ``then`` or ``else`` lists, in list order,
then the run goes on after the conditional; an ``exit`` ends the run; a
guarded step whose ``condition`` is false is skipped. In aevatar:

- a guard is a ``conditional`` step ``<id>_if`` right before the step:
  ``true`` goes to the step, ``false`` to whatever follows it;
- a conditional is a ``conditional`` step with the source's id whose
  ``true`` and ``false`` branches go to the first step of each arm; the arm
  steps follow it in the document, the last one of each arm going on to
  the step after the conditional (``next`` unless it follows anyway); an
  empty arm branches there directly;
- an exit is an ``assign`` of the output text that jumps to the end; an
  exit with status ``failed`` a ``guard`` step that always fails;
- the workflow's one output is an ``assign`` after the last step.

Each condition goes through :mod:`.conditions`; one whose aevatar form may
take another branch is a finding. aevatar's single run output has no
name: a workflow that declares exactly one output, whatever its name,
writes it there (a lowering); no outputs or several are a finding.
"""

from __future__ import annotations

import itertools

import attrs
from flowc.ir import expr as E
from flowc.ir.workflow import Node, Workflow
from flowc.translation.aevatar.conditions import Conditions
from flowc.translation.aevatar.layout import END, Slot, fresh_id, place
from flowc.translation.aevatar.steps import (
    OUTPUT_RENAMED,
    STEP_RULES,
    ToAevatar,
    assign_step,
    conditional_step,
    failing_step,
    lower_step,
    output_step,
    workflow_of,
)
from flowc.translation.control.sequence import SequenceGraph
from flowc.translation.report import Report

__all__ = ["lower_sequence"]


def _run_output(wf: Workflow) -> E.Expr | None | bool:
    """The value of the workflow's one output, whatever its name (aevatar's
    single run output has none); False when there is not exactly one."""
    if len(wf.outputs) == 1:
        return wf.outputs[0].value
    return False


class _Lowering:
    def __init__(self, wf: Workflow, report: Report) -> None:
        self.wf = wf
        self.report = report
        self.conv = ToAevatar(report, wf)
        self.conds = Conditions(self.conv, js=True)
        self.by_id = wf.node_map()
        self.control = SequenceGraph(wf)
        self.taken = set(self.by_id) | {p.name for p in wf.inputs} | {"input"}
        self.conv.taken = self.taken
        # (step id, successor) -> where the step starts: a step listed in
        # several arms is written once when it goes on to the same step.
        self.entries: dict[tuple[str, str], str] = {}
        self.listed: set[str] = set()   # the steps of ``entries``: one lookup, not a scan per step
        self.output = _run_output(wf)
        self.read = {r.path[0].name for e in _expressions(wf) for r in E.refs(e)
                     if r.root == "steps" and r.path and isinstance(r.path[0], E.Field)}

    # ------------------------------------------------------------- structure
    def sequence(self, ids: list[str], successor: str) -> tuple[list[Slot], str]:
        """Slots for steps run one after another, then ``successor``; and
        the id the sequence starts at."""
        parts: list[list[Slot]] = []
        entry = successor
        for sid in reversed(ids):
            item, entry = self.item(sid, entry)
            parts.append(item)
        # Joined once: prepending each item copied the list (quadratic).
        return [slot for item in reversed(parts) for slot in item], entry

    def item(self, sid: str, successor: str) -> tuple[list[Slot], str]:
        node = self.by_id[sid]
        self.report.current = sid
        if (sid, successor) in self.entries:
            return [], self.entries[(sid, successor)]
        arms = sid
        if sid in self.listed:
            # Listed again, going on elsewhere: an aevatar step goes on to one
            # step, so this is a copy under another id -- the same when
            # nothing reads the step's output (the copy's output has its id).
            if sid in self.read:
                self.report.finding("TRN101", f"step {sid!r} is listed in conditional arms that go on to "
                                    "different steps after it, and its output is read; an aevatar step goes on "
                                    "to one step, so it runs only where it is first listed", node.span)
                return [], successor
            self.report.lowered("a step listed in several arms", "a copy under another id", node.span)
            node = attrs.evolve(node, id=fresh_id(sid, self.taken))
        slots, entry = self._item(node, successor, arms)
        self.entries[(sid, successor)] = entry
        self.listed.add(sid)
        return slots, entry

    def _item(self, node: Node, successor: str, arms: str) -> tuple[list[Slot], str]:
        sid = node.id
        if node.op == "branch":
            return self.branch(node, successor, arms)
        if node.op == "exit":
            slots, entry = [Slot(self.exit(node), END)], sid
        else:
            steps = lower_step(node, self.conv, self.report)
            if not steps:
                return [], successor
            slots = [Slot(s, nxt.id) for s, nxt in itertools.pairwise(steps)] + [Slot(steps[-1], successor)]
            entry = steps[0].id
        if node.guard is not None:
            gid = fresh_id(f"{sid}_if", self.taken)
            test = self.condition(node.guard.expr, node.guard.span, "guard")
            slots = [Slot(conditional_step(gid, test, node.guard.span),
                          branches=(("true", entry), ("false", successor)))] + slots
            entry = gid
        return slots, entry

    def branch(self, node: Node, successor: str, arms: str) -> tuple[list[Slot], str]:
        then_ids, else_ids = self.control.then_else(arms)
        then_slots, then_entry = self.sequence(then_ids, successor)
        else_slots, else_entry = self.sequence(else_ids, successor)
        self.report.current = node.id
        cond = node.attr("condition")
        test = self.condition(cond, cond.span if cond is not None else node.span, "conditional")
        slot = Slot(conditional_step(node.id, test, node.span),
                    branches=(("true", then_entry), ("false", else_entry)))
        return [slot] + then_slots + else_slots, node.id

    def condition(self, e: E.Expr | None, span, what: str) -> E.Expr:
        if e is None:
            return E.Literal("false", "string")
        test, why = self.conds.test(e)
        if why is None:
            self.report.lowered(what, STEP_RULES["guard" if what == "guard" else "branch"], span)
            self.report.lowered("condition", "an aevatar expression that is 'true' or 'false'", span)
        else:
            self.report.finding("TRN102", f"this condition may take another branch in aevatar: {why}", span)
        return test

    def exit(self, node: Node) -> Node:
        status = node.attr("status")
        if isinstance(status, E.Literal) and status.value == "failed":
            # The run fails; what a failed run outputs is the dialect's own.
            self.report.lowered("exit with status failed", STEP_RULES["exit failed"], node.span)
            return failing_step(node.id, node.span)
        value = node.attr("output")
        if self.output is False:
            return assign_step(node.id, self.conv.text(value) if value is not None else E.Literal("", "string"),
                               node.span)
        return output_step(node.id, _exit_value(value, self.wf.outputs[0].name), self.conv, self.report, node.span, "exit")

    # ------------------------------------------------------------- the whole
    def workflow(self) -> Workflow:
        wf, report = self.wf, self.report
        top = self.control.top_level()
        tail: list[Slot] = []
        successor = END
        if self.output is False:
            report.finding("TRN102", "aevatar has one text output; the source declares no outputs, or several, "
                           "which are not kept", wf.span)
        else:
            if wf.outputs[0].name != "output":
                report.lowered("output name", OUTPUT_RENAMED, wf.outputs[0].span)
            out_id = fresh_id("output", self.taken)
            tail = [Slot(output_step(out_id, self.output, self.conv, report, wf.outputs[0].span, "output"), END)]
            successor = out_id
        slots, _entry = self.sequence(top, successor)
        report.current = ""
        nodes, edges = place(slots + tail, self.taken)
        return workflow_of(wf, nodes, edges, tuple(self.conv.roles.values()))


def _exit_value(value: E.Expr | None, name: str) -> E.Expr | None:
    """What an exit gives the workflow's one output ``name``: the object's
    ``name`` (missing: null), or the whole value when it is not an object."""
    if isinstance(value, E.MapExpr):
        for entry in value.entries:
            if isinstance(entry.key, E.Literal) and entry.key.value == name:
                return entry.value
        return None
    if isinstance(value, E.Literal) and isinstance(value.value, dict):
        inner = value.value.get(name)
        return E.Literal(inner, "string" if isinstance(inner, str) else "auto", value.span) \
            if inner is not None else None
    return value


def _expressions(wf: Workflow):
    """Every expression the workflow evaluates (guards, attributes,
    bindings, workflow outputs)."""
    for node in wf.nodes:
        if node.guard is not None:
            yield node.guard.expr
        if node.iteration is not None:
            yield node.iteration.over
        yield from (a.value for a in node.attrs)
        yield from (b.value for b in (*node.inputs, *node.outputs) if b.value is not None)
    yield from (b.value for b in wf.outputs if b.value is not None)


def lower_sequence(wf: Workflow, report: Report) -> Workflow:
    return _Lowering(wf, report).workflow()
