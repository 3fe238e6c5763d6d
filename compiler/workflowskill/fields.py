"""WorkflowSkill's shape as data: which keys each part of a workflow takes.

The checker, the docs and the JSON schema read these tables.
"""

from __future__ import annotations

TOP_LEVEL_KEYS = ("inputs", "outputs", "steps")
TYPE_NAMES = ("string", "int", "float", "boolean", "array", "object")

INPUT_KEYS = ("type", "default", "items", "properties", "description")
OUTPUT_KEYS = ("type", "value", "items", "properties", "description")
STEP_BINDING_KEYS = ("type", "value", "items", "properties", "description")

STEP_TYPES = ("tool", "transform", "conditional", "exit")
COMMON_STEP_KEYS = ("id", "type", "description", "inputs", "outputs", "condition", "each",
                    "delay", "on_error", "retry")
STEP_TYPE_KEYS: dict[str, tuple[str, ...]] = {
    "tool": ("tool",),
    "transform": ("operation", "where", "expression", "field", "direction"),
    "conditional": ("then", "else"),
    "exit": ("status", "output"),
}
STEP_REQUIRED: dict[str, tuple[str, ...]] = {
    "tool": ("tool",),
    "transform": ("operation",),
    "conditional": ("condition", "then"),
    "exit": ("status",),
}
TRANSFORM_OPERATIONS: dict[str, tuple[str, ...]] = {
    # operation -> (required keys, then optional keys)
    "filter": ("where",),
    "map": ("expression",),
    "sort": ("field",),
}
TRANSFORM_OPTIONAL: dict[str, tuple[str, ...]] = {"filter": (), "map": (), "sort": ("direction",)}
SORT_DIRECTIONS = ("asc", "desc")
EXIT_STATUSES = ("success", "failed")
ON_ERROR = ("fail", "ignore")
RETRY_KEYS = ("max", "delay", "backoff")
EACH_ALLOWED = ("tool", "transform")

ROOTS = ("inputs", "steps", "item", "index", "result")
