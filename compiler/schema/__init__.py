"""JSON Schemas (2020-12) for the dialects, generated from the checker's tables.

``flowc schema DIALECT`` prints one; editors (yaml-language-server) use it
to complete and validate workflow YAML while typing.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from flowc.compiler.schema import workflowskill

# dialect -> schema builder. A dialect appears here once its field tables exist.
GENERATORS: dict[str, Callable[[], dict]] = {
    "workflowskill": workflowskill.schema,
}


def schema(dialect: str) -> dict:
    try:
        return GENERATORS[dialect]()
    except KeyError:
        raise KeyError(f"no schema for dialect {dialect!r}; available: {', '.join(GENERATORS)}") from None


def schema_text(dialect: str) -> str:
    return json.dumps(schema(dialect), indent=2, ensure_ascii=False) + "\n"


__all__ = ["GENERATORS", "schema", "schema_text"]
