"""The aevatar front end's finding codes (AEV). AEV1xx: the document as the
engine's parser and validator read it; AEV2xx: expressions and references;
AEV3xx: the engine's control-flow rules its validator does not enforce.
Examples: code_examples.py."""

from __future__ import annotations

from flowc.compiler.code_types import CodeInfo, code_table

from .code_examples import EXAMPLES

__all__ = ["CODES"]

CODES: dict[str, CodeInfo] = code_table(
    EXAMPLES,
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
)
