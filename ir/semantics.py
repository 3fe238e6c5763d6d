"""Named meanings: the tables that say what each operator, truthiness rule
and stringification means, dialect by dialect.

The dialects use the same symbols for different things (``==`` coerces in
WorkflowSkill and never in CEL; ``contains`` is a case-insensitive
substring test in WorkflowSkill and a case-sensitive one in CEL; aevatar
compares strings parsed as doubles). The IR never stores a bare ``==``: it
stores one of the keys below, and every backend implements each key exactly
once. The differences live in these tables, not in scattered ifs.

Each dialect defines its own entries in :mod:`flowc.ir.dialects`; this
module only combines them into new tables (a key two dialects define must
mean the same in both).
"""

from __future__ import annotations

from flowc.ir.dialects import aevatar, instruction, workflowskill
from flowc.ir.specs import (
    CONCURRENCY,
    FUEL_FAILURE_STEPS,
    OUTPUT_RESOLUTION,
    SCHEDULING,
    STEP_BUDGETS,
    DialectProfile,
    FunctionSpec,
    OperatorSpec,
    merged,
)

__all__ = [
    "AEVATAR",
    "AEVATAR_TRANSFORM_OPS",
    "CONCURRENCY",
    "FUEL_FAILURE_STEPS",
    "FUNCTIONS",
    "INSTRUCTION",
    "KERNEL_PRIMITIVES",
    "OPERATORS",
    "OUTPUT_RESOLUTION",
    "PROFILES",
    "SCHEDULING",
    "STEP_BUDGETS",
    "STRINGIFY",
    "TRUTHINESS",
    "WORKFLOWSKILL",
    "DialectProfile",
    "FunctionSpec",
    "OperatorSpec",
]

_DIALECTS = (workflowskill, instruction, aevatar)

WORKFLOWSKILL: DialectProfile = workflowskill.PROFILE
INSTRUCTION: DialectProfile = instruction.PROFILE
AEVATAR: DialectProfile = aevatar.PROFILE

# A workflow's ``semantics`` is a key of this table.
PROFILES: dict[str, DialectProfile] = {d.PROFILE.name: d.PROFILE for d in _DIALECTS}
# ``expr.Binary.op`` / ``expr.Unary.op`` is a key of OPERATORS,
# ``expr.Call.func`` a key of FUNCTIONS.
OPERATORS: dict[str, OperatorSpec] = merged(*(d.OPERATORS for d in _DIALECTS))
FUNCTIONS: dict[str, FunctionSpec] = merged(*(d.FUNCTIONS for d in _DIALECTS))
# How a value is tested as a condition.
TRUTHINESS: dict[str, str] = merged(*(d.TRUTHINESS for d in _DIALECTS))
# How a placeholder value becomes text inside a template.
STRINGIFY: dict[str, str] = merged(*(d.STRINGIFY for d in _DIALECTS))

AEVATAR_TRANSFORM_OPS: dict[str, str] = aevatar.TRANSFORM_OPS
# The kernel primitive of each IR operation exactly one primitive lowers to.
KERNEL_PRIMITIVES: dict[str, str] = dict(aevatar.OP_PRIMITIVES)
