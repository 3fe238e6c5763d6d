"""Dialect-3 LLM steps -> aevatar ``llm_call`` steps on generated roles.

docs/host.md makes an aevatar ``llm_call`` on role R (``llm:<R>`` with
``{prompt, role: {id, system_prompt, model}}``) and a dialect-3 ``agent``
step (``llm:agent`` with ``{instruction, system, model}``) the same LLM
request. So an agent step is written as:

- an ``assign`` of its instruction text (``<id>_prompt``), then
- an ``llm_call`` under the agent's id, with no ``prompt_prefix``: the
  engine's prompt is then exactly the step input (routing_run: the
  prefix, trimmed, and a blank line come first only when it is not blank),
  which is the text the assign hands on (an assign hands on its input
  instead of a value starting with `$`: an instruction that may start
  with `$` is a finding);
- on a role holding the agent's ``system`` as ``system_prompt`` and its
  ``model``: one role per distinct pair, ids ``role_1``, ``role_2``, ... in
  the order the run meets them; an agent with neither runs on the engine's
  implicit role ``assistant``, which hands the host neither.

The answer is the step's output in both dialects, but aevatar makes it
text (null as '', data as compact JSON): exact where dialect 3 reads it
inside a template's text, which interpolates it the same way
(``ToAevatar.ref``; but for the numbers -0.0, NaN and the infinities,
which flowc's CEL runtime writes otherwise, as in the aevatar -> dialect 3
direction); elsewhere a finding. Agent fields the host would be handed besides these
(``tools``, ``output_schema``, ...) are TRN104 findings. Other LLM kinds
ask the host for another request (``llm:think`` with ``prompt``, ...):
:data:`LLM_KINDS` says what each becomes.
"""

from __future__ import annotations

from typing import Protocol

from flowc.ir import expr as E
from flowc.ir.span import Span
from flowc.ir.workflow import Actor, Attr, Node
from flowc.translation.aevatar.layout import fresh_id
from flowc.translation.aevatar.lowerings import AGENT_RULE
from flowc.translation.report import Report

__all__ = ["LLM_REQUESTS", "lower_llm"]


class Values(Protocol):
    """What this module needs of :class:`.steps.ToAevatar` (which imports it)."""

    taken: set[str]
    roles: dict[tuple, Actor]
    answer_steps: set[str]

    def output_text(self, value: E.Expr | None, span: Span) -> tuple[E.Expr, str | None]: ...

# Step attributes that are no field of the request: the kind's name, and what
# the dialect-3 runtime keeps from the host call (dataflow_run._CONTROL_ATTRS).
_NOT_SENT = frozenset({"capability", "name", "timeout_ms", "on_timeout", "on_error", "cache", "budget", "skills",
                       "otel", "on_replay", "idempotent", "truthiness", "ordering"})

# The LLM request a step makes (``llm:<name>``, the IR's capability and
# name) -> (the field holding the prompt, whether host.md makes it an
# llm_call's request). Requests not listed have no llm_call form.
LLM_REQUESTS: dict[str, tuple[str, bool]] = {
    "agent": ("instruction", True),
    # `llm:think` with `prompt`: a model turn, but not the request host.md
    # equates with an llm_call; written as one, with a TRN104 finding.
    "think": ("prompt", False),
}

# Request field -> the role setting that carries it.
_ROLE_FIELDS = {"system": "system_prompt", "model": "model"}


def lower_llm(node: Node, conv: Values, report: Report) -> tuple[Node, ...] | None:
    """The steps an LLM step becomes (the prompt's assign, then the
    llm_call under the step's id); None when its request has no llm_call form."""
    name = node.attr("name")
    rule = LLM_REQUESTS.get(name.value) if isinstance(name, E.Literal) and isinstance(name.value, str) else None
    if rule is None:
        return None
    prompt_field, same_request = rule
    before = len(report.diagnostics)
    if not same_request:
        report.finding("TRN104", f"{node.kind}: the host is asked llm:{node.kind}, not the request of an agent "
                       "step, which is an aevatar llm_call's (docs/host.md); written as an llm_call", node.span)
    role = _role(node, conv, report)
    _other_fields(node, prompt_field, report)
    instruction = node.attr(prompt_field)
    text, why = conv.output_text(instruction, node.span)
    if why is not None:
        report.finding("TRN102", f"the prompt aevatar sends may not be the {prompt_field}: {why}", node.span)
    prompt_id = fresh_id(f"{node.id}_prompt", conv.taken)
    assign = Node(prompt_id, "assign", "assign", node.span, attrs=(
        Attr("parameters", E.MapExpr((E.MapEntry(E.Literal("value", "string"), text),))), Attr("value", text)))
    call = Node(node.id, "call", "llm_call", node.span, actor=role, attrs=(
        Attr("parameters", E.MapExpr(())), Attr("capability", E.Literal("llm", "string")),
        Attr("name", E.Literal("llm_call", "string"))))
    conv.answer_steps.add(node.id)
    if len(report.diagnostics) == before:
        report.lowered(node.kind, AGENT_RULE, node.span)
    return assign, call


def _role(node: Node, conv: Values, report: Report) -> str | None:
    """The id of the role carrying the step's system prompt and model (one
    per distinct pair); None: the implicit role, for a step with neither."""
    settings: list[tuple[str, str]] = []
    for field, setting in _ROLE_FIELDS.items():
        value = node.attr(field)
        if value is None:
            continue
        if not (isinstance(value, E.Literal) and isinstance(value.value, str)):
            report.finding("TRN104", f"a computed or non-text {field} has no role form (a role's settings are "
                           "fixed text); it is left out of the request", value.span if value.span.known
                           else node.span)
            continue
        settings.append((setting, value.value))
    if not settings:
        return None
    key = tuple(settings)
    actor = conv.roles.get(key)
    if actor is None:
        rid = f"role_{len(conv.roles) + 1}"
        actor = Actor(rid, None, tuple(Attr(k, E.Literal(v, "string")) for k, v in settings))
        conv.roles[key] = actor
    return actor.id


def _other_fields(node: Node, prompt_field: str, report: Report) -> None:
    """Fields besides the prompt, system prompt and model: the host is handed
    them (TRN104) or the runtime uses them (TRN101); an llm_call has neither."""
    known = {prompt_field, *_ROLE_FIELDS}
    seen: set[str] = set()
    for a in node.attrs:
        if a.name in known or a.name in seen or a.name in ("capability", "name"):
            continue
        seen.add(a.name)
        span = a.span if a.span.known else node.span
        if a.name in _NOT_SENT:
            report.finding("TRN101", f"{node.kind}: {a.name} has no llm_call form", span)
        else:
            report.finding("TRN104", f"{node.kind}: the host is handed {a.name}, which an aevatar llm_call "
                           "cannot send (a role carries a system prompt and a model only)", span)
