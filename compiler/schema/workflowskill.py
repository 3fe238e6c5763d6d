"""JSON Schema (2020-12) for a WorkflowSkill workflow, built from the
checker's own tables (compiler/workflowskill/fields.py).

Which keys exist, which are required, and every closed set of values (step
types, transform operations, statuses, ...) come from the tables, so the
schema and the checker cannot drift apart. What the tables leave open (the
JSON shape of a key's value, its one-line description) is in ``SHAPES``
below; a test checks that every key of the tables has an entry.

The schema describes the YAML inside a ```workflow block (or a bare
workflow YAML file). It checks shape only: expressions, references and
types are the checker's job.
"""

from __future__ import annotations

from flowc.compiler.workflowskill import fields as F

DURATION_PATTERN = r"^[0-9]+(ms|s)$"
STEP_ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"

_ANY: dict = {}

# key -> (JSON schema of the value, description). Keys are those of the
# tables; the same key means the same thing wherever it appears.
SHAPES: dict[str, tuple[dict, str]] = {
    # workflow
    "inputs": ({"type": "object"}, "Named inputs."),
    "outputs": ({"type": "object"}, "Named outputs."),
    "steps": ({"type": "array"}, "The steps, run in order."),
    # declarations
    "type": ({"enum": list(F.TYPE_NAMES)}, "The value's type."),
    "default": (_ANY, "Used when the input is absent (a present null stays null)."),
    "value": (_ANY, "A literal, a `$`-expression, a `${...}` template or a `$$`-escaped string."),
    "items": (_ANY, "Documentation of the element type of an array."),
    "properties": (_ANY, "Documentation of the fields of an object."),
    "description": ({"type": "string"}, "Free text."),
    # steps
    "id": ({"type": "string", "minLength": 1, "pattern": STEP_ID_PATTERN},
           "Unique step id: letters, digits and underscores, so `$steps.<id>` can name it."),
    "condition": ({"type": "string"}, ("Expression: a guard (tool, transform, exit) or the test of a "
                  "conditional.")),
    "each": ({"type": "string"}, ("Expression giving an array: the step runs once per element "
             "(`$item`, `$index`).")),
    "delay": ({"type": "string", "pattern": DURATION_PATTERN},
              'Pause between iterations of `each`, e.g. "500ms" or "2s".'),
    "on_error": ({"enum": list(F.ON_ERROR)}, ("fail (default) stops the run; ignore continues with a "
                 "null output.")),
    "retry": ({"type": "object"}, "Retry a tool error: max, delay and backoff together."),
    "tool": ({"type": "string", "minLength": 1}, "The tool to call."),
    "operation": ({"enum": list(F.TRANSFORM_OPERATIONS)}, "The transform."),
    "where": ({"type": "string"}, "Expression over `$item`/`$index`: keep the items for which it holds."),
    "expression": ({"type": "object"}, ("One output field per key; `$`-strings are expressions over "
                   "`$item`/`$index`.")),
    "field": ({"type": "string", "minLength": 1}, "Dotted path of the field to sort by."),
    "direction": ({"enum": list(F.SORT_DIRECTIONS)}, "Sort direction (asc by default)."),
    "then": ({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]},
             "Step ids run, in order, when the condition holds."),
    "else": ({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
             "Step ids run, in order, when it does not."),
    "status": ({"enum": list(F.EXIT_STATUSES)}, "How the run ends."),
    "output": ({"anyOf": [{"type": "string"}, {"type": "object"}]},
               "An expression, or an object keyed by workflow outputs."),
    # retry
    "max": ({"type": "integer", "minimum": 1}, "Further attempts after the first."),
    "backoff": ({"type": "number", "exclusiveMinimum": 0}, "Multiplier of the delay after each retry."),
}
# `delay` inside `retry` has the same shape and a different meaning.
_RETRY_DELAY = ({"type": "string", "pattern": DURATION_PATTERN}, 'Delay before the first retry, e.g. "1s".')


def _prop(key: str, shape: tuple[dict, str] | None = None) -> dict:
    value, text = shape or SHAPES[key]
    return {**value, "description": text}


def _declaration(keys: tuple[str, ...], what: str, extra_required: tuple[str, ...] = ()) -> dict:
    return {
        "type": "object",
        "description": what,
        "properties": {k: _prop(k) for k in keys},
        "required": ["type", *extra_required],
        "additionalProperties": False,
    }


def _named(ref: str, what: str) -> dict:
    return {"type": "object", "description": what, "additionalProperties": {"$ref": ref}}


def _step(step_type: str, keys: tuple[str, ...], required: tuple[str, ...], title: str) -> dict:
    props: dict = {}
    for key in keys:
        if key == "type":
            props[key] = {"const": step_type, "description": "The kind of step."}
        elif key in ("inputs", "outputs"):
            props[key] = _named("#/$defs/stepBinding", f"Step {key} by name.")
        elif key == "retry":
            props[key] = {"$ref": "#/$defs/retry", "description": SHAPES["retry"][1]}
        else:
            props[key] = _prop(key)
    schema = {
        "type": "object",
        "title": title,
        "properties": props,
        "required": ["id", "type", *(r for r in required if r not in ("id", "type"))],
        "additionalProperties": False,
    }
    if "delay" in props and "each" in props:
        schema["dependentRequired"] = {"delay": ["each"]}   # WFS113
    return schema


def _step_schemas() -> dict[str, dict]:
    defs = {}
    for step_type in F.STEP_TYPES:
        base = F.COMMON_STEP_KEYS
        if step_type not in F.EACH_ALLOWED:
            base = tuple(k for k in base if k not in ("each", "delay"))
        if step_type == "transform":
            for operation, wanted in F.TRANSFORM_OPERATIONS.items():
                keys = base + ("operation",) + wanted + F.TRANSFORM_OPTIONAL[operation]
                schema = _step(step_type, keys, F.STEP_REQUIRED[step_type] + wanted,
                               f"transform step ({operation})")
                schema["properties"]["operation"] = {"const": operation,
                                                     "description": SHAPES["operation"][1]}
                defs[f"transform_{operation}"] = schema
        else:
            keys = base + F.STEP_TYPE_KEYS[step_type]
            defs[step_type] = _step(step_type, keys, F.STEP_REQUIRED[step_type], f"{step_type} step")
    return defs


def schema() -> dict:
    steps = _step_schemas()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "WorkflowSkill workflow (flowc)",
        "description": "The YAML of a ```workflow block in a SKILL.md, as flowc checks it. "
                       "Generated by `flowc schema workflowskill`.",
        "type": "object",
        "properties": {
            "inputs": _named("#/$defs/input", SHAPES["inputs"][1]),
            "outputs": _named("#/$defs/output", SHAPES["outputs"][1]),
            "steps": {"type": "array", "description": SHAPES["steps"][1], "minItems": 1,
                      "items": {"$ref": "#/$defs/step"}},
        },
        "required": ["steps"],
        "additionalProperties": False,
        "$defs": {
            "input": _declaration(F.INPUT_KEYS, "A workflow input."),
            "output": _declaration(F.OUTPUT_KEYS, "A workflow output."),
            "stepBinding": _declaration(F.STEP_BINDING_KEYS, "A step input or output."),
            "retry": {
                "type": "object",
                "description": SHAPES["retry"][1],
                "properties": {k: _prop(k, _RETRY_DELAY if k == "delay" else None) for k in F.RETRY_KEYS},
                "required": list(F.RETRY_KEYS),
                "additionalProperties": False,
            },
            "step": {
                "description": "One step; `type` (and for transforms `operation`) selects its keys.",
                "oneOf": [{"$ref": f"#/$defs/{name}"} for name in steps],
            },
            **steps,
        },
    }


def table_keys() -> set[str]:
    """Every key the tables name (a test checks each has a shape)."""
    keys = set(F.TOP_LEVEL_KEYS) | set(F.INPUT_KEYS) | set(F.OUTPUT_KEYS) | set(F.STEP_BINDING_KEYS)
    keys |= set(F.COMMON_STEP_KEYS) | set(F.RETRY_KEYS)
    for ks in F.STEP_TYPE_KEYS.values():
        keys |= set(ks)
    for ks in F.TRANSFORM_OPERATIONS.values():
        keys |= set(ks)
    return keys
