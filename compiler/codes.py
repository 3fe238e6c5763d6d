"""Every finding code flowc reports: stable, documented, explainable.

Codes never change meaning once published. ``flowc explain CODE`` prints
the entry. Prefixes: FLC driver and I/O, YAML reading, WFS WorkflowSkill
front end, ANA dialect-independent analyses.
"""

from __future__ import annotations

import attrs
from flowc.compiler.codes_examples import EXAMPLES


@attrs.frozen
class CodeInfo:
    code: str
    title: str
    explanation: str
    # A file that produces the code and the same file fixed (see
    # codes_examples.py, where they live; a row may also give them inline).
    wrong: str = ""
    right: str = ""
    example_file: str = "workflow.yaml"


def _table(*rows: tuple[str, ...]) -> dict[str, CodeInfo]:
    table = {}
    for code, title, text, *inline in rows:
        ex = EXAMPLES.get(code)
        if inline:
            table[code] = CodeInfo(code, title, text, *inline)
        elif ex is not None:
            table[code] = CodeInfo(code, title, text, ex.wrong, ex.right, ex.file)
        else:
            table[code] = CodeInfo(code, title, text)
    return table


CODES: dict[str, CodeInfo] = _table(
    ("FLC001", "unrecognised dialect",
     ("flowc could not tell which dialect the file is written in. A WorkflowSkill file is a "
     "Markdown file with a ```workflow block or a YAML mapping with a `steps` list of typed "
     "steps. Use --dialect to say which one it is.")),
    ("FLC002", "dialect not supported yet",
     "The file is in a dialect this version of flowc recognises but cannot compile yet."),
    ("FLC003", "file cannot be read",
     "The file does not exist, is not readable, or is not UTF-8 text."),
    ("YAML001", "invalid YAML", "The text is not well-formed YAML."),
    ("YAML002", "duplicate key",
     ("A mapping defines the same key twice. YAML 1.2 forbids it; the second value would "
     "silently win in many tools.")),
    ("YAML003", "non-string key", "Mapping keys must be plain scalars."),
    ("YAML004", "unsupported YAML feature", "Merge keys (<<) are not part of YAML 1.2."),
    ("YAML005", "document too large",
     "The document expands (through aliases or nesting) beyond flowc's limits."),
    ("YAML006", "unsupported YAML tag",
     ("A node carries a tag other than the YAML 1.2 core schema's (`!!str`, `!!int`, `!!float`, "
      "`!!bool`, `!!null`, `!!seq`, `!!map`), such as `!!python/object/apply:...`, `!!binary` or a "
      "local `!tag`, or a core tag its value does not fit (`!!int notanint`). flowc never constructs "
      "objects from tags; it reports the tag and reads the value as plain data.")),
    ("WFS101", "no workflow block",
     "A SKILL.md must contain a fenced block opened with ```workflow."),
    ("WFS102", "empty workflow", "The workflow block is empty or holds no mapping."),
    ("WFS103", "wrong shape", ("A field holds a value of the wrong shape (e.g. a list where a "
     "mapping is required).")),
    ("WFS104", "missing field", "A required field is absent."),
    ("WFS105", "unknown key",
     ("The key is not part of WorkflowSkill. The reference runtime silently drops it, so a "
     "typo such as `on_eror` would change nothing at run time; flowc reports it.")),
    ("WFS106", "invalid value", "A field holds a value outside its allowed set."),
    ("WFS107", "default on a step input",
     "Step inputs take `value`; `default` is only valid on workflow inputs."),
    ("WFS108", "bare step input", "A step input must be a mapping with `type` (and `value`)."),
    ("WFS109", "no steps", "A workflow must have at least one step."),
    ("WFS110", "frontmatter problem",
     ("The SKILL.md frontmatter is missing or lacks `name`/`description`; the workflow is "
     "named after its file.")),
    ("WFS111", "invalid duration", 'Durations are written like "500ms" or "2s".'),
    ("WFS112", "invalid retry policy",
     "`retry` needs `max` (an integer > 0), `delay` (a duration) and `backoff` (a number > 0)."),
    ("WFS113", "each/delay misuse",
     "`each` is valid only on tool and transform steps; `delay` requires `each`."),
    ("WFS201", "expression syntax error", "The `$`-expression or `${}` template does not parse."),
    ("WFS202", "unknown reference",
     "Expressions may reference $inputs, $steps, $item, $index and $result only."),
    ("WFS203", "$result outside a step output",
     ("`$result` is the raw result of the step being mapped; it exists only in a step "
     "output's `value`.")),
    ("WFS204", "reference to an undeclared step", "The referenced step id is not declared."),
    ("WFS205", "reference to a later step",
     ("A step may only reference steps that have run before it: steps declared earlier, or "
     "for a branch step, steps that run before its conditional.")),
    ("WFS206", "$steps in a step output",
     ("Step output values map the raw result with `$result`; use `$steps` in step inputs and "
     "workflow outputs.")),
    ("WFS208", "undeclared input", "`$inputs.<name>` names an input the workflow does not declare."),
    ("WFS209", "unknown branch target", "A conditional's then/else names an undeclared step."),
    ("WFS210", "branch target before its conditional",
     "Branch targets must be declared after the conditional that selects them."),
    ("WFS211", "unknown exit output key", "An exit's output keys must be declared workflow outputs."),
    ("WFS212", "$inputs reference in iteration-free context",
     "`$item` and `$index` exist only inside `each`, `where` and map expressions."),
    ("ANA401", "duplicate id", "Two nodes have the same id."),
    ("ANA402", "unreachable step", "No path from the entry reaches this step."),
    ("ANA403", "cycle", "The steps depend on each other in a cycle."),
    ("ANA404", "no single terminal", "Every path must end at the workflow's one terminal."),
    ("ANA405", "edge to unknown node", "An edge names a node that does not exist."),
    ("ANA406", "limit exceeded", "The workflow exceeds one of flowc's size limits."),
    ("LIM001", "file too large",
     ("The file is larger than flowc reads (docs/limits.md). flowc refuses it before parsing so "
      "that a hostile file cannot exhaust memory or time.")),
    ("LIM002", "too many steps",
     "The workflow has more steps (nested steps included) than flowc compiles (docs/limits.md)."),
    ("LIM101", "nests too deeply",
     ("An expression, template or constant nests deeper than flowc compiles (docs/limits.md). "
      "Every backend must run what compiles, so the limit is checked where the text is read.")),
    ("LIM102", "expression too large",
     ("A call has too many arguments, a list or map too many entries, or a path too many "
      "segments (docs/limits.md).")),
    ("LIM103", "number out of range",
     ("A number is larger than the field can hold: an integer literal outside int64/uint64, a "
      "non-finite number where a count is expected, or more digits than flowc reads.")),
    ("LIM104", "too many retries",
     "A retry policy asks for more attempts than flowc runs (docs/limits.md)."),
    ("LIM105", "duration too long",
     "A delay, timeout or backoff is longer than flowc schedules (docs/limits.md)."),
    ("LIM106", "loop bound too large",
     "A declared loop bound is larger than flowc runs (docs/limits.md)."),
    ("ANA501", "type mismatch", "The value wired into a field does not have the declared type."),
    ("ANA502", "not an array",
     "This value must be an array (a transform's input, an `each` target)."),
    ("ANA503", "undeclared field",
     ("The reference selects a field the producing step does not declare; it always resolves "
     "to nothing. `$steps.<id>.output.<field>` must name a declared output of the step.")),
    ("ANA504", "field of an array",
     ("The value is an array (e.g. the output of a step with `each`); selecting a named field "
     "of it always resolves to nothing. Index it or use a transform.")),
)


def explain(code: str) -> CodeInfo | None:
    return CODES.get(code.upper())


# --- instruction dialect (INS) and CEL ------------------------------------------
# Their examples live in compiler/instruction/code_examples.py.
from flowc.compiler import codes_examples as _codes_examples
from flowc.compiler.instruction import code_examples as _ins_examples

_codes_examples.EXAMPLES.update(_ins_examples.EXAMPLES)
_codes_examples.NOT_STANDALONE.update(_ins_examples.NOT_STANDALONE)

CODES.update(_table(
    ("INS101", "no workflow in the document",
     ("An instruction-dialect file is a workflow document (a mapping with `steps`), a config "
     "document with a `workflows:` list, or an instruction.md with `:::!workflow{name=...}` "
     "containers or `## !workflow <name>` sections. This file has none (or an empty one), or it is "
     "an agentd config (`config_version`) without `workflows:`, or it has no workflow of the name "
     "asked for.")),
    ("INS102", "wrong shape",
     ("A field holds a value of the wrong shape: a list where a mapping is required, a number "
     "where a step id is required, and so on.")),
    ("INS103", "missing field",
     ("A required field is absent: the workflow's `name` or `steps`, a step's `kind`, or a field "
     "the node catalog marks required for the step's kind.")),
    ("INS104", "unknown key or field",
     ("The key is not one the dialect allows here. Steps are checked strictly: a step may carry "
     "only its kind's fields (compiler/instruction/catalog.json) and the common fields (kind, "
     "depends_on, when, retry, timeout, on_error, idempotent, on_replay, output_schema, cache, "
     "budget, skills, otel, description). A typo is reported with the closest valid name.")),
    ("INS105", "invalid value", "A field holds a value outside its allowed set or range."),
    ("INS106", "unknown kind",
     "`kind` must name a node of the catalog (`flowc schema instruction` lists them)."),
    ("INS107", "invalid id",
     "Workflow names, step ids and branch names match [a-zA-Z_][a-zA-Z0-9_-]{0,63}."),
    ("INS108", "invalid duration",
     'Durations are written "30s", "5m", "2h", "500ms", "1h30m", as bare seconds, or as {ms: n}.'),
    ("INS109", "bad workflow embedding",
     ("In an instruction.md, a workflow is a `:::!workflow{name=...}` container with a YAML body "
     "and a closing `:::`, or a `## !workflow <name>` section with exactly one fenced yaml "
     "block. The leaf form `::!workflow` has no body and a bare `:::workflow` is not a workflow.")),
    ("INS110", "not dialect 3",
     ("`version` must be 3, and `start`/`nodes` belong to the older dialects: dialect 3 declares "
     "triggers as steps and edges with `depends_on`.")),
    ("INS111", "duplicate workflow name",
     ("Two workflows of one document have the same name; a host folds them into one `workflows:` "
     "list and keeps only one.")),
    ("INS201", "unsupported field",
     ("The field is in the origin catalog but refused for activation: `human.reply_uri` must be "
     "rejected by an adapter. Route the answer with `to`.")),
    ("INS202", "field without effect",
     ("`think.check` and `think.retries` are compatibility fields: they carry no checking or retry "
     "behaviour. Use `output_schema`, a `validate` or `assert` step, and the shared `retry`.")),
    ("INS203", "conflicting fields",
     ("The fields cannot be used together: a schedule chooses one of cron/every/at; a detached "
     "mcp.tool call cannot be cached; a subagent takes `instruction` or `template`.")),
    ("INS204", "field required by a rule",
     ("A cross-field rule of the catalog needs this field: a correlate trigger needs a `window`; a "
     "schedule needs one of cron/every/at; a2a.delegate needs `objective` or `command`; emit's "
     "`stream` and `subject` travel together.")),
    ("INS301", "unknown step",
     ("A `depends_on`, `on_error: goto:`, `on_timeout` or switch target names a step that does not "
     "exist in its graph.")),
    ("INS302", "start node with dependencies",
     "Triggers (start nodes) begin runs; they must not have `depends_on`."),
    ("INS303", "self reference", "A step depends on, routes to, or reads its own result."),
    ("INS304", "body rule",
     ("Steps of a body (foreach, batch, iterate, subgraph, parallel/race branches) depend only on "
     "their siblings, and a body holds no start nodes and no `finish`: a body's result is its "
     "sinks.")),
    ("INS305", "nesting too deep", "Bodies nest at most 4 levels."),
    ("INS306", "limit exceeded",
     "Dialect 3's caps: 512 top-level steps, 10,000 iterations, 8 parallel lanes."),
    ("INS307", "cycle in a body", "The steps of a body depend on each other in a cycle."),
    ("INS308", "no start node",
     ("A workflow needs at least one start node: a step whose kind is a trigger (once, manual, "
     "loop, schedule, subscribe, signal, event, stream, correlate, a2a, webhook).")),
    ("INS309", "unknown step in an expression",
     "`steps.<id>` in a template or CEL expression names a step that does not exist."),
    ("INS310", "step read before it runs",
     ("The step reads `steps.<id>` of a sibling that is not upstream of it (through depends_on, "
     "switch or goto routes), so the value may not exist yet when it runs.")),
    ("INS311", "human step in a fan-out",
     "A `human` step cannot be inside a foreach, batch, parallel or race body."),
    ("INS401", "kind not supported by the host",
     "`flowc check --host-capabilities caps.json`: the target host does not advertise this kind."),
    ("INS402", "durable workflow run without a journal",
     ("The workflow says `durable: true`, but it runs without a journal: `flowc run` was given no "
      "`--journal FILE` and its host config names no `journal` (or `flowc check --config` finds "
      "none there). A crash loses the run, and its calls would be made again from the start. "
      "Give `--journal FILE` (a SQLite file; docs/durable.md) or `journal = \"runs.db\"` in the "
      "host config; then `flowc resume RUN_ID --journal FILE` goes on after a crash.")),
    ("INS501", "template syntax error",
     ("A `{{ path }}` placeholder is not closed, empty, or not a dotted or JSON-pointer path. A "
     "dotted path splits on `.` only, so `{{ memory.content/queue }}` reads the key "
     "`content/queue`; an empty segment (`a..b`) matches nothing.")),
    ("INS502", "unknown name in a template",
     ("A placeholder starts with a name that is not in scope here (inputs, steps, vars, run, env, "
     "memory, signals; item, index, batch, iteration, branch in bodies). A trigger's own fields "
     "(a webhook's `signal`) are read against its payload's top-level keys instead (a webhook: "
     "method, path, headers, body, raw_body).")),
    ("INS503", "config reference not substituted",
     ("agentd folds `{{config.NAME}}` in at load only when it is written with no space after the "
     "braces (it looks for the literal `{{config.`). `{{ config.NAME }}` is left to the run-time "
     "templates, where `config` is no name: the step fails (an error), or its default is used every "
     "time (a warning).")),
    ("INS504", "undefined config var",
     ("A config document's workflow uses `{{config.NAME}}`, and the config's `vars:` has no NAME "
     "(dotted names go through mappings). agentd refuses to start with an unresolved reference.")),
    ("CEL201", "CEL syntax error", "The text is not CEL (or uses message construction)."),
    ("CEL202", "unknown function",
     ("The expression calls a function or method CEL does not define, or with the wrong number of "
     "arguments. It would fail every time it is evaluated.")),
    ("CEL203", "undeclared reference",
     ("The expression names a variable that is not in scope. A step's result is at "
     "`steps.<id>.output`, never at the bare id.")),
))


# --- aevatar dialect (AEV) --------------------------------------------------------
# Findings of the aevatar front end (compiler/aevatar/). AEV1xx: the document
# as the engine's parser and validator read it; AEV2xx: expressions and
# references; AEV3xx: the engine's control-flow rules its validator does not
# enforce. Examples live in compiler/aevatar/code_examples.py.
from flowc.compiler import codes_examples as _aev_codes_examples
from flowc.compiler.aevatar import code_examples as _aev_examples

_aev_codes_examples.EXAMPLES.update(_aev_examples.EXAMPLES)
_aev_codes_examples.NOT_STANDALONE.update(_aev_examples.NOT_STANDALONE)

CODES.update(_table(
    ("AEV101", "empty document", "The file holds no YAML document (the engine: YAML 为空)."),
    ("AEV102", "wrong shape",
     ("A field holds a value of the wrong shape: the workflow must be a mapping, `roles` and `steps` "
      "lists of mappings, `parameters`, `retry` and `on_error` mappings, ids and `next` strings.")),
    ("AEV103", "unknown key",
     ("The engine's parser is built without IgnoreUnmatchedProperties: any key it does not know at the "
      "workflow, role, step, retry, on_error, configuration or extensions level makes the whole "
      "document fail to load (Property 'x' not found). flowc reports it with the closest valid key.")),
    ("AEV104", "missing name", "A workflow needs a non-blank `name` (the engine: 缺少 name)."),
    ("AEV105", "no steps", "A workflow needs at least one step (the engine: 至少需要一个 step)."),
    ("AEV106", "step without id",
     ("Every step, children included, needs a non-blank `id` (the engine: step 缺 id / 存在缺少 id 的步骤).")),
    ("AEV107", "role without id",
     ("Every role needs an `id`, or at least a `name` that stands in for it (the engine: 存在缺少 id 的角色).")),
    ("AEV108", "value the parser cannot convert",
     ("Typed fields (`timeout_ms`, `retry.max_attempts`, `retry.delay_ms`, a role's `temperature`, "
      "`max_tokens`, ..., `configuration.closed_world_mode`) are converted while parsing; text that is "
      "not a number (or a boolean) makes the document fail to load.")),
    ("AEV109", "key of the newer engine generation",
     ("The key (`compensation`, `allowed_tools`, `when_to_use`, a step-root `op` on a transform, ...) "
      "is read by the newer aevatar engine only; the c8db46d parser rejects it as an unknown property. "
      "A warning by default, an error under --strict.")),
    ("AEV110", "duplicate role", "Two roles have the same id; steps use the first one."),
    ("AEV111", "branch entry dropped",
     ("The engine drops a branch whose key or target is blank and keeps only the last of two branches "
      "with the same key, silently; flowc reports both.")),
    ("AEV112", "target_role and role disagree",
     ("`role` is an alias of `target_role`; when both are set the engine uses target_role.")),
    ("AEV113", "step-root key ignored",
     ("The newer parser lifts `op`, `precision`, `group_by`, `value`, `value_field`, `field`, "
      "`aggregate` and `template` from the step root into the parameters of transform steps only.")),
    ("AEV120", "unknown parameter",
     ("The primitive does not read this parameter; the engine ignores it. Typos (`prompt_prefx`) are "
      "reported with the closest parameter the primitive reads (`flowc schema aevatar` lists them).")),
    ("AEV121", "missing parameter",
     ("The primitive cannot run without this parameter (tool_call `tool`, connector_call `connector`, "
      "workflow_call `workflow`, lease `key`).")),
    ("AEV122", "value outside the allowed set",
     ("The parameter takes one of a few values (guard `check` and `on_fail`, `on_error.strategy`, "
      "`retry.backoff`, transform `op`, ...); the engine treats any other value as the default (or "
      "passes the input through, for an unknown transform op).")),
    ("AEV123", "not an integer",
     ("The primitive parses this parameter as an integer; text that is not one silently becomes the "
      "default.")),
    ("AEV124", "unquoted number or boolean",
     ("Parameters are strings: the engine reads the scalar's text, and inside a nested value the "
      "number becomes a JSON string (\"2000\", not 2000). Tools that rewrite YAML may also change `1.50` "
      "or `yes`. Quote numeric and boolean parameter values (n: \"50\").")),
    ("AEV125", "invalid agent_type or agent_id",
     ("`agent_type` must be a .NET type name (letters, digits, _ . + `, optionally ', Assembly'); "
      "`agent_id`, when given, must not be blank (the engine's validator).")),
    ("AEV126", "$input outside assign",
     ("`$input` (without braces) is an expression only in assign's `value`. Anywhere else it is the "
      "literal text \"$input\": a switch `on: $input` compares that text and never matches. Write "
      "${input}, or leave `on` out to switch on the input.")),
    ("AEV127", "parameter of the newer engine generation",
     ("The parameter is read by the newer aevatar engine only (tool_call `arguments`, foreach "
      "`items_source`, ...). A warning by default, an error under --strict.")),
    ("AEV128", "white-space delimiter",
     ("A `delimiter` or `separator` that is only white space (a YAML \"\\n\" is a real line break) counts as "
      "unset for the engine, which then splits on its default (\\n---\\n for foreach and map_reduce). Write "
      "'\\n' in single quotes: the engine turns the two characters into a line break itself.")),
    ("AEV130", "unknown role",
     ("`target_role` (alias `role`), a `*_target_role` parameter or a worker names a role that is not "
      "declared (the engine: 引用不存在的角色). A step with a non-blank `agent_type` is exempt.")),
    ("AEV131", "model name in target_role",
     ("target_role selects the actor (a declared role), never a model. Declare a role and set its "
      "`model` only if a specific model is required.")),
    ("AEV132", "unknown next", "`next` names a step that does not exist (the engine's validator)."),
    ("AEV133", "unknown branch target",
     ("A branch names a step that does not exist (the engine's validator).")),
    ("AEV134", "bad on_error fallback",
     ("`on_error: {strategy: fallback}` needs a `fallback_step` that exists; otherwise the run fails "
      "when the step fails.")),
    ("AEV135", "bad guard branch",
     ("A guard with `on_fail: branch` jumps to `branch_target`, which must exist; without one the "
      "failed check fails the run.")),
    ("AEV136", "bad compensation",
     ("`compensation` names the step that undoes a side effect; it must exist, and the engine records "
      "it only for side-effecting steps (tool_call, connector_call, secure_connector_call, "
      "http_request).")),
    ("AEV137", "connector not allowed for the role",
     ("A role's `connectors` list is the allowlist of connector_call: a connector outside it is "
      "refused at run time.")),
    ("AEV138", "unregistered workflow",
     ("workflow_call names a workflow that is not in the registry the check was given (the engine: "
      "引用未注册工作流). Reported only when a registry is supplied: `flowc check --workflows-from PATH` "
      "(the aevatar files in PATH, and those being checked, by name and by file name).")),
    ("AEV139", "duplicate id with children",
     ("`children` share the steps' id namespace (the engine: 步骤 'x' 重复).")),
    ("AEV140", "conditional without both branches",
     ("A conditional produces the branch key 'true' or 'false'; it must define `branches` with both "
      "(the engine: 必须定义 branches / 缺少 true 分支 / 缺少 false 分支).")),
    ("AEV141", "switch without _default",
     ("A switch must define `branches` including `_default` (the engine's validator); otherwise an "
      "unmatched value falls through to the next step in document order.")),
    ("AEV142", "while without a bound",
     ("A while needs `condition` or `max_iterations`, and `max_iterations` must be a positive integer "
      "(the engine's validator).")),
    ("AEV143", "bad workflow_call lifecycle",
     ("`lifecycle` is singleton, transient or scope (the engine's validator).")),
    ("AEV144", "allowed_tools without effect",
     ("A step's `allowed_tools` narrows the tools an llm_call may use; on other steps it does nothing.")),
    ("AEV150", "extension primitive",
     ("The type is neither in the aevatar vocabulary nor in the engine's alias table. It compiles to a "
      "host call (capability `extension`) that the host must provide, like the engine's extension "
      "modules (openclaw, demo_*, maker_*). A warning by default; an error under --strict, as in the "
      "engine's validation paths that require known step types.")),
    ("AEV151", "unknown step type", "The type is a near miss of a primitive (`llm_cal`): a typo."),
    ("AEV152", "primitive that cannot run here",
     ("`dynamic_workflow` and `workflow_yaml_validate` rewrite or validate the running workflow "
      "(reserved: use workflow_call); `actor_send` is import-only and `workflow_loop` internal.")),
    ("AEV153", "unknown step type in a parameter",
     ("A `*_step_type` or `step` parameter names a type that is not a primitive (an extension the host "
      "must provide; an error under --strict), or a near miss of one (an error).")),
    ("AEV154", "primitive of the newer engine generation",
     ("lease (mutex), notify, http_request and self_reschedule exist in the newer engine only. A "
      "warning by default, an error under --strict.")),
    ("AEV160", "children never run",
     ("`children` are validated (ids and references) but the engine never dispatches them.")),
    ("AEV201", "unknown function",
     ("The engine knows if, concat, isblank, length, not, and, or, upper, lower, trim, json, add, sub, "
      "mul, div, eq, lt, lte, gt and gte; any other name inserts the text '[unknown function: name]'.")),
    ("AEV202", "lone quote",
     ("An argument that is a single quote character is read as a quoted literal with no closing quote; "
      "the engine throws when it evaluates it.")),
    ("AEV203", "wrong number of arguments",
     ("Too few arguments make the function return fixed text ('[if: requires 3 args]', 'false', '[lt: "
      "requires 2 args]'); arguments beyond those a function reads are never evaluated.")),
    ("AEV204", "not a quoted literal",
     ("A value that starts with a quote but does not end with the same one is read as a variable name "
      "(usually empty). Quotes cannot be escaped inside an argument: use the other quote character.")),
    ("AEV205", "not a call",
     ("The text is neither name(arguments) (a call needs at least one character between the "
      "parentheses, and the name must be one word) nor a plain variable name, so the engine looks up a "
      "variable with that odd name and gets ''.")),
    ("AEV210", "${steps.<id>.text}",
     ("The engine registers steps.<id>.output, never steps.<id>.text: the reference is always empty, "
      "the run still shows every step completed, and a tool downstream receives an empty argument.")),
    ("AEV211", "assigned value read through .text",
     ("An assign step's value is the variable named by its `target`: read it as ${<target>} (or "
      "${steps.<id>.output}); ${steps.<id>.text} is always empty.")),
    ("AEV212", "reference to an unknown step",
     ("${steps.<id>...} names a step that does not exist, so it is always empty.")),
    ("AEV213", "step field the engine never sets",
     ("steps.<id> has output, success, error, branch_key, next_step_id, assigned_variable, "
      "assigned_value, json.<field>, annotations.<key> and usage.<key>; lookup is by the whole dotted "
      "key, so anything else (steps.x.output.field, steps.x.json) is empty.")),
    ("AEV214", "step that has not run",
     ("No path runs the referenced step before this one (or it is the step itself), so the reference "
      "is empty there.")),
    ("AEV215", "variable that is never assigned",
     ("No step assigns the variable, but a close name is assigned (a typo?), or it is the `variable` "
      "of a human_input step, which the c8db46d engine does not assign: read the reply as ${<step id>}.")),
    ("AEV216", "variable outside a while's scope",
     ("A while evaluates its condition and sub_param_* with only output, input, iteration and "
      "max_iterations (case-insensitive); every other variable is empty there.")),
    ("AEV301", "no terminal step",
     ("A run ends at the step with no `next` (and no matching branch) that is last in document order. "
      "When the last step has `next`, no run can complete.")),
    ("AEV302", "fall-through into a routed step",
     ("Fall-through is by document order: a step without `next` runs the step written after it. When "
      "that step is also the target of explicit routing, a path that was meant to end (a second "
      "terminal, or a step placed after the terminal) runs on into it and overwrites the output. Say "
      "`next:` explicitly, and make the final step the last one in the file.")),
    ("AEV303", "branch falls into another branch",
     ("A branch arm without `next` falls through into the step written after it, which is another arm "
      "of the same branch: both run and the second overwrites the output. Give each arm a `next` to "
      "the step where they converge.")),
    ("AEV304", "switch.on can be empty",
     ("When `on` resolves to empty (a missing JSON field, a tool's error envelope), the switch matches "
      "the whole input instead (exact, then contains, then _default) and silently takes a wrong "
      "branch. Switch on a never-empty token such as ${eq(steps.read.json.n, '0')}.")),
    ("AEV305", "arithmetic asked of a model",
     ("Counting, sums, totals and deduplication asked of an llm_call are unreliable; a transform (sum, "
      "count, group_by, distinct, ...) computes them exactly. Best effort: the prompt's wording is "
      "matched against a few phrases.")),
    ("AEV306", "parallel for per-item work",
     ("parallel and race give every worker the SAME input (and always run llm_call). For one sub-step "
      "per item of a list use foreach (outputs joined) or map_reduce (map, then reduce).")),
    ("AEV308", "branches never taken",
     ("Only conditional, switch, human_approval, evaluate and vote produce branch keys; on other steps "
      "`branches` are never used.")),
    ("AEV309", "branch key never produced",
     ("conditional and human_approval produce only 'true' and 'false', evaluate only its `on_below` "
      "value: a branch under another key is never taken.")),
))


# --- translation (flowc translate, backends/emit_*) ----------------------------
CODES.update(_table(
    ("TRN001", "one workflow of several translated",
     ("The document holds several workflows (a `workflows:` list, or several blocks of an "
      "instruction.md) and the target holds one workflow per document: the first is translated. "
      "A note, not a finding.")),
    ("TRN101", "no equivalent in the target dialect",
     ("The construct has no form in the target dialect, and no lowering to one it has (for example "
      "WorkflowSkill has no variables, functions or parallel branches; aevatar has no guards or typed "
      "values). The closest form is written with a `# flowc:` comment; with --strict the translation "
      "fails here. See docs/translation.md for the table of constructs by target.")),
    ("TRN102", "meaning differs in the target dialect",
     ("The construct exists in the target but means something else for some values, and flowc cannot "
      "rule those values out: WorkflowSkill's `==` finds 1 equal to \"1\" and CEL's does not, `<` "
      "compares numbers only in WorkflowSkill, `contains` is case-insensitive in WorkflowSkill, aevatar "
      "values are text. Declaring the operands' types (step outputs, workflow inputs) and defaults for "
      "inputs (an absent input is null) often lets flowc prove the meaning is the same.")),
    ("TRN103", "a policy works differently in the target",
     ("Retry, per-item failure and pacing rules differ between the dialects (WorkflowSkill retries tool "
      "errors only and has no jitter; dialect 3 retries every failure with +-20% jitter; aevatar retries "
      "every failure but a timeout). The policy is written in the target's terms.")),
    ("TRN104", "the host is asked differently",
     ("The step becomes a host call of another capability, name or argument shape in the target (an "
      "aevatar llm_call asks the host for `llm`/<role> with the role's prompt; WorkflowSkill can only "
      "call tools). The host must answer the translated workflow under the new name.")),
    ("TRN201", "placeholder text",
     ("A note: dialect-3 templates write a value as JSON and WorkflowSkill templates with JavaScript's "
      "String(); they agree on every JSON value.")),
    ("TRN202", "concurrency written sequentially",
     ("A note: the source runs items or branches on several lanes; the target runs them one after "
      "another, which is one order the source may run them in.")),
))


# --- host config (flowc check --config, flowc/hosts) -----------------------------
CODES.update(_table(
    ("HST001", "host call the config does not grant",
     ("`flowc check --config host.toml`: the step calls the host for a name no provider of the host "
      "config answers: no MCP server has the tool (`tool: X`, an aevatar tool_call or connector_call, a "
      "dialect-3 `mcp.tool` or `tool`), the server or the LLM profile is not configured, or an `http` "
      "step has no [http] section. A run would fail at this call; add the server, list the tool, or "
      "route the name in [routes] (docs/hosts.md).")),
    ("HST002", "tool name on several MCP servers",
     ("`flowc check --config host.toml`: two or more MCP servers of the host config have a tool of this "
      "name, so the bare name does not say which one to call. Name it `<server>.<tool>` in the workflow, "
      "or route the name in the config's [routes] table.")),
))
