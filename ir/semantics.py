"""Named meanings: the tables that say what each operator, truthiness rule
and stringification means, dialect by dialect.

The dialects use the same symbols for different things (``==`` coerces in
WorkflowSkill and never in CEL; ``contains`` is a case-insensitive
substring test in WorkflowSkill and a case-sensitive one in CEL; aevatar
compares strings parsed as doubles). The IR never stores a bare ``==``: it
stores one of the keys below, and every backend implements each key exactly
once. The differences live in these tables, not in scattered ifs.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class OperatorSpec:
    key: str
    symbol: str
    arity: int
    meaning: str


def _ops(*specs: OperatorSpec) -> dict[str, OperatorSpec]:
    return {s.key: s for s in specs}


OPERATORS: dict[str, OperatorSpec] = _ops(
    # WorkflowSkill (reference runtime 0.5.0 semantics)
    OperatorSpec("wfs.eq", "==", 2,
                 "strict equality; a number against a string compares the number with "
                 "Number(string) when that is not NaN; null and missing are different"),
    OperatorSpec("wfs.ne", "!=", 2, "exact negation of wfs.eq"),
    OperatorSpec("wfs.lt", "<", 2, "numeric only: both sides through toNumber (non-numeric strings are 0)"),
    OperatorSpec("wfs.le", "<=", 2, "numeric only, as wfs.lt"),
    OperatorSpec("wfs.gt", ">", 2, "numeric only, as wfs.lt"),
    OperatorSpec("wfs.ge", ">=", 2, "numeric only, as wfs.lt"),
    OperatorSpec("wfs.contains", "contains", 2,
                 "array left side: exact membership (no coercion); otherwise "
                 "case-insensitive substring of the stringified sides (null is '')"),
    OperatorSpec("wfs.and", "&&", 2, "evaluates both sides, returns a boolean by wfs_truthy"),
    OperatorSpec("wfs.or", "||", 2, "evaluates both sides, returns a boolean by wfs_truthy"),
    OperatorSpec("wfs.not", "!", 1, "boolean negation by wfs_truthy"),
)

# How a value is tested as a condition.
TRUTHINESS: dict[str, str] = {
    "js_boolean": "JavaScript Boolean(): false for null, missing, false, 0, NaN and ''; "
                  "[] and {} are true (WorkflowSkill guards, conditionals, filters)",
    "wfs_truthy": "WorkflowSkill isTruthy: false for null, missing, false, 0, '' and []; "
                  "objects and NaN are true (operands of !, && and ||)",
}

# How a placeholder value becomes text inside a template.
STRINGIFY: dict[str, str] = {
    "wfs": "null/missing -> ''; strings as is; numbers and booleans as JavaScript "
           "String(); arrays and objects as compact JSON.stringify",
}


@attrs.frozen
class DialectProfile:
    """A dialect's semantic choices as named flags (sqlglot-style)."""

    name: str
    eq: str
    truthiness_guard: str
    truthiness_branch: str
    truthiness_filter: str
    stringify: str
    null_vs_missing: str  # "distinct": a missing value is not null
    parameters_are_strings: bool
    number_model: str


WORKFLOWSKILL = DialectProfile(
    name="workflowskill",
    eq="wfs.eq",
    truthiness_guard="js_boolean",
    truthiness_branch="js_boolean",
    truthiness_filter="js_boolean",
    stringify="wfs",
    null_vs_missing="distinct",
    parameters_are_strings=False,
    number_model="float64 (JavaScript numbers)",
)

PROFILES: dict[str, DialectProfile] = {p.name: p for p in (WORKFLOWSKILL,)}
