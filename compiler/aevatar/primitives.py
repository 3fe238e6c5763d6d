"""The aevatar vocabulary as data: primitives, their parameters, aliases and
the document's keys.

One table drives the front end's checks (required and unknown parameters,
value choices, role and step-type references), ``docs/aevatar.md`` and the
JSON Schema (:mod:`flowc.compiler.aevatar.schema`). Sources: the seed's
vocabulary (seeds/aevatar-workflow-authoring.md), the engine's parser and
modules at c8db46d (reference/aevatar-semantics.md §1, §6) and, marked
``since="newer"``, the newer engine generation.

Parameter values are strings; ``default`` is the engine's default text.
"""

from __future__ import annotations

import attrs

C8DB46D = "c8db46d"
NEWER = "newer"


@attrs.frozen
class Param:
    name: str
    required: bool = False
    default: str | None = None
    meaning: str = ""
    # Another spelling the engine reads for the same setting.
    alias_of: str | None = None
    # text | int | bool | number | enum | step_type | role | roles | json
    kind: str = "text"
    choices: tuple[str, ...] = ()
    since: str = C8DB46D


@attrs.frozen
class Primitive:
    name: str                      # canonical type
    group: str                     # AI, data, control, composition, integration, human, internal
    meaning: str
    params: tuple[Param, ...] = ()
    # Parameter-name prefixes the primitive reads (sub_param_*, branch.* ...).
    prefixes: tuple[str, ...] = ()
    # Unknown parameters are passed on (connectors read their own) and not reported.
    open_params: bool = False
    op: str = "call"               # IR operation
    capability: str | None = None  # for op "call"
    # none | optional | implicit (no role -> the implicit `assistant` role)
    role: str = "none"
    # Branch keys the step produces: () none, ("*",) from its parameters/branches.
    branch_keys: tuple[str, ...] = ()
    side_effect: bool = False      # may declare `compensation`
    # Regions of a composite primitive.
    regions: tuple[str, ...] = ()
    since: str = C8DB46D
    # ok | reserved (self-modifying) | import_only | internal
    status: str = "ok"

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None


def _p(name, meaning="", default=None, **kw) -> Param:
    return Param(name, default=default, meaning=meaning, **kw)


def _alias(name, of, **kw) -> Param:
    return Param(name, alias_of=of, meaning=f"alias of `{of}`", **kw)


_TIMEOUT_MS = _p("timeout_ms", "step timeout in milliseconds (100..600000); a timeout fails the run",
                 kind="int")
_WORKERS = (_p("max_concurrent_workers", "at most this many sub-steps run at once (default 20, "
               "ceiling 200)", kind="int"),
            _p("min_concurrent_workers", "lower bound on concurrency", kind="int", since=NEWER))

PRIMITIVES: tuple[Primitive, ...] = (
    # ------------------------------------------------------------------ AI
    Primitive("llm_call", "AI", "run the target role's LLM on prefix.TrimEnd() + \"\\n\\n\" + input",
              (_p("prompt_prefix", "text put before the input"),
               _TIMEOUT_MS,
               _p("llm_timeout_ms", "LLM call timeout in milliseconds", kind="int"),
               _p("agent_type", "dispatch to a custom agent type instead of the role's LLM (any other "
                  "parameters go to that agent)"),
               _p("agent_id", "the custom agent's id")),
              capability="llm", role="implicit"),
    Primitive("tool_call", "AI", "call a registered tool with JSON arguments (the input, `{}` if blank); "
              "a JSON-object result is mirrored to steps.<id>.json.<field>",
              (_p("tool", "the tool name", required=True),
               _p("arguments", "the JSON arguments (default: the input)", kind="json", since=NEWER),
               _TIMEOUT_MS),
              capability="tool", side_effect=True),
    Primitive("evaluate", "AI", "LLM score of the input against `criteria`; the output is the input; "
              "branch key `on_below` when the score is under `threshold`",
              (_p("criteria", "what to judge", "quality"),
               _p("scale", "the score range", "1-5"),
               _p("threshold", "the passing score", "3", kind="number"),
               _p("on_below", "branch key produced when the score is below the threshold", "")),
              capability="llm", role="implicit", branch_keys=("*",)),
    Primitive("reflect", "AI", "draft / critique rounds with the target role; output = the final draft",
              (_p("max_rounds", "at most this many rounds", "3", kind="int"),
               _p("criteria", "what the critique checks", "quality and correctness")),
              op="reflect", role="implicit", regions=("round",)),
    # ------------------------------------------------------------------ data
    Primitive("transform", "data", "deterministic string operation `op` on the input (unknown op: the "
              "input unchanged)",
              (_p("op", "the operation", "identity", kind="enum", choices=(
                  "identity", "count", "count_words", "take", "take_last", "join", "split", "json_extract",
                  "distinct", "uppercase", "lowercase", "trim", "reverse_lines", "json_parse", "template",
                  "sum", "subtract", "multiply", "divide", "round", "min", "max", "group_by",
                  "rss_extract_items")),
               _alias("operation", "op", since=NEWER),
               _p("n", "item count for take / take_last", "5", kind="int"),
               _alias("count", "n"),
               _p("separator", "item separator", "\\n"),
               _alias("delimiter", "separator"),
               _p("path", "JSON path (json_extract, json_parse)"),
               _alias("json_path", "path"),
               _p("field", "field to read"),
               _p("fields", "fields to read"),
               _p("sort_by", "sort key"),
               _p("order", "asc or desc", "asc", kind="enum", choices=("asc", "desc")),
               _p("precision", "decimal places (round, numeric ops)", kind="int", since=NEWER),
               _alias("scale", "precision", since=NEWER),
               _p("key", "group key (group_by)", since=NEWER),
               _alias("group_key", "key", since=NEWER),
               _alias("group_by", "key", since=NEWER),
               _p("value", "value field (group_by, numeric ops)", since=NEWER),
               _alias("value_field", "value", since=NEWER),
               _p("aggregate", "sum, count or avg (group_by)", kind="enum", choices=("sum", "count", "avg"),
                  since=NEWER),
               _alias("agg", "aggregate", since=NEWER),
               _p("template", "Scriban template (op: template)", since=NEWER)),
              op="transform.apply"),
    Primitive("assign", "data", "write `value` to the run variable `target`; output = the value (a value "
              "starting with `$` is the step input)",
              (_p("target", "the variable name"),
               _p("value", "the value; `$input` (or any text starting with `$`) means the step input")),
              op="assign"),
    Primitive("retrieve_facts", "data", "the `top_k` input lines (or `facts`) ranked by keyword hits of "
              "`query`",
              (_p("query", "the keywords"),
               _alias("keywords", "query"),
               _p("top_k", "how many facts", "5", kind="int"),
               _alias("k", "top_k"),
               _p("delimiter", "fact separator", "\\n"),
               _alias("separator", "delimiter"),
               _p("facts", "the facts (default: the input)")),
              op="transform.apply"),
    Primitive("cache", "data", "memoise a child step by `cache_key`",
              (_p("cache_key", "the cache key (default: the input)"),
               _p("ttl_seconds", "time to live", "3600", kind="int"),
               _p("child_step_type", "the child step's type", "llm_call", kind="step_type"),
               _p("child_target_role", "the child step's role", kind="role")),
              op="cache", regions=("child",)),
    # ------------------------------------------------------------------ control
    Primitive("guard", "control", "check the input; output = the input",
              (_p("check", "the check", "not_empty", kind="enum",
                  choices=("not_empty", "json_valid", "regex", "max_length", "contains")),
               _p("pattern", "the regex (check: regex)"),
               _p("max", "the maximum length (check: max_length)", kind="int"),
               _p("keyword", "the keyword (check: contains)"),
               _p("on_fail", "what a failed check does", "fail", kind="enum", choices=("fail", "skip", "branch")),
               _p("branch_target", "the step to jump to (on_fail: branch)")),
              op="assert"),
    Primitive("conditional", "control", "branch key 'true'/'false': a true/false/1/0 condition decides, "
              "else whether the input contains the condition (ignoring case); output = the input",
              (_p("condition", "the condition (interpolated first)", "default"),),
              op="branch", branch_keys=("true", "false")),
    Primitive("switch", "control", "branch key: the branch whose key equals `on` (ignoring case), else "
              "the first contained in it, else `_default`; output = the input",
              (_p("on", "the value to switch on (blank: the trimmed input)"),),
              prefixes=("branch.",), op="switch", branch_keys=("*",)),
    Primitive("while", "control", "repeat one sub-step while `condition` holds, at most `max_iterations` "
              "times; output = the last iteration's output",
              (_p("step", "the sub-step's type", "llm_call", kind="step_type"),
               _p("condition", "evaluated after each iteration with output, input, iteration and "
                  "max_iterations only", "true"),
               _p("max_iterations", "the iteration limit (1..1000000)", "10", kind="int")),
              prefixes=("sub_param_",), op="while", role="optional", regions=("body",)),
    Primitive("delay", "control", "pause; output = the input",
              (_p("duration_ms", "milliseconds (0..300000)", "1000", kind="int"),
               _alias("duration", "duration_ms"),
               _alias("delay_ms", "duration_ms")),
              op="sleep"),
    Primitive("wait_signal", "control", "suspend until the named signal arrives; output = its payload",
              (_p("signal_name", "the signal (lower-cased)", "default"),
               _alias("signal", "signal_name"),
               _p("prompt", "text shown while waiting"),
               _alias("message", "prompt"),
               _TIMEOUT_MS,
               _p("timeout_seconds", "timeout in seconds", kind="int"),
               _alias("timeout", "timeout_seconds")),
              capability="signal"),
    Primitive("checkpoint", "control", "record a checkpoint; output = the input",
              (_p("name", "the checkpoint name (default: the step id)"),),
              capability="checkpoint"),
    Primitive("lease", "control", "acquire, renew or release a named lease; output = the holder token",
              (_p("action", "acquire, renew or release", kind="enum", choices=("acquire", "renew", "release")),
               _p("key", "the lease key", required=True),
               _alias("lease_key", "key"),
               _p("on_conflict", "fail or wait", kind="enum", choices=("fail", "wait")),
               _p("ttl_ms", "lease time to live", kind="int"),
               _p("wait_timeout_ms", "how long to wait (on_conflict: wait)", kind="int"),
               _p("holder_token", "the token to renew or release"),
               _p("generation", "the lease generation", kind="int"),
               _p("holder_token_variable", "variable that receives the holder token")),
              capability="lease", since=NEWER),
    # ------------------------------------------------------------------ composition
    Primitive("foreach", "composition", "split the input (JSON array or `delimiter`) and run one sub-step "
              "per item; output = the outputs joined by \\n---\\n",
              (_p("delimiter", "item separator", "\\n---\\n"),
               _alias("separator", "delimiter"),
               _p("sub_step_type", "the sub-step's type", "parallel", kind="step_type"),
               _alias("step", "sub_step_type", kind="step_type"),
               _p("sub_target_role", "the sub-step's role (default: the step's)", kind="role"),
               _alias("sub_role", "sub_target_role", kind="role"),
               _p("items", "the items when the input has none (JSON array or list)"),
               _p("items_source", "input_file_refs: one item per input file", since=NEWER),
               *_WORKERS),
              prefixes=("sub_param_",), op="foreach", role="optional", regions=("body",)),
    Primitive("parallel", "composition", "run one llm_call per worker on the SAME input; output = the "
              "outputs joined by \\n---\\n (optionally voted)",
              (_p("workers", "the worker roles (comma, semicolon, newline or JSON list)", kind="roles"),
               _p("parallel_count", "copies of the target role when there are no workers", "3", kind="int"),
               _p("vote_step_type", "aggregate the outputs with this step type (e.g. vote)",
                  kind="step_type"),
               _p("sub_step_type", "the sub-step's type", kind="step_type", since=NEWER),
               *_WORKERS),
              prefixes=("vote_param_", "sub_param_"), op="parallel", role="optional",
              regions=("workers", "vote")),
    Primitive("race", "composition", "run llm_calls on the same input; the first success wins",
              (_p("workers", "the worker roles", kind="roles"),
               _alias("worker_roles", "workers", kind="roles"),
               _p("count", "copies of the target role when there are no workers (1..10)", "2", kind="int"),
               _alias("race_count", "count")),
              op="race", role="optional", regions=("workers",)),
    Primitive("map_reduce", "composition", "map every item of the input with a sub-step, then reduce the "
              "joined map outputs",
              (_p("delimiter", "item separator", "\\n---\\n"),
               _alias("separator", "delimiter"),
               _p("map_step_type", "the map sub-step's type", "llm_call", kind="step_type"),
               _alias("map_type", "map_step_type", kind="step_type"),
               _p("map_target_role", "the map role", kind="role"),
               _alias("map_role", "map_target_role", kind="role"),
               _p("reduce_step_type", "the reduce sub-step's type (blank: no reduce)", "llm_call",
                  kind="step_type"),
               _alias("reduce_type", "reduce_step_type", kind="step_type"),
               _p("reduce_target_role", "the reduce role", kind="role"),
               _alias("reduce_role", "reduce_target_role", kind="role"),
               _p("reduce_prompt_prefix", "text put before the joined map outputs"),
               _alias("reduce_prefix", "reduce_prompt_prefix"),
               _p("items", "the items when the input has none"),
               *_WORKERS),
              op="map_reduce", role="optional", regions=("map", "reduce")),
    Primitive("vote", "composition", "pick the longest of the input's \\n---\\n-separated candidates",
              (_p("rule_mode", "agreement rule", since=NEWER),
               _p("quorum_count", "agreement quorum", kind="int", since=NEWER),
               _p("quorum_ratio", "agreement quorum ratio", kind="number", since=NEWER),
               _p("on_agreed", "branch key when agreed", since=NEWER),
               _p("on_rejected", "branch key when rejected", since=NEWER),
               _p("on_inconclusive", "branch key when inconclusive", since=NEWER),
               _p("winner_policy", "how the winner is picked", since=NEWER)),
              prefixes=("min_", "max_", "label_", "predicate_"), op="vote", branch_keys=("*",)),
    Primitive("workflow_call", "composition", "run another workflow on the input; output = its output",
              (_p("workflow", "the workflow name", required=True),
               _p("lifecycle", "singleton, transient or scope", "singleton", kind="enum",
                  choices=("singleton", "transient", "scope"))),
              capability="workflow"),
    Primitive("dynamic_workflow", "composition", "replace the running definition with the last ```yaml "
              "block of the input", (_p("original_input", "the input the new definition starts with"),),
              capability="workflow", status="reserved"),
    # ------------------------------------------------------------------ integration
    Primitive("connector_call", "integration", "call a registered connector (role `connectors` is the "
              "allowlist); other parameters are passed to the connector",
              (_p("connector", "the connector name", required=True),
               _alias("connector_name", "connector"),
               _p("operation", "the connector operation"),
               _alias("action", "operation"),
               _p("method", "HTTP method (http_* aliases set it)"),
               _p("path", "request path"),
               _p("url", "request URL"),
               _p("retry", "extra attempts (0..5)", "0", kind="int"),
               _p("timeout_ms", "per-attempt timeout (100..300000)", "30000", kind="int"),
               _p("optional", "a missing connector is skipped", "false", kind="bool"),
               _p("on_missing", "fail or skip", "fail", kind="enum", choices=("fail", "skip")),
               _p("on_error", "fail or continue", "fail", kind="enum", choices=("fail", "continue")),
               _p("pass_through_input", "output the input instead of the response", "false", kind="bool"),
               _p("stdin_mode", "how the payload reaches a CLI connector"),
               _p("assert_response_path", "JSON path that must be present in the response"),
               _p("content_type", "payload content type"),
               _p("payload_template", "payload template"),
               _p("tool", "MCP tool (mcp_call copies it to operation)")),
              open_params=True, capability="connector", side_effect=True),
    Primitive("secure_connector_call", "integration", "connector_call with secure-input values",
              (_p("connector", "the connector name", required=True),
               _alias("connector_name", "connector"),
               _p("operation", "the connector operation"),
               _alias("action", "operation"),
               _p("retry", "extra attempts (0..5)", "0", kind="int"),
               _p("timeout_ms", "per-attempt timeout (100..300000)", "30000", kind="int")),
              open_params=True, capability="connector", side_effect=True),
    Primitive("emit", "integration", "publish an event; output = the input",
              (_p("event_type", "the event type", "custom"),
               _p("payload", "the payload (default: the input)")),
              capability="event"),
    Primitive("notify", "integration", "send a notification", (), open_params=True, capability="notify",
              since=NEWER),
    Primitive("http_request", "integration", "an HTTP request", (), open_params=True, capability="http",
              side_effect=True, since=NEWER),
    Primitive("self_reschedule", "integration", "schedule this workflow to run again", (), open_params=True,
              capability="workflow", since=NEWER),
    # ------------------------------------------------------------------ human
    Primitive("human_input", "human", "suspend until a person replies; output = the reply",
              (_p("prompt", "the question"),
               _alias("message", "prompt"),
               _p("variable", "the variable name for the reply", "user_input"),
               _p("timeout", "timeout in seconds", "1800", kind="int"),
               _alias("timeout_seconds", "timeout", kind="int"),
               _TIMEOUT_MS,
               _p("on_timeout", "fail, or anything else to continue with the input", "fail")),
              capability="human"),
    Primitive("secure_input", "human", "human_input with a masked reply",
              (_p("prompt", "the question"),
               _alias("message", "prompt"),
               _p("variable", "the variable name for the reply", "user_input"),
               _p("timeout", "timeout in seconds", "1800", kind="int"),
               _alias("timeout_seconds", "timeout", kind="int"),
               _TIMEOUT_MS,
               _p("on_timeout", "fail, or anything else to continue with the input", "fail")),
              capability="human"),
    Primitive("human_approval", "human", "suspend for approval: branch key 'true' (approved) or 'false' "
              "(rejected, when on_reject is not fail)",
              (_p("prompt", "the request"),
               _alias("message", "prompt"),
               _p("timeout", "timeout in seconds", "3600", kind="int"),
               _alias("timeout_seconds", "timeout", kind="int"),
               _TIMEOUT_MS,
               _p("on_reject", "fail, or anything else to continue (branch key 'false')", "fail"),
               _p("timeout_default_decision", "decision when the timeout passes", since=NEWER)),
              capability="human", branch_keys=("true", "false")),
    # ------------------------------------------------------------------ engine-internal
    Primitive("workflow_yaml_validate", "internal", "validate the last ```yaml block of the input",
              (), capability="workflow", status="reserved"),
    Primitive("actor_send", "internal", "send state to an actor (import only)",
              (_p("send_state_key", "the state key"), _p("agent_type", "the actor type")),
              capability="actor", status="import_only"),
    Primitive("workflow_loop", "internal", "the engine's own step kernel", (), capability="workflow",
              status="internal"),
)

BY_NAME: dict[str, Primitive] = {p.name: p for p in PRIMITIVES}

# raw (trimmed, lower-cased) type -> canonical type (WorkflowPrimitiveCatalog,
# plus the newer generation's mutex).
ALIASES: dict[str, str] = {
    "loop": "while", "sub_workflow": "workflow_call", "for_each": "foreach", "foreach_llm": "foreach",
    "parallel_fanout": "parallel", "fan_out": "parallel", "mapreduce": "map_reduce",
    "map_reduce_llm": "map_reduce", "judge": "evaluate", "select": "race", "assert": "guard",
    "sleep": "delay", "publish": "emit", "wait": "wait_signal", "bridge_call": "connector_call",
    "cli_call": "connector_call", "mcp_call": "connector_call", "http_get": "connector_call",
    "http_post": "connector_call", "http_put": "connector_call", "http_delete": "connector_call",
    "secure_connector": "secure_connector_call", "secret_input": "secure_input",
    "vote_consensus": "vote",
    # newer generation
    "mutex": "lease", "schedule_workflow": "self_reschedule", "execute_codex": "tool_call",
}
NEWER_ALIASES = frozenset({"mutex", "schedule_workflow", "execute_codex"})

# Defaults added for a raw type (WorkflowParser.ApplyErgonomicDefaults):
# (parameter, value) pairs added when absent; ("operation", "=tool") copies `tool`.
RAW_DEFAULTS: dict[str, tuple[tuple[str, str], ...]] = {
    "http_get": (("method", "GET"),),
    "http_post": (("method", "POST"),),
    "http_put": (("method", "PUT"),),
    "http_delete": (("method", "DELETE"),),
    "mcp_call": (("operation", "=tool"),),
    "foreach_llm": (("sub_step_type", "llm_call"),),
    "map_reduce_llm": (("map_step_type", "llm_call"), ("reduce_step_type", "llm_call")),
}


def canonical_type(raw: str) -> str:
    """WorkflowPrimitiveCatalog.ToCanonicalType: trim, lower-case, alias."""
    from flowc.compiler.aevatar.dotnet import lower_invariant, trim

    normalized = lower_invariant(trim(raw))
    return ALIASES.get(normalized, normalized)


def is_step_type_key(key: str) -> bool:
    """Parameters whose value names a step type (canonicalised like `type`)."""
    lowered = key.lower()
    return lowered.endswith("_step_type") or lowered == "step"


# Every type the engine knows: the canonical ones and the aliases.
KNOWN_TYPES: frozenset[str] = frozenset(BY_NAME) | frozenset(ALIASES)

# ---------------------------------------------------------------- document keys
ROOT_KEYS = ("name", "description", "roles", "steps", "configuration")
ROOT_KEYS_NEWER = ("when_to_use", "on_failure")
CONFIGURATION_KEYS = ("closed_world_mode",)
ON_FAILURE_KEYS = ("action", "max_attempts")

ROLE_KEYS = ("id", "name", "system_prompt", "provider", "model", "temperature", "max_tokens",
             "max_tool_rounds", "max_history_messages", "stream_buffer_capacity", "event_modules",
             "event_routes", "connectors", "extensions")
ROLE_KEYS_NEWER = ("agent_kind", "allowed_tools", "tool_sets")
ROLE_EXTENSION_KEYS = ("event_modules", "event_routes")
ROLE_INT_KEYS = ("max_tokens", "max_tool_rounds", "max_history_messages", "stream_buffer_capacity")

STEP_KEYS = ("id", "type", "target_role", "role", "parameters", "next", "branches", "children", "retry",
             "on_error", "timeout_ms")
# Root-level shorthands lifted into `parameters` when absent there.
ROOT_SHORTHANDS = ("workers", "parallel_count", "count", "vote_step_type", "delimiter", "sub_step_type",
                   "sub_target_role", "map_step_type", "map_target_role", "reduce_step_type",
                   "reduce_target_role", "reduce_prompt_prefix", "signal_name", "prompt", "timeout",
                   "timeout_seconds", "duration_ms", "variable", "on_timeout", "on_reject", "workflow",
                   "lifecycle", "query", "top_k", "facts")
ROOT_SHORTHANDS_NEWER = ("timeout_default_decision", "rule_mode", "quorum_count", "quorum_ratio",
                         "min_approve_count", "max_approve_count", "min_reject_count", "max_reject_count",
                         "min_abstain_count", "max_abstain_count", "count_constraints", "label_source",
                         "label_field", "predicate_id", "on_agreed", "on_rejected", "on_inconclusive",
                         "winner_policy", "action", "key", "on_conflict", "ttl_ms", "wait_timeout_ms",
                         "holder_token", "generation", "holder_token_variable")
# Lifted into `parameters` for transform steps only (newer generation).
TRANSFORM_ROOT_KEYS = ("op", "precision", "group_by", "value", "value_field", "field", "aggregate",
                       "template")
STEP_KEYS_NEWER = ("display_name", "compensation", "idempotency_key", "allowed_tools", "tool_sets",
                   "capability", "response_projection", "value_lifecycle", "interaction_spec",
                   "interaction_template_spec", "presentation", "delivery_target_id")
RETRY_KEYS = ("max_attempts", "backoff", "delay_ms")
ON_ERROR_KEYS = ("strategy", "fallback_step", "fallback", "default_output")
# Root timeout_ms is also copied to parameters.timeout_ms for these types.
TIMEOUT_LIFTED_TYPES = frozenset({"wait_signal", "connector_call", "secure_connector_call", "llm_call",
                                  "human_input", "secure_input", "human_approval"})
# Types that record `compensation` (newer kernel).
COMPENSATING_TYPES = frozenset({"tool_call", "connector_call", "secure_connector_call", "http_request"})

# Fields a step mirrors under steps.<id>.* (newer kernel), besides json.* and annotations.*.
STEP_FIELDS = ("output", "success", "error", "branch_key", "next_step_id", "assigned_variable",
               "assigned_value")
STEP_FIELD_PREFIXES = ("json", "annotations", "usage")

BRANCH_LIST_KEY_NAMES = ("condition", "when", "case", "label", "if")
BRANCH_TARGET_NAMES = ("next", "to", "target", "step")


def markdown_table() -> str:
    """The primitive table as Markdown (docs/aevatar.md embeds it; a test
    checks that the page is up to date)."""
    aliases: dict[str, list[str]] = {}
    for raw, canonical in sorted(ALIASES.items()):
        aliases.setdefault(canonical, []).append(raw)
    rows = ["| group | type (aliases) | IR | parameters (default) | meaning |", "|---|---|---|---|---|"]
    for prim in PRIMITIVES:
        names = prim.name + (f" ({', '.join(aliases[prim.name])})" if prim.name in aliases else "")
        if prim.since == NEWER:
            names += " *newer*"
        if prim.status != "ok":
            names += f" *{prim.status.replace('_', '-')}*"
        ir = prim.op + (f" `{prim.capability}`" if prim.op == "call" else "")
        if prim.regions:
            ir += " + " + ", ".join(prim.regions)
        params = []
        for p in prim.params:
            if p.alias_of:
                continue
            text = f"`{p.name}`" + ("*" if p.required else "")
            # An alias only the newer engine reads is marked on its own.
            alias_names = [f"`{q.name}`" + (" *newer*" if q.since == NEWER and p.since != NEWER else "")
                           for q in prim.params if q.alias_of == p.name]
            if alias_names:
                text += "/" + "/".join(alias_names)
            if p.default is not None:
                text += " (" + (p.default or '""') + ")"
            if p.since == NEWER:
                text += " *newer*"
            params.append(text)
        params += [f"`{pre}*`" for pre in prim.prefixes]
        meaning = prim.meaning.replace("|", "\\|")
        rows.append(f"| {prim.group} | {names} | {ir} | {', '.join(params) or '–'} | {meaning} |")
    return "\n".join(rows) + "\n"


def findings_table() -> str:
    """The AEV codes as a Markdown table (docs/aevatar.md embeds it)."""
    from flowc.compiler.codes import CODES

    rows = ["| code | severity | title |", "|---|---|---|"]
    for code, info in CODES.items():
        if code.startswith("AEV"):
            rows.append(f"| [{code}](codes.md#{code.lower()}) | {FINDING_SEVERITY.get(code, 'error')} | "
                        f"{info.title.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"


# Severity of each code (error unless listed); "warning (strict: error)" for
# the ones --strict escalates.
FINDING_SEVERITY: dict[str, str] = {
    "AEV109": "warning (strict: error)", "AEV110": "warning", "AEV111": "warning", "AEV112": "warning",
    "AEV113": "warning", "AEV120": "warning", "AEV122": "warning", "AEV123": "warning",
    "AEV124": "warning", "AEV126": "warning", "AEV128": "warning", "AEV127": "warning (strict: error)",
    "AEV135": "error (warning without branch_target)", "AEV136": "error (warning on a non-side-effecting step)",
    "AEV144": "warning", "AEV150": "warning (strict: error)",
    "AEV153": "warning (strict: error; near miss: error)", "AEV154": "warning (strict: error)",
    "AEV160": "warning", "AEV201": "warning", "AEV203": "warning", "AEV204": "warning", "AEV205": "warning",
    "AEV213": "warning", "AEV214": "warning", "AEV215": "warning", "AEV216": "warning", "AEV302": "warning",
    "AEV304": "warning", "AEV305": "warning", "AEV306": "warning", "AEV308": "warning", "AEV309": "warning",
}


def render_doc(text: str) -> str:
    """docs/aevatar.md with its generated tables filled in."""
    for name, body in (("primitives", markdown_table()), ("findings", findings_table())):
        begin, end = f"<!-- {name}:begin -->\n", f"<!-- {name}:end -->"
        i, j = text.index(begin) + len(begin), text.index(end)
        text = text[:i] + body + text[j:]
    return text


if __name__ == "__main__":  # python -m flowc.compiler.aevatar.primitives: refresh docs/aevatar.md
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "aevatar.md"
    page.write_text(render_doc(page.read_text(encoding="utf-8")), encoding="utf-8")
