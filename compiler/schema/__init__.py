"""JSON Schemas (2020-12) for the dialects, generated from the checker's tables.

``flowc schema DIALECT`` prints one; editors (yaml-language-server) use it
to complete and validate workflow YAML while typing.

The WorkflowSkill schema is built here (:mod:`.workflowskill`). A front end
that keeps its own tables may build its dialect's schema next to them; it
is found by the names in ``_PROVIDERS`` as soon as it exists.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable

# dialect -> (module, function) candidates, first found wins.
_PROVIDERS: dict[str, tuple[tuple[str, str], ...]] = {
    "workflowskill": (("flowc.compiler.schema.workflowskill", "schema"),),
    "aevatar": (("flowc.compiler.aevatar.schema", "schema"), ("flowc.compiler.aevatar.schema", "json_schema"),
                ("flowc.compiler.aevatar.primitives", "json_schema")),
    "instruction": (("flowc.compiler.instruction.schema", "schema"),
                    ("flowc.compiler.instruction.catalog", "json_schema")),
}


def _find(dialect: str) -> Callable[[], dict] | None:
    for module_name, function in _PROVIDERS.get(dialect, ()):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and module_name.startswith(exc.name):
                continue   # that module does not exist (yet)
            raise
        builder = getattr(module, function, None)
        if callable(builder):
            return builder
    return None


def available() -> dict[str, Callable[[], dict]]:
    """The dialects that have a schema, with its builder."""
    found = {d: _find(d) for d in _PROVIDERS}
    return {d: f for d, f in found.items() if f is not None}


def schema(dialect: str) -> dict:
    builder = _find(dialect)
    if builder is None:
        raise KeyError(f"no schema for dialect {dialect!r}; available: {', '.join(available())}")
    return builder()


def schema_text(dialect: str) -> str:
    return json.dumps(schema(dialect), indent=2, ensure_ascii=False) + "\n"


__all__ = ["available", "schema", "schema_text"]
