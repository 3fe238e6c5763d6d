"""The aevatar emitter's lowerings: what each construct of another model
becomes on aevatar's kernel, keyed by IR op or construct (the lowering
records and docs/translation.md quote them)."""

from __future__ import annotations

__all__ = ["AGENT_RULE", "STEP_RULES"]

AGENT_RULE = ("an assign of the instruction text, then an llm_call (no prompt_prefix: the prompt is the input) on "
              "a role with the agent's system prompt and model")

STEP_RULES = {
    "call tool": "tool_call with JSON arguments",
    "sleep": "delay",
    "on_error: ignore": "on_error: {strategy: skip}",
    "text": "assign of the text",
    "guard": "a conditional step before the step: true -> the step, false -> the step after it",
    "branch": "a conditional step; each arm's steps follow it, the last one going on with `next`",
    "exit": "an assign of the output text, then the end of the run",
    "exit failed": "a guard step whose check never passes: the run fails",
    "output": "the run's output: an assign of the text after the last step",
    "agent": AGENT_RULE,
    "answer in text": "${steps.<id>.output}: aevatar makes a tool's or LLM's answer text as a dialect-3 template "
                      "does (null as '', data as compact JSON)",
}
