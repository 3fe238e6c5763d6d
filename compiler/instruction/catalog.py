"""The node catalog as data: ``catalog.json`` next to this file.

The checker reads :data:`KINDS`, :data:`COMMON_FIELDS` and
:data:`TOP_LEVEL_KEYS`; ``flowc schema instruction`` is :func:`json_schema`;
docs/instruction.md's kind table is :func:`markdown_table` (a test keeps
the doc in step with the file).
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources

import attrs

__all__ = [
    "COMMON_FIELDS",
    "KINDS",
    "MAX_DEPTH",
    "MAX_ID",
    "MAX_ITERATIONS",
    "MAX_PARALLEL",
    "MAX_STEPS",
    "TOP_LEVEL_KEYS",
    "TRIGGER_KINDS",
    "KindSpec",
    "catalog_data",
    "json_schema",
    "markdown_table",
    "nested_kinds",
    "workflow_schema",
]

# Caps (RFC 0027 section 8).
MAX_STEPS = 512          # top-level steps per workflow (body steps not counted)
MAX_DEPTH = 4            # body nesting
MAX_ID = 64              # ids, workflow names, branch names
MAX_ITERATIONS = 10_000  # iterate.max_iterations (default and cap)
MAX_PARALLEL = 8         # batch/foreach parallel lanes
ID_PATTERN = r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$"


@attrs.frozen
class KindSpec:
    kind: str
    role: str                       # trigger | step
    meaning: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    field_provenance: tuple[tuple[str, str], ...]
    provenance: str                 # seed | seed+reference
    op: str
    capability: str | None = None
    name: str | None = None         # the call name, with {field} / {kind} placeholders
    nested: str | None = None       # body | branches
    required_by_rule: tuple[str, ...] = ()

    @property
    def is_trigger(self) -> bool:
        return self.role == "trigger"

    @property
    def fields(self) -> tuple[str, ...]:
        return self.required + self.optional

    def provenance_of(self, field: str) -> str | None:
        for name, prov in self.field_provenance:
            if name == field:
                return prov
        return None


@functools.cache
def catalog_data() -> dict:
    text = resources.files(__package__).joinpath("catalog.json").read_text(encoding="utf-8")
    return json.loads(text)


def _load() -> dict[str, KindSpec]:
    out = {}
    for kind, entry in catalog_data()["kinds"].items():
        ir = entry["ir"]
        out[kind] = KindSpec(
            kind=kind, role=entry["role"], meaning=entry["meaning"],
            required=tuple(entry["required"]), optional=tuple(entry["optional"]),
            field_provenance=tuple(entry["provenance"]["fields"].items()),
            provenance=entry["provenance"]["kind"], op=ir["op"], capability=ir.get("capability"),
            name=ir.get("name"), nested=entry.get("nested"),
            required_by_rule=tuple(entry.get("required_by_rule", ())),
        )
    return out


KINDS: dict[str, KindSpec] = _load()
COMMON_FIELDS: tuple[str, ...] = tuple(catalog_data()["common"])
TOP_LEVEL_KEYS: tuple[str, ...] = tuple(catalog_data()["top_level"])
TRIGGER_KINDS: frozenset[str] = frozenset(k for k, s in KINDS.items() if s.is_trigger)


def nested_kinds() -> dict[str, str]:
    return {k: s.nested for k, s in KINDS.items() if s.nested}


# ------------------------------------------------------------------ JSON Schema

_DURATION = {"anyOf": [{"type": "string", "pattern": r"^\s*([0-9]+(\.[0-9]+)?\s*(ms|s|m|h|d)?\s*)+$"},
                       {"type": "number", "minimum": 0},
                       {"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}},
                        "required": ["ms"], "additionalProperties": False}]}
_COMMON_SCHEMA = {
    "kind": {"type": "string"},
    "depends_on": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
    "when": {"type": ["string", "boolean"], "description": "a CEL guard; false prunes the step"},
    "retry": {"type": "object", "properties": {"max": {"type": "integer", "minimum": 0, "maximum": 20},
                                               "backoff": _DURATION},
              "additionalProperties": False},
    "timeout": _DURATION,
    "on_error": {"type": "string", "pattern": "^(fail|continue|goto:[a-zA-Z_][a-zA-Z0-9_-]{0,63})$"},
    "idempotent": {"type": "boolean"},
    "on_replay": {"enum": ["retry", "skip", "fail"]},
    "output_schema": {"type": ["object", "boolean"]},
    "cache": {"type": "object", "properties": {"key": {}, "ttl": _DURATION}, "additionalProperties": False},
    "budget": {"type": "integer", "minimum": 0},
    "skills": {"type": "array", "items": {"type": "string"}},
    "otel": {"type": "object"},
    "description": {"type": "string"},
}


def json_schema() -> dict:
    """A JSON Schema (2020-12) for a YAML or JSON file of the dialect, in
    either carrier the front end reads there (carriers.locate): a workflow
    document (a mapping with ``steps``), or a config document whose
    ``workflows:`` list holds workflow documents (its other keys are the
    agent's configuration, not flowc's to check). The Markdown carriers hold
    workflow documents in fences, which YAML editors do not look into."""
    workflow = workflow_schema()
    defs = workflow.pop("$defs")
    for key in ("$schema", "$id", "title"):
        workflow.pop(key)
    defs["workflow"] = workflow
    defs["config"] = {
        "type": "object",
        "required": ["workflows"],
        "description": "a config document: `workflows:` lists the workflow documents",
        "properties": {"workflows": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/workflow"}}},
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://flowc.dev/schema/instruction.json",
        "title": "Instruction-catalog workflow (agentd dialect 3)",
        # The front end's own test (carriers.locate): `workflows` without `steps` is a config document.
        "if": {"type": "object", "required": ["workflows"], "not": {"required": ["steps"]}},
        "then": {"$ref": "#/$defs/config"},
        "else": {"$ref": "#/$defs/workflow"},
        "$defs": defs,
    }


def workflow_schema() -> dict:
    """A JSON Schema (2020-12) for one workflow document, from the catalog:
    per kind, the required fields and no others than the kind's and the
    common ones. Cross-field and graph rules are flowc's checker's."""
    step_ref = {"$ref": "#/$defs/step"}
    rules = []
    for kind, spec in sorted(KINDS.items()):
        props = {name: {} for name in spec.fields}
        for name in COMMON_FIELDS:
            props.setdefault(name, _COMMON_SCHEMA.get(name, {}))
        props["kind"] = {"const": kind}
        if spec.nested == "body":
            props["body"] = {"$ref": "#/$defs/graph"}
        elif spec.nested == "branches":
            props["branches"] = {"type": "object", "additionalProperties": {"$ref": "#/$defs/graph"}}
        rules.append({
            "if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
            "then": {"required": list(spec.required + spec.required_by_rule), "properties": props,
                     "additionalProperties": False,
                     "description": f"{spec.role}: {spec.meaning}"},
        })
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://flowc.dev/schema/instruction.json",
        "title": "Instruction-catalog workflow (agentd dialect 3)",
        "type": "object",
        "required": ["steps"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "pattern": ID_PATTERN},
            "version": {"const": 3},
            "description": {"type": "string"},
            "armed": {"type": "boolean"},
            "inputs": {"type": "object"},
            "outputs": {"type": "object"},
            "state": {"type": "object", "additionalProperties": {
                "type": "object", "properties": {"schema": {}, "reducer": {
                    "enum": ["overwrite", "append", "merge", "union"]}}}},
            "concurrency": {"type": "object", "properties": {
                "max_runs": {"type": "integer", "minimum": 1, "maximum": 1024},
                "on_overflow": {"enum": ["queue", "drop", "replace"]}}, "additionalProperties": False},
            "limits": {"type": "object", "properties": {"steps": {"type": "integer"},
                                                        "tokens": {"type": "integer"},
                                                        "deadline": _DURATION, "budget": {}},
                       "additionalProperties": False},
            "priority": {"enum": ["low", "normal", "high"]},
            "unload": {"type": "object", "properties": {"policy": {"enum": ["drain", "cancel", "detach"]},
                                                        "timeout": _DURATION},
                       "additionalProperties": False},
            "durable": {"type": "boolean"},
            "file": {"type": "string"},
            "uri": {"type": "string"},
            "steps": {"type": "object", "maxProperties": MAX_STEPS,
                      "propertyNames": {"pattern": ID_PATTERN}, "additionalProperties": step_ref},
        },
        "$defs": {
            "graph": {"type": "object", "required": ["steps"], "additionalProperties": False,
                      "properties": {"steps": {"type": "object", "propertyNames": {"pattern": ID_PATTERN},
                                               "additionalProperties": step_ref}}},
            "step": {"type": "object", "required": ["kind"],
                     "properties": {"kind": {"enum": sorted(KINDS)}},
                     "allOf": rules},
        },
    }


# ------------------------------------------------------------------ docs

def _ir_text(spec: KindSpec) -> str:
    if spec.op == "call":
        name = re.sub(r"\{([a-z_]+)\}", r"<\1>", (spec.name or "").replace("{kind}", spec.kind))
        return f"`call` {spec.capability} `{name}`"
    return f"`{spec.op}`"


def markdown_table() -> str:
    """The kind table of docs/instruction.md."""
    rows = ["| kind | role | required | optional | IR | provenance |",
            "|---|---|---|---|---|---|"]
    for kind, spec in sorted(KINDS.items()):
        required = ", ".join(f"`{f}`" for f in spec.required + spec.required_by_rule) or "—"
        optional = ", ".join(f"`{f}`" + ("†" if spec.provenance_of(f) == "reference" else "")
                             for f in spec.optional) or "—"
        rows.append(f"| `{kind}` | {spec.role} | {required} | {optional} | {_ir_text(spec)} | "
                    f"{spec.provenance} |")
    return "\n".join(rows) + "\n"
