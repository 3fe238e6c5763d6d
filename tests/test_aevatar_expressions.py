"""aevatar expressions: the engine's evaluator vectors, through the compiler.

Each vector of tests/data/aevatar/expressions/aevatar.json is compiled by the
front end (grammar/aevatar.lark) to an IR expression, compiled by the Python
backend (backends/python/aevatar_expr.py over aevatar_text.py) and evaluated;
the output string must equal the engine's exactly. KNOWN_DEVIATIONS lists,
with the reason, the vectors that are not compared; the test asserts that
list too, so nothing is skipped silently.

The grammar is also checked against a direct port of the engine's scanning
(the template pattern, the call pattern and SplitArgs) on generated text.
"""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import pytest
from flowc.backends.python import aevatar_expr
from flowc.cli.eval import eval_command
from flowc.compiler.aevatar import dotnet
from flowc.compiler.aevatar.expressions import Locator, Lowering
from flowc.ir import expr as E
from flowc.ir.span import Span
from flowc.runtime import aevatar_text
from hypothesis import given
from hypothesis import strategies as st

DATA = Path(__file__).resolve().parent / "data" / "aevatar" / "expressions" / "aevatar.json"
VECTORS = json.loads(DATA.read_text(encoding="utf-8"))["vectors"]

# id -> why the vector is not compared.
KNOWN_DEVIATIONS = {
    "test/Aevatar.Workflow.Core.Tests/Expressions/WorkflowExpressionEvaluatorTests.cs::"
    "Evaluate_NullOrEmpty_ReturnsAsIs#2":
        "the template is C# null; a YAML parameter or `flowc eval` expression is always a string",
}


def _lower(v) -> E.Expr:
    low = Lowering(None, Locator(Span("<vector>", 1, 1, 1, 2)))
    return low.template(v["template"]) if v["entry"] == "Evaluate" else low.expression(v["template"])


def _run(v) -> tuple[str, str | None]:
    ci = v.get("variables_comparer") == "OrdinalIgnoreCase"
    try:
        return "value", aevatar_expr.evaluate(_lower(v), v["variables"], ci)
    except aevatar_text.AevatarError as e:
        return "error", e.message


def test_vector_file_and_deviation_list():
    ids = [v["id"] for v in VECTORS]
    assert len(VECTORS) == 229
    assert len(set(ids)) == len(ids)
    assert set(KNOWN_DEVIATIONS) <= set(ids)
    for v in VECTORS:
        if v["id"] in KNOWN_DEVIATIONS:
            assert v["template"] is None


COMPARED = [v for v in VECTORS if v["id"] not in KNOWN_DEVIATIONS]


@pytest.mark.parametrize("v", COMPARED, ids=[v["id"].split("::")[-1][:80] for v in COMPARED])
def test_vector(v):
    kind, got = _run(v)
    if v.get("expected_exception"):
        assert kind == "error", got
    else:
        assert (kind, got) == ("value", v["expected"])


def test_all_compared_vectors_pass_count():
    passed = sum(1 for v in COMPARED if (_run(v) == ("error", _run(v)[1]) if v.get("expected_exception")
                                        else _run(v) == ("value", v["expected"])))
    assert passed == len(COMPARED) == 228


def test_eval_batch_command():
    lines = []
    for v in COMPARED:
        line = {"expr": v["template"], "vars": v["variables"],
                "mode": "value" if v["entry"] == "Evaluate" else "expression"}
        if v.get("variables_comparer"):
            line["variables_comparer"] = v["variables_comparer"]
        lines.append(json.dumps(line, ensure_ascii=False))
    out = io.StringIO()
    assert eval_command("aevatar", None, None, "expression", True, io.StringIO("\n".join(lines)), out) == 0
    results = [json.loads(x) for x in out.getvalue().splitlines()]
    assert len(results) == len(COMPARED)
    for v, got in zip(COMPARED, results):
        if v.get("expected_exception"):
            assert isinstance(got, dict) and "error" in got
        else:
            assert got == v["expected"], v["id"]


def test_eval_single_expression():
    out = io.StringIO()
    code = eval_command("aevatar", "${add(0.1, 0.2)}", None, "value", False, io.StringIO(), out)
    assert (code, out.getvalue()) == (0, '"0.30000000000000004"\n')
    out = io.StringIO()
    code = eval_command("aevatar", "${'}", None, "value", False, io.StringIO(), out)
    assert code == 1 and "error" in json.loads(out.getvalue())


# ---------------------------------------------------------------- the IR shape
def test_lowering_shapes():
    low = Lowering(None, Locator(Span("f", 1, 1, 1, 2)))
    e = low.template("a ${steps.fetch.json.n} b ${variables.x} ${input} $${y}")
    assert isinstance(e, E.Template) and e.stringify == "aevatar"
    refs = [(r.root, tuple(f.name for f in r.path)) for r in E.refs(e)]
    assert refs == [("steps", ("fetch", "json", "n")), ("vars", ("x",)), ("input", ())]
    assert e.parts[-1] == E.Literal(" ${y}", "string", e.parts[-1].span)
    e = low.template("${if(flag, 'a', concat(b, 'c'))}")
    assert isinstance(e.parts[0], E.Conditional) and e.parts[0].op == "aevatar.if"
    assert low.template("${foo(x)}").value == "[unknown function: foo]"
    assert low.template("${if(x, 'y')}").value == "[if: requires 3 args]"
    assert low.template("plain").value == "plain"
    assert low.template("$${x}").value == "${x}"


# ---------------------------------------------------------------- a direct port
_TEMPLATE = re.compile(r"(?<!\$)\$\{([^}]+)\}")


def _split_args(raw: str) -> list[str]:
    args, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(raw):
        if quote is not None:
            if c == quote:
                quote = None
            continue
        if c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(dotnet.trim(raw[start:i]))
            start = i + 1
    if start < len(raw):
        args.append(dotnet.trim(raw[start:]))
    return args


def _call(text: str):
    body = text[:-1] if text.endswith("\n") and text[:-1].endswith(")") else text
    m = re.match(r"^([^(]+)\((.+)\)\Z", body, re.DOTALL)
    if m and all(dotnet.is_word_char(ch) for ch in m.group(1)):
        return m.group(1), m.group(2)
    return None


def _structure_reference(text: str):
    """The engine's decomposition of an expression, as nested tuples."""
    if dotnet.is_blank(text):
        return ("blank",)
    call = _call(text)
    if call is not None:
        return ("call", dotnet.lower_invariant(call[0]), tuple(_structure_reference(a) for a in _split_args(call[1])))
    return ("leaf", text)


def _structure_grammar(low: Lowering, text: str):
    if dotnet.is_blank(text):
        return ("blank",)
    call = low._call_form(text)
    if call is not None:
        name, args, _ = call
        return ("call", dotnet.lower_invariant(name), tuple(_structure_grammar(low, a) for a, _ in low.split_args(args)))
    return ("leaf", text)


_ALPHABET = st.sampled_from(list("ab(),'\" \n_$") + ["concat", "if", "x", "é"])


@given(st.lists(_ALPHABET, max_size=24).map("".join))
def test_grammar_splits_like_the_engine(text):
    low = Lowering(None, Locator(Span("f", 1, 1, 1, 2)))
    assert _structure_grammar(low, text) == _structure_reference(text)


@given(st.lists(st.sampled_from(list("a{}$ ") + ["${", "$${", "x}"]), max_size=20).map("".join))
def test_template_scanning_like_the_engine(text):
    low = Lowering(None, Locator(Span("f", 1, 1, 1, 2)))
    expr = low.template(text)
    variables = {"a": "A", "x": "X", "a x": "AX"}
    got = aevatar_expr.evaluate(expr, variables)
    # The engine: placeholders by the pattern, `$${` -> `${` in the text between them.
    if "${" not in text:
        want = text
    else:
        out, cursor = [], 0
        for m in _TEMPLATE.finditer(text):
            out.append(text[cursor:m.start()].replace("$${", "${"))
            inner = dotnet.trim(m.group(1))
            out.append(aevatar_expr.evaluate(Lowering(None, Locator(Span())).expression(inner), variables))
            cursor = m.end()
        out.append(text[cursor:].replace("$${", "${"))
        want = "".join(out)
    assert got == want


# ---------------------------------------------------------------- .NET rules
@given(st.text(alphabet=st.sampled_from(list(" \t\u00a0\u3000\x1f\u200b\u0085x0123456789.eE+-INFTYnafinityrue\0")),
               max_size=12))
def test_compiler_and_runtime_agree_on_dotnet_rules(text):
    assert dotnet.trim(text) == aevatar_text.trim(text)
    assert dotnet.is_blank(text) == aevatar_text.is_blank(text)
    a, b = dotnet.try_parse_double(text), aevatar_text.try_parse_double(text)
    assert (a is None) == (b is None)
    if a is not None and not math.isnan(a):
        assert a == b
    assert dotnet.try_parse_bool(text) == aevatar_text.try_parse_bool(text)
    assert dotnet.is_truthy(text) == aevatar_text.is_truthy(text)


def test_runtime_module_is_standalone():
    """aevatar_text.py runs without flowc: generated code and the VM copy it."""
    import subprocess
    import sys

    path = Path(aevatar_text.__file__)
    code = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('m', sys.argv[1]); "
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
            "assert 'flowc' not in sys.modules; print(m.add(lambda: '1', lambda: '2'))")
    out = subprocess.run([sys.executable, "-S", "-c", code, str(path)], capture_output=True, text=True,
                         check=False)
    assert out.stdout.strip() == "3", out.stderr


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_integer_g17_matches_cpython_formatting(x):
    """The integer G17 used where float formatting is not exact (MicroPython)."""
    assert aevatar_text.g17(x) == f"{x:.17g}".replace("e", "E")


def test_case_tables_match_cpython_simple_mappings():
    for cp in range(0x80, 0x10000):
        ch = chr(cp)
        for up, runs in ((True, aevatar_text._UPPER_RUNS), (False, aevatar_text._LOWER_RUNS)):
            mapped = ch.upper() if up else ch.lower()
            assert aevatar_text._table_case(ch, runs) == (mapped if len(mapped) == 1 else ch)
