"""CEL: the grammar and its lowering to IR (spans, literals, macros, errors),
the run-time semantics of cel, the compiled Python form, and cel on
MicroPython."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from flowc.backends.python.cel_expr import CelCompileError, compile_cel, evaluate_cel
from flowc.compiler.instruction.cel import CelSyntaxError, check_names, parse_cel
from flowc.ir import expr as E
from flowc.ir.expr import strip_spans
from flowc.ir.semantics import FUNCTIONS, OPERATORS
from flowc.ir.span import Span
from flowc.runtime import cel as C
from flowc.runtime import nfa
from micropython_probe import assert_cel_probe_passes

ORIGIN = Span("w.yaml", 7, 11, 7, 40)


def cel(text, **env):
    return evaluate_cel(parse_cel(text), env)


# ------------------------------------------------------------------ parsing

def test_operators_lower_to_cel_keys_with_precedence():
    e = strip_spans(parse_cel("a + b * c == d && !e || f in g"))
    assert isinstance(e, E.Binary) and e.op == "cel.or"
    left = e.left
    assert left.op == "cel.and" and left.right == E.Unary("cel.not", E.Ref("e"))
    eq = left.left
    assert eq.op == "cel.eq" and eq.left.op == "cel.add" and eq.left.right.op == "cel.mul"
    assert e.right == E.Binary("cel.in", E.Ref("f"), E.Ref("g"))


def test_every_key_the_parser_emits_is_in_the_semantics_tables():
    text = ("x.all(v, v > 0) && x.exists(v, v < 0) || x.exists_one(v, v == 1) ? x.map(v, v * 2) : "
            "x.filter(v, v % 2 == 0)[0] - size(x) / int('1') + -double(1u) != uint(2) && has(m.f) "
            "&& 'a'.contains('b') && 'a'.startsWith('a') && 'a'.endsWith('a') && 'a'.matches('a') "
            "&& string(1) in [bytes('a'), bool('true'), dyn(1), type(1), duration('1s'), "
            "timestamp(0)] && {'a': 1}.a == 1 && [1][0] == 1 && x.map(v, v > 0, v)[0] <= 1 >= 0")
    keys = set()
    for node in E.walk(parse_cel(text)):
        if isinstance(node, (E.Binary, E.Unary, E.Conditional)):
            keys.add(node.op)
            assert node.op in OPERATORS
        if isinstance(node, E.Call):
            keys.add(node.func)
            assert node.func in FUNCTIONS
    assert {"cel.all", "cel.exists", "cel.exists_one", "cel.map", "cel.filter", "cel.has",
            "cel.select", "cel.index", "cel.ternary", "cel.neg"} <= keys


def test_selection_and_indexing_on_names_are_ref_paths():
    e = strip_spans(parse_cel("steps.fetch.output.items[0].name"))
    assert e == E.Ref("steps", (E.Field("fetch"), E.Field("output"), E.Field("items"),
                                E.Index(E.Literal(0, "int")), E.Field("name")))
    e = strip_spans(parse_cel("[1, 2][0]"))
    assert isinstance(e, E.Binary) and e.op == "cel.index"


def test_spans_point_into_the_file():
    e = parse_cel("inputs.env == 'prod'", ORIGIN)
    assert e.span == Span("w.yaml", 7, 11, 7, 31)
    assert e.left.span == Span("w.yaml", 7, 11, 7, 21)
    assert e.left.path[0].span == Span("w.yaml", 7, 18, 7, 21)
    assert e.right.span == Span("w.yaml", 7, 25, 7, 31)


def test_inexact_text_gets_the_scalar_span_everywhere():
    e = parse_cel("a\n  && b", ORIGIN, exact=False)
    assert all(node.span == ORIGIN for node in E.walk(e))


def test_literals_keep_their_cel_kind():
    assert strip_spans(parse_cel("1")) == E.Literal(1, "int")
    assert strip_spans(parse_cel("0x10u")) == E.Literal(16, "uint")
    assert strip_spans(parse_cel("1.5e3")) == E.Literal(1500.0, "float")
    assert strip_spans(parse_cel("b'\\xff'")) == E.Literal("ff", "bytes")
    assert strip_spans(parse_cel("-9223372036854775808")) == E.Literal(-9223372036854775808, "int")
    assert strip_spans(parse_cel("r'a\\n'")) == E.Literal("a\\n", "string")
    assert strip_spans(parse_cel("'''a\nb'''")) == E.Literal("a\nb", "string")
    assert strip_spans(parse_cel('"\\u00e9\\U0001F431\\101"')) == E.Literal("é🐱A", "string")


@pytest.mark.parametrize("text, message", [
    ("1 +", "ends where a value was expected"),
    ("a.", "ends where a field name was expected"),
    ("9223372036854775808", "out of the int64 range"),
    ("18446744073709551616u", "out of the uint64 range"),
    ("'\\q'", "unknown escape"),
    ("'\\uD800'", "not a Unicode scalar value"),
    ("in + 1", "reserved word"),
    ("x.all(1, true)", "simple name"),
    ("has(a)", "field selection"),
    ("a ? b", "the expression ends"),
    ("let", "reserved word"),
    ("a # b", "unexpected character"),
])
def test_syntax_errors(text, message):
    with pytest.raises(CelSyntaxError) as info:
        parse_cel(text, ORIGIN)
    assert message in info.value.message
    assert info.value.span.line == 7


def test_syntax_error_span_is_where_the_problem_is():
    with pytest.raises(CelSyntaxError) as info:
        parse_cel("a && && b", ORIGIN)
    assert (info.value.span.col, info.value.span.end_col) == (16, 18)


def test_unknown_functions_lower_to_unbound_and_are_reported():
    e = parse_cel("f_unknown(1) || size(1, 2) || x.nope()", ORIGIN)
    findings = check_names(e, None)
    assert [d.code for d in findings] == ["CEL202", "CEL202", "CEL202"]
    with pytest.raises(C.CelError):
        evaluate_cel(parse_cel("f_unknown(1)"), {})
    assert cel("f_unknown(17) || true") is True


def test_undeclared_roots_are_reported_but_macro_variables_are_not():
    e = parse_cel("inputs.a && x.all(v, v > y)", ORIGIN)
    findings = check_names(e, {"inputs"})
    assert [(d.code, d.message) for d in findings] == [
        ("CEL203", "undeclared reference to 'x'"), ("CEL203", "undeclared reference to 'y'")]


# ------------------------------------------------------------------ semantics

@pytest.mark.parametrize("text, value", [
    ("7 / -2", -3),
    ("-7 % 3", -1),
    ("7 % -3", 1),
    ("5u / 2u", C.UInt(2)),
    ("1.0 / 0.0", float("inf")),
    ("'a' + 'b'", "ab"),
    ("[1] + [2]", [1, 2]),
    ("b'a' + b'b'", b"ab"),
    ("1 == 1.0", True),
    ("1u == 1", True),
    ("[1, 2u] == [1.0, 2]", True),
    ("{'a': 1} == {'a': 1.0}", True),
    ("1 == '1'", False),
    ("null == null", True),
    ("'b' > 'a'", True),
    ("2 in [1, 2]", True),
    ("'k' in {'k': 1}", True),
    ("{1: 'a'}[1u]", "a"),
    ("{1: 'a'}[1.0]", "a"),
    ("[7, 8][1u]", 8),
    ("size('πέντε')", 5),
    ("'abc'.contains('b')", True),
    ("'abc'.matches('^a.c$')", True),
    ("int('-12')", -12),
    ("int(2.9)", 2),
    ("uint(3)", C.UInt(3)),
    ("double('1e3')", 1000.0),
    ("string(1.5)", "1.5"),
    ("string(1e6)", "1e+06"),
    ("string(b'hi')", "hi"),
    ("bool('true')", True),
    ("type(1) == int", True),
    ("type('a') == string", True),
    ("string(duration('1m30s'))", "90s"),
    ("timestamp('2024-01-02T03:04:05Z') > timestamp(0)", True),
    ("[1, 2, 3].map(x, x * x)", [1, 4, 9]),
    ("[1, 2, 3].map(x, x > 1, x * 10)", [20, 30]),
    ("[1, 2, 3].filter(x, x != 2)", [1, 3]),
    ("{'a': 1, 'b': 2}.all(k, k.size() == 1)", True),
    ("[1, 2].exists_one(x, x == 2)", True),
    ("[[1], [2]].all(x, x.all(y, y > 0))", True),
    ("false && (1 / 0 > 1)", False),
    ("(1 / 0 > 1) && false", False),
    ("(1 / 0 > 1) || true", True),
    ("true ? 1 : 1 / 0", 1),
    ("has(m.a) && !has(m.b)", True),
])
def test_values(text, value):
    got = cel(text, m={"a": 1})
    assert C.type_name(got) == C.type_name(value) and C.eq(got, value), got


@pytest.mark.parametrize("text", [
    "9223372036854775807 + 1",
    "-9223372036854775807 - 2",
    "-(-9223372036854775807 - 1)",
    "9223372036854775807 * 2",
    "0u - 1u",
    "18446744073709551615u + 1u",
    "1 / 0",
    "1 % 0",
    "1 + 1u",
    "1 + 1.0",
    "'a' < 1",
    "null < null",
    "[1] < [2]",
    "[1, 2][2]",
    "[1, 2][0.5]",
    "{'a': 1}.b",
    "{'a': 1}['b']",
    "!1",
    "'a' ? 1 : 2",
    "true && 1",
    "1 || false",
    "int(9.3e18)",
    "int('x')",
    "uint(-1)",
    "string(b'\\xff')",
    "bool('yes')",
    "'a'.matches('(')",
    "x",
    "{'a': 1, 'a': 2}",
    "[1, 'a'].all(x, x > 0)",
    "[0].exists_one(x, 1 / x > 0)",
])
def test_errors(text):
    with pytest.raises(C.CelError):
        cel(text)


def test_macro_variables_shadow_outer_variables():
    assert cel("[1, 2].map(x, x + 1) == [2, 3] && x == 10", x=10) is True


def test_json_of_cel_values():
    assert C.to_json_text({"a": [1, C.UInt(2), 2.5, None, True, b"hi"]}) == \
        '{"a":[1,2,2.5,null,true,"aGk="]}'
    assert C.to_json(float("nan")) == "NaN"
    assert C.template_json(["n=", 3, " s=", "x", " null=", None, " l=", [1, "a"]]) == \
        'n=3 s=x null= l=[1,"a"]'


# ------------------------------------------------------------------ compiled Python

def test_compiled_text_uses_only_the_runtime_and_the_environment():
    source = compile_cel(parse_cel("x.all(v, v > 0) && inputs.a == 'b\\'; import os'"))
    tree = ast.parse(source, mode="eval")
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert names <= {"_c", "env", "_v0"}
    assert any("import os" in str(n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant))


def test_compile_refuses_unknown_keys_and_deep_nesting():
    with pytest.raises(CelCompileError):
        compile_cel(E.Binary("wfs.eq", E.Literal(1), E.Literal(2)))
    with pytest.raises(CelCompileError):
        compile_cel(E.Call("os.system", (E.Literal("x"),)))
    deep = E.ListExpr((E.Literal(1, "int"),))
    for _ in range(250):
        deep = E.Binary("cel.index", deep, E.Literal(0, "int"))
    with pytest.raises(CelCompileError):
        compile_cel(deep)
    with pytest.raises(CelSyntaxError):
        parse_cel("(" * 2000 + "1" + ")" * 2000)


def test_evaluation_has_no_builtins():
    with pytest.raises(C.CelError):
        cel("__import__('os')")


# ------------------------------------------------------------------ cel standalone

def test_cel_imports_only_the_standard_library(tmp_path):
    source = Path(C.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    top = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    top |= {(n.module or "").split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom)}
    # flowc's nfa, or a copy of it next to this file (standard library only too)
    assert top <= {"binascii", "math", "re", "flowc", "nfa"}
    (tmp_path / "cel_copy.py").write_text(source, encoding="utf-8")
    (tmp_path / "nfa.py").write_text(Path(nfa.__file__).read_text(encoding="utf-8"),
                                          encoding="utf-8")
    probe = "import sys; sys.path.insert(0, '.'); import cel_copy as c; assert c.and_(lambda: c.div(1, 0), lambda: False) is False"
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr


MICRO_PROBE = r'''
def check(name, got, want):
    print(("ok " if got == want else "FAIL ") + name + " " + repr(got))
check("add", add(1, 2), 3)
try:
    add(INT64_MAX, 1)
    print("FAIL overflow")
except CelError as e:
    check("overflow", e.message, "integer overflow")
check("uint eq", eq(UInt(3), 3.0), True)
check("int/double order", lt(9223372036854775807, 9223372036854775808.0), False)
check("and absorbs", and_(lambda: div(1, 0), lambda: False), False)
check("or absorbs", or_(lambda: div(1, 0), lambda: True), True)
check("div", div(-7, 2), -3)
check("mod", mod(-7, 3), -1)
check("size", size("\u03c0\u03ad\u03bd\u03c4\u03b5"), 5)
check("string(double)", to_string(1234567.0), "1.234567e+06")
check("matches", matches("banana", "ba(na)*"), True)
check("matches is linear", matches("a" * 3000 + "!", "^(a+)+$"), False)
check("all", all_([1, 2, 3], lambda x: gt(x, 0)), True)
check("map key", index({1: "a"}, UInt(1)), "a")
check("json", to_json_text({"a": [1, 2.5, None, True, "x\n"], "b": b"hi"}),
      '{"a":[1,2.5,null,true,"x\\n"],"b":"aGk="}')
check("timestamp", to_string(timestamp("2020-01-02T03:04:05.5Z")), "2020-01-02T03:04:05.5Z")
check("duration", to_string(duration("1h2m3.5s")), "3723.5s")
check("int(double)", to_int(-1.9), -1)
check("template", template_json(["n=", 3, None]), "n=3")
'''


def test_cel_runs_on_micropython(tmp_path):
    assert_cel_probe_passes(tmp_path, MICRO_PROBE)


# ------------------------------------------------------------------ flowc eval --lang cel

def test_flowc_eval_cel(capsys):
    from flowc import cli

    assert cli.main(["eval", "--lang", "cel", "inputs.n * 2 > 5 && 'a' in ['a']",
                     "--vars", '{"inputs": {"n": 3}}']) == 0
    assert capsys.readouterr().out == "true\n"
    assert cli.main(["eval", "--lang", "cel", "[1.0, 9223372036854775807, 2u, b'hi', {'a': null}]"]) == 0
    assert capsys.readouterr().out == '[1.0,9223372036854775807,2,"aGk=",{"a":null}]\n'
    assert cli.main(["eval", "--lang", "cel", "1 / 0"]) == 1
    assert capsys.readouterr().out == '{"error": "division by zero"}\n'
    assert cli.main(["eval", "--lang", "cel", "1 +"]) == 1
    assert "syntax error" in capsys.readouterr().out
    for backend in ("python", "vm"):
        assert cli.main(["eval", "--lang", "cel", "--backend", backend,
                         "[1, 2, 3].map(x, x * 2).filter(y, y > 2) + [size('ab')]"]) == 0
        assert capsys.readouterr().out == "[4,6,2]\n"


def test_flowc_eval_cel_batch(monkeypatch, capsys):
    import io

    from flowc import cli

    lines = '{"expr": "x + 1", "vars": {"x": 2}}\n\n{"expr": "x +"}\n{"expr": "y"}\nnot json\n'
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    assert cli.main(["eval", "--lang", "cel", "--batch"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "3"
    assert out[1].startswith('{"error": "syntax error')
    assert out[2] == '{"error": "undeclared reference to \'y\'"}'
    assert out[3].startswith('{"error": "invalid batch line')
