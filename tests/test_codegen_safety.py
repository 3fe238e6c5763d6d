"""Generated code is injection-proof: hostile ids, tool names, keys, strings,
descriptions and file names reach the module only as string constants (or
reduced to [A-Za-z0-9_] in identifiers and to printable ASCII in comments).
The module must compile, pass ruff, import and run without executing any of
the payloads, and hand every hostile string back intact as data."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import textwrap
import tokenize

import pytest
from flowc.backends.python import compile_workflow, load_module
from flowc.backends.python.codegen import mangle
from flowc.backends.python.pysource import comment_text
from flowc.host import ScriptedHost
from flowc.pipeline import driver

MARKER_MODULE = "flowc_codegen_safety_marker"


def payloads(marker_file: str) -> list[str]:
    run_code = f"__import__('os').system('touch {marker_file}')"
    mark = f"__import__('sys').modules.__setitem__('{MARKER_MODULE}', 1)"
    return [
        run_code,
        mark,
        f'"""\n{run_code}\n"""',
        f"'''\n{mark}\n'''",
        f"x\n{run_code}\n#",
        f"x\u2028{run_code}\u2029y",
        f"x\r{mark}",
        f"\\'); {run_code}; ('",
        f'\\"); {mark}; ("',
        "back\\slash\\",
        "quote'\"mix",
        "tab\there\x0bvt\x0cff",
        "nul\x00byte",
        "{!r} %s {0}",
        "# not a comment",
        "é ünïcödé 😀",
    ]


def _q(text: str) -> str:
    """A YAML double-quoted scalar, every non-ASCII or control character escaped."""
    out = []
    for ch in text:
        if ch in "\\\"":
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def hostile_workflow(p: list[str]) -> str:
    """A WorkflowSkill document that puts payloads everywhere a string can go."""
    run_code, mark = p[0], p[1]
    steps = f"""
        inputs:
          {_q(p[2])}:
            type: string
            default: {_q(p[3])}
            description: {_q(p[4])}
        outputs:
          {_q(p[5])}:
            type: object
        steps:
          - id: {_q(p[6])}
            type: tool
            tool: {_q(run_code)}
            description: {_q(p[7])}
            inputs:
              {_q(p[8])}:
                type: string
                value: {_q(p[9])}
              {_q(mark)}:
                type: object
                value:
                  {_q(p[10])}: {_q(p[11])}
                  {_q(p[12])}: [{_q(p[13])}, {_q(p[14])}]
              tmpl:
                type: string
                value: {_q("pre ${inputs.missing} " + p[15])}
          - id: check
            type: conditional
            condition: "true"
            description: {_q(p[0])}
            then: [{_q(p[1])}]
            else: [{_q(p[2])}]
          - id: {_q(p[1])}
            type: transform
            operation: map
            description: {_q(p[3])}
            expression:
              {_q(p[4])}: {_q(p[5])}
              {_q(p[6])}:
                {_q(p[7])}: $item
            inputs:
              items:
                type: array
                value: [1, 2]
            outputs:
              {_q(p[8])}:
                type: array
          - id: {_q(p[2])}
            type: transform
            operation: sort
            field: {_q(p[9])}
            direction: desc
            inputs:
              items:
                type: array
                value: [{{}}, {{}}]
          - id: {_q(p[10])}
            type: exit
            status: success
            output:
              {_q(p[5])}: {_q(p[12])}
    """
    fm_name = json.dumps(p[0].replace("\n", " "))
    return f"---\nname: {fm_name}\ndescription: {_q(p[1])}\n---\n\n```workflow\n" + textwrap.dedent(steps) + "```\n"


@pytest.fixture
def hostile(tmp_path):
    marker_file = tmp_path / "PWNED"
    p = payloads(str(marker_file))
    text = hostile_workflow(p)
    result = driver.compile_text(text, "evil\n" + p[0] + "\u2028.md")
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics if d.is_error]
    source = compile_workflow(result.workflow)
    return p, source, marker_file


def test_hostile_text_reaches_the_module_only_as_string_constants(hostile):
    _, source, _ = hostile
    for ch in ("\r", "\x00", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"):
        assert ch not in source
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            assert all(" " <= ch <= "~" for ch in tok.string), tok.string
        elif tok.type == tokenize.NAME:
            assert re.fullmatch(r"[A-Za-z0-9_]+", tok.string), tok.string
            assert tok.string not in ("__import__", "system", "os", "exec", "eval", "setattr")
            assert not tok.string.startswith("__") or tok.string in ("__name__",)
        elif tok.type != tokenize.STRING:
            assert "__import__" not in tok.string
    # the only names the module defines are ours
    names = {t.string for i, t in enumerate(tokens) if t.type == tokenize.NAME and i and
             tokens[i - 1].string == "def"}
    assert all(re.fullmatch(r"_step_\d+_\w*|_arm_\d+_\w*_(then|else)|_main|_end|new_run|run|run_async|run_virtual", n) for n in names), names


def test_hostile_module_compiles_and_passes_ruff(hostile, tmp_path):
    _, source, _ = hostile
    target = tmp_path / "hostile.py"
    target.write_text(source, encoding="utf-8")
    compile(source, str(target), "exec")
    if shutil.which("ruff"):
        proc = subprocess.run(["ruff", "check", "--no-cache", "--isolated", str(target)], check=False,
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout


def test_hostile_module_runs_without_executing_payloads(hostile):
    p, source, marker_file = hostile
    module = load_module(source)
    assert module.WORKFLOW == p[0].replace("\n", " ")
    host = ScriptedHost({"*": {"echo": True}})
    record = module.run({}, host)
    assert not marker_file.exists()
    assert MARKER_MODULE not in sys.modules
    # every hostile string came back as data
    assert record["status"] == "success", record
    call = record["calls"][0]
    assert call["name"] == p[0]
    assert call["args"] == {p[8]: p[9], p[1]: {p[10]: p[11], p[12]: [p[13], p[14]]}, "tmpl": "pre  " + p[15]}
    assert [s["id"] for s in record["steps"]] == [p[6], "check", p[1], p[10], p[2]]
    assert record["steps"][-1] == {"id": p[2], "status": "skipped", "reason": "Branch not selected"}
    assert record["outputs"] == {p[5]: p[12]}
    json.dumps(record)


def test_the_module_runs_as_a_script_without_executing_payloads(hostile, tmp_path):
    _, source, marker_file = hostile
    target = tmp_path / "hostile.py"
    target.write_text(source, encoding="utf-8")
    host = tmp_path / "host.json"
    host.write_text(json.dumps({"*": {"echo": True}}))
    proc = subprocess.run([sys.executable, str(target), "--host", str(host)], check=False,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "success"
    assert not marker_file.exists()


@pytest.mark.parametrize("text", [
    "a\nb", "a\u2028b", "a\rb", "'''", '"""', "\\", "#x", "é", "\x00", "x" * 500,
])
def test_comment_text_and_mangle_are_inert(text):
    shown = comment_text(text)
    assert all(" " <= ch <= "~" and ch not in "'\"" for ch in shown) and len(shown) <= 72
    assert re.fullmatch(r"[A-Za-z0-9_]*", mangle(text))


def test_ids_that_mangle_alike_get_distinct_functions():
    text = """
        steps:
          - id: "a-b"
            type: tool
            tool: t
          - id: "a.b"
            type: tool
            tool: t
          - id: "ab"
            type: tool
            tool: t
    """
    result = driver.compile_text(textwrap.dedent(text), "w.yaml")
    assert result.ok
    source = compile_workflow(result.workflow)
    assert "def _step_0_ab(ctx):" in source and "def _step_1_ab(ctx):" in source
    record = load_module(source).run({}, ScriptedHost({"t": 1}))
    assert [s["id"] for s in record["steps"]] == ["a-b", "a.b", "ab"]
