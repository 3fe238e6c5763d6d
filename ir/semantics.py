"""Named meanings: the tables that say what each operator, truthiness rule
and stringification means, dialect by dialect.

The dialects use the same symbols for different things (``==`` coerces in
WorkflowSkill and never in CEL; ``contains`` is a case-insensitive
substring test in WorkflowSkill and a case-sensitive one in CEL; aevatar
compares strings parsed as doubles). The IR never stores a bare ``==``: it
stores one of the keys below, and every backend implements each key exactly
once. The differences live in these tables, not in scattered ifs.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class OperatorSpec:
    key: str
    symbol: str
    arity: int
    meaning: str


def _ops(*specs: OperatorSpec) -> dict[str, OperatorSpec]:
    return {s.key: s for s in specs}


OPERATORS: dict[str, OperatorSpec] = _ops(
    # WorkflowSkill (reference runtime 0.5.0 semantics)
    OperatorSpec("wfs.eq", "==", 2,
                 "strict equality; a number against a string compares the number with "
                 "Number(string) when that is not NaN; null and missing are different"),
    OperatorSpec("wfs.ne", "!=", 2, "exact negation of wfs.eq"),
    OperatorSpec("wfs.lt", "<", 2, "numeric only: both sides through toNumber (non-numeric strings are 0)"),
    OperatorSpec("wfs.le", "<=", 2, "numeric only, as wfs.lt"),
    OperatorSpec("wfs.gt", ">", 2, "numeric only, as wfs.lt"),
    OperatorSpec("wfs.ge", ">=", 2, "numeric only, as wfs.lt"),
    OperatorSpec("wfs.contains", "contains", 2,
                 "array left side: exact membership (no coercion); otherwise "
                 "case-insensitive substring of the stringified sides (null is '')"),
    OperatorSpec("wfs.and", "&&", 2, "evaluates both sides, returns a boolean by wfs_truthy"),
    OperatorSpec("wfs.or", "||", 2, "evaluates both sides, returns a boolean by wfs_truthy"),
    OperatorSpec("wfs.not", "!", 1, "boolean negation by wfs_truthy"),
)

# How a value is tested as a condition.
TRUTHINESS: dict[str, str] = {
    "js_boolean": "JavaScript Boolean(): false for null, missing, false, 0, NaN and ''; "
                  "[] and {} are true (WorkflowSkill guards, conditionals, filters)",
    "wfs_truthy": "WorkflowSkill isTruthy: false for null, missing, false, 0, '' and []; "
                  "objects and NaN are true (operands of !, && and ||)",
}

# How a placeholder value becomes text inside a template.
STRINGIFY: dict[str, str] = {
    "wfs": "null/missing -> ''; strings as is; numbers and booleans as JavaScript "
           "String(); arrays and objects as compact JSON.stringify",
}


@attrs.frozen
class DialectProfile:
    """A dialect's semantic choices as named flags (sqlglot-style)."""

    name: str
    eq: str
    truthiness_guard: str
    truthiness_branch: str
    truthiness_filter: str
    stringify: str
    null_vs_missing: str  # "distinct": a missing value is not null
    parameters_are_strings: bool
    number_model: str
    # The execution rows (a key of SCHEDULING, CONCURRENCY and
    # OUTPUT_RESOLUTION each; backends/execution.py reads them, in one
    # place, and chooses the code generator or assembler by them).
    # When a node may start: "sequential" (document order with branches),
    # "kernel" (aevatar's step kernel), "dataflow" (ready when dependencies
    # are done, skipped or pruned).
    scheduling: str = "sequential"
    # What may run at once when a driver runs requests concurrently.
    concurrency: str = "none"
    # Where the run's outputs come from.
    output_resolution: str = "declared_outputs"
    # How a Ref path is read: "wfs" (missing is undefined), "flat_keys"
    # (aevatar dotted keys), "cel" (CEL selection: a missing key is an error).
    access: str = "wfs"
    # What an expression that fails to resolve does: "abort_run",
    # "as_text" (aevatar returns the message), "step_failure" (the step
    # fails and its on_error applies).
    resolution_errors: str = "abort_run"
    timeouts_bypass_policies: bool = False
    # How many normal terminal nodes a workflow has: "exactly_one" (wfs
    # `$end`, aevatar's last step) or "at_least_one" (instruction `finish`).
    terminal_nodes: str = "exactly_one"
    # A step no path from the entry reaches: "warning" (it never runs) or
    # "error" (instruction: an unreachable root is refused at load).
    unreachable_steps: str = "warning"
    # What a filter, map or sort step's output is: "items" (an object with
    # the list under `items`) or "whole" (the list itself: instruction).
    transform_output: str = "items"


# The values of the execution rows, with their meaning. A backend runs a
# workflow only when it implements every row of the workflow's profile.
SCHEDULING: dict[str, str] = {
    "sequential": "one step at a time in document order; a branch chooses the next step; the run ends "
                  "at the terminal node",
    "kernel": "aevatar's step loop: routing by `next`, branches, fall-through and error strategies, "
              "each step's input the previous step's output",
    "dataflow": "a node starts when every dependency is done, skipped or pruned; switches prune the "
                "arms they do not take",
}
CONCURRENCY: dict[str, str] = {
    "none": "one step at a time, whatever the driver (iterations too)",
    "composite_workers": "top-level steps one at a time; the workers of parallel, race, foreach and "
                         "map_reduce may run at once",
    "ready_nodes": "every ready node may start at once; parallel and race branches, foreach and batch "
                   "lanes too",
}
OUTPUT_RESOLUTION: dict[str, str] = {
    "declared_outputs": "the workflow's declared outputs, resolved when the run reaches its end "
                        "(an exit node gives its own output)",
    "last_output": "one output, `output`: the output of the last step that ran",
    "finish_node": "the `output` of the finish node that ended the run (none without one)",
}


WORKFLOWSKILL = DialectProfile(
    name="workflowskill",
    eq="wfs.eq",
    truthiness_guard="js_boolean",
    truthiness_branch="js_boolean",
    truthiness_filter="js_boolean",
    stringify="wfs",
    null_vs_missing="distinct",
    parameters_are_strings=False,
    number_model="float64 (JavaScript numbers)",
)

PROFILES: dict[str, DialectProfile] = {p.name: p for p in (WORKFLOWSKILL,)}


# --- functions ---------------------------------------------------------------
@attrs.frozen
class FunctionSpec:
    key: str
    arity: int          # number of arguments (a method's receiver counts); -1 = variable
    lazy: bool          # some arguments are Lambdas or are evaluated conditionally
    meaning: str


# ``expr.Call.func`` is a key of this table. Dialects append their own.
FUNCTIONS: dict[str, FunctionSpec] = {}


# --- CEL (instruction dialect) -------------------------------------------------
# The subset of CEL workflows use, with cel-spec semantics: int is int64 and
# overflow is an error, uint is uint64, double is IEEE 754; numbers of
# different kinds compare by value; values of different types are never
# equal (and not an error); every error is a value that && and || absorb.
OPERATORS.update(_ops(
    OperatorSpec("cel.eq", "==", 2, "CEL equality: numbers of any kind by value (NaN is unequal), "
                 "lists and maps element-wise, other values of different types are unequal"),
    OperatorSpec("cel.ne", "!=", 2, "negation of cel.eq"),
    OperatorSpec("cel.lt", "<", 2, "CEL ordering: numbers across int/uint/double, strings by code "
                 "point, bytes, bools (false < true); anything else is a no-such-overload error"),
    OperatorSpec("cel.le", "<=", 2, "as cel.lt"),
    OperatorSpec("cel.gt", ">", 2, "as cel.lt"),
    OperatorSpec("cel.ge", ">=", 2, "as cel.lt"),
    OperatorSpec("cel.add", "+", 2, "int64/uint64 with overflow errors, double, string, bytes and "
                 "list concatenation; mixed number kinds are an error"),
    OperatorSpec("cel.sub", "-", 2, "int64/uint64 with overflow errors, double"),
    OperatorSpec("cel.mul", "*", 2, "int64/uint64 with overflow errors, double"),
    OperatorSpec("cel.div", "/", 2, "integer division truncates toward zero; by zero is an error; "
                 "double division is IEEE"),
    OperatorSpec("cel.mod", "%", 2, "integer remainder with the dividend's sign; by zero is an error"),
    OperatorSpec("cel.in", "in", 2, "list membership by cel.eq, or map key presence"),
    OperatorSpec("cel.index", "[]", 2, "list element (int, uint or integral double index; out of "
                 "range is an error) or map value (a missing key is an error)"),
    OperatorSpec("cel.select", ".", 2, "map field selection by a string literal name; a missing key "
                 "is an error"),
    OperatorSpec("cel.neg", "-", 1, "negation of an int (overflow is an error) or a double"),
    OperatorSpec("cel.not", "!", 1, "boolean negation; a non-bool is an error"),
    OperatorSpec("cel.and", "&&", 2, "commutative and: false if either side is false, even if the "
                 "other is an error; otherwise an error if either side is one; else true"),
    OperatorSpec("cel.or", "||", 2, "commutative or: true if either side is true, even if the "
                 "other is an error; otherwise an error if either side is one; else false"),
    OperatorSpec("cel.ternary", "? :", 3, "the test must be a bool (else an error); only the chosen "
                 "side is evaluated"),
))

for _f in (
    FunctionSpec("cel.size", 1, False, "length of a string (code points), bytes, list or map"),
    FunctionSpec("cel.contains", 2, False, "string contains substring (case-sensitive)"),
    FunctionSpec("cel.startsWith", 2, False, "string starts with prefix"),
    FunctionSpec("cel.endsWith", 2, False, "string ends with suffix"),
    FunctionSpec("cel.matches", 2, False, "the regular expression matches anywhere in the string"),
    FunctionSpec("cel.int", 1, False, "conversion to int64 (doubles truncate; out of range is an error)"),
    FunctionSpec("cel.uint", 1, False, "conversion to uint64 (negative or out of range is an error)"),
    FunctionSpec("cel.double", 1, False, "conversion to double (strings parse)"),
    FunctionSpec("cel.string", 1, False, "conversion to string (bytes must be UTF-8)"),
    FunctionSpec("cel.bytes", 1, False, "conversion of a string to its UTF-8 bytes"),
    FunctionSpec("cel.bool", 1, False, "conversion to bool (strings true/false/1/0/t/f ...)"),
    FunctionSpec("cel.dyn", 1, False, "identity (disables static typing in cel-spec)"),
    FunctionSpec("cel.type", 1, False, "the type of a value, as a type value"),
    FunctionSpec("cel.duration", 1, False, "a duration from a string such as 1.5s or 1h2m"),
    FunctionSpec("cel.timestamp", 1, False, "a timestamp from an RFC 3339 string or epoch seconds"),
    FunctionSpec("cel.getFullYear", -1, False, "timestamp.getFullYear([time zone]): the year"),
    FunctionSpec("cel.getMonth", -1, False, "timestamp.getMonth([time zone]): the month, 0 for January"),
    FunctionSpec("cel.getDate", -1, False, "timestamp.getDate([time zone]): the day of the month, from 1"),
    FunctionSpec("cel.getDayOfMonth", -1, False, "timestamp.getDayOfMonth([time zone]): the day of the "
                 "month, from 0"),
    FunctionSpec("cel.getDayOfWeek", -1, False, "timestamp.getDayOfWeek([time zone]): 0 for Sunday"),
    FunctionSpec("cel.getDayOfYear", -1, False, "timestamp.getDayOfYear([time zone]): the day of the "
                 "year, from 0"),
    FunctionSpec("cel.getHours", -1, False, "timestamp.getHours([time zone]): the hour; duration."
                 "getHours(): whole hours"),
    FunctionSpec("cel.getMinutes", -1, False, "timestamp.getMinutes([time zone]); duration.getMinutes(): "
                 "whole minutes"),
    FunctionSpec("cel.getSeconds", -1, False, "timestamp.getSeconds([time zone]); duration.getSeconds(): "
                 "whole seconds"),
    FunctionSpec("cel.getMilliseconds", -1, False, "timestamp.getMilliseconds([time zone]); duration."
                 "getMilliseconds(): the milliseconds within its second"),
    FunctionSpec("cel.has", 1, True, "has(a.b): whether the map a has key b (the argument is a Ref "
                 "or cel.select that is not evaluated as a whole)"),
    FunctionSpec("cel.all", 2, True, "macro: every element (list item or map key) satisfies the "
                 "Lambda; false absorbs errors"),
    FunctionSpec("cel.exists", 2, True, "macro: some element satisfies the Lambda; true absorbs errors"),
    FunctionSpec("cel.exists_one", 2, True, "macro: exactly one element satisfies the Lambda; "
                 "errors propagate"),
    FunctionSpec("cel.map", -1, True, "macro: the Lambda applied to every element; with three "
                 "arguments the second is a filter Lambda"),
    FunctionSpec("cel.filter", 2, True, "macro: the elements that satisfy the Lambda"),
    FunctionSpec("cel.all2", 2, True, "two-variable macro: every (index or key, value) pair satisfies "
                 "the two-parameter Lambda; false absorbs errors"),
    FunctionSpec("cel.exists2", 2, True, "two-variable macro: some (index or key, value) pair satisfies "
                 "the Lambda; true absorbs errors"),
    FunctionSpec("cel.exists_one2", 2, True, "two-variable macro (existsOne): exactly one pair "
                 "satisfies the Lambda; errors propagate"),
    FunctionSpec("cel.transformList", -1, True, "two-variable macro: the list of the last Lambda over "
                 "every pair; with three arguments the second is a filter Lambda"),
    FunctionSpec("cel.transformMap", -1, True, "two-variable macro: the map from every index or key "
                 "to the last Lambda of its pair; with three arguments the second is a filter Lambda"),
    FunctionSpec("cel.transformMapEntry", -1, True, "two-variable macro: the union of the maps the "
                 "last Lambda returns per pair (a repeated key is an error); with three arguments "
                 "the second is a filter Lambda"),
    FunctionSpec("cel.bind", 2, True, "cel.bind(x, init, body) (cel-go ext.Bindings): the Lambda applied "
                 "to the value"),
    # cel-go's extension libraries (ext.Strings, ext.Math, ext.Encoders); strings index by code point
    FunctionSpec("cel.charAt", 2, False, "s.charAt(i): the code point at i ('' at the end)"),
    FunctionSpec("cel.indexOf", -1, False, "s.indexOf(sub[, from]): the first index of sub, or -1"),
    FunctionSpec("cel.lastIndexOf", -1, False, "s.lastIndexOf(sub[, at most]): the last index of sub, or -1"),
    FunctionSpec("cel.lowerAscii", 1, False, "s.lowerAscii(): ASCII letters to lower case"),
    FunctionSpec("cel.upperAscii", 1, False, "s.upperAscii(): ASCII letters to upper case"),
    FunctionSpec("cel.replace", -1, False, "s.replace(old, new[, n]): the first n (all when n < 0) "
                 "occurrences replaced"),
    FunctionSpec("cel.split", -1, False, "s.split(sep[, n]): at most n pieces (all when n < 0)"),
    FunctionSpec("cel.substring", -1, False, "s.substring(start[, end]): code points start..end"),
    FunctionSpec("cel.trim", 1, False, "s.trim(): without leading and trailing Unicode white space"),
    FunctionSpec("cel.join", -1, False, "list.join([sep]): the strings joined"),
    FunctionSpec("cel.reverse", 1, False, "s.reverse(): the code points in reverse order"),
    FunctionSpec("cel.format", 2, False, "s.format(list): %s %d %f %e %b %o %x %X (with a precision: "
                 "%.3f) and %%"),
    FunctionSpec("cel.strings.quote", 1, False, "strings.quote(s): s as a double-quoted literal"),
    FunctionSpec("cel.base64.encode", 1, False, "base64.encode(bytes): standard base64 text"),
    FunctionSpec("cel.base64.decode", 1, False, "base64.decode(text): the bytes (padding optional)"),
    FunctionSpec("cel.math.greatest", -1, False, "math.greatest(a, ... | list): the greatest number, "
                 "compared across int, uint and double"),
    FunctionSpec("cel.math.least", -1, False, "math.least(a, ... | list): the least number"),
    FunctionSpec("cel.math.ceil", 1, False, "math.ceil(double)"),
    FunctionSpec("cel.math.floor", 1, False, "math.floor(double)"),
    FunctionSpec("cel.math.round", 1, False, "math.round(double): half away from zero"),
    FunctionSpec("cel.math.trunc", 1, False, "math.trunc(double)"),
    FunctionSpec("cel.math.abs", 1, False, "math.abs(number): abs(int64 min) is an overflow error"),
    FunctionSpec("cel.math.sign", 1, False, "math.sign(number): -1, 0 or 1 of the same type"),
    FunctionSpec("cel.math.isNaN", 1, False, "math.isNaN(double)"),
    FunctionSpec("cel.math.isInf", 1, False, "math.isInf(double)"),
    FunctionSpec("cel.math.isFinite", 1, False, "math.isFinite(double)"),
    FunctionSpec("cel.math.bitAnd", 2, False, "math.bitAnd(a, b): both int or both uint"),
    FunctionSpec("cel.math.bitOr", 2, False, "math.bitOr(a, b)"),
    FunctionSpec("cel.math.bitXor", 2, False, "math.bitXor(a, b)"),
    FunctionSpec("cel.math.bitNot", 1, False, "math.bitNot(a)"),
    FunctionSpec("cel.math.bitShiftLeft", 2, False, "math.bitShiftLeft(a, n): 0 from n = 64; a negative "
                 "n is an error"),
    FunctionSpec("cel.math.bitShiftRight", 2, False, "math.bitShiftRight(a, n): a logical shift (an "
                 "int shifts as its 64 bits)"),
    FunctionSpec("cel.unbound", -1, False, "a call of a function CEL does not define (the first "
                 "argument is its name): an error when evaluated, as in unchecked cel-spec"),
    FunctionSpec("tmpl.default", 2, True, "template `{{ path | default }}`: the path's value, or the "
                 "default when the path is missing"),
):
    FUNCTIONS.setdefault(_f.key, _f)
del _f

TRUTHINESS["cel_bool"] = ("CEL has no truthiness: the value must be a bool, anything else is an "
                          "evaluation error (instruction guards, filters, conditions)")
STRINGIFY["json"] = ("strings as they are, null as '', every other value as compact JSON "
                     "(instruction templates)")

INSTRUCTION = DialectProfile(
    name="instruction",
    eq="cel.eq",
    truthiness_guard="cel_bool",
    truthiness_branch="cel_bool",
    truthiness_filter="cel_bool",
    stringify="json",
    null_vs_missing="distinct",
    parameters_are_strings=False,
    number_model="int64/uint64/double (CEL)",
    scheduling="dataflow",
    concurrency="ready_nodes",
    output_resolution="finish_node",
    access="cel",
    resolution_errors="step_failure",
    timeouts_bypass_policies=False,
    terminal_nodes="at_least_one",
    unreachable_steps="error",
    transform_output="whole",
)
PROFILES[INSTRUCTION.name] = INSTRUCTION


# --- aevatar -------------------------------------------------------------------
# The aevatar engine's expression evaluator (WorkflowExpressionEvaluator,
# c8db46d, plus the newer generation's `$${` escape). Every value is a
# string; a number is a string that double.TryParse (invariant culture)
# accepts, and a computed number is printed like .NET's "G17". Functions
# never throw: a problem is returned as text such as "[div: division by
# zero]". The only evaluation that fails is a lone quote character used as
# an argument (`aevatar.fail`), which throws in the engine too.
OPERATORS.update(_ops(
    OperatorSpec("aevatar.if", "if", 3, "if(c, a, b): c judged by aevatar_truthy; only the chosen "
                 "side is evaluated"),
))

for _f in (
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
):
    FUNCTIONS.setdefault(_f.key, _f)
del _f

# The transform primitive's operations: (input, parameters) -> output, all
# strings. An unknown op returns the input unchanged.
AEVATAR_TRANSFORM_OPS: dict[str, str] = {
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
for _op, _meaning in AEVATAR_TRANSFORM_OPS.items():
    FUNCTIONS.setdefault(f"aevatar.transform.{_op}", FunctionSpec(
        f"aevatar.transform.{_op}", 2, False, f"transform op {_op}: {_meaning}"))
del _op, _meaning

TRUTHINESS["aevatar_truthy"] = ("aevatar IsTruthy: blank (only .NET white space) is false; text that "
                                "bool.TryParse accepts is that value; a number is true when |n| >= "
                                "1e-9 (NaN is false); any other text is true")
STRINGIFY["aevatar"] = ("values are strings already and are inserted as they are; a missing "
                        "variable is '' (after the numeric-literal and true/false fallbacks)")

AEVATAR = DialectProfile(
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
)
PROFILES[AEVATAR.name] = AEVATAR

# Structural choices the analyses read (by workflow semantics). aevatar
# workflows loop with `next`/branches back to earlier steps (the engine has
# no cycle check), and a branch arm does not return to its branch node's
# successor: it continues along its own `next` or document order.
CONTROL_CYCLES_ALLOWED: frozenset[str] = frozenset({"aevatar"})
BRANCH_ARMS_ROUTE_ON: frozenset[str] = frozenset({"aevatar"})
