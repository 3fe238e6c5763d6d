"""The instruction dialect's (agentd dialect 3) meanings: CEL's operators
and functions, its profile and the operations its front end lowers to.

The subset of CEL workflows use, with cel-spec semantics: int is int64 and
overflow is an error, uint is uint64, double is IEEE 754; numbers of
different kinds compare by value; values of different types are never
equal (and not an error); every error is a value that && and || absorb.
"""

from __future__ import annotations

from flowc.ir.specs import DialectProfile, FunctionSpec, OperationSpec, OperatorSpec

OPERATORS: dict[str, OperatorSpec] = {s.key: s for s in (
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
)}

FUNCTIONS: dict[str, FunctionSpec] = {s.key: s for s in (
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
)}

# Besides the shared ones (common.py: switch, assign, assert, sleep,
# foreach, parallel, race).
OPERATIONS: dict[str, OperationSpec] = {s.name: s for s in (
    OperationSpec("trigger", "a start node: fires with a payload; the run starts here"),
    OperationSpec("finish", "end the run with attrs `status`, `output`, `reason`; cancels what is "
                  "still in flight", terminal=True),
    OperationSpec("fail", "fail as an ordinary step with attrs `message`, `code` (its on_error applies)"),
    OperationSpec("noop", "complete without an effect (a join or routing point)"),
    OperationSpec("parse", "parse attr `text` in attr `format` (json, yaml, csv, lines)"),
    OperationSpec("validate", "return attr `value` if it conforms to the JSON Schema attr `schema`"),
    OperationSpec("transform.reduce", "fold attr `over` from attr `initial` with the Lambda attr `expr`"),
    OperationSpec("transform.dedupe", "drop later duplicates of attr `over` (by the optional path `by`)"),
    OperationSpec("transform.chunk", "split attr `value` into pieces of `size` (by chars, words, lines "
                  "or items) with `overlap`"),
    OperationSpec("batch", "run Region body once per group of attr `over` (grouped by `by` or `size`)"),
    OperationSpec("iterate", "run Region body repeatedly while/until a CEL condition, at most "
                  "`max_iterations` times"),
    OperationSpec("subgraph", "run Region body once; its result is its sinks"),
)}

TRUTHINESS: dict[str, str] = {
    "cel_bool": ("CEL has no truthiness: the value must be a bool, anything else is an "
                 "evaluation error (instruction guards, filters, conditions)"),
}

STRINGIFY: dict[str, str] = {
    "json": ("strings as they are, null as '', every other value as compact JSON "
             "(instruction templates)"),
}

PROFILE = DialectProfile(
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
    step_budget="workflow_limit",
    fuel_failure_step="innermost_step",
    transform_output="whole",
)
