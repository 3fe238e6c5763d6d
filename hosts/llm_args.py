"""What a workflow's LLM call asks for, read from its host call's arguments.

Each dialect's model step reaches the host as ``call(capability, name,
args)`` with arguments of its own shape (docs/hosts-providers.md has the
table). :func:`prompt_of` reads them, by their keys, into one
:class:`Prompt` that both wire formats (:mod:`flowc.hosts.llm`) send:

- ``{"prompt", "role": {...}}`` or ``{"prompt", "purpose"}``: an aevatar
  ``llm_call`` / ``evaluate`` / ``reflect`` (the role's ``system_prompt``,
  ``model``, ``temperature``, ``max_tokens``); the answer is text;
- ``{"instruction", ...}``: a dialect-3 ``agent`` / ``subagent`` step
  (``system``, ``model``, ``output_schema``);
- ``{"prompt", "schema"?, "system"?, "model"?}`` on the tool ``llm``: a
  WorkflowSkill ``llm`` tool step; as the WorkflowSkill CLI's ``llm`` tool,
  the answer is always JSON, the ``schema`` told to the model in the system
  prompt;
- a dialect-3 model kind (``think``, ``extract``, ``summarize``,
  ``classify``, ``judge``, ``route``, ``decide``): its fields, rendered as
  labelled sections of the user message under a one-line instruction;
- anything else: ``prompt`` (or ``input``) as the user message.

An ``output_schema`` (any JSON Schema) is enforced by the provider
(OpenAI ``response_format: json_schema``, Anthropic a forced tool) and the
answer is the parsed JSON value.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

JSON_ONLY = "Always respond with valid JSON only. No markdown, no prose."

# Dialect-3 model kinds: the instruction each starts with, and the fields
# that become sections of the user message (in this order).
KIND_INSTRUCTIONS = {
    "think": ("Reason carefully about the request and answer it.", ("prompt", "reads")),
    "extract": ("Extract the requested structured data from the input.", ("prompt", "input")),
    "summarize": ("Summarize the input.", ("prompt", "length", "input")),
    "classify": ("Classify the input into exactly one of the classes; answer with the class only.",
                 ("prompt", "classes", "input")),
    "route": ("Choose exactly one of the choices for the input; answer with the choice only.",
              ("prompt", "choices", "input")),
    "judge": ("Judge the input against the rubric.", ("prompt", "rubric", "levels", "input")),
    "decide": ("Answer each question about the state.", ("questions", "state")),
}
# The names an LLM provider answers by its arguments' shape (an aevatar
# role may have any name: the router sends it here by capability).
LLM_TOOL_NAMES = ("llm", "agent", "subagent", *KIND_INSTRUCTIONS)


class PromptError(ValueError):
    """The arguments hold no prompt."""


@attrs.frozen
class Prompt:
    """One model request, whatever dialect asked for it."""

    user: str
    system: str | None = None
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    schema: Any = None          # a JSON Schema the answer must satisfy (enforced)
    json_answer: bool = False   # the answer is parsed as JSON


# A dialect-3 kind told by a field only it has (when the call's name is not
# the kind: a route may name the profile instead).
_KIND_FIELDS = (("classes", "classify"), ("choices", "route"), ("rubric", "judge"), ("questions", "decide"),
                ("length", "summarize"), ("reads", "think"), ("check", "think"), ("effort", "think"))


def kind_of(tool: str, args: dict) -> str | None:
    """The dialect-3 model kind of a call: its name, else a field only that kind has."""
    if tool in KIND_INSTRUCTIONS:
        return tool
    for field, kind in _KIND_FIELDS:
        if field in args:
            return kind
    if "input" in args and "output_schema" in args:
        return "extract"
    if "prompt" in args and "output_schema" in args:
        return "think"
    return None


def prompt_of(tool: str, args: dict) -> Prompt:
    """The request for a call of ``tool`` with ``args`` (PromptError if none).
    The arguments' shape decides, so a route that names the profile rather
    than the workflow's name still reads them right."""
    if isinstance(args.get("role"), dict) or "purpose" in args:
        return _aevatar(args)
    if "instruction" in args:
        return _agent(args)
    if tool == "llm" or "schema" in args:
        return _workflowskill(args)
    kind = kind_of(tool, args)
    if kind is not None:
        return _kind(kind, args)
    text = _text(args.get("prompt", args.get("input")))
    if not text:
        raise PromptError('the call has no "prompt"')
    return Prompt(text, _str(args.get("system")), _str(args.get("model")), schema=_schema(args),
                  json_answer=_schema(args) is not None)


def _aevatar(args: dict) -> Prompt:
    role = args.get("role") if isinstance(args.get("role"), dict) else {}
    text = _text(args.get("prompt"))
    if not text:
        raise PromptError('the call has no "prompt"')
    return Prompt(text, _str(role.get("system_prompt")), _str(role.get("model")),
                  _number(role.get("temperature"), float), _number(role.get("max_tokens"), int))


def _agent(args: dict) -> Prompt:
    text = _text(args.get("instruction"))
    if not text:
        raise PromptError('the agent step has no "instruction"')
    context = args.get("context")
    if context not in (None, "", [], {}):
        text += "\n\n## context\n" + _text(context)
    schema = _schema(args)
    return Prompt(text, _str(args.get("system")), _str(args.get("model")), schema=schema,
                  json_answer=schema is not None)


def _workflowskill(args: dict) -> Prompt:
    text = _text(args.get("prompt"))
    if not text:
        raise PromptError('llm: "prompt" is required and must be a string')
    system = _str(args.get("system"))
    parts = [system] if system else []
    schema = args.get("schema")
    if schema:
        parts.append("Respond with a JSON object matching this schema:\n" + json.dumps(schema, indent=2))
    parts.append(JSON_ONLY)
    return Prompt(text, "\n\n".join(parts), _str(args.get("model")), json_answer=True)


def _kind(kind: str, args: dict) -> Prompt:
    instruction, fields = KIND_INSTRUCTIONS[kind]
    sections = [f"## {name}\n{_text(args[name])}" for name in fields if args.get(name) not in (None, "")]
    if not sections:
        raise PromptError(f"the {kind} step has nothing to ask")
    schema = _schema(args)
    system = _str(args.get("system"))
    return Prompt("\n\n".join(sections), f"{system}\n\n{instruction}" if system else instruction,
                  _str(args.get("model")), schema=schema, json_answer=schema is not None)


def _schema(args: dict) -> Any:
    schema = args.get("output_schema")
    return schema if isinstance(schema, dict) and schema else None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _number(value: Any, kind: type) -> Any:
    """A role setting: aevatar carries numbers as text; unreadable ones are left out."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return kind(value) if kind is float else kind(str(value).strip())
    except (TypeError, ValueError):
        return None
