"""Long CEL expressions in dialect-3 output are laid out over several lines.

The printer breaks an expression longer than ``printer.LIMIT`` at its
top-level structure (conditionals, operator chains, list and map literals,
call arguments) and the YAML writer puts it in a literal block. The layout
changes only the white space between tokens, so the broken text parses to
the same tree; short expressions stay on one line.
"""

from __future__ import annotations

from pathlib import Path

from flowc.compiler import yamlsrc
from flowc.compiler.instruction.cel import parse_cel
from flowc.compiler.instruction.frontend import compile_instruction_all
from flowc.ir import expr as E
from flowc.ir.expr import strip_spans
from flowc.pipeline import translate
from flowc.translation import yamlout
from flowc.translation.instruction import text as P
from flowc.translation.instruction.printer import _cel_text
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent


def laid_out(text: str, prefix: str = "") -> str:
    return prefix + "\n".join(P.cel_lines(parse_cel(text), len(prefix)))


def same_tree(a: str, b: str) -> bool:
    return strip_spans(parse_cel(a)) == strip_spans(parse_cel(b))


# ------------------------------------------------------------------ exact layouts
FETCH = ('type(steps.fetch_call.output) == map && "messages" in steps.fetch_call.output'
         ' ? {"messages": steps.fetch_call.output.messages} : {}')
NESTED = ('type(item) == map && "subject" in item ? (type(item) == map && "from" in item'
          ' ? {"subject": item.subject, "sender": item.from} : {"subject": item.subject})'
          ' : type(item) == map && "from" in item ? {"sender": item.from} : {}')
CHAIN = ('steps.lookup.output.status == "ready" && size(steps.lookup.output.items) > 0'
         ' && steps.lookup.output.owner != null || inputs.force == true')
MAP = ('{"title": steps.fetch.output.subject, "sender": steps.fetch.output.from,'
       ' "score": steps.score.output.value, "tags": ["mail", "triage"]}')
MACRO = ('[type(steps.call.output) == map && "score" in steps.call.output ? steps.call.output.score : null]'
         '.all(x, x == null || type(x) == int)')


def test_a_conditional_puts_then_and_otherwise_on_their_own_lines():
    assert laid_out(FETCH, "CEL: ") == (
        'CEL: type(steps.fetch_call.output) == map && "messages" in steps.fetch_call.output\n'
        '  ? {"messages": steps.fetch_call.output.messages}\n'
        '  : {}')


def test_nested_conditionals_are_laid_out_in_their_own_columns():
    assert laid_out(NESTED, "CEL: ") == (
        'CEL: type(item) == map && "subject" in item\n'
        '  ? (type(item) == map && "from" in item\n'
        '       ? {"subject": item.subject, "sender": item.from}\n'
        '       : {"subject": item.subject})\n'
        '  : type(item) == map && "from" in item ? {"sender": item.from} : {}')


def test_a_chain_is_one_operand_a_line_and_and_binds_tighter_than_or():
    assert laid_out(CHAIN) == (
        'steps.lookup.output.status == "ready"\n'
        '    && size(steps.lookup.output.items) > 0\n'
        '    && steps.lookup.output.owner != null\n'
        '  || inputs.force == true')


def test_a_map_literal_is_one_entry_a_line():
    assert laid_out(MAP) == (
        '{\n'
        '  "title": steps.fetch.output.subject,\n'
        '  "sender": steps.fetch.output.from,\n'
        '  "score": steps.score.output.value,\n'
        '  "tags": ["mail", "triage"]\n'
        '}')


def test_a_macro_keeps_its_call_after_a_broken_receiver():
    assert laid_out(MACRO) == (
        '[\n'
        '  type(steps.call.output) == map && "score" in steps.call.output\n'
        '    ? steps.call.output.score\n'
        '    : null\n'
        '].all(x, x == null || type(x) == int)')


def test_short_expressions_stay_on_one_line():
    text = 'steps.post_call.error != null ? null : steps.post_call.output'
    assert laid_out(text, "CEL: ") == "CEL: " + text
    limit = "x" * (P.LIMIT - len("CEL: "))
    assert laid_out(limit, "CEL: ") == "CEL: " + limit  # exactly at the limit: one line


def test_string_literals_are_never_split_or_changed():
    words = "a ? b : c && d, {e: f} " * 6
    text = f'inputs.flag ? "{words}" : "{words}\\n"'
    out = laid_out(text)
    assert "\n" in out
    assert f'"{words}"' in out and f'"{words}\\n"' in out
    assert same_tree(out, text)


def test_every_broken_expression_parses_back_to_the_same_tree():
    for text in (FETCH, NESTED, CHAIN, MAP, MACRO):
        for prefix in ("", "CEL: "):
            out = laid_out(text, prefix)
            assert "\n" in out
            assert same_tree(out[len(prefix):], text)


# ------------------------------------------------------------------ through YAML and the front end
def test_the_triage_example_reads_back_and_formats_to_the_same_bytes():
    first = translate.translate_file(str(ROOT / "examples/triage/SKILL.md"), "instruction").text
    assert "value: |-\n      CEL: type(steps.fetch_call.output) == map" in first
    assert max(len(line) for line in first.splitlines() if not line.lstrip().startswith("#")) <= 100
    workflows, diags = compile_instruction_all(first, "triage.yaml")
    assert not [d for d in diags if d.is_error] and len(workflows) == 1
    second = translate.emit(workflows[0], "instruction").text
    # The same text but for the translation notes (YAML comments, not kept in the IR).
    assert second == "".join(ln for ln in first.splitlines(True) if not ln.lstrip().startswith("# flowc"))
    again, _ = compile_instruction_all(second, "triage.yaml")
    assert strip_spans(again[0]) == strip_spans(workflows[0])


# ------------------------------------------------------------------ random trees
_NAMES = st.sampled_from(["inputs", "steps", "item", "vars"])
_FIELDS = st.sampled_from(["output", "fetch_call", "messages", "subject", "score", "a", "sender_address"])
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30) | st.sampled_from(
    ["{{ x }}", "CEL: 1", "a: b", " # c", "\n", '"', "\\", "\ufffe", "|-", "? x : y"])


def _ref(draw_fields: list[str], root: str) -> E.Ref:
    return E.Ref(root, tuple(E.Field(f) for f in draw_fields))


_LEAVES = st.one_of(
    st.builds(_ref, st.lists(_FIELDS, max_size=4), _NAMES),
    st.builds(lambda v: E.Literal(v, "int"), st.integers(0, 10**12)),
    st.builds(lambda v: E.Literal(v, "string"), _TEXT),
    st.builds(lambda v: E.Literal(v, "bool"), st.booleans()),
    st.just(E.Literal(None, "null")),
)
_BINARY_OPS = st.sampled_from(["cel.or", "cel.and", "cel.eq", "cel.lt", "cel.in", "cel.add", "cel.mul"])


def _composite(inner: st.SearchStrategy[E.Expr]) -> st.SearchStrategy[E.Expr]:
    return st.one_of(
        st.builds(lambda t, a, b: E.Conditional("cel.ternary", t, a, b), inner, inner, inner),
        st.builds(lambda op, a, b: E.Binary(op, a, b), _BINARY_OPS, inner, inner),
        st.builds(lambda a: E.Unary("cel.not", a), inner),
        st.builds(lambda items: E.ListExpr(tuple(items)), st.lists(inner, max_size=4)),
        st.builds(lambda kv: E.MapExpr(tuple(E.MapEntry(E.Literal(k, "string"), v) for k, v in kv)),
                  st.lists(st.tuples(_TEXT, inner), max_size=4)),
        st.builds(lambda a: E.Call("cel.size", (a,)), inner),
        st.builds(lambda a, b: E.Call("cel.contains", (a, b)), inner, inner),
        st.builds(lambda a, b: E.Call("cel.all", (a, E.Lambda(("x",), b))), inner, inner),
        st.builds(lambda a: E.Binary("cel.index", a, E.Literal(0, "int")), inner),
    )


EXPRESSIONS = st.recursive(_LEAVES, _composite, max_leaves=40)


# Only expressions longer than a line are of interest, and most random trees
# are short: the filter is the point of the test, not a slow generator.
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(EXPRESSIONS, st.sampled_from(["", "CEL: "]))
def test_random_long_expressions_break_and_read_back_to_the_same_tree(e, prefix):
    flat = P.cel(e)
    assume(len(prefix) + len(flat) > P.LIMIT)
    lines = P.cel_lines(e, len(prefix))
    # A long conditional or literal always breaks; other forms may have no
    # place to break (a call of one long literal).
    assert len(lines) > 1 or not isinstance(e, (E.Conditional, E.ListExpr, E.MapExpr))
    assert strip_spans(parse_cel("\n".join(lines))) == strip_spans(parse_cel(flat))
    # Through the YAML writer and reader: the field's string comes back whole.
    text = _cel_text(e, prefix)
    node, diags = yamlsrc.load(yamlout.dump({"steps": {"s": {"value": text}}}), "t.yaml")
    assert not diags
    assert node.get("steps").get("s").get("value").value == text
    assert _cel_text(e, prefix) == text  # deterministic
