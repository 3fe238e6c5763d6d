"""WorkflowSkill's meanings (reference runtime 0.5.0): its profile and its
operators. Its operations are the IR's base set (:mod:`.common`). Its
functions are no syntax of the language: they are the rules of a step's
and a workflow's outputs, which backends may write as expressions."""

from __future__ import annotations

from flowc.ir.specs import DialectProfile, FunctionSpec, OperationSpec, OperatorSpec

OPERATORS: dict[str, OperatorSpec] = {s.key: s for s in (
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
)}

FUNCTIONS: dict[str, FunctionSpec] = {s.key: s for s in (
    FunctionSpec("wfs.compact", 1, False,
                 "an object without its keys whose value is missing (an object binding's value); "
                 "anything else as it is"),
    FunctionSpec("wfs.pick", 2, False,
                 "v[name] ?? null when v is an object, else null (a declared output without a value)"),
)}

OPERATIONS: dict[str, OperationSpec] = {}

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

PROFILE = DialectProfile(
    name="workflowskill",
    eq="wfs.eq",
    truthiness_guard="js_boolean",
    truthiness_branch="js_boolean",
    truthiness_filter="js_boolean",
    stringify="wfs",
    null_vs_missing="distinct",
    parameters_are_strings=False,
    number_model="float64 (JavaScript numbers)",
    array_length_field=True,
)
