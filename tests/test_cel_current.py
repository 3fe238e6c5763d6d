"""CEL of the current cel-spec beyond the core subset: two-variable
comprehensions, backtick-quoted fields, timestamp/duration accessors,
qualified variable names and the extension libraries (strings, math,
base64, cel.bind). Parsing, both backends (generated Python and the VM's
expression code), the instruction printer, translation to the other dialects,
`flowc eval` and cel on MicroPython. The conformance files exercise the
same features case by case (tests/test_cel_conformance.py)."""

from __future__ import annotations

import pytest
from flowc.backends.python.cel_expr import evaluate_cel
from flowc.backends.vm import device
from flowc.backends.vm import expr_vm as V
from flowc.backends.vm.errors import VerifyError
from flowc.backends.vm.plan_assemble import assemble_expressions
from flowc.compiler.instruction.cel import CelSyntaxError, check_names, parse_cel
from flowc.ir import expr as E
from flowc.ir.expr import strip_spans
from flowc.ir.semantics import FUNCTIONS
from flowc.runtime import cel as C
from flowc.translation.instruction.text import cel as print_cel
from micropython_probe import assert_cel_probe_passes


def on_vm(expr, env):
    return device.load(assemble_expressions([expr])).evaluate(0, env)


BACKENDS = {"python": evaluate_cel, "vm": on_vm}


def run(backend, text, **env):
    return BACKENDS[backend](parse_cel(text), env)


# ------------------------------------------------------------------ parsing

def test_two_variable_macros_lower_to_two_parameter_lambdas():
    e = strip_spans(parse_cel("m.all(k, v, v > 0)"))
    assert e.func == "cel.all2" and e.args[1].params == ("k", "v")
    e = strip_spans(parse_cel("l.transformList(i, v, i > 0, v * 2)"))
    assert e.func == "cel.transformList" and [a.params for a in e.args[1:]] == [("i", "v")] * 2
    for text, key in [("l.exists(i, v, true)", "cel.exists2"), ("l.existsOne(i, v, true)", "cel.exists_one2"),
                      ("m.transformMap(k, v, v)", "cel.transformMap"),
                      ("m.transformMapEntry(k, v, {k: v})", "cel.transformMapEntry")]:
        assert parse_cel(text).func == key
    # the one-variable forms are unchanged
    assert parse_cel("l.all(x, x > 0)").func == "cel.all"
    assert all(key in FUNCTIONS for key in ("cel.all2", "cel.exists2", "cel.exists_one2", "cel.transformList",
                                            "cel.transformMap", "cel.transformMapEntry"))


def test_macro_variables_are_in_scope_for_the_name_check():
    assert check_names(parse_cel("m.all(k, v, k == v && x)"), {"m"}) \
        and [d.message for d in check_names(parse_cel("m.all(k, v, k == v && x)"), {"m"})] \
        == ["undeclared reference to 'x'"]
    assert check_names(parse_cel("m.transformMap(k, v, k != '', v + 1)"), {"m"}) == []


@pytest.mark.parametrize("text", ["m.all(k, k, true)", "m.all(k, v.w, true)", "m.all(1, v, true)"])
def test_two_variable_macro_syntax_errors(text):
    with pytest.raises(CelSyntaxError):
        parse_cel(text)


def test_a_two_variable_macro_with_the_wrong_arity_is_an_unknown_function():
    e = parse_cel("l.transformList(i, v, a, b, c)")
    assert e.func == "cel.unbound" and e.args[0].value == "transformList"


def test_backtick_fields_select_like_any_field():
    e = strip_spans(parse_cel("m.`content-type`.x"))
    assert e == E.Ref("m", (E.Field("content-type"), E.Field("x")))
    e = strip_spans(parse_cel("{'a.b': 1}.`a.b`"))
    assert e.op == "cel.select" and e.right.value == "a.b"
    assert parse_cel("has(m.`foo.txt`)").func == "cel.has"
    for text in ("`x`", "m.`a+b`", "m.`x`()"):  # only after a dot, only its characters, never a call
        with pytest.raises(CelSyntaxError):
            parse_cel(text)


# ------------------------------------------------------------------ both backends

VALUES = [
    ("[10, 20].all(i, v, v > i)", True),
    ("{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 2)", True),
    ("[1, 2, 3].existsOne(i, v, v == i + 1)", False),
    ("[5, 7].existsOne(i, v, v == 7)", True),
    ("[1, 2, 3].transformList(i, v, i * v)", [0, 2, 6]),
    ("[1, 2, 3].transformList(i, v, v % 2 == 1, v * 10)", [10, 30]),
    ("['a', 'b'].transformMap(i, v, v + 'x')", {0: "ax", 1: "bx"}),
    ("{'a': 1, 'b': 2}.transformMap(k, v, v > 1, v * 2)", {"b": 4}),
    ("{'a': 1, 'b': 2}.transformMapEntry(k, v, {v: k})", {1: "a", 2: "b"}),
    ("[1, 2].transformMapEntry(i, v, v > 1, {'k' + string(v): i})", {"k2": 1}),
    ("[1].all(x, [2].all(i, x, x == 2))", True),  # the inner variable shadows the outer one
    ("{'content-type': 'json'}.`content-type`", "json"),
    ("has({'foo.txt': 1}.`foo.txt`) && !has({'foo.txt': 1}.`bar.csv`)", True),
    ("timestamp('2009-02-13T23:31:30Z').getFullYear()", 2009),
    ("timestamp('2009-02-13T23:31:30Z').getDayOfWeek()", 5),
    ("timestamp('2009-02-13T23:31:30Z').getHours('+02:00')", 1),
    ("timestamp('2009-02-13T23:31:30Z').getDate('Australia/Sydney')", 14),
    ("duration('3730s').getMinutes()", 62),
    ("duration('-1.5s').getMilliseconds()", -500),
    ("'ta©o'.charAt(2) + 'x'.upperAscii() + ' a '.trim()", "©Xa"),
    ("'a,b,c'.split(',', 2)", ["a", "b,c"]),
    ("'%s is %.2f, %x'.format(['pi', 3.14159, 255])", "pi is 3.14, ff"),
    ("strings.quote('a\"b')", '"a\\"b"'),
    ("base64.decode(base64.encode(b'hi')) == b'hi'", True),
    ("math.greatest(1, 2.5, 2u)", 2.5),
    ("math.bitShiftRight(-1024, 3)", 2305843009213693824),
    ("cel.bind(x, [1, 2], x + x)", [1, 2, 1, 2]),
]


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("text, value", VALUES)
def test_values(backend, text, value):
    got = run(backend, text)
    assert got == value and type(got) is type(value)


ERRORS = [
    "{'a': 1, 'b': 1}.transformMapEntry(k, v, {v: k})",  # the key 1 twice
    "[1, 2].transformMapEntry(i, v, v)",  # the body must give a map
    "[0, 1].transformList(i, v, 1 / i)",
    "1.transformList(i, v, v)",
    "[0].exists(i, v, 1 / i == 1)",
    "timestamp('9999-12-31T23:59:59Z') + duration('1s')",
    "duration('9000000000s') + duration('9000000000s')",  # beyond one int64 of nanoseconds
    "timestamp('2009-02-13T23:31:30Z').getHours('Not/AZone')",
    "duration('1s').getHours('UTC')",
    "'abc'.substring(2, 1)",
    "'%q'.format([1])",
    "math.abs(-9223372036854775808)",
    "{true: 1, 1: 2}",  # maps are dicts, where true and 1 are one key: an error, not a lost entry
    "[true, 1].transformMapEntry(i, v, {v: i})",
]


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("text", ERRORS)
def test_errors(backend, text):
    with pytest.raises(C.CelError):
        run(backend, text)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_qualified_variable_names(backend):
    assert run(backend, "a.b.c", **{"a.b.c": 1, "a.b": {"c": 2}}) == 1
    assert run(backend, "a.b.c", **{"a.b": {"c": 2}}) == 2
    # a plain variable always wins, so an ordinary environment is read as before
    assert run(backend, "a.b.c", a={"b": {"c": 3}}, **{"a.b.c": 1}) == 3
    assert run(backend, "has(a.b.c)", **{"a.b": {"c": 2}}) is True
    with pytest.raises(C.CelError, match="undeclared reference"):
        run(backend, "a.b.c", **{"a.x": 1})


def test_the_vm_verifier_checks_the_second_variable_slot():
    program = device.load(assemble_expressions([parse_cel("[1].all(i, v, v > i)")]))
    assert program is not None
    sizes = (1, 0, 1, 2)
    code = bytes([V.CONST, 0, V.LAMBDA, 1, 0, 2, V.CALL, 0, 2, V.RETURN])
    V.verify_block(0, code, sizes, ["cel.all2"], 2, V.PROFILES["cel"])
    with pytest.raises(VerifyError, match="LAMBDA slots out of range"):
        V.verify_block(0, code, sizes, ["cel.all2"], 1, V.PROFILES["cel"])
    # a two-variable comprehension takes a lambda of two parameters
    with pytest.raises(VerifyError, match="must be a LAMBDA of 2 parameters"):
        V.verify_block(0, bytes([V.CONST, 0, V.LAMBDA, 1, 0, 1, V.CALL, 0, 2, V.RETURN]), sizes, ["cel.all2"], 2,
                       V.PROFILES["cel"])


# ------------------------------------------------------------------ printing, translation, eval

@pytest.mark.parametrize("text", [
    "m.all(k, v, v > 0)", "l.existsOne(i, v, v == i)", "m.transformList(k, v, v > 0, v + k)",
    "m.transformMapEntry(k, v, {v: k})", "{'a-b': 1}.`a-b`", "has(m.`foo.txt`)", "m.`in`.x",
    "t.getHours('UTC') + d.getSeconds()", "math.greatest(1, 2.0, [3])", "cel.bind(x, 1, x + 1)",
    "s.split(',', 2).join('-')", "'%d'.format([1]) + strings.quote('x')",
])
def test_the_instruction_printer_round_trips(text):
    e = strip_spans(parse_cel(text))
    assert strip_spans(parse_cel(print_cel(e))) == e


WORKFLOW = """\
name: current_cel
steps:
  start: { kind: manual }
  data:
    kind: assign
    depends_on: start
    value: "CEL: {'content-type': 'json', 'n': 2}"
    writes: data
  pairs:
    kind: assign
    depends_on: data
    value: "CEL: vars.data.`content-type` == 'json' && vars.data.all(k, v, k != '')"
  doubled:
    kind: assign
    depends_on: data
    value: "CEL: [1, 2, 3].transformList(i, v, i > 0, v * 2)"
  done:
    kind: finish
    depends_on: [pairs, doubled]
    output:
      pairs: "{{ steps.pairs.output }}"
      doubled: "{{ steps.doubled.output }}"
"""


def test_workflows_run_and_translate(tmp_path, capsys):
    from flowc import cli

    path = tmp_path / "current.yaml"
    path.write_text(WORKFLOW, encoding="utf-8")
    assert cli.main(["check", str(path)]) == 0
    for backend in ("python", "vm"):
        capsys.readouterr()
        assert cli.main(["run", str(path), "--backend", backend]) == 0
        out = capsys.readouterr().out
        assert '"pairs": true' in out and '"doubled": [' in out, out
    assert cli.main(["translate", str(path), "--to", "instruction"]) == 0
    again = tmp_path / "again.yaml"
    again.write_text(capsys.readouterr().out, encoding="utf-8")
    assert cli.main(["check", str(again)]) == 0
    for target in ("workflowskill", "aevatar"):  # no form there: findings, not a crash
        capsys.readouterr()
        assert cli.main(["translate", str(path), "--to", target]) == 0
        assert "TRN10" in capsys.readouterr().out


def test_flowc_eval_cel_new_syntax(capsys):
    from flowc import cli

    for backend in ("python", "vm"):
        assert cli.main(["eval", "--lang", "cel", "--backend", backend,
                         ("{'a-b': 2}.`a-b` + [1, 2].transformList(i, v, i * v)[1] + "
                          "math.least([4, 5]) + 'abc'.indexOf('c')")]) == 0
        assert capsys.readouterr().out == "10\n"


# ------------------------------------------------------------------ MicroPython

MICRO_PROBE = r'''
def check(name, got, want):
    print(("ok " if got == want else "FAIL ") + name + " " + repr(got))
check("all2", all2([10, 20], lambda i, v: gt(v, i)), True)
check("transformMap", transform_map({"a": 1}, lambda k, v: add(v, 1)), {"a": 2})
check("transformMapEntry", transform_map_entry([1, 2], lambda i, v: {v: i}), {1: 0, 2: 1})
ts = timestamp("2009-02-13T23:31:30Z")
check("getDayOfYear", get_day_of_year(ts), 43)
check("getHours tz", get_hours(ts, "-09:30"), 14)
try:
    get_hours(ts, "Australia/Sydney")
    print("ok named zone")
except CelError as e:
    check("named zone", e.message[:17], "unknown time zone")
check("qvar", qvar({"a.b": {"c": 2}}, "a", ("b", "c")), 2)
check("format", format_("%s %.2f %x %b", ["x", 1.005, 255, True]), "x 1.00 ff 1")
check("split", split("a,b,c", ",", 2), ["a", "b,c"])
check("trim", trim("\u3000 x\t"), "x")
check("base64", base64_decode(base64_encode(b"hello")), b"hello")
check("greatest", math_greatest(1, 2.5, UInt(2)), 2.5)
check("shift", math_bit_shift_right(-1024, 3), 2305843009213693824)
check("round", math_round(-1.5), -2.0)
'''


def test_cel_extensions_run_on_micropython(tmp_path):
    assert_cel_probe_passes(tmp_path, MICRO_PROBE)


@pytest.mark.parametrize("expr", ['int("12\\n")', 'uint("12\\n")', 'double("1.5\\n")'])
def test_a_number_in_text_ends_where_the_text_ends(expr):
    """CEL (cel-go) refuses a conversion of text with a line break after the
    number; Python's `$` would have matched before it."""
    with pytest.raises(C.CelError):
        evaluate_cel(parse_cel(expr), {})
