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
    applies: Callable[[str], bool] | None = None  # IR: is the defect a finding under these semantics?


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


# ------------------------------------------------------------------ aevatar
def _aev_steps_of(doc, types=None, where=None):
    return [s for s in doc["steps"] if (types is None or s.get("type") in types) and (where is None or where(s))]


def _aev_unknown_key(draw, doc):
    where = _pick(draw, ["step", "workflow", "retry", "role"])
    if where == "workflow":
        doc[_pick(draw, ["version", "inputs", "step"])] = "x"
    elif where == "retry":
        step = _pick(draw, doc["steps"])
        step["retry"] = {"max_attempts": 2, _pick(draw, ["max", "attempts", "delay"]): 1}
    elif where == "role" and doc.get("roles"):
        _pick(draw, doc["roles"])[_pick(draw, ["prompt", "temp", "models"])] = "x"
    else:
        _pick(draw, doc["steps"])[_pick(draw, ["nxt", "param", "on_eror", "role_id", "parameter"])] = "x"
    return doc


def _aev_missing_name(draw, doc):
    if draw(_booleans()):
        del doc["name"]
    else:
        doc["name"] = _pick(draw, ["", "  "])
    return doc


def _aev_no_steps(draw, doc):
    doc["steps"] = []
    return doc


def _aev_step_without_id(draw, doc):
    doc["steps"].insert(draw(_index(len(doc["steps"]) - 1)), {"type": "llm_call"})
    return doc


def _aev_unknown_role(draw, doc):
    steps = _aev_steps_of(doc, ("llm_call",))
    step = _pick(draw, steps) if steps else None
    if step is None:
        step = {"id": "zz", "type": "llm_call"}
        doc["steps"].insert(0, step)
    step["target_role"] = _pick(draw, ["nobody", "reviewer", "Analyst_"])
    return doc


def _aev_model_as_role(draw, doc):
    steps = _aev_steps_of(doc, ("llm_call",))
    step = _pick(draw, steps) if steps else None
    if step is None:
        step = {"id": "zz", "type": "llm_call"}
        doc["steps"].insert(0, step)
    step["target_role"] = _pick(draw, ["gpt-4o", "claude-3-opus", "gpt-4o-mini"])
    return doc


def _aev_unknown_next(draw, doc):
    doc["steps"].insert(0, {"id": "zz", "type": "llm_call", "next": "missing_step"})
    return doc


def _aev_unknown_branch_target(draw, doc):
    branchy = _aev_steps_of(doc, ("conditional", "switch"))
    if branchy:
        step = _pick(draw, branchy)
        key = _pick(draw, sorted(step["branches"]))
        step["branches"][key] = "missing_step"
    else:
        doc["steps"].insert(0, {"id": "zz", "type": "conditional", "parameters": {"condition": "x"},
                                "branches": {"true": "missing_step", "false": doc["steps"][0]["id"]}})
    return doc


def _aev_conditional_one_branch(draw, doc):
    last = doc["steps"][-1]["id"]
    doc["steps"].insert(len(doc["steps"]) - 1, {"id": "zz", "type": "conditional",
                                                "parameters": {"condition": "x"},
                                                "branches": {_pick(draw, ["true", "false"]): last}})
    return doc


def _aev_switch_without_default(draw, doc):
    switches = _aev_steps_of(doc, ("switch",))
    if switches:
        del _pick(draw, switches)["branches"]["_default"]
    else:
        last = doc["steps"][-1]["id"]
        doc["steps"].insert(len(doc["steps"]) - 1, {"id": "zz", "type": "switch", "parameters": {"on": "${input}"},
                                                    "branches": {"urgent": last}})
    return doc


def _aev_while_without_bound(draw, doc):
    doc["steps"].insert(0, {"id": "zz", "type": "while", "parameters": {"max_iterations": "0"}})
    return doc


def _aev_missing_parameter(draw, doc):
    tools = _aev_steps_of(doc, ("tool_call",))
    if tools and draw(_booleans()):
        del _pick(draw, tools)["parameters"]["tool"]
    else:
        doc["steps"].insert(0, _pick(draw, [{"id": "zz", "type": "tool_call"},
                                            {"id": "zz", "type": "connector_call"}]))
    return doc


def _aev_unknown_step_type(draw, doc):
    step = _pick(draw, doc["steps"])
    step["type"] = _pick(draw, ["llm_cal", "tool_cal", "transfrom", "condtional"])
    step.pop("parameters", None)
    step.pop("branches", None)
    step.pop("target_role", None)
    step.pop("retry", None)
    step.pop("on_error", None)
    step.pop("timeout_ms", None)
    return doc


def _aev_cannot_run(draw, doc):
    doc["steps"].insert(0, {"id": "zz", "type": _pick(draw, ["dynamic_workflow", "workflow_yaml_validate",
                                                             "actor_send"])})
    return doc


def _aev_lone_quote(draw, doc):
    doc["steps"].insert(0, {"id": "zz", "type": "llm_call", "parameters": {
        "prompt_prefix": _pick(draw, ["${concat('a ', ')}", "${upper(')}", "Re: ${trim(')}"])}})
    return doc


def _aev_last_step_next(draw, doc):
    doc["steps"][-1]["next"] = doc["steps"][0]["id"] if len(doc["steps"]) > 1 and draw(_booleans()) \
        else doc["steps"][-1]["id"]
    return doc


def _aev_unknown_step_ref(draw, doc):
    doc["steps"].insert(0, {"id": "zz", "type": "llm_call", "parameters": {
        "prompt_prefix": _pick(draw, ["${steps.missing_step.output}", "Re: ${steps.nosuch.output}"])}})
    return doc


def _aev_text_ref(draw, doc):
    doc["steps"][0:0] = [{"id": "zz_a", "type": "llm_call"},
                         {"id": "zz_b", "type": "llm_call", "parameters": {"prompt_prefix": "${steps.zz_a.text}"}}]
    return doc


def _aev_bad_number(draw, doc):
    step = _pick(draw, doc["steps"])
    if draw(_booleans()):
        step["timeout_ms"] = _pick(draw, ["soon", "5s", "1e99x"])
    else:
        step["retry"] = {"max_attempts": _pick(draw, ["twice", "2.5.1"])}
    return doc


def _aev_wrong_shape(draw, doc):
    which = _pick(draw, ["parameters", "steps_item", "roles", "retry"])
    if which == "parameters":
        # Not on a step with required parameters (that would also be AEV121).
        steps = _aev_steps_of(doc, ("llm_call", "transform", "delay", "emit", "checkpoint", "assign"))
        step = _pick(draw, steps) if steps else None
        if step is None:
            step = {"id": "zz", "type": "llm_call"}
            doc["steps"].insert(0, step)
        step["parameters"] = _pick(draw, [["a", "b"], "text"])
    elif which == "steps_item":
        doc["steps"].insert(draw(_index(len(doc["steps"]) - 1)), _pick(draw, ["just text", ["llm_call"]]))
    elif which == "roles":
        doc["roles"] = _pick(draw, ["analyst", {"id": "analyst"}])
        for step in doc["steps"]:
            step.pop("target_role", None)
            for key in ("workers", "sub_target_role"):
                (step.get("parameters") or {}).pop(key, None)
            if step.get("type") == "parallel":
                step["parameters"]["parallel_count"] = "2"
    else:
        _pick(draw, doc["steps"])["retry"] = _pick(draw, ["3", ["3"]])
    return doc


def _aev_empty_document(draw, text):
    return _pick(draw, ["", "# nothing here yet\n", "---\n", "\n\n"])


def _aev_arm_falls_through(draw, doc):
    for i, step in enumerate(doc["steps"]):
        if step.get("type") in ("conditional", "switch"):
            arms = [s for s in doc["steps"][i + 1:] if s.get("next") and s["id"] in step["branches"].values()]
            if len(arms) >= 2:
                del arms[0]["next"]
                return doc
    last = doc["steps"][-1]["id"]
    doc["steps"][-1:-1] = [
        {"id": "zz_c", "type": "conditional", "parameters": {"condition": "x"},
         "branches": {"true": "zz_a", "false": "zz_b"}},
        {"id": "zz_a", "type": "llm_call"},
        {"id": "zz_b", "type": "llm_call", "next": last},
    ]
    return doc


_register(
    "aevatar",
    ("unknown_key", "AEV103", "a key the engine's parser does not know", _aev_unknown_key),
    ("missing_name", "AEV104", "the workflow has no (or a blank) name", _aev_missing_name),
    ("no_steps", "AEV105", "the steps list is empty", _aev_no_steps),
    ("step_without_id", "AEV106", "a step has no id", _aev_step_without_id),
    ("unknown_role", "AEV130", "target_role names no role", _aev_unknown_role),
    ("model_as_role", "AEV131", "target_role names a model", _aev_model_as_role),
    ("unknown_next", "AEV132", "next names no step", _aev_unknown_next),
    ("unknown_branch_target", "AEV133", "a branch names no step", _aev_unknown_branch_target),
    ("conditional_one_branch", "AEV140", "a conditional lacks its true or false branch",
     _aev_conditional_one_branch),
    ("switch_without_default", "AEV141", "a switch has no _default branch", _aev_switch_without_default),
    ("while_without_bound", "AEV142", "a while with max_iterations 0", _aev_while_without_bound),
    ("missing_parameter", "AEV121", "a tool_call without tool, a connector_call without connector",
     _aev_missing_parameter),
    ("unknown_step_type", "AEV151", "a near miss of a step type", _aev_unknown_step_type),
    ("cannot_run", "AEV152", "a primitive flowc cannot compile", _aev_cannot_run),
    ("lone_quote", "AEV202", "a template with a lone quote", _aev_lone_quote),
    ("last_step_next", "AEV301", "the last step has next", _aev_last_step_next),
    ("arm_falls_through", "AEV303", "a branch arm without next falls into a sibling arm", _aev_arm_falls_through),
    ("unknown_step_ref", "AEV212", "a template reads a step that does not exist", _aev_unknown_step_ref),
    ("text_ref", "AEV210", "a template reads steps.<id>.text", _aev_text_ref),
    ("bad_number", "AEV108", "a typed field that does not convert", _aev_bad_number),
    ("wrong_shape", "AEV102", "parameters, a step, roles or retry of the wrong shape", _aev_wrong_shape),
    ("empty_document", "AEV101", "an empty document", _aev_empty_document, True),
    ("invalid_yaml", "YAML001", "the text stops being well-formed YAML", _wfs_invalid_yaml, True),
    ("duplicate_key", "YAML002", "a mapping repeats a key", _wfs_duplicate_key, True),
)


# ------------------------------------------------------------------ instruction
def _ins_steps(doc, kinds=None):
    return [sid for sid, s in doc["steps"].items() if kinds is None or s.get("kind") in kinds]


def _ins_work_step(draw, doc) -> str:
    """A non-trigger step id (there is always the finish)."""
    return _pick(draw, [sid for sid, s in doc["steps"].items() if s.get("kind") != "manual"])


def _ins_unknown_field(draw, doc):
    if draw(_booleans()):
        doc["steps"][_ins_work_step(draw, doc)][_pick(draw, ["argz", "dependson", "next", "wehn", "retries"])] = "x"
    else:
        doc[_pick(draw, ["nodes_v", "input", "output", "timeout"])] = "x"
    return doc


def _ins_missing_kind(draw, doc):
    sid = _ins_work_step(draw, doc)
    step = doc["steps"][sid]
    doc["steps"][sid] = {"depends_on": step["depends_on"]}
    return doc


def _ins_missing_required(draw, doc):
    deps = "start"
    doc["steps"]["zz"] = _pick(draw, [{"kind": "tool", "depends_on": deps}, {"kind": "agent", "depends_on": deps},
                                      {"kind": "sleep", "depends_on": deps},
                                      {"kind": "filter", "depends_on": deps, "over": "CEL: [1]"}])
    _ins_finish_after(doc, "zz")
    return doc


def _ins_finish_after(doc, sid):
    done = doc["steps"]["done"]
    deps = done["depends_on"] if isinstance(done["depends_on"], list) else [done["depends_on"]]
    done["depends_on"] = deps + [sid]


def _ins_unknown_kind(draw, doc):
    doc["steps"]["zz"] = {"kind": _pick(draw, ["tool_call", "llm", "asign", "finsh", "http.get"]),
                          "depends_on": "start"}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_bad_id(draw, doc):
    bad = _pick(draw, ["9lives", "has space", "x" * 65, "dot.ted", "-dash"])
    doc["steps"][bad] = {"kind": "noop", "depends_on": "start"}
    _ins_finish_after(doc, bad)
    return doc


def _ins_bad_duration(draw, doc):
    doc["steps"]["zz"] = {"kind": "sleep", "depends_on": "start",
                          "duration": _pick(draw, ["soon", "5 minutes", "10x", "-5s", "1.5.2s"])}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_unknown_dependency(draw, doc):
    sid = _ins_work_step(draw, doc)
    step = doc["steps"][sid]
    deps = step["depends_on"] if isinstance(step["depends_on"], list) else [step["depends_on"]]
    step["depends_on"] = deps + ["missing_step"]
    return doc


def _ins_trigger_with_dependency(draw, doc):
    doc["steps"]["start"]["depends_on"] = _pick(draw, [sid for sid in doc["steps"] if sid != "start"])
    return doc


def _ins_self_dependency(draw, doc):
    sid = _ins_work_step(draw, doc)
    step = doc["steps"][sid]
    deps = step["depends_on"] if isinstance(step["depends_on"], list) else [step["depends_on"]]
    step["depends_on"] = deps + [sid]
    return doc


def _ins_no_start(draw, doc):
    del doc["steps"]["start"]
    for step in doc["steps"].values():
        deps = step.get("depends_on")
        if deps == "start":
            del step["depends_on"]
        elif isinstance(deps, list) and "start" in deps:
            step["depends_on"] = [d for d in deps if d != "start"] or None
            if step["depends_on"] is None:
                del step["depends_on"]
    return doc


def _ins_unknown_step_in_expression(draw, doc):
    doc["steps"]["zz"] = {"kind": "assign", "depends_on": "start",
                          "value": _pick(draw, ["CEL: steps.missing_step.output", "{{ steps.nosuch.output }}"])}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_cel_syntax(draw, doc):
    doc["steps"]["zz"] = {"kind": "assign", "depends_on": "start",
                          "value": "CEL: " + _pick(draw, ["1 +", "(1", "a..b", "1 ? 2"])}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_cel_unknown_function(draw, doc):
    doc["steps"]["zz"] = {"kind": "assign", "depends_on": "start",
                          "value": "CEL: " + _pick(draw, ["sizeof([1])", "upper('a')", "len([1])"])}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_cel_undeclared(draw, doc):
    doc["steps"]["zz"] = {"kind": "assign", "depends_on": "start",
                          "value": "CEL: " + _pick(draw, ["foo + 1", "item", "result.x"])}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_template_syntax(draw, doc):
    doc["steps"]["zz"] = {"kind": "template", "depends_on": "start",
                          "text": _pick(draw, ["{{ steps.x.output", "{{ }}", "a {{ }} b"])}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_template_unknown_name(draw, doc):
    doc["steps"]["zz"] = {"kind": "template", "depends_on": "start",
                          "text": _pick(draw, ["{{ foo.bar }}", "{{ item }}", "x {{ output.y }}"])}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_unreachable_root(draw, doc):
    doc["steps"]["zz"] = {"kind": "noop"}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_no_finish(draw, doc):
    del doc["steps"]["done"]
    return doc


def _ins_old_dialect(draw, doc):
    if draw(_booleans()):
        doc["version"] = _pick(draw, [2, 1])
    else:
        doc["start"] = "start"
    return doc


def _ins_wrong_shape(draw, doc):
    which = _pick(draw, ["steps", "depends_on", "cases"])
    if which == "steps":
        doc["steps"]["zz"] = _pick(draw, ["noop", ["kind", "noop"]])
    elif which == "depends_on":
        sid = _ins_work_step(draw, doc)
        doc["steps"][sid]["depends_on"] = _pick(draw, [{"start": True}, 3])
    else:
        doc["steps"]["zz"] = {"kind": "switch", "depends_on": "start", "on": "a", "cases": ["a", "b"]}
        _ins_finish_after(doc, "zz")
    return doc


def _ins_reply_uri(draw, doc):
    doc["steps"]["zz"] = {"kind": "human", "depends_on": "start", "question": "ok?",
                          "reply_uri": "https://example.com/reply"}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_conflicting_fields(draw, doc):
    doc["steps"]["zz_tick"] = {"kind": "schedule", "cron": "0 7 * * *", "every": "1h"}
    doc["steps"]["zz"] = {"kind": "noop", "depends_on": "zz_tick"}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_trigger_in_body(draw, doc):
    doc["steps"]["zz"] = {"kind": "subgraph", "depends_on": "start",
                          "body": {"steps": {"t": {"kind": _pick(draw, ["manual", "once"])}}}}
    _ins_finish_after(doc, "zz")
    return doc


def _ins_cycle(draw, doc):
    doc["steps"]["zz_a"] = {"kind": "noop", "depends_on": ["start", "zz_b"]}
    doc["steps"]["zz_b"] = {"kind": "noop", "depends_on": "zz_a"}
    _ins_finish_after(doc, "zz_b")
    return doc


_register(
    "instruction",
    ("unknown_field", "INS104", "a step or the workflow gets a key the dialect does not have", _ins_unknown_field),
    ("missing_kind", "INS103", "a step has no kind", _ins_missing_kind),
    ("missing_required", "INS103", "a step lacks a field its kind requires", _ins_missing_required),
    ("unknown_kind", "INS106", "a kind that is not in the catalog", _ins_unknown_kind),
    ("bad_id", "INS107", "a step id that is not [a-zA-Z_][a-zA-Z0-9_-]{0,63}", _ins_bad_id),
    ("bad_duration", "INS108", "a sleep duration that is not a duration", _ins_bad_duration),
    ("unknown_dependency", "INS301", "depends_on names a step that does not exist", _ins_unknown_dependency),
    ("trigger_with_dependency", "INS302", "the trigger depends on a step", _ins_trigger_with_dependency),
    ("self_dependency", "INS303", "a step depends on itself", _ins_self_dependency),
    ("no_start", "INS308", "the workflow has no trigger", _ins_no_start),
    ("unknown_step_in_expression", "INS309", "an expression reads a step that does not exist",
     _ins_unknown_step_in_expression),
    ("cel_syntax", "CEL201", "a CEL value that does not parse", _ins_cel_syntax),
    ("cel_unknown_function", "CEL202", "a CEL value calls a function CEL does not have",
     _ins_cel_unknown_function),
    ("cel_undeclared", "CEL203", "a CEL value names a variable that is not in scope", _ins_cel_undeclared),
    ("template_syntax", "INS501", "a {{ }} placeholder that does not parse", _ins_template_syntax),
    ("template_unknown_name", "INS502", "a {{ }} placeholder names something not in scope",
     _ins_template_unknown_name),
    ("unreachable_root", "ANA402", "a step without depends_on that is not a trigger", _ins_unreachable_root),
    ("no_finish", "ANA404", "the workflow has no finish", _ins_no_finish),
    ("old_dialect", "INS110", "version 1/2 or a dialect-2 `start`", _ins_old_dialect),
    ("wrong_shape", "INS102", "a step, depends_on or switch cases of the wrong shape", _ins_wrong_shape),
    ("reply_uri", "INS201", "a human step with reply_uri", _ins_reply_uri),
    ("conflicting_fields", "INS203", "a schedule with both cron and every", _ins_conflicting_fields),
    ("trigger_in_body", "INS304", "a trigger inside a body", _ins_trigger_in_body),
    ("cycle", "ANA403", "two steps depend on each other", _ins_cycle),
    ("invalid_yaml", "YAML001", "the text stops being well-formed YAML", _wfs_invalid_yaml, True),
)


# ------------------------------------------------------------------ IR
def _terminals(wf: Workflow) -> list[str]:
    from flowc.ir.ops import OPERATIONS

    ends = [n.id for n in wf.nodes if OPERATIONS.get(n.op) and OPERATIONS[n.op].terminal]
    if wf.terminal is not None and wf.terminal not in ends:
        ends.append(wf.terminal)
    return ends


def _cycles_reported(semantics: str) -> bool:
    from flowc.ir.semantics import CONTROL_CYCLES_ALLOWED

    return semantics not in CONTROL_CYCLES_ALLOWED


def _ir_duplicate_node(draw, wf: Workflow) -> Workflow:
    # Not a normal terminal: a second `end` would also be a second terminal.
    node = _pick(draw, [n for n in wf.nodes if n.op not in ("end", "finish") and n.id != wf.terminal]
                 or [n for n in wf.nodes if n.op not in ("end", "finish")])
    return attrs.evolve(wf, nodes=wf.nodes + (node,))


def _ir_edge_to_unknown(draw, wf: Workflow) -> Workflow:
    node = _pick(draw, list(wf.nodes))
    edge = Edge(node.id, "nowhere", _pick(draw, [EdgeKind.SEQUENCE, EdgeKind.BRANCH, EdgeKind.ERROR]),
                label="then")
    return attrs.evolve(wf, edges=wf.edges + (edge,))


def _ir_control_cycle(draw, wf: Workflow) -> Workflow:
    from flowc.ir.graph import ancestors, control_graph

    graph = control_graph(wf)
    # An edge from a terminal back to a node on a path to it closes a cycle.
    pairs = [(end, before) for end in _terminals(wf) if end in graph for before in sorted(ancestors(graph, end))]
    if not pairs:
        return _ir_data_cycle(draw, wf)
    end, before = _pick(draw, pairs)
    return attrs.evolve(wf, edges=wf.edges + (Edge(end, before, EdgeKind.SEQUENCE),))


def _ir_data_cycle(draw, wf: Workflow) -> Workflow:
    ends = set(_terminals(wf))
    node = _pick(draw, [n for n in wf.nodes if n.id not in ends] or list(wf.nodes))
    ref = E.Ref("steps", (E.Field(node.id), E.Field("output")))
    changed = attrs.evolve(node, inputs=node.inputs + (Binding("zz", T.ANY, ref),))
    return attrs.evolve(wf, nodes=tuple(changed if n is node else n for n in wf.nodes))


def _ir_no_terminal(draw, wf: Workflow) -> Workflow:
    if wf.terminal is not None:
        return attrs.evolve(wf, terminal=_pick(draw, [None, "nowhere"]))
    # A dialect that ends runs at terminal nodes (instruction `finish`): none left.
    ends = set(_terminals(wf))
    return attrs.evolve(wf, nodes=tuple(n for n in wf.nodes if n.id not in ends),
                        edges=tuple(e for e in wf.edges if e.source not in ends and e.target not in ends))


def _ir_long_id(draw, wf: Workflow) -> Workflow:
    node = _pick(draw, list(wf.nodes))
    new = "x" * 300

    def rename(i: str) -> str:
        return new if i == node.id else i

    nodes = tuple(attrs.evolve(n, id=new) if n is node else n for n in wf.nodes)
    edges = tuple(attrs.evolve(e, source=rename(e.source), target=rename(e.target)) for e in wf.edges)
    terminal = rename(wf.terminal) if wf.terminal is not None else None
    return attrs.evolve(wf, nodes=nodes, edges=edges, entry=tuple(rename(i) for i in wf.entry), terminal=terminal)


def _ir_output_type_mismatch(draw, wf: Workflow) -> Workflow:
    binding = Binding("zz", T.INT, E.Literal(_pick(draw, ["abc", True, [1]]), "auto"))
    return attrs.evolve(wf, outputs=wf.outputs + (binding,))


IR_OPERATORS: tuple[Operator, ...] = tuple(
    Operator(name, code, "ir", desc, fn, applies=applies) for name, code, desc, fn, applies in (
        ("duplicate_node", "ANA401", "a node appears twice", _ir_duplicate_node, None),
        ("edge_to_unknown", "ANA405", "an edge names a node that does not exist", _ir_edge_to_unknown, None),
        ("control_cycle", "ANA403", "a terminal gets an edge back to a node before it", _ir_control_cycle,
         _cycles_reported),
        ("data_cycle", "ANA403", "a node reads its own output", _ir_data_cycle, _cycles_reported),
        ("no_terminal", "ANA404", "the workflow's terminal is missing", _ir_no_terminal, None),
        ("long_id", "ANA406", "a node id is longer than the limit", _ir_long_id, None),
        ("output_type_mismatch", "ANA501", "a workflow output's value does not have its declared type",
         _ir_output_type_mismatch, None),
    ))
OPERATORS["ir"] = IR_OPERATORS


def operators_for(dialect: str) -> tuple[Operator, ...]:
    return OPERATORS.get(dialect, ())


def apply_to_document(op: Operator, draw, doc: dict) -> dict:
    """Apply a document-level operator to a copy of ``doc``."""
    return op.apply(draw, copy.deepcopy(doc))


_PREFIX_ORDER = ("WFS", "AEV", "INS", "CEL", "ANA", "YAML")


def markdown_table() -> str:
    """The operator table of docs/fuzzing.md: per dialect, how many
    operators and which codes they expect."""
    from collections import Counter

    def order(code: str):
        prefix = code.rstrip("0123456789")
        return (_PREFIX_ORDER.index(prefix) if prefix in _PREFIX_ORDER else len(_PREFIX_ORDER), code)

    rows = ["| dialect | operators | codes |", "|---|---|---|"]
    for dialect, table in OPERATORS.items():
        counts = Counter(op.code for op in table)
        codes = ", ".join(f"{c} ({counts[c]})" if counts[c] > 1 else c for c in sorted(counts, key=order))
        rows.append(f"| {dialect} | {len(table)} | {codes} |")
    return "\n".join(rows)
