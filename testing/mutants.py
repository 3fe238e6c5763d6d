"""Mutation operators: each puts one well-defined defect into a valid workflow.

An operator takes a valid document (plain data, as the generators of
:mod:`flowc.testing.strategies` build it) and returns the defective
document, or its text for defects that only exist in text (invalid YAML, a
duplicate key). Each operator names the finding code flowc must report for
its defect; a mutant is *caught* when ``flowc check`` reports that code and
no other error.

IR operators mutate a compiled :class:`~flowc.ir.workflow.Workflow` and are
caught by the dialect-independent analyses (``flowc.compiler.analyze``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import attrs
from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.workflow import Binding, Edge, EdgeKind, Workflow

__all__ = ["IR_OPERATORS", "OPERATORS", "Operator", "operators_for"]


@dataclass(frozen=True)
class Operator:
    name: str
    code: str                 # the finding code flowc must report
    dialect: str              # a source dialect, or "ir"
    description: str
    apply: Callable[..., Any]  # (draw, document) -> document | text; IR: (draw, Workflow) -> Workflow
    text: bool = False        # apply takes and returns the YAML text


def _pick(draw, items):
    from hypothesis import strategies as st

    return draw(st.sampled_from(items))


def _steps(doc: dict) -> list[dict]:
    return doc["steps"]


def _pick_step(draw, doc: dict, kinds: tuple[str, ...] | None = None, where=None) -> dict | None:
    steps = [s for s in _steps(doc) if (kinds is None or s.get("type") in kinds) and (where is None or where(s))]
    return _pick(draw, steps) if steps else None


def _append(doc: dict, step: dict) -> dict:
    _steps(doc).append(step)
    return step


def _add_input(step: dict, name: str, decl: Any) -> None:
    step.setdefault("inputs", {})[name] = decl


# ------------------------------------------------------------------ WorkflowSkill
def _wfs_unknown_step_key(draw, doc):
    step = _pick_step(draw, doc)
    step[_pick(draw, ["on_eror", "retries", "timeout", "next", "tool_name", "when"])] = "x"
    return doc


def _wfs_unknown_top_key(draw, doc):
    doc[_pick(draw, ["name", "version", "step", "input"])] = "x"
    return doc


def _wfs_undeclared_step(draw, doc):
    step = _pick_step(draw, doc)
    _add_input(step, "zz", {"type": "string", "value": "$steps.missing_step.output"})
    return doc


def _wfs_forward_ref(draw, doc):
    step = _pick_step(draw, doc)
    _append(doc, {"id": "zz_late", "type": "tool", "tool": "t0"})
    _add_input(step, "zz", {"type": "string", "value": "${steps.zz_late.output}"})
    return doc


def _declarations(doc: dict) -> list[dict]:
    out = [d for d in (doc.get("inputs") or {}).values()] + [d for d in (doc.get("outputs") or {}).values()]
    for step in _steps(doc):
        for key in ("inputs", "outputs"):
            out.extend(d for d in (step.get(key) or {}).values() if isinstance(d, dict))
    return [d for d in out if "type" in d]


def _wfs_bad_type_name(draw, doc):
    bad = _pick(draw, ["integer", "str", "number", "bool", "list", "dict", "Int"])
    decls = _declarations(doc)
    if decls and draw(_booleans()):
        _pick(draw, decls)["type"] = bad
    else:
        doc.setdefault("inputs", {})["zz"] = {"type": bad}
    return doc


def _booleans():
    from hypothesis import strategies as st

    return st.booleans()


def _wfs_missing_tool(draw, doc):
    step = _pick_step(draw, doc, ("tool",))
    if step is None:
        _append(doc, {"id": "zz", "type": "tool"})
    else:
        del step["tool"]
    return doc


def _wfs_missing_field(draw, doc):
    _append(doc, _pick(draw, [
        {"id": "zz", "type": "exit"},
        {"id": "zz", "type": "transform"},
        {"id": "zz", "type": "transform", "operation": "filter", "inputs": {"items": {"type": "array"}}},
        {"id": "zz", "type": "transform", "operation": "sort", "inputs": {"items": {"type": "array"}}},
    ]))
    return doc


def _wfs_unknown_branch_target(draw, doc):
    step = _pick_step(draw, doc, ("conditional",))
    if step is None:
        _append(doc, {"id": "zz_c", "type": "conditional", "condition": "true", "then": ["missing_step"]})
    else:
        step[_pick(draw, ["then", "else"]) if "else" in step else "then"].append("missing_step")
    return doc


def _wfs_duplicate_id(draw, doc):
    first = _steps(doc)[0]
    _steps(doc).insert(1, {"id": first["id"], "type": "tool", "tool": "t0"})
    return doc


def _wfs_result_in_output(draw, doc):
    doc.setdefault("outputs", {})["zz"] = {"type": "string", "value": _pick(draw, ["$result", "$result.x",
                                                                                 "${result.total}"])}
    return doc


def _wfs_step_input_default(draw, doc):
    _add_input(_pick_step(draw, doc), "zz", {"type": "string", "default": "x"})
    return doc


def _wfs_delay_without_each(draw, doc):
    step = _pick_step(draw, doc, where=lambda s: "each" not in s)
    if step is None:
        step = _append(doc, {"id": "zz", "type": "tool", "tool": "t0"})
    step["delay"] = "1s"
    return doc


def _wfs_each_not_allowed(draw, doc):
    step = _pick_step(draw, doc, ("conditional", "exit"))
    if step is None:
        step = _append(doc, {"id": "zz_x", "type": "exit", "status": "success"})
    step["each"] = "$inputs.rows"
    return doc


def _wfs_bad_duration(draw, doc):
    bad = _pick(draw, ["2 s", "1m", "1.5s", "fast", "500", 5, "-1s"])
    step = _pick_step(draw, doc, ("tool", "transform"))
    if step is None:
        step = _append(doc, {"id": "zz", "type": "tool", "tool": "t0"})
    if "each" in step and draw(_booleans()):
        step["delay"] = bad
    else:
        step["retry"] = {"max": 2, "delay": bad, "backoff": 2}
    return doc


def _wfs_bad_retry(draw, doc):
    step = _pick_step(draw, doc, ("tool", "transform"))
    if step is None:
        step = _append(doc, {"id": "zz", "type": "tool", "tool": "t0"})
    step["retry"] = _pick(draw, [{"max": 0, "delay": "1s", "backoff": 2}, {"max": 2, "delay": "1s"},
                                 {"max": 2, "delay": "1s", "backoff": 0}, {"max": "two", "delay": "1s", "backoff": 1},
                                 "3"])
    return doc


def _wfs_unknown_step_type(draw, doc):
    _append(doc, {"id": "zz", "type": _pick(draw, ["tol", "tools", "loop", "Tool", "branch"])})
    return doc


def _wfs_unknown_root(draw, doc):
    _add_input(_pick_step(draw, doc), "zz",
               {"type": "string", "value": _pick(draw, ["$input.n", "$step.x", "$items", "$output"])})
    return doc


def _wfs_item_outside_each(draw, doc):
    step = _pick_step(draw, doc, where=lambda s: "each" not in s)
    if step is None:
        step = _append(doc, {"id": "zz", "type": "tool", "tool": "t0"})
    _add_input(step, "zz", _pick(draw, [{"type": "string", "value": "$item"}, {"type": "int", "value": "$index"},
                                       {"type": "string", "value": "${item.name}"}]))
    return doc


def _wfs_target_before_conditional(draw, doc):
    _append(doc, {"id": "zz_c", "type": "conditional", "condition": "true", "then": [_steps(doc)[0]["id"]]})
    return doc


def _wfs_steps_in_step_output(draw, doc):
    _append(doc, {"id": "zz", "type": "tool", "tool": "t0",
                  "outputs": {"zz": {"type": "string", "value": f"$steps.{_steps(doc)[0]['id']}.output"}}})
    return doc


def _wfs_undeclared_exit_key(draw, doc):
    outputs = doc.setdefault("outputs", {})
    if not outputs:
        outputs["zz_out"] = {"type": "string"}
    _append(doc, {"id": "zz_x", "type": "exit", "status": "success", "output": {"missing_output": 1}})
    return doc


def _wfs_syntax_error(draw, doc):
    bad = _pick(draw, ["$inputs.n ==", "(1", "$steps.", "1 == 1 == 1", "$x[", '"unterminated', "$a &&"])
    step = _pick_step(draw, doc, ("tool", "transform", "exit"))
    if step is None:
        step = _append(doc, {"id": "zz", "type": "tool", "tool": "t0"})
    step["condition"] = bad
    return doc


def _wfs_bare_step_input(draw, doc):
    _add_input(_pick_step(draw, doc), "zz", _pick(draw, ["x", 3, "$inputs.n", None]))
    return doc


def _wfs_step_not_mapping(draw, doc):
    _steps(doc).insert(draw(_index(len(_steps(doc)))), _pick(draw, ["just text", 3, ["tool"]]))
    return doc


def _index(n: int):
    from hypothesis import strategies as st

    return st.integers(0, n)


def _wfs_missing_id(draw, doc):
    _append(doc, {"type": "tool", "tool": "t0"})
    return doc


def _wfs_default_type_mismatch(draw, doc):
    doc.setdefault("inputs", {})["zz"] = _pick(draw, [{"type": "int", "default": "abc"},
                                                      {"type": "array", "default": 3},
                                                      {"type": "boolean", "default": "yes"}])
    return doc


def _wfs_binding_type_mismatch(draw, doc):
    _add_input(_pick_step(draw, doc), "zz", _pick(draw, [{"type": "int", "value": "hello"},
                                                        {"type": "array", "value": True},
                                                        {"type": "string", "value": 3}]))
    return doc


def _wfs_each_not_array(draw, doc):
    doc.setdefault("inputs", {})["zz_s"] = {"type": "string"}
    _append(doc, {"id": "zz", "type": "tool", "tool": "t0", "each": "$inputs.zz_s"})
    return doc


def _wfs_undeclared_field(draw, doc):
    _append(doc, {"id": "zz_a", "type": "tool", "tool": "t0", "outputs": {"x": {"type": "string"}}})
    _append(doc, {"id": "zz_b", "type": "tool", "tool": "t0",
                  "inputs": {"v": {"type": "string", "value": "$steps.zz_a.output.missing_field"}}})
    return doc


def _wfs_field_of_array(draw, doc):
    doc.setdefault("inputs", {})["zz_l"] = {"type": "array"}
    _append(doc, {"id": "zz", "type": "tool", "tool": "t0",
                  "inputs": {"v": {"type": "string", "value": "$inputs.zz_l.name"}}})
    return doc


def _wfs_bad_enum(draw, doc):
    which = _pick(draw, ["on_error", "status", "direction", "operation"])
    if which == "on_error":
        step = _pick_step(draw, doc, ("tool", "transform")) or _append(doc, {"id": "zz", "type": "tool",
                                                                              "tool": "t0"})
        step["on_error"] = _pick(draw, ["retry", "continue", "Ignore"])
    elif which == "status":
        step = _pick_step(draw, doc, ("exit",)) or _append(doc, {"id": "zz", "type": "exit", "status": "x"})
        step["status"] = _pick(draw, ["ok", "error", "Success"])
    elif which == "direction":
        _append(doc, {"id": "zz", "type": "transform", "operation": "sort", "field": "a",
                      "direction": _pick(draw, ["up", "ascending", "DESC"]),
                      "inputs": {"items": {"type": "array", "value": [1]}}})
    else:
        _append(doc, {"id": "zz", "type": "transform", "operation": _pick(draw, ["reduce", "Filter", "group"]),
                      "inputs": {"items": {"type": "array", "value": [1]}}})
    return doc


def _wfs_no_steps(draw, doc):
    doc.pop("outputs", None)
    doc["steps"] = []
    return doc


def _wfs_invalid_yaml(draw, text):
    return text + _pick(draw, ["bad: [unclosed\n", "steps:\n  - {id: a\n", "x: 'open\n", "  - ]\n"])


def _wfs_duplicate_key(draw, text):
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("type: "))
    lines.insert(at + 1, lines[at])
    return "\n".join(lines)


def _wfs_no_block(draw, text):
    from flowc.testing.gen_workflowskill import to_text

    skill = to_text({"steps": []}, True).split("```workflow")[0]
    return skill + "```" + _pick(draw, ["yaml", "", "workflows", "Workflow"]) + "\n" + text + "```\n"


OPERATORS: dict[str, tuple[Operator, ...]] = {}


def _register(dialect: str, *rows) -> None:
    OPERATORS[dialect] = tuple(Operator(name, code, dialect, desc, fn, text) for name, code, desc, fn, *rest
                               in rows for text in [bool(rest and rest[0])])


_register(
    "workflowskill",
    ("unknown_step_key", "WFS105", "a step gets a key WorkflowSkill does not have", _wfs_unknown_step_key),
    ("unknown_top_key", "WFS105", "the workflow gets a top-level key besides inputs/outputs/steps",
     _wfs_unknown_top_key),
    ("undeclared_step", "WFS204", "a step input reads $steps.<id> of a step that does not exist",
     _wfs_undeclared_step),
    ("forward_ref", "WFS205", "a step input reads a step declared after it", _wfs_forward_ref),
    ("bad_type_name", "WFS106", "a declared type is not one of string/int/float/boolean/array/object",
     _wfs_bad_type_name),
    ("missing_tool", "WFS104", "a tool step loses its `tool`", _wfs_missing_tool),
    ("missing_field", "WFS104", "a step lacks a field its type requires", _wfs_missing_field),
    ("unknown_branch_target", "WFS209", "a conditional's then/else names an undeclared step",
     _wfs_unknown_branch_target),
    ("duplicate_id", "ANA401", "two steps share an id", _wfs_duplicate_id),
    ("result_in_workflow_output", "WFS203", "a workflow output's value reads $result", _wfs_result_in_output),
    ("step_input_default", "WFS107", "a step input has `default` instead of `value`", _wfs_step_input_default),
    ("delay_without_each", "WFS113", "a step without `each` gets a `delay`", _wfs_delay_without_each),
    ("each_not_allowed", "WFS113", "a conditional or exit step gets `each`", _wfs_each_not_allowed),
    ("bad_duration", "WFS111", "a delay or retry delay is not a duration like 500ms or 2s", _wfs_bad_duration),
    ("bad_retry", "WFS112", "a retry policy lacks a field or has a bad max/backoff", _wfs_bad_retry),
    ("unknown_step_type", "WFS106", "a step has a type that is not tool/transform/conditional/exit",
     _wfs_unknown_step_type),
    ("bad_enum", "WFS106", "on_error, an exit status, a sort direction or a transform operation is wrong",
     _wfs_bad_enum),
    ("unknown_root", "WFS202", "an expression starts with a $name that is not a reference root",
     _wfs_unknown_root),
    ("item_outside_each", "WFS212", "$item or $index is read outside `each`", _wfs_item_outside_each),
    ("target_before_conditional", "WFS210", "a conditional names a step declared before it",
     _wfs_target_before_conditional),
    ("steps_in_step_output", "WFS206", "a step output's value reads $steps instead of $result",
     _wfs_steps_in_step_output),
    ("undeclared_exit_key", "WFS211", "an exit's output object has a key that is not a workflow output",
     _wfs_undeclared_exit_key),
    ("syntax_error", "WFS201", "a condition does not parse", _wfs_syntax_error),
    ("bare_step_input", "WFS108", "a step input is a bare value, not {type, value}", _wfs_bare_step_input),
    ("step_not_mapping", "WFS103", "a step is not a mapping", _wfs_step_not_mapping),
    ("missing_id", "WFS104", "a step has no id", _wfs_missing_id),
    ("default_type_mismatch", "ANA501", "an input's default does not have its declared type",
     _wfs_default_type_mismatch),
    ("binding_type_mismatch", "ANA501", "a step input's value does not have its declared type",
     _wfs_binding_type_mismatch),
    ("each_not_array", "ANA502", "`each` iterates over a string", _wfs_each_not_array),
    ("undeclared_field", "ANA503", "a reference selects a field the producing step does not declare",
     _wfs_undeclared_field),
    ("field_of_array", "ANA504", "a reference selects a named field of an array", _wfs_field_of_array),
    ("no_steps", "WFS109", "the steps list is empty", _wfs_no_steps),
    ("invalid_yaml", "YAML001", "the text stops being well-formed YAML", _wfs_invalid_yaml, True),
    ("duplicate_key", "YAML002", "a mapping repeats a key", _wfs_duplicate_key, True),
    ("no_workflow_block", "WFS101", "a SKILL.md whose fence is not ```workflow", _wfs_no_block, True),
)


# ------------------------------------------------------------------ IR
def _ir_duplicate_node(draw, wf: Workflow) -> Workflow:
    node = _pick(draw, [n for n in wf.nodes if n.id != wf.terminal])
    return attrs.evolve(wf, nodes=wf.nodes + (node,))


def _ir_edge_to_unknown(draw, wf: Workflow) -> Workflow:
    node = _pick(draw, list(wf.nodes))
    edge = Edge(node.id, "nowhere", _pick(draw, [EdgeKind.SEQUENCE, EdgeKind.BRANCH, EdgeKind.ERROR]),
                label="then")
    return attrs.evolve(wf, edges=wf.edges + (edge,))


def _ir_control_cycle(draw, wf: Workflow) -> Workflow:
    import networkx as nx
    from flowc.ir.graph import control_graph

    graph = control_graph(wf)
    # A node on a path to the terminal: an edge back to it closes a cycle.
    before = sorted(nx.ancestors(graph, wf.terminal)) if wf.terminal in graph else []
    if not before:
        return _ir_data_cycle(draw, wf)
    return attrs.evolve(wf, edges=wf.edges + (Edge(wf.terminal, _pick(draw, before), EdgeKind.SEQUENCE),))


def _ir_data_cycle(draw, wf: Workflow) -> Workflow:
    node = _pick(draw, [n for n in wf.nodes if n.id != wf.terminal])
    ref = E.Ref("steps", (E.Field(node.id), E.Field("output")))
    changed = attrs.evolve(node, inputs=node.inputs + (Binding("zz", T.ANY, ref),))
    return attrs.evolve(wf, nodes=tuple(changed if n is node else n for n in wf.nodes))


def _ir_no_terminal(draw, wf: Workflow) -> Workflow:
    return attrs.evolve(wf, terminal=_pick(draw, [None, "nowhere"]))


def _ir_long_id(draw, wf: Workflow) -> Workflow:
    node = _pick(draw, [n for n in wf.nodes if n.id != wf.terminal])
    new = "x" * 300

    def rename(i: str) -> str:
        return new if i == node.id else i

    nodes = tuple(attrs.evolve(n, id=new) if n is node else n for n in wf.nodes)
    edges = tuple(attrs.evolve(e, source=rename(e.source), target=rename(e.target)) for e in wf.edges)
    return attrs.evolve(wf, nodes=nodes, edges=edges, entry=tuple(rename(i) for i in wf.entry))


def _ir_output_type_mismatch(draw, wf: Workflow) -> Workflow:
    binding = Binding("zz", T.INT, E.Literal(_pick(draw, ["abc", True, [1]]), "auto"))
    return attrs.evolve(wf, outputs=wf.outputs + (binding,))


IR_OPERATORS: tuple[Operator, ...] = tuple(Operator(name, code, "ir", desc, fn) for name, code, desc, fn in (
    ("duplicate_node", "ANA401", "a node appears twice", _ir_duplicate_node),
    ("edge_to_unknown", "ANA405", "an edge names a node that does not exist", _ir_edge_to_unknown),
    ("control_cycle", "ANA403", "the terminal gets an edge back to the entry", _ir_control_cycle),
    ("data_cycle", "ANA403", "a node reads its own output", _ir_data_cycle),
    ("no_terminal", "ANA404", "the workflow's terminal is missing", _ir_no_terminal),
    ("long_id", "ANA406", "a node id is longer than the limit", _ir_long_id),
    ("output_type_mismatch", "ANA501", "a workflow output's value does not have its declared type",
     _ir_output_type_mismatch),
))
OPERATORS["ir"] = IR_OPERATORS


def operators_for(dialect: str) -> tuple[Operator, ...]:
    return OPERATORS.get(dialect, ())


def apply_to_document(op: Operator, draw, doc: dict) -> dict:
    """Apply a document-level operator to a copy of ``doc``."""
    return op.apply(draw, copy.deepcopy(doc))
