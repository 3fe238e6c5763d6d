"""Numbers and expression limits: whatever `flowc check` accepts compiles and
runs, and whatever is beyond a limit is a finding with a code and a span.

Every hostile case below goes through every command (check, compile to both
targets, run on both backends, translate to the three dialects, graph): each
must end with exit code 1 (`graph` draws the workflow with its findings and
exits 0) and the same `file:line:col: error[LIMxxx]` finding
(or a dialect's own code where it says the same thing), never a traceback.
The cases within the limits must compile and run on both backends. Unit
tests then pin each limit at its boundary: the limit passes, one more is a
finding.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from flowc import cli
from flowc.backends.vm import container, expr_vm
from flowc.backends.vm import format as vm_format
from flowc.compiler.aevatar import dotnet
from flowc.compiler.instruction.cel import CelSyntaxError, parse_cel
from flowc.compiler.yamlsrc import load, out_of_range_int
from flowc.ir import expr as E
from flowc.ir.limit_checks import expr_limit_findings, value_limit_findings
from flowc.ir.limits import (
    MAX_BACKOFF,
    MAX_BRANCH_DEPTH,
    MAX_DURATION_MS,
    MAX_EXPR_DEPTH,
    MAX_EXPR_ITEMS,
    MAX_RETRIES,
    MAX_VALUE_DEPTH,
)

BIG = "1" * 5000  # beyond Python's 4,300-digit limit of int()

COMMANDS = (
    ("check",),
    ("compile", "--target", "python"),
    ("compile", "--target", "bytecode"),
    ("run", "--backend", "python"),
    ("run", "--backend", "vm"),
    ("translate", "--to", "workflowskill"),
    ("translate", "--to", "aevatar"),
    ("translate", "--to", "instruction"),
    ("graph",),
)


# ------------------------------------------------------------------ documents
def skill(steps: str, inputs: str = "  n: { type: array, default: [1] }\n") -> str:
    return ("---\nname: t\ndescription: t\n---\n\n```workflow\ninputs:\n" + inputs
            + 'outputs:\n  r: { type: string, value: "x" }\nsteps:\n' + steps + "```\n")


def tool_step(extra: str = "") -> str:
    return ("  - id: a\n    type: tool\n    tool: echo\n    inputs:\n"
            '      x: { type: string, value: "x" }\n' + extra)


def conditional_chain(n: int) -> str:
    """n conditionals, each in both arms of the one before, then an exit."""
    steps = [f"  - id: c{i}\n    type: conditional\n    condition: $inputs.k == {i}\n"
             f"    then: [c{i + 1}]\n    else: [c{i + 1}]\n" for i in range(n)]
    steps.append(f'  - id: c{n}\n    type: exit\n    status: success\n    output: {{ r: "x" }}\n')
    return skill("".join(steps), "  k: { type: int, default: 1 }\n")


def aevatar(steps: str) -> str:
    return 'name: t\nroles:\n  - id: w\n    system_prompt: "x"\nsteps:\n' + steps


def aevatar_value(expr: str) -> str:
    return aevatar(f'  - id: s\n    type: assign\n    parameters: {{ target: x, value: "${{{expr}}}" }}\n')


def instruction(step: str) -> str:
    return ("name: t\nsteps:\n  start: { kind: manual }\n  a:\n    depends_on: start\n" + step
            + "  done: { kind: finish, depends_on: a }\n")


def cel_value(expr: str) -> str:
    return instruction(f'    kind: assign\n    value: "CEL: {expr}"\n')


DEEP_LIST = "[" * 190 + "]" * 190

# name -> (file name, text, expected code, line of the finding)
REFUSED = {
    "wfs_default_5000_digits": ("w.md", skill(tool_step(), f"  n:\n    type: int\n    default: {BIG}\n"),
                                "ANA501", 10),
    "wfs_retry_5000_digits": ("w.md", skill(tool_step(f'    retry: {{ max: {BIG}, delay: "1ms", backoff: 1 }}\n')),
                              "LIM104", 17),
    "wfs_retry_1e30": ("w.md", skill(tool_step('    retry: { max: 1000000000000000000000000000000, delay: "1ms", '
                                               "backoff: 1 }\n")), "LIM104", 17),
    "wfs_retry_hex": ("w.md", skill(tool_step(f'    retry: {{ max: 0x{"f" * 40}, delay: "1ms", backoff: 1 }}\n')),
                      "LIM104", 17),
    "wfs_retry_delay_beyond_64_bits": ("w.md", skill(tool_step(
        '    retry: { max: 2, delay: "99999999999999999999999ms", backoff: 1 }\n')), "LIM105", 17),
    "wfs_delay_beyond_64_bits": ("w.md", skill(tool_step(
        '    each: $inputs.n\n    delay: "99999999999999999999999ms"\n')), "LIM105", 18),
    "wfs_delay_beyond_varint": ("w.md", skill(tool_step('    each: $inputs.n\n    delay: "999999999999ms"\n')),
                                "LIM105", 18),
    "wfs_delay_5000_digits": ("w.md", skill(tool_step(f'    each: $inputs.n\n    delay: "{BIG}s"\n')),
                              "LIM105", 18),
    "wfs_index_chain": ("w.md", skill("  - id: a\n    type: tool\n    tool: echo\n    inputs:\n      x:\n"
                                      "        type: string\n        value: $inputs.n" + "[0]" * 5000 + "\n"),
                        "LIM101", 18),
    "wfs_conditional_chain": ("w.md", conditional_chain(300), "LIM101", 12),
    "wfs_constant_190_deep": ("w.md", skill(tool_step(), f"  n:\n    type: array\n    default: {DEEP_LIST}\n"),
                              "LIM101", 9),
    "wfs_backoff_1e308": ("w.md", skill(tool_step('    retry: { max: 2, delay: "1ms", backoff: 1e308 }\n')),
                          "LIM103", 17),
    "aevatar_retry_5000_digits": ("a.yaml", aevatar(
        '  - id: s\n    type: llm_call\n    target_role: w\n    parameters: { prompt_prefix: "x" }\n'
        f"    retry: {{ max_attempts: {BIG}, delay_ms: 1 }}\n"), "AEV108", 10),
    "aevatar_timeout_5000_digits": ("a.yaml", aevatar(
        f'  - id: s\n    type: llm_call\n    target_role: w\n    timeout_ms: {BIG}\n'
        '    parameters: { prompt_prefix: "x" }\n'), "AEV108", 9),
    "aevatar_while_5000_digits": ("a.yaml", aevatar(
        f'  - id: s\n    type: while\n    parameters: {{ max_iterations: {BIG}, condition: "true", '
        "step: llm_call }\n"), "AEV142", 8),
    "aevatar_nested_if": ("a.yaml", aevatar_value("if(true, " * 300 + "1" + ", 2)" * 300), "LIM101", 8),
    "aevatar_nested_concat": ("a.yaml", aevatar_value("concat(" * 640 + "1" + ")" * 640), "LIM101", 8),
    "aevatar_concat_5000_args": ("a.yaml", aevatar_value("concat(" + ", ".join(["1"] * 5000) + ")"),
                                 "LIM102", 8),
    "cel_5000_digits": ("i.yaml", cel_value(BIG), "LIM103", 7),
    "cel_int64_overflow": ("i.yaml", cel_value("9223372036854775808"), "LIM103", 7),
    "cel_uint64_overflow": ("i.yaml", cel_value("18446744073709551616u"), "LIM103", 7),
    "cel_list_1100": ("i.yaml", cel_value("[" + ", ".join(["1"] * 1100) + "]"), "LIM102", 7),
    "cel_parentheses_3000": ("i.yaml", cel_value("(" * 3000 + "1" + ")" * 3000), "LIM101", 7),
    "cel_negations_3000": ("i.yaml", cel_value("-" * 3000 + "1"), "LIM101", 7),
    "instruction_constant_190_deep": ("i.yaml", instruction(f"    kind: assign\n    value: {DEEP_LIST}\n"),
                                      "LIM101", 7),
    "instruction_retry_5000_digits": ("i.yaml", instruction(f"    kind: assign\n    value: 1\n"
                                                            f"    retry: {{ max: {BIG} }}\n"), "LIM103", 8),
    "instruction_timeout_1e999": ("i.yaml", instruction("    kind: human\n    question: q\n    timeout: 1e999\n"),
                                  "LIM105", 8),
    "instruction_timeout_inf": ("i.yaml", instruction("    kind: human\n    question: q\n    timeout: .inf\n"),
                                "LIM105", 8),
    "instruction_max_iterations_5000_digits": ("i.yaml", instruction(
        f"    kind: iterate\n    max_iterations: {BIG}\n    while: \"true\"\n"
        "    body:\n      b: { kind: assign, value: 1 }\n"), "LIM106", 7),
}

# Within the limits: compiles to both targets and runs on both backends.
ACCEPTED = {
    "cel_int64_min": ("i.yaml", cel_value("-9223372036854775808")),
    "cel_uint64_max": ("i.yaml", cel_value("18446744073709551615u")),
    "cel_list_1000": ("i.yaml", cel_value("[" + ", ".join(["1"] * MAX_EXPR_ITEMS) + "]")),
    "cel_list_at_depth_limit": ("i.yaml", cel_value("[" * (MAX_EXPR_DEPTH - 1) + "1" + "]" * (MAX_EXPR_DEPTH - 1))),
    "cel_wide_and_deep": ("i.yaml", cel_value(("[" + "1, " * (MAX_EXPR_ITEMS - 1)) * 8 + "1" + "]" * 8)),
    "instruction_integer_beyond_64_bits": ("i.yaml", instruction(f"    kind: assign\n    value: {BIG}\n")),
    "aevatar_concat_at_depth_limit": ("a.yaml", aevatar_value(
        "concat(" * (MAX_EXPR_DEPTH - 4) + "x" + ")" * (MAX_EXPR_DEPTH - 4))),
    "aevatar_if_at_depth_limit": ("a.yaml", aevatar_value(
        "if(true, " * (MAX_EXPR_DEPTH - 4) + "'x'" + ", 'y')" * (MAX_EXPR_DEPTH - 4))),
    "aevatar_concat_1000_args": ("a.yaml", aevatar_value("concat(" + ", ".join(["'x'"] * MAX_EXPR_ITEMS) + ")")),
    "aevatar_delay_5000_digits": ("a.yaml", aevatar(f"  - id: s\n    type: delay\n"
                                                    f"    parameters: {{ duration_ms: \"{BIG}\" }}\n")),
    "wfs_conditional_chain_at_limit": ("w.md", conditional_chain(MAX_BRANCH_DEPTH)),
    "wfs_retry_at_the_limits": ("w.md", skill(tool_step(
        f'    retry: {{ max: 2, delay: "{MAX_DURATION_MS}ms", backoff: {MAX_BACKOFF} }}\n'))),
    "cel_map_at_depth_limit": ("i.yaml", cel_value("{'a': " * (MAX_EXPR_DEPTH - 1) + "1" + "}" * (MAX_EXPR_DEPTH - 1))),
    "cel_call_at_depth_limit": ("i.yaml", cel_value("string(" * (MAX_EXPR_DEPTH - 1) + "1" + ")" * (MAX_EXPR_DEPTH - 1))),
    "cel_ternary_at_depth_limit": ("i.yaml", cel_value("true ? 1 : " * (MAX_EXPR_DEPTH - 1) + "2")),
    "cel_sum_at_depth_limit": ("i.yaml", cel_value("(1 + " * (MAX_EXPR_DEPTH - 1) + "1" + ")" * (MAX_EXPR_DEPTH - 1))),
}


# Cases whose run fails by design (the empty host has no tools).
RUN_FAILS = {"wfs_retry_at_the_limits"}


def run(capsys, *argv: str) -> tuple[int, str]:
    if argv[0] == "compile":  # bytecode is binary: to a file, not the captured stdout
        argv = (*argv[:-1], "-o", str(Path(argv[-1]).with_suffix(".out")), argv[-1])
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_everywhere_with_the_same_finding(case, tmp_path, capsys):
    name, text, code, line = REFUSED[case]
    path = write(tmp_path, name, text)
    for argv in COMMANDS:
        status, output = run(capsys, *argv, path)
        # `graph` draws a workflow with its findings marked (exit 0) when it has an IR.
        assert status == 1 or argv == ("graph",), (argv, output[-500:])
        assert re.search(rf"^{re.escape(path)}:{line}:\d+: error\[{code}\]", output, re.MULTILINE), \
            (argv, output[-500:])
        assert "Traceback" not in output


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_within_the_limits_compiles_and_runs(case, tmp_path, capsys):
    name, text = ACCEPTED[case]
    path = write(tmp_path, name, text)
    for argv in COMMANDS[:5]:
        status, output = run(capsys, *argv, path)
        if case in RUN_FAILS and argv[0] == "run":
            # compiled and ran: the run itself fails (no host tool), with a run record
            assert status == 1 and "status: failed" in output, (argv, output[-800:])
        else:
            assert status == 0, (argv, output[-800:])
        assert " error[" not in output


def test_the_finding_from_the_command_line(tmp_path):
    """The process itself: exit 1, one line `file:line:col: error[CODE]`, no traceback."""
    path = write(tmp_path, "w.md", REFUSED["wfs_retry_1e30"][1])
    for argv in (["check"], ["compile", "--target", "bytecode"], ["run", "--backend", "vm"]):
        proc = subprocess.run([sys.executable, "-m", "flowc", *argv, path], capture_output=True, text=True,
                              timeout=60, check=False)
        assert proc.returncode == 1
        assert f"{path}:17:19: error[LIM104]: retry count 100000000000" in proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr


def test_nested_aevatar_interpolation_is_read_in_linear_time(tmp_path, capsys):
    # 640 nested concat( took seconds when each level re-read the rest of
    # the text; 20,000 must be far quicker than that now.
    path = write(tmp_path, "a.yaml", aevatar_value("concat(" * 20_000 + "1" + ")" * 20_000))
    start = time.perf_counter()
    status, output = run(capsys, "check", path)
    assert time.perf_counter() - start < 5
    assert status == 1 and "error[LIM101]" in output


# ------------------------------------------------------------------ boundaries
def _nested(depth: int) -> E.Expr:
    e: E.Expr = E.Literal(1, "int")
    for _ in range(depth - 1):
        e = E.Unary("cel.neg", e)
    return e


def codes(findings) -> list[str]:
    return [d.code for d in findings]


def test_expression_depth_boundary():
    assert codes(expr_limit_findings(_nested(MAX_EXPR_DEPTH))) == []
    assert codes(expr_limit_findings(_nested(MAX_EXPR_DEPTH + 1))) == ["LIM101"]
    # far deeper than Python's recursion limit: still one finding, no RecursionError
    assert codes(expr_limit_findings(_nested(50_000))) == ["LIM101"]


def test_path_segments_count_as_levels():
    path = tuple(E.Field("f") for _ in range(MAX_EXPR_DEPTH - 1))
    assert codes(expr_limit_findings(E.Ref("vars", path))) == []
    assert codes(expr_limit_findings(E.Ref("vars", path + (E.Field("g"),)))) == ["LIM101"]


@pytest.mark.parametrize("make", [
    lambda n: E.ListExpr(tuple(E.Literal(1, "int") for _ in range(n))),
    lambda n: E.Call("cel.size", tuple(E.Literal(1, "int") for _ in range(n))),
    lambda n: E.MapExpr(tuple(E.MapEntry(E.Literal(str(i), "string"), E.Literal(1, "int")) for i in range(n))),
    lambda n: E.Template(tuple(E.Literal("x", "string") for _ in range(n)), "json"),
])
def test_expression_items_boundary(make):
    assert codes(expr_limit_findings(make(MAX_EXPR_ITEMS))) == []
    assert codes(expr_limit_findings(make(MAX_EXPR_ITEMS + 1))) == ["LIM102"]


def _deep_value(depth: int):
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_value_depth_boundary():
    assert value_limit_findings(_deep_value(MAX_VALUE_DEPTH), E.NO_SPAN) == []
    assert codes(value_limit_findings(_deep_value(MAX_VALUE_DEPTH + 1), E.NO_SPAN)) == ["LIM101"]


def test_branch_depth_boundary(tmp_path, capsys):
    ok = write(tmp_path, "ok.md", conditional_chain(MAX_BRANCH_DEPTH))
    deep = write(tmp_path, "deep.md", conditional_chain(MAX_BRANCH_DEPTH + 1))
    assert run(capsys, "check", ok)[0] == 0
    status, output = run(capsys, "check", deep)
    assert status == 1 and "error[LIM101]" in output and f"nests {MAX_BRANCH_DEPTH + 1} conditionals" in output


@pytest.mark.parametrize("value, code", [(MAX_RETRIES, None), (MAX_RETRIES + 1, "LIM104")])
def test_retry_boundary(value, code, tmp_path, capsys):
    path = write(tmp_path, "w.md", skill(tool_step(f'    retry: {{ max: {value}, delay: "1ms", backoff: 1 }}\n')))
    status, output = run(capsys, "check", path)
    assert (status, f"error[{code}]" in output) == ((1, True) if code else (0, False))


@pytest.mark.parametrize("ms, code", [(MAX_DURATION_MS, None), (MAX_DURATION_MS + 1, "LIM105")])
def test_duration_boundary(ms, code, tmp_path, capsys):
    path = write(tmp_path, "w.md", skill(tool_step(f'    each: $inputs.n\n    delay: "{ms}ms"\n')))
    status, output = run(capsys, "check", path)
    assert (status, f"error[{code}]" in output) == ((1, True) if code else (0, False))


@pytest.mark.parametrize("seconds, code", [(MAX_DURATION_MS // 1000, None), (MAX_DURATION_MS // 1000 + 1, "LIM105")])
def test_instruction_duration_boundary(seconds, code, tmp_path, capsys):
    path = write(tmp_path, "i.yaml", instruction(f"    kind: human\n    question: q\n    timeout: {seconds}\n"))
    status, output = run(capsys, "check", path)
    assert (status, f"error[{code}]" in output) == ((1, True) if code else (0, False))


@pytest.mark.parametrize("text, value", [
    ("9223372036854775807", 9223372036854775807),
    ("-9223372036854775808", -9223372036854775808),
    ("0x7fffffffffffffff", 9223372036854775807),
    ("18446744073709551615u", 18446744073709551615),
    ("0xffffffffffffffffu", 18446744073709551615),
    ("0" * 5000 + "7", 7),
])
def test_cel_integer_literals_in_range(text, value):
    assert parse_cel(text).value == value


@pytest.mark.parametrize("text", [
    "9223372036854775808", "-9223372036854775809", "0x8000000000000000", "18446744073709551616u",
    "0x10000000000000000u", BIG, BIG + "u", "0x" + "f" * 5000,
])
def test_cel_integer_literals_out_of_range(text):
    with pytest.raises(CelSyntaxError) as info:
        parse_cel(text)
    assert info.value.code == "LIM103"
    assert len(info.value.message) < 120  # the digits are shortened, not repeated


@pytest.mark.parametrize("text, value", [
    ("-9223372036854775808", -9223372036854775808),
    ("18446744073709551615", 18446744073709551615),
    ("0xffffffffffffffff", 18446744073709551615),
    ("0" * 5000 + "7", 7),
])
def test_yaml_integers_within_64_bits_are_exact(text, value):
    node, diags = load(f"x: {text}\n", "f.yaml")
    assert not diags and node.get("x").value == value and not out_of_range_int(node.get("x"))


@pytest.mark.parametrize("text, value", [
    ("-9223372036854775809", -9223372036854775809.0),
    ("18446744073709551616", 18446744073709551616.0),
    (BIG, float("inf")),
    ("0x" + "f" * 5000, float("inf")),
    ("0o" + "7" * 5000, float("inf")),
])
def test_yaml_integers_beyond_64_bits_are_doubles(text, value):
    node, diags = load(f"x: {text}\n", "f.yaml")
    assert not diags and node.get("x").value == value and out_of_range_int(node.get("x"))


@pytest.mark.parametrize("text, value", [
    ("2147483647", 2147483647), ("-2147483648", -2147483648), ("2147483648", None),
    ("0000000000000000000042", 42), (BIG, None),
])
def test_dotnet_int_parse_is_int32_without_bignums(text, value):
    assert dotnet.try_parse_int(text) == value


def test_vm_limits_hold_every_expression_within_the_limits():
    """A value on a VM stack is an operand of an enclosing level still being
    built: at most 2 * MAX_EXPR_ITEMS + 1 per level (a map entry is two)."""
    need = MAX_EXPR_DEPTH * (2 * MAX_EXPR_ITEMS + 1)
    assert expr_vm.MAX_STACK >= need and vm_format.LIMITS["stack"] == expr_vm.MAX_STACK
    assert expr_vm.MAX_LAMBDA_DEPTH >= MAX_EXPR_DEPTH and expr_vm.MAX_COUNT >= MAX_EXPR_ITEMS
    # (a conditional's arms nest as deep as the workflow does: the run keeps them on an explicit stack)
    assert container.MAX_NESTING > MAX_VALUE_DEPTH
