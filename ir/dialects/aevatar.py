"""aevatar's meanings: the engine's expression evaluator
(WorkflowExpressionEvaluator, c8db46d, plus the newer generation's `$${`
escape), its profile and the operations its front end lowers to.

Every value is a string; a number is a string that double.TryParse
(invariant culture) accepts, and a computed number is printed like .NET's
"G17". Functions never throw: a problem is returned as text such as
"[div: division by zero]". The only evaluation that fails is a lone quote
character used as an argument (`aevatar.fail`), which throws in the engine
too.
"""

from __future__ import annotations

from flowc.ir.specs import DialectProfile, FunctionSpec, OperationSpec, OperatorSpec

OPERATORS: dict[str, OperatorSpec] = {s.key: s for s in (
    OperatorSpec("aevatar.if", "if", 3, "if(c, a, b): c judged by aevatar_truthy; only the chosen "
                 "side is evaluated"),
)}

# The transform primitive's operations: (input, parameters) -> output, all
# strings. An unknown op returns the input unchanged.
TRANSFORM_OPS: dict[str, str] = {
    "identity": "the input",
    "count": "the number of non-empty lines (split by `separator`)",
    "count_words": "the number of white-space separated words",
    "take": "the first `n` (default 5) items",
    "take_last": "the last `n` items",
    "join": "items joined with `separator`",
    "split": "the input split by `separator`, parts joined with \\n---\\n",
    "json_extract": "the value at `path` of the JSON input",
    "distinct": "items without later duplicates",
    "uppercase": "upper-cased input",
    "lowercase": "lower-cased input",
    "trim": "trimmed input",
    "reverse_lines": "the lines in reverse order",
    # newer engine generation
    "json_parse": "the JSON text at `path` parsed into structured output",
    "template": "a bounded Scriban template over the JSON input",
    "sum": "numeric sum", "subtract": "numeric difference", "multiply": "numeric product",
    "divide": "numeric quotient", "round": "rounded to `precision`", "min": "minimum",
    "max": "maximum", "group_by": "aggregate `value` by `key`", "rss_extract_items": "RSS items",
}

FUNCTIONS: dict[str, FunctionSpec] = {s.key: s for s in (
    FunctionSpec("aevatar.concat", -1, False, "every argument, evaluated in order, concatenated"),
    FunctionSpec("aevatar.isblank", 1, False, "'true' if the value is empty or only .NET white space"),
    FunctionSpec("aevatar.length", 1, False, "the number of UTF-16 code units, as text"),
    FunctionSpec("aevatar.not", 1, False, "'true' if the value is not aevatar_truthy, else 'false'"),
    FunctionSpec("aevatar.and", 2, True, "'true' if both are aevatar_truthy; the second is evaluated "
                 "only if the first is"),
    FunctionSpec("aevatar.or", 2, True, "'true' if either is aevatar_truthy; the second is evaluated "
                 "only if the first is not"),
    FunctionSpec("aevatar.upper", 1, False, ".NET ToUpperInvariant: a 1:1 simple case mapping"),
    FunctionSpec("aevatar.lower", 1, False, ".NET ToLowerInvariant: a 1:1 simple case mapping"),
    FunctionSpec("aevatar.trim", 1, False, ".NET String.Trim: strips char.IsWhiteSpace at both ends"),
    FunctionSpec("aevatar.json", 1, False, "the JSON string body (no quotes) under .NET "
                 "UnsafeRelaxedJsonEscaping: short escapes, \\uXXXX upper-case hex otherwise"),
    FunctionSpec("aevatar.add", -1, True, "the sum, printed G17; the first non-numeric argument "
                 "stops evaluation with '[add: non-numeric argument]'"),
    FunctionSpec("aevatar.sub", -1, True, "one argument: its negation; more: the first minus the rest "
                 "(G17); '[sub: non-numeric argument]'"),
    FunctionSpec("aevatar.mul", -1, True, "the product, printed G17; '[mul: non-numeric argument]'"),
    FunctionSpec("aevatar.div", -1, True, "the first divided by the rest in order (G17); a divisor "
                 "with |d| < double.Epsilon gives '[div: division by zero]'; needs two arguments"),
    FunctionSpec("aevatar.eq", 2, False, "'true' if both parse as numbers within 1e-9, else if the "
                 "texts are ordinally equal"),
    FunctionSpec("aevatar.lt", 2, True, "numeric l < r ('[lt: non-numeric argument]'); the second is "
                 "evaluated only if the first is numeric"),
    FunctionSpec("aevatar.lte", 2, True, "numeric l <= r, as aevatar.lt"),
    FunctionSpec("aevatar.gt", 2, True, "numeric l > r, as aevatar.lt"),
    FunctionSpec("aevatar.gte", 2, True, "numeric l >= r, as aevatar.lt"),
    FunctionSpec("aevatar.fail", 1, False, "evaluation fails with the given message (a lone quote "
                 "character read as a literal: the engine throws ArgumentOutOfRangeException)"),
    FunctionSpec("aevatar.conditional_test", 2, False, "the conditional primitive: (condition, input) "
                 "-> 'true'/'false'; a bool.TryParse literal or '1'/'0' decides, else whether the input "
                 "contains the condition (ordinal, case-insensitive)"),
    FunctionSpec("aevatar.retrieve_facts", 2, False, "(input, parameters): the top_k input lines "
                 "ranked by keyword hits of the query"),
    *(FunctionSpec(f"aevatar.transform.{op}", 2, False, f"transform op {op}: {meaning}")
      for op, meaning in TRANSFORM_OPS.items()),
)}

# Operations besides the shared ones (common.py: switch, assign, assert,
# sleep, foreach, parallel, race). Composite primitives hold their
# sub-steps as Regions; their output is the sub-outputs joined by
# "\n---\n" unless stated otherwise.
OPERATIONS: dict[str, OperationSpec] = {s.name: s for s in (
    OperationSpec("transform.apply", "apply the pure string function named by attr `function` "
                  "(aevatar.transform.<op>, aevatar.retrieve_facts) to the input and attr `parameters`"),
    OperationSpec("while", "run Region body (one sub-step) repeatedly while the deferred attr "
                  "`condition` holds, at most `max_iterations` times; output = the last iteration's"),
    OperationSpec("map_reduce", "run Region map once per item of the input, then Region reduce (if "
                  "present) on the joined map outputs"),
    OperationSpec("cache", "return the memoised output for attr `cache_key`, else run Region child"),
    OperationSpec("reflect", "draft / critique rounds (Region round) until the critique passes or "
                  "`max_rounds`; output = the final draft"),
    OperationSpec("vote", "pick the longest of the input's \\n---\\n-separated candidates"),
)}

# The kernel primitive each IR operation runs when exactly one primitive
# lowers to it; the operations several primitives share (call,
# transform.apply) carry the primitive as the node's attr `primitive`.
OP_PRIMITIVES: dict[str, str] = {
    "assign": "assign", "branch": "conditional", "switch": "switch", "assert": "guard", "while": "while",
    "sleep": "delay", "foreach": "foreach", "parallel": "parallel", "race": "race", "map_reduce": "map_reduce",
    "cache": "cache", "reflect": "reflect", "vote": "vote",
}

TRUTHINESS: dict[str, str] = {
    "aevatar_truthy": ("aevatar IsTruthy: blank (only .NET white space) is false; text that "
                       "bool.TryParse accepts is that value; a number is true when |n| >= "
                       "1e-9 (NaN is false); any other text is true"),
}

STRINGIFY: dict[str, str] = {
    "aevatar": ("values are strings already and are inserted as they are; a missing "
                "variable is '' (after the numeric-literal and true/false fallbacks)"),
}

# aevatar workflows loop with `next`/branches back to earlier steps (the
# engine has no cycle check), and a branch arm does not return to its
# branch node's successor: it continues along its own `next` or document
# order.
PROFILE = DialectProfile(
    name="aevatar",
    eq="aevatar.eq",
    truthiness_guard="aevatar_truthy",
    truthiness_branch="aevatar_truthy",
    truthiness_filter="aevatar_truthy",
    stringify="aevatar",
    null_vs_missing="empty_string",
    parameters_are_strings=True,
    number_model="double parsed from text (invariant culture), printed G17",
    scheduling="kernel",
    concurrency="composite_workers",
    output_resolution="last_output",
    access="flat_keys",
    resolution_errors="as_text",
    timeouts_bypass_policies=True,
    terminal_nodes="exactly_one",
    control_cycles_allowed=True,
    branch_arms_route_on=True,
    step_budget="dispatches",
    fuel_failure_step="top_level_step",
)
