"""The instruction front end's finding codes (INS) and CEL's (CEL).
Examples: code_examples.py."""

from __future__ import annotations

from flowc.compiler.code_types import CodeInfo, code_table

from .code_examples import EXAMPLES

__all__ = ["CODES"]

CODES: dict[str, CodeInfo] = code_table(
    EXAMPLES,
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
)
