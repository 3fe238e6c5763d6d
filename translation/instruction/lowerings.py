"""The instruction emitter's lowerings: each WorkflowSkill meaning key's
CEL form (:data:`OPERATOR_RULES`, keyed by IR operator key) and each
aevatar primitive's dialect-3 form (:data:`STEP_RULES`, keyed by the
primitive the IR records)."""

from __future__ import annotations

__all__ = ["OPERATOR_RULES", "STEP_RULES"]

# canonical aevatar primitive (its IR op / capability) -> what it becomes
STEP_RULES = {
    "assign": "assign with `writes` (the value is text)",
    "delay": "sleep, then the input passed through",
    "tool_call": "tool (arguments that are a JSON object become args), then a template that makes the result text",
    "transform": "a template that passes the input through (op identity, or an op aevatar does not know)",
    "guard": "an assert (not_empty, contains), then a template that passes the input through; on_fail skip: the "
             "template alone",
    "llm_call": "agent: the role's system prompt and model as `system` and `model`, the prompt as `instruction`; "
                "a template makes the answer text",
    "switch": "a switch on the branch key aevatar computes, a noop entry per target",
    "conditional": "a switch on 'true'/'false', a noop entry per target",
}

# wfs operator -> (CEL operator, the rule that says when the meaning is the same)
OPERATOR_RULES: dict[str, tuple[str | None, str]] = {
    "wfs.eq": ("cel.eq", "equality"),
    "wfs.ne": ("cel.ne", "equality"),
    "wfs.lt": ("cel.lt", "numbers"),
    "wfs.le": ("cel.le", "numbers"),
    "wfs.gt": ("cel.gt", "numbers"),
    "wfs.ge": ("cel.ge", "numbers"),
    "wfs.contains": (None, "contains"),
    "wfs.and": ("cel.and", "truthy"),
    "wfs.or": ("cel.or", "truthy"),
    "wfs.not": ("cel.not", "truthy"),
}
