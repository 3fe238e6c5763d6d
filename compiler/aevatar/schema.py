"""JSON Schema (2020-12) for an aevatar workflow, built from the primitive
table (primitives.py) that the checks use, so the two cannot drift apart.

It describes shape and completion (`flowc schema aevatar`): the document's
keys (both engine generations), each primitive's parameters with their
meaning, default and allowed values, and the aliases. Parameters stay open
(the engine ignores unknown ones; flowc warns, AEV120), and so does `type`
(an unknown type is an extension primitive).
"""

from __future__ import annotations

from flowc.compiler.aevatar import primitives as P

_SCALAR = {"type": ["string", "number", "boolean", "null"]}
_ANY_VALUE = {"type": ["string", "number", "boolean", "null", "object", "array"]}
_STRING_LIST = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]}


def _param_schema(p: P.Param) -> dict:
    out: dict = {"description": p.meaning + ("" if p.since == P.C8DB46D else " (newer engine generation)")}
    if p.default is not None:
        out["default"] = p.default
    if p.choices:
        out["examples"] = list(p.choices)
    out.update(_ANY_VALUE)
    return out


def _raw_spellings(canonical: str) -> list[str]:
    return [canonical] + sorted(raw for raw, c in P.ALIASES.items() if c == canonical)


def _step_properties() -> dict:
    desc = {
        "id": "Unique step id (children share the namespace).",
        "type": "The primitive (default llm_call); aliases are accepted, anything else is an extension "
                "primitive the host must provide.",
        "target_role": "The role (actor) that runs the step; never a model name.",
        "role": "Alias of target_role.",
        "parameters": "The primitive's parameters; every value is read as a string.",
        "next": "The explicit successor; without it the step falls through to the next step in "
                "document order.",
        "branches": "Branch key -> step id (conditional: true/false; switch: keys and _default).",
        "children": "Validated but never run by the engine.",
        "retry": "Re-dispatch on failure (not on timeouts).",
        "on_error": "What a failure does: fail, skip (continue with default_output) or fallback.",
        "timeout_ms": "Step timeout in milliseconds (100..600000); a timeout fails the run.",
        "compensation": "Step that undoes this side effect when the run fails (newer generation).",
        "allowed_tools": "llm_call only: narrow the role's tools (newer generation).",
    }
    props: dict = {}
    for key in P.STEP_KEYS + P.STEP_KEYS_NEWER:
        props[key] = {"description": desc.get(key, "(newer engine generation)")}
    props["id"].update(type="string")
    props["type"].update(type="string", examples=sorted(P.KNOWN_TYPES))
    props["target_role"].update(type="string")
    props["role"].update(type="string")
    props["parameters"].update(type="object", additionalProperties=_ANY_VALUE)
    props["next"].update(type="string")
    props["branches"].update(anyOf=[
        {"type": "object", "additionalProperties": {"anyOf": [{"type": "string"}, {"type": "object"}]}},
        {"type": "array", "items": {"type": "object"}}])
    props["children"].update(type="array", items={"$ref": "#/$defs/step"})
    props["retry"].update({"$ref": "#/$defs/retry"})
    props["on_error"].update({"$ref": "#/$defs/on_error"})
    props["timeout_ms"].update(type="integer")
    props["allowed_tools"].update(_STRING_LIST)
    for key in P.ROOT_SHORTHANDS + P.ROOT_SHORTHANDS_NEWER:
        props[key] = dict(_SCALAR, description="Shorthand: lifted into parameters when absent there.")
    for key in P.TRANSFORM_ROOT_KEYS:
        props.setdefault(key, dict(_SCALAR, description="transform only: lifted into parameters "
                                   "(newer generation)."))
    return props


def _type_rules() -> list[dict]:
    rules = []
    for prim in P.PRIMITIVES:
        if prim.status != "ok":
            continue
        params = {p.name: _param_schema(p) for p in prim.params}
        rule: dict = {
            "if": {"properties": {"type": {"enum": _raw_spellings(prim.name)}}, "required": ["type"]},
            "then": {"properties": {"parameters": {"description": prim.meaning, "properties": params}}},
        }
        required = [p.name for p in prim.params if p.required]
        if required:
            rule["then"]["properties"]["parameters"]["required"] = required
        rules.append(rule)
    return rules


def schema() -> dict:
    role_props = {key: {} for key in P.ROLE_KEYS + P.ROLE_KEYS_NEWER}
    for key in ("id", "name", "system_prompt", "provider", "model", "event_modules", "event_routes",
                "agent_kind"):
        role_props[key] = {"type": "string"}
    role_props["temperature"] = {"type": ["number", "string"]}
    for key in P.ROLE_INT_KEYS:
        role_props[key] = {"type": ["integer", "string"]}
    role_props["connectors"] = {"type": "array", "items": {"type": "string"},
                                "description": "Allowlist of connector_call connectors."}
    role_props["allowed_tools"] = dict(_STRING_LIST, description="Ceiling of agent tools ([] = none).")
    role_props["tool_sets"] = _STRING_LIST
    role_props["extensions"] = {"type": "object", "additionalProperties": False,
                                "properties": {k: {"type": "string"} for k in P.ROLE_EXTENSION_KEYS}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "aevatar workflow (flowc)",
        "description": "An aevatar workflow YAML (roles + steps), as flowc checks it. Generated by "
                       "`flowc schema aevatar` from compiler/aevatar/primitives.py.",
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The workflow id."},
            "description": {"type": "string"},
            "roles": {"type": "array", "items": {"$ref": "#/$defs/role"}},
            "steps": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/step"},
                      "description": "Run in document order; the last step without next is the terminal."},
            "configuration": {"type": "object", "additionalProperties": False,
                              "properties": {"closed_world_mode": {"type": ["boolean", "string"]}}},
            "when_to_use": {"type": "string", "description": "(newer engine generation)"},
            "on_failure": {"type": "object", "additionalProperties": False,
                           "properties": {"action": {"type": "string"}, "max_attempts": {"type": "integer"}},
                           "description": "(newer engine generation)"},
        },
        "required": ["name", "steps"],
        "additionalProperties": False,
        "$defs": {
            "role": {"type": "object", "properties": role_props, "additionalProperties": False},
            "step": {"type": "object", "properties": _step_properties(), "required": ["id"],
                     "additionalProperties": False, "allOf": _type_rules()},
            "retry": {"type": "object", "additionalProperties": False, "properties": {
                "max_attempts": {"type": ["integer", "string"], "default": 3,
                                 "description": "Attempts including the first (1..10)."},
                "backoff": {"enum": ["fixed", "exponential"], "default": "fixed"},
                "delay_ms": {"type": ["integer", "string"], "default": 1000,
                             "description": "0..60000; exponential doubles it per attempt."}}},
            "on_error": {"type": "object", "additionalProperties": False, "properties": {
                "strategy": {"enum": ["fail", "skip", "fallback"], "default": "fail"},
                "fallback_step": {"type": "string"},
                "fallback": {"type": "string", "description": "Alias of fallback_step."},
                "default_output": {"type": "string", "description": "skip: the step's output."}}},
        },
    }
