"""The WorkflowSkill emitter's lowerings: each CEL operator's WorkflowSkill
form (:data:`OPERATOR_RULES`, keyed by IR operator key), each dialect-3
kind's (:data:`KIND_RULES`, keyed by kind), each aevatar primitive's
(:data:`STEP_RULES`, keyed by the primitive the IR records), and the
spellings a case-insensitive keyword test tries (:data:`NEEDLE_CHARS`)."""

from __future__ import annotations

import string

__all__ = ["KIND_RULES", "NEEDLE_CHARS", "OPERATOR_RULES", "STEP_RULES"]

# CEL operator -> (WorkflowSkill operator, the rule that says when the meaning is the same)
OPERATOR_RULES: dict[str, tuple[str, str]] = {
    "cel.eq": ("wfs.eq", "equality"),
    "cel.ne": ("wfs.ne", "equality"),
    "cel.lt": ("wfs.lt", "numbers"),
    "cel.le": ("wfs.le", "numbers"),
    "cel.gt": ("wfs.gt", "numbers"),
    "cel.ge": ("wfs.ge", "numbers"),
    "cel.and": ("wfs.and", "booleans"),
    "cel.or": ("wfs.or", "booleans"),
    "cel.not": ("wfs.not", "booleans"),
    "cel.in": ("wfs.contains", "list membership"),
}

# kind -> how it is written in WorkflowSkill
KIND_RULES: dict[str, str] = {
    "trigger": "dropped (the run starts with its inputs); reading its payload is a finding",
    "tool": "a tool step with the args as inputs",
    "filter": "a filter transform", "map": "a map transform (an object expression)", "sort": "a sort transform",
    "template": "a map transform over one item", "assign": "a map transform over one item (not `writes`)",
    "noop": "dropped", "switch": "guards on the case targets", "finish": "an exit",
    "foreach": "`each` on the body's one tool step",
}

STEP_RULES = {
    "tool_call": "a tool step (constant JSON arguments become inputs)",
    "llm_call": "a tool step named llm.<role> (another host call: a finding)",
    "assign": "no step: the value (text, a reference, or the step input for a value starting with `$`) is "
              "written where the step's output or the variable is read",
    "transform": "no step for an op that returns its input (`identity`, an unknown op): the input is read on",
    "switch": "conditional steps, one per key in matching order: `contains` the key; the input is read on",
    "conditional": "a conditional step: `contains` the condition, or the branch a constant condition takes",
    "guard": "a check that the input contains a keyword: a conditional step whose arm is an exit that fails the "
             "run",
}

# How a key's characters are sought with WorkflowSkill's `contains` (both
# sides lower-cased) so that it finds what aevatar's ignore-case comparison
# (both sides upper-cased, one character each) finds, in every text: the
# printable ASCII characters as they are, s and S also as ſ (which
# upper-cases to S and lower-cases to itself). i and k have no such form:
# ı upper-cases to I but İ lower-cases to i and a combining dot, and the
# Kelvin sign lower-cases to k. A test checks this table over Unicode.
NEEDLE_CHARS: dict[str, tuple[str, ...]] = {
    **{c: (c,) for c in string.printable if c not in "iksIKS"},
    "s": ("s", "\u017f"), "S": ("S", "\u017f"),
}
