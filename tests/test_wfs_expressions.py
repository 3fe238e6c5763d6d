"""WorkflowSkill expressions: parser, Python backend and ``flowc eval``.

The conformance part runs every vector of tests/data/expressions/
workflowskill.json (produced by the reference runtime 0.5.0) through
parse -> compile -> evaluate and compares with the recorded result exactly.
"""

from __future__ import annotations

import ast
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from flowc.backends.python.expr import ExprCompileError, compile_expr, evaluate
from flowc.cli.eval import eval_command
from flowc.compiler.workflowskill import expressions as wfs_expressions
from flowc.compiler.workflowskill.expressions import (
    ExpressionError,
    literal,
    parse_expression,
    parse_value,
)
from flowc.grammar import grammar_names, load_parser
from flowc.ir.expr import (
    Binary,
    Field,
    Index,
    ListExpr,
    Literal,
    MapEntry,
    MapExpr,
    Ref,
    Template,
    Unary,
    strip_spans,
)
from flowc.ir.span import Span
from flowc.pipeline.evaluate import evaluate_text, run_batch, run_eval
from flowc.runtime import sequence_run
from flowc.runtime import wfs as rt

VECTORS_PATH = Path(__file__).parent / "data" / "expressions" / "workflowskill.json"
VECTORS = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))["vectors"]
ORIGIN = Span("test.md", 1, 1, 1, 1)

# Vectors flowc does not reproduce, by id, each with the reason. Empty: every
# vector passes. A vector listed here runs as a strict xfail, so fixing it
# fails the suite until it is removed from this set.
KNOWN_DEVIATIONS: dict[str, str] = {}


# --- comparing values as the reference's JSON values ----------------------------

def js_same(a, b) -> bool:
    """Equality of JSON values as JavaScript values: booleans are not numbers,
    ints and floats are both doubles."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(js_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(js_same(a[k], b[k]) for k in a)
    return a == b


def check_vector(v: dict) -> str | None:
    """None if flowc reproduces the vector, else what differs."""
    parse = parse_expression if v["kind"] == "expression" else parse_value
    kind = v["expected_kind"]
    expected = v["expected"]
    error_type = v.get("error_type")
    try:
        expr = parse(v["text"], ORIGIN)
    except ExpressionError as e:
        if error_type not in ("LexError", "ParseExprError"):
            return f"unexpected parse error: {e.kind}: {e.message}"
        got = (e.kind, e.message, e.position)
        want = (error_type, expected["error"], v["error_position"])
        return None if got == want else f"parse error {got} != {want}"
    if error_type in ("LexError", "ParseExprError"):
        return f"parsed, but the reference raises {error_type}: {expected['error']}"
    try:
        value = evaluate(expr, v["context"])
    except rt.EvalError as e:
        if kind == "error" and error_type == "EvalError" and e.message == expected["error"]:
            return None
        return f"EvalError {e.message!r}; expected {kind} {expected!r}"
    if kind == "undefined":
        return None if value is rt.MISSING else f"got {value!r}, expected undefined"
    if kind == "error":
        return f"got {value!r}, expected error {expected!r}"
    if value is rt.MISSING:
        return f"got undefined, expected {expected!r}"
    return None if js_same(rt.to_json_value(value), expected) else f"got {value!r}, expected {expected!r}"


def _vector_params():
    for v in VECTORS:
        marks = []
        if v["id"] in KNOWN_DEVIATIONS:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_DEVIATIONS[v["id"]]))
        yield pytest.param(v, id=v["id"][:100], marks=marks)


@pytest.mark.parametrize("vector", _vector_params())
def test_vector(vector):
    problem = check_vector(vector)
    assert problem is None, problem


def test_conformance_summary():
    failing = {v["id"] for v in VECTORS if check_vector(v) is not None}
    assert failing == set(KNOWN_DEVIATIONS)
    passed = len(VECTORS) - len(failing)
    assert passed == len(VECTORS) == 320


def test_vectors_cover_every_kind():
    kinds = {(v["kind"], v["expected_kind"], v.get("error_type")) for v in VECTORS}
    assert ("expression", "error", "LexError") in kinds
    assert ("expression", "error", "ParseExprError") in kinds
    assert ("value", "error", "EvalError") in kinds
    assert ("value", "undefined", None) in kinds


def test_batch_matches_vectors():
    """`flowc eval --batch` output, line for line, against the vectors."""
    lines = [json.dumps({"expr": v["text"], "vars": v["context"], "mode": v["kind"]}) for v in VECTORS]
    out = run_batch(lines)
    assert len(out) == len(VECTORS)
    for v, line in zip(VECTORS, out):
        got = json.loads(line)
        if v["expected_kind"] == "undefined":
            assert line == '{"undefined": true}', v["id"]
        elif v["expected_kind"] == "error":
            assert got == {"error": v["expected"]["error"]}, v["id"]
        else:
            assert js_same(got, v["expected"]), v["id"]


def test_fast_parser_agrees_with_lark_parse():
    """The table-driven loop gives the IR (or error) Lark.parse gives."""
    engine = wfs_expressions._engine()
    texts = {v["text"] for v in VECTORS if v["kind"] == "expression"}
    texts |= {"$" + m.group(1) for v in VECTORS for m in wfs_expressions._TEMPLATE_PART.finditer(v["text"])
              if m.group(1)}
    texts |= {"1 1 =", "(1 == 1 == 1)", "$a[1 2]", "$a.", "!", "((($a)))", "$a.$b.-1.0", "$x.b(", "$a[1)"}
    for text in sorted(texts):
        loc = wfs_expressions._Locator(ORIGIN, text)
        results = []
        for parse in (engine.parse, engine.parse_with_lark):
            try:
                results.append(parse(text, loc))
            except ExpressionError as e:
                results.append((e.kind, e.message, e.position, e.span))
        assert results[0] == results[1], text


# --- IR shape ---------------------------------------------------------------------

def ir(text: str):
    return strip_spans(parse_expression(text, ORIGIN))


def test_ir_references():
    assert ir("$inputs.x") == Ref("inputs", (Field("x"),))
    assert ir("$steps.a.output.b[0]") == Ref(
        "steps", (Field("a"), Field("output"), Field("b"), Index(Literal(0, "int"))))
    assert ir("$item") == Ref("item")
    assert ir("$whatever.x") == Ref("whatever", (Field("x"),))
    # `.$b` reads property "b"; `.0` is element/key "0"; non-canonical numbers
    # stay property names ("01" is not element 1, "1." is key "1.").
    assert ir("$a.$b") == Ref("a", (Field("b"),))
    assert ir("$a.0") == Ref("a", (Index(Literal(0, "int")),))
    assert ir("$a.01") == Ref("a", (Field("01"),))
    assert ir("$a.-1") == Ref("a", (Field("-1"),))
    assert ir("$a.1.") == Ref("a", (Field("1."),))


def test_ir_operators_and_literals():
    assert ir("!$x == false") == Binary(
        "wfs.eq", Unary("wfs.not", Ref("x")), Literal(False, "bool"))
    assert ir("1 < 2.5 && 'a' contains \"b\" || null") == Binary(
        "wfs.or",
        Binary("wfs.and",
               Binary("wfs.lt", Literal(1, "int"), Literal(2.5, "float")),
               Binary("wfs.contains", Literal("a", "string"), Literal("b", "string"))),
        Literal(None, "null"))
    ops = {"==": "wfs.eq", "!=": "wfs.ne", "<": "wfs.lt", "<=": "wfs.le", ">": "wfs.gt",
           ">=": "wfs.ge", "contains": "wfs.contains", "&&": "wfs.and", "||": "wfs.or"}
    for sym, key in ops.items():
        assert ir(f"1 {sym} 2").op == key
    assert ir("1.") == Literal(1.0, "float")
    assert ir("-7") == Literal(-7, "int")
    # Integers past 2**53 are the doubles the reference holds.
    assert ir("12345678901234567890") == Literal(12345678901234567890.0, "float")
    assert ir("'a\\'b\\n'") == Literal("a'bn", "string")


def test_parse_value_forms():
    def pv(text):
        return strip_spans(parse_value(text, ORIGIN))

    assert pv("plain $5 text") == Literal("plain $5 text", "string")
    assert pv("$${a} ${b}") == Literal("${a} ${b}", "string")
    assert pv("$inputs.x") == Ref("inputs", (Field("x"),))
    assert pv("${inputs.n}") == Template((Ref("inputs", (Field("n"),)),), "wfs", True)
    assert pv("a ${inputs.n}$${x}!") == Template(
        (Literal("a ", "string"), Ref("inputs", (Field("n"),)), Literal("${x}!", "string")), "wfs", False)
    assert pv("x$${a}") == Literal("x${a}", "string")
    # `${}` is no placeholder: literal inside a template; alone, it is a `$`-expression.
    assert pv("${} ${inputs.n}") == Template((Literal("${} ", "string"), Ref("inputs", (Field("n"),))), "wfs")
    with pytest.raises(ExpressionError, match=r"^Expected identifier after \$$"):
        parse_value("${}", ORIGIN)
    with pytest.raises(ExpressionError, match=r"^Expected identifier after \$$"):
        parse_value("${ inputs.x }", ORIGIN)


def test_literal_helper():
    s = Span("f", 2, 3, 2, 9)
    assert literal(None, s) == Literal(None, "null", s)
    assert literal(True, s).kind == "bool"
    assert literal(3, s).kind == "int"
    assert literal(3.5, s).kind == "float"
    assert literal("x", s).kind == "string"
    assert literal([1], s).kind == "list"
    assert literal({"a": 1}, s).kind == "object"
    with pytest.raises(TypeError):
        literal(object(), s)


# --- spans --------------------------------------------------------------------------

def test_spans_offset_from_origin():
    origin = Span("w.md", 7, 13, 7, 13)
    e = parse_expression("$inputs.x == 'ab'", origin)
    assert e.span == Span("w.md", 7, 13, 7, 30)
    assert e.left.span == Span("w.md", 7, 13, 7, 22)
    assert e.left.path[0].span == Span("w.md", 7, 21, 7, 22)
    assert e.right.span == Span("w.md", 7, 26, 7, 30)
    idx = parse_expression("$a[ 1 ]", origin).path[0]
    assert idx.span == Span("w.md", 7, 15, 7, 20)
    assert idx.index.span == Span("w.md", 7, 17, 7, 18)
    assert parse_expression("($a)", origin).span == Span("w.md", 7, 13, 7, 17)


def test_spans_multiline():
    e = parse_expression("$a &&\n  $b.c", Span("w.md", 4, 10, 4, 10))
    assert e.left.span == Span("w.md", 4, 10, 4, 12)
    assert e.right.span == Span("w.md", 5, 3, 5, 7)
    with pytest.raises(ExpressionError) as info:
        parse_expression("$a &&\n\n   = 1", Span("w.md", 4, 10, 4, 10))
    assert info.value.span == Span("w.md", 6, 4, 6, 5)


def test_spans_inside_templates():
    origin = Span("w.md", 2, 20, 2, 20)
    t = parse_value("hi ${inputs.name}!", origin)
    assert t.span == Span("w.md", 2, 20, 2, 38)
    lit, ref, bang = t.parts
    assert lit.span == Span("w.md", 2, 20, 2, 23)
    assert ref.span == Span("w.md", 2, 23, 2, 36)  # from the `$` of `${`
    assert ref.path[0].span == Span("w.md", 2, 32, 2, 36)
    assert bang.span == Span("w.md", 2, 37, 2, 38)


@pytest.mark.parametrize(("text", "message", "col", "end_col", "kind"), [
    ("$inputs.n = 3", "Unexpected character: =", 11, 12, "LexError"),
    ("$steps.my-step.output", "Unexpected character: -", 10, 11, "LexError"),
    ("$x + $y", "Unexpected character: +", 4, 5, "LexError"),
    ('$a == "abc', "Unterminated string literal", 7, 8, "LexError"),
    ("$item2", 'Unexpected token after expression: NUMBER ("2")', 6, 7, "ParseExprError"),
    ("$5", "Expected identifier after $", 1, 2, "LexError"),
    ("1 == 1 == 1", 'Unexpected token after expression: EQ ("==")', 8, 10, "ParseExprError"),
    ("$x.null", "Expected property name after '.', got NULL", 4, 8, "ParseExprError"),
    ("$a.items.0.name", 'Unexpected token after expression: IDENTIFIER ("name")', 12, 16, "ParseExprError"),
    ("done", 'Unexpected token: IDENTIFIER ("done")', 1, 5, "ParseExprError"),
    ("true &&", 'Unexpected token: EOF ("")', 8, 8, "ParseExprError"),
    ("($a", 'Expected RPAREN but got EOF ("")', 4, 4, "ParseExprError"),
    ("$a[1 2]", 'Expected RBRACKET but got NUMBER ("2")', 6, 7, "ParseExprError"),
    ("$a $b", 'Unexpected token after expression: DOLLAR_REF ("b")', 4, 6, "ParseExprError"),
    ("$a == 'x' 'y'", 'Unexpected token after expression: STRING ("y")', 11, 14, "ParseExprError"),
    ("!true false", 'Unexpected token after expression: BOOLEAN ("false")', 7, 12, "ParseExprError"),
    # The reference lexes first: a lex error wins over an earlier parse error.
    ("1 1 =", "Unexpected character: =", 5, 6, "LexError"),
])
def test_error_messages_and_columns(text, message, col, end_col, kind):
    with pytest.raises(ExpressionError) as info:
        parse_expression(text, Span("w.md", 3, 1, 3, 1))
    e = info.value
    assert (e.message, e.kind) == (message, kind)
    assert (e.span.line, e.span.col, e.span.end_col) == (3, col, end_col)
    assert str(e) == message


def test_error_column_inside_template():
    origin = Span("w.md", 9, 5, 9, 5)
    with pytest.raises(ExpressionError) as info:
        parse_value("ab ${inputs.x} ${inputs.y = 2}", origin)
    # "ab ${inputs.x} " is 15 characters; `=` is 11 characters into `${inputs.y `.
    assert info.value.message == "Unexpected character: ="
    assert info.value.span.col == 5 + 15 + 11
    assert info.value.position == 10  # in '$' + body, as the reference counts
    with pytest.raises(ExpressionError) as info:
        parse_value("x ${ inputs.y}", origin)
    assert (info.value.span.col, info.value.position) == (5 + 2, 0)


# --- the Python backend: safety -------------------------------------------------------

NASTY = [
    "__import__('os').system('echo pwned')",
    "'); __import__('os').system('x'); ('",
    '"); __import__("os").system("x"); ("',
    '"""', "'''", "\\", "\\'", '\\"', "a\nb", "a\rb", "\u2028", "\u2029", "\x00", "\ud800",
    "{env}", "{}", "${inputs.x}", "\\N{BULLET}", "\\x41", "# comment", "\t", "é😀",
]


class EvilStr(str):
    def __repr__(self):
        return "__import__('os').system('echo pwned')"


def assert_structurally_safe(source: str) -> None:
    """Every name is `_rt` or `env`; every attribute is a runtime export on `_rt`."""
    tree = ast.parse(source, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            assert node.id in ("_rt", "env"), source
        elif isinstance(node, ast.Attribute):
            assert isinstance(node.value, ast.Name) and node.value.id == "_rt", source
            assert node.attr in rt.__all__, source
        elif isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Attribute), source
        elif isinstance(node, (ast.Lambda, ast.NamedExpr, ast.Subscript, ast.ListComp, ast.GeneratorExp)):
            pytest.fail(f"unexpected {type(node).__name__} in {source}")


@pytest.mark.parametrize("s", NASTY)
def test_strings_stay_strings(s, monkeypatch):
    import os

    monkeypatch.setattr(os, "system", lambda *a: pytest.fail("executed"))
    env = {"inputs": {s: "value"}}
    cases = [
        (Literal(s, "string"), s),
        (Ref("inputs", (Field(s),)), "value"),
        (Ref("inputs", (Index(Literal(s, "string")),)), "value"),
        (Template((Literal(s, "string"), Ref("inputs", (Field(s),))), "wfs"), s + "value"),
        (MapExpr((MapEntry(Literal(s, "string"), Literal(s, "string")),)), {s: s}),
        (ListExpr((Literal(s, "string"),)), [s]),
        (Binary("wfs.eq", Literal(s, "string"), Literal(s, "string")), True),
        (Literal({s: [s, 1.5, None, True]}, "object"), {s: [s, 1.5, None, True]}),
    ]
    for expr, expected in cases:
        source = compile_expr(expr)
        assert_structurally_safe(source)
        assert evaluate(expr, env) == expected
    with pytest.raises(rt.EvalError) as info:
        evaluate(Ref(s, (Field("x"),)), env)
    assert info.value.message == "Unknown reference: $" + s
    assert_structurally_safe(compile_expr(Ref(s)))


@pytest.mark.parametrize("s", NASTY)
def test_strings_through_the_parser(s):
    # A string literal in the expression language: backslash takes the next
    # character literally.
    body = s.replace("\\", "\\\\").replace('"', '\\"')
    expr = parse_expression(f'"{body}" == $inputs.v', ORIGIN)
    assert_structurally_safe(compile_expr(expr))
    assert evaluate(expr.left, {}) == s
    assert evaluate(expr, {"inputs": {"v": s}}) is True
    if "}" not in s:
        t = parse_value("<${inputs.v}>", ORIGIN)
        assert evaluate(t, {"inputs": {"v": s}}) == "<" + s + ">"


def test_subclass_repr_is_not_used():
    s = EvilStr("plain")
    for expr in (Literal(s, "string"), Ref("inputs", (Field(s),)), Ref(s)):
        source = compile_expr(expr)
        assert "__import__" not in source
        assert_structurally_safe(source)
    assert evaluate(Literal(s, "string"), {}) == "plain"


def test_refuses_what_it_does_not_know():
    with pytest.raises(ExprCompileError):
        compile_expr(Binary("cel.add", Literal(1), Literal(2)))
    with pytest.raises(ExprCompileError):
        compile_expr(Binary("wfs.eq); __import__('os'", Literal(1), Literal(2)))
    with pytest.raises(ExprCompileError):
        compile_expr(Unary("cel.neg", Literal(1)))
    with pytest.raises(ExprCompileError):
        compile_expr(Literal(object()))
    with pytest.raises(ExprCompileError):
        compile_expr(Literal({1: "a"}))
    with pytest.raises(ExprCompileError):
        compile_expr(Template((Literal("x"),), "cel"))


def test_no_builtins_at_evaluation():
    # Even a hand-made Ref can't reach builtins: roots are looked up in env.
    assert evaluate(Ref("inputs"), {"inputs": {"__builtins__": 1}}) == {"__builtins__": 1}
    assert evaluate(Literal(math.inf, "float"), {}) == math.inf
    assert math.isnan(evaluate(Literal(math.nan, "float"), {}))


def test_deep_nesting():
    env = {"inputs": {"x": 1, "a": [0, 1]}}
    # Chains of `!`, `&&` and `||` don't nest in the generated code.
    assert evaluate(parse_expression("!" * 5001 + "$inputs.x", ORIGIN), env) is False
    assert evaluate(parse_expression(" && ".join(["$inputs.x"] * 3000), ORIGIN), env) is True
    assert evaluate(parse_expression(" || ".join(["0"] * 3000 + ["1"]), ORIGIN), env) is True
    assert evaluate(parse_expression("(" * 500 + "$inputs.x" + ")" * 500, ORIGIN), env) == 1
    # Nesting Python can't compile is a compile error, not a SyntaxError.
    deep = "$inputs.a[" * 300 + "0" + "]" * 300
    with pytest.raises(ExprCompileError):
        compile_expr(parse_expression(deep, ORIGIN))
    assert run_eval("workflowskill", deep, env) == {"error": "expression is nested too deeply to compile"}
    shallow = "$inputs.a[" * 60 + "0" + "]" * 60
    assert evaluate(parse_expression(shallow, ORIGIN), env) == 0


def test_evaluation_order_and_no_short_circuit():
    with pytest.raises(rt.EvalError, match=r"^Unknown reference: \$bogus$"):
        evaluate(parse_expression("true || $bogus", ORIGIN), {})
    # The object is evaluated before the index, so its error comes first.
    with pytest.raises(rt.EvalError, match=r"^Unknown reference: \$first$"):
        evaluate(parse_expression("$first[$second]", ORIGIN), {})
    with pytest.raises(rt.EvalError, match=r"^Unknown reference: \$second$"):
        evaluate(parse_expression("$inputs.missing[$second]", ORIGIN), {"inputs": {}})


# --- the runtime -----------------------------------------------------------------------

@pytest.mark.parametrize(("value", "text"), [
    (1, "1"), (1.0, "1"), (-0.0, "0"), (1.5, "1.5"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
    (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (1e-6, "0.000001"), (0.1 + 0.2, "0.30000000000000004"),
    (2**53 + 1, "9007199254740992"), (12345678901234567890, "12345678901234567000"),
    (math.inf, "Infinity"), (-math.inf, "-Infinity"), (math.nan, "NaN"), (5e-324, "5e-324"),
    (-123.456e30, "-1.23456e+32"),
])
def test_js_number_to_string(value, text):
    assert rt.js_number_to_string(value) == text


def test_runtime_equality_is_strict():
    assert rt.wfs_eq(True, 1) is False
    assert rt.wfs_eq(1, 1.0) is True
    assert rt.wfs_eq(0, "") is True
    assert rt.wfs_eq(7, "0x7") is True
    assert rt.wfs_eq(" 12 ", 12) is True
    assert rt.wfs_eq(None, rt.MISSING) is False
    assert rt.wfs_eq(rt.MISSING, rt.MISSING) is True
    assert rt.wfs_eq("true", True) is False
    assert rt.wfs_eq([1], [1]) is False  # objects by identity
    a = [1]
    assert rt.wfs_eq(a, a) is True
    assert rt.wfs_ne(1, "x") is True
    assert rt.wfs_eq(2**53 + 1, float(2**53)) is True  # both are the same double


def test_runtime_contains_is_strict_for_arrays():
    assert rt.wfs_contains([1], True) is False
    assert rt.wfs_contains([True], 1) is False
    assert rt.wfs_contains([1.0], 1) is True
    assert rt.wfs_contains([1, 2], "2") is False
    assert rt.wfs_contains([None], None) is True
    assert rt.wfs_contains([math.nan], math.nan) is True  # SameValueZero
    assert rt.wfs_contains("Hello", "ELL") is True
    assert rt.wfs_contains(None, "") is True
    assert rt.wfs_contains({"a": 1}, "object") is True  # "[object Object]"
    assert rt.wfs_contains(7, 7) is True
    assert rt.wfs_contains("1,2", [1, 2]) is True  # String([1, 2]) is "1,2"


def test_runtime_truthiness():
    for v in (None, rt.MISSING, False, 0, 0.0, "", []):
        assert rt.wfs_truthy(v) is False
    for v in ({}, math.nan, "0", [0], True, -1):
        assert rt.wfs_truthy(v) is True
    assert rt.js_boolean([]) is True
    assert rt.js_boolean({}) is True
    assert rt.js_boolean(math.nan) is False
    assert rt.js_boolean(rt.MISSING) is False


def test_runtime_access():
    arr = ["a", "b"]
    assert rt.wfs_get_field(arr, "length") == 2
    assert rt.wfs_get_field(arr, "1") == "b"
    assert rt.wfs_get_field(arr, "01") is rt.MISSING
    assert rt.wfs_get_field("str", "length") is rt.MISSING
    assert rt.wfs_get_field({"length": 9}, "length") == 9
    assert rt.wfs_get_field(None, "x") is rt.MISSING
    assert rt.wfs_get_index(arr, 1) == "b"
    assert rt.wfs_get_index(arr, 1.0) == "b"
    assert rt.wfs_get_index(arr, -0.0) == "a"
    assert rt.wfs_get_index(arr, -1) is rt.MISSING
    assert rt.wfs_get_index(arr, 0.5) is rt.MISSING
    assert rt.wfs_get_index(arr, "1") == "b"
    assert rt.wfs_get_index(arr, "length") == 2
    assert rt.wfs_get_index(arr, True) is rt.MISSING
    assert rt.wfs_get_index({"1": "x", "1.5": "y"}, 1) == "x"
    assert rt.wfs_get_index({"1": "x", "1.5": "y"}, 1.5) == "y"
    assert rt.wfs_get_index({"true": 1}, True) is rt.MISSING
    assert rt.wfs_get_index("abc", 0) is rt.MISSING


def test_runtime_ordering_is_numeric():
    assert rt.wfs_gt("b", "a") is False
    assert rt.wfs_lt("2", "10") is True
    assert rt.wfs_ge(True, 1) is True
    assert rt.wfs_gt("abc", -1) is True  # "abc" is 0
    assert rt.wfs_lt(None, 1) is True


def test_runtime_stringify_and_json():
    assert rt.wfs_stringify(None) == ""
    assert rt.wfs_stringify(rt.MISSING) == ""
    assert rt.wfs_stringify(1.0) == "1"
    assert rt.wfs_stringify(True) == "true"
    assert rt.wfs_stringify({"b": 1.0, "a": [1e21, None, "x\n"]}) == '{"b":1,"a":[1e+21,null,"x\\n"]}'
    # Array-index keys come first in JavaScript objects.
    assert rt.js_json({"b": 1, "2": 2, "01": 3, "1": 4}) == '{"1":4,"2":2,"b":1,"01":3}'
    assert rt.js_json({"a": rt.MISSING, "b": [rt.MISSING]}) == '{"b":[null]}'
    assert rt.js_json("\ud800\u2028\x7f") == '"\\ud800\u2028\x7f"'
    assert rt.js_json(rt.MISSING) is None
    assert rt.wfs_template(["n=", 1.0, " ", None, [1, "a"]]) == 'n=1 [1,"a"]'
    assert rt.to_json_value({"a": rt.MISSING, "b": [rt.MISSING, 1]}) == {"b": [None, 1]}
    assert rt.to_json_value(rt.MISSING) is None


def test_js_to_number():
    assert rt.js_to_number(" 12 ") == 12
    assert rt.js_to_number("") == 0
    assert rt.js_to_number("0x1F") == 31
    assert rt.js_to_number("0b101") == 5
    assert rt.js_to_number("0o17") == 15
    assert rt.js_to_number("-Infinity") == -math.inf
    for s in ("-0x7", "1_000", "infinity", "nan", "1e", ".", "12abc", "\x1c7"):
        assert math.isnan(rt.js_to_number(s)), s


def test_runtime_uses_the_standard_library_only(tmp_path):
    """sequence_run.py copied anywhere, with the runtime modules it needs
    beside it (wfs.py, fuel.py, kernel.py, drivers.py and edges.py, standard
    library only), imports in a bare interpreter (no site-packages, no flowc) and
    loads no third-party module."""
    runtime_dir = Path(sequence_run.__file__).parent
    for name in ("sequence_run.py", "wfs.py"):
        tree = ast.parse((runtime_dir / name).read_text(encoding="utf-8"))
        top_level = set()
        for node in tree.body:
            if isinstance(node, ast.Import):
                top_level |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                top_level.add((node.module or "").split(".")[0])
        assert top_level <= set(sys.stdlib_module_names), (name, top_level)
    for name in ("sequence_run.py", "wfs.py", "fuel.py", "kernel.py", "drivers.py", "edges.py"):
        (tmp_path / name).write_text((runtime_dir / name).read_text(encoding="utf-8"), encoding="utf-8")
    probe = (
        "import sys; sys.path.insert(0, '.'); import sequence_run as rt; "
        "assert rt.wfs_template(['a', 1.0, None]) == 'a1'; "
        "assert rt.SkillRun.__mro__[1].__name__ == 'Kernel'; "
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('flowc', 'lark', 'yaml', 'attrs', 'cattrs', 'networkx', 'msgpack')]; "
        "assert not bad, bad"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


# --- flowc eval ---------------------------------------------------------------------------

def test_eval_command_single():
    out = io.StringIO()
    code = eval_command("workflowskill", "$inputs.n >= 3", '{"inputs": {"n": "5"}}', "expression",
                        False, io.StringIO(), out)
    assert (code, out.getvalue()) == (0, "true\n")
    out = io.StringIO()
    code = eval_command("workflowskill", "${inputs.n}", '{"inputs": {"n": 2.0}}', "value",
                        False, io.StringIO(), out)
    assert (code, out.getvalue()) == (0, "2\n")
    out = io.StringIO()
    assert eval_command("workflowskill", "$item", None, "expression", False, io.StringIO(), out) == 0
    assert out.getvalue() == '{"undefined": true}\n'
    out = io.StringIO()
    assert eval_command("workflowskill", "$x =", None, "expression", False, io.StringIO(), out) == 1
    assert out.getvalue() == '{"error": "Unexpected character: ="}\n'
    out = io.StringIO()
    assert eval_command("workflowskill", "$x", "{bad", "expression", False, io.StringIO(), out) == 2
    out = io.StringIO()
    assert eval_command("cel", "1 + 1", None, "expression", False, io.StringIO(), out) == 0
    assert out.getvalue() == "2\n"


def test_eval_command_batch():
    stdin = io.StringIO(
        '{"expr": "$inputs.a", "vars": {"inputs": {"a": [1.0, {"b": null}]}}}\n'
        "\n"
        '{"expr": "${inputs.a} x", "vars": {"inputs": {"a": "A"}}, "mode": "value"}\n'
        "not json\n"
    )
    out = io.StringIO()
    assert eval_command("workflowskill", None, None, "expression", True, stdin, out) == 0
    lines = out.getvalue().splitlines()
    assert lines[:2] == ['[1,{"b":null}]', '"A x"']
    assert json.loads(lines[2])["error"].startswith("invalid batch line")


def test_evaluate_text_kinds():
    assert evaluate_text("workflowskill", "$inputs", {"inputs": {"error": "x"}}) == ("value", {"error": "x"})
    assert evaluate_text("workflowskill", "$item", {}) == ("undefined", None)
    assert evaluate_text("workflowskill", "$nope", {}) == ("error", "Unknown reference: $nope")
    assert evaluate_text("workflowskill", "$x", {}, "template")[0] == "error"


# --- the grammar loader ---------------------------------------------------------------------

def test_load_parser_is_cached_and_lalr():
    assert "workflowskill" in grammar_names()
    p = load_parser("workflowskill")
    assert p is load_parser("workflowskill")
    assert p.options.parser == "lalr"
    assert p.options.propagate_positions is True
    assert p.parse("$a.b[0] == 1").data == "binary"
    with pytest.raises(ValueError):
        load_parser("../etc")
