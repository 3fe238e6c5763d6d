"""Workflow text in every human-readable output and every file flowc writes.

A hostile workflow (or bytecode file) must not drive the terminal that
shows flowc's output (escape sequences, carriage returns, bidirectional
formatting), forge lines of a listing (a finding, a step of a run, a line
of a disassembly), inject Mermaid directives or Graphviz markup into a
picture, change what a translation reads back as, or make ``flowc disasm``
read a file the bytecode names.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from flowc.cli import main
from flowc.pipeline import driver
from flowc.termtext import shown, shown_lines

# What a terminal acts on: C0 controls but tab and line feed, DEL, C1, bidi formatting, separators.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
ROOT = Path(__file__).resolve().parent.parent
FORGED = "forged.yaml:1:1: error[FLC999]: forged"


def _clean(text: str) -> None:
    found = RAW_CONTROL.search(text)
    assert found is None, f"raw {found.group()!r} in {text!r}"
    assert not any(line.startswith(("forged", "FORGED")) for line in text.splitlines()), text


def _run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


# ------------------------------------------------------------------ the one escaping function
def test_shown_escapes_what_a_terminal_acts_on():
    assert shown("a\x1b[2Jb\r\n\x07\x9b\u202e\u2028\ud800") == "a\\x1b[2Jb\\r\\n\\x07\\x9b\\u202e\\u2028\\ud800"
    assert shown("tab\tstays, é 😀 ünïcödé") == "tab\tstays, é 😀 ünïcödé"
    assert shown_lines("one\ntwo\x1b]0;t\x07") == "one\ntwo\\x1b]0;t\\x07"
    _clean(shown("".join(map(chr, range(0x110000)))))


# ------------------------------------------------------------------ check
AEVATAR_ESC = (
    'name: "w\\e[31m\\u202e"\n'
    "roles: [{ id: a }]\n"
    "steps:\n"
    '  - { id: "s\\e]0;pwned\\a", type: llm_call, target_role: "b\\e[5m\\nforged.yaml:1:1: error[FLC999]: '
    'forged" }\n'
    '  - { id: "s\\e]0;pwned\\a", type: "t\\r\\e[1m" }\n'
)


def test_check_shows_no_raw_control_characters_and_forges_no_finding(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(AEVATAR_ESC)
    # A raw escape in the source: a YAML finding whose source line holds it.
    (tmp_path / "b.yaml").write_text("name: x\x1b[31mRED\x9b2J\nroles: [{ id: a }]\n"
                                     "steps: [{ id: s, type: llm_call, target_role: a }]\n")
    # A file name that is an escape sequence (found walking a directory).
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "n\x1b[2Jame.yaml").write_text(
        "name: x\nroles: [{ id: a }]\nsteps: [{ id: s, type: llm_call, target_role: b }]\n")
    status, out, err = _run(capsys, "check", "a.yaml", "b.yaml", "d")
    assert status == 1
    _clean(out)
    _clean(err)
    assert "\\x1b]0;pwned\\x07" in out and "\\x1b[31mRED" in out and "n\\x1b[2Jame.yaml" in out
    # every line at column 0 is the location of a real finding
    starts = [line for line in out.splitlines() if line and not line[0].isspace()]
    assert starts and all(line.startswith(("a.yaml:", "b.yaml:", "d/n\\x1b[2Jame.yaml:")) for line in starts), out


def test_sarif_and_json_stay_valid_json_for_hostile_text(tmp_path, monkeypatch, capsys):
    import json

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(AEVATAR_ESC)
    for fmt in ("json", "sarif"):
        _status, out, _err = _run(capsys, "check", "--format", fmt, "a.yaml")
        assert json.loads(out)
        assert "\x1b" not in out


# ------------------------------------------------------------------ run
def test_the_readable_run_record_shows_no_raw_control_characters(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(
        'name: w\nroles: [{ id: a }]\nsteps:\n'
        '  - { id: "s\\e]0;pwned\\a\\nforged step", type: llm_call, target_role: a }\n'
        '  - { id: "t\\rFORGED", type: tool_call, parameters: { tool: "x\\e[2J\\nforged call" } }\n')
    status, out, err = _run(capsys, "run", "a.yaml")
    assert status == 1  # the llm role is not registered with the host
    _clean(out)
    _clean(err)
    assert "s\\x1b]0;pwned\\x07\\nforged step" in out


# ------------------------------------------------------------------ disasm
def _bytecode(tmp_path: Path, text: str, name: str = "w.yaml") -> Path:
    (tmp_path / name).write_text(text)
    assert main(["compile", "--target", "bytecode", name, "-o", "p.fcb"]) in (0, 1)
    return tmp_path / "p.fcb"


@pytest.mark.parametrize("dialect", ["aevatar", "workflowskill", "instruction"])
def test_disasm_shows_no_raw_control_characters_and_forges_no_line(dialect, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    if dialect == "aevatar":
        text = ('name: "w\\e[31m"\nroles: [{ id: "r\\e[1m\\nforged role" }]\nsteps:\n'
                '  - { id: "s\\e]0;pwned\\a\\nforged: x", type: llm_call, target_role: "r\\e[1m\\nforged role" }\n'
                '  - { id: "t\\nFORGED", type: tool_call, parameters: { tool: "x\\e[2J\\nforged", "k\\nforged": v } }\n')
    elif dialect == "instruction":
        # ids are plain identifiers in this dialect: the hostile text is in values
        text = ('name: w\nsteps:\n  start: { kind: manual }\n'
                '  s: { kind: assign, depends_on: start, value: "x\\e[2J\\nforged: x" }\n'
                '  t: { kind: assign, depends_on: s, value: "\\e]0;pwned\\a\\u202e\\nFORGED" }\n'
                '  done: { kind: finish, depends_on: t }\n')
    else:
        text = ('inputs: {}\noutputs: {}\nsteps:\n'
                '  - id: "s\\e]0;pwned\\a\\nforged: x"\n    type: tool\n    tool: "t\\e[2J\\nforged"\n'
                '  - id: "u\\u202e\\nFORGED"\n    type: tool\n    tool: u\n')
    _bytecode(tmp_path, text)
    capsys.readouterr()
    status, out, err = _run(capsys, "disasm", "p.fcb")
    assert status == 0, err
    _clean(out)
    assert "\\x1b" in out


def _rewrite_source_name(program: Path, name: str) -> None:
    """The program with its source map naming ``name`` (what a hand-made file can say)."""
    from tests.program_bytes import pack_sequential, sequential_body

    body = sequential_body(program.read_bytes())
    body[5][0] = name
    program.write_bytes(pack_sequential(body))


WFS = "inputs: {}\noutputs: {}\nsteps:\n  - id: a\n    type: tool\n    tool: t\n  - id: b\n    type: tool\n    tool: u\n"


def test_disasm_reads_no_file_the_bytecode_names_by_a_path(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key.txt").write_text("SECRET-1\nSECRET-2\nSECRET-3\nSECRET-4\nSECRET-5\n")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    program = _bytecode(tmp_path / "work", WFS)
    for name in (str(tmp_path / "secret" / "key.txt"), "../secret/key.txt"):
        _rewrite_source_name(program, name)
        for extra in ([], ["--source-root", str(tmp_path / "work")]):
            capsys.readouterr()
            status, out, _err = _run(capsys, "disasm", str(program), *extra)
            assert status == 0 and "SECRET" not in out, out
    # the base name still finds a source next to it, as documented
    (tmp_path / "work" / "key.txt").write_text(WFS)
    status, out, _err = _run(capsys, "disasm", str(program))
    assert status == 0 and "; line 4  - id: a" in out, out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_disasm_does_not_block_on_a_source_that_is_a_fifo(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    program = _bytecode(tmp_path, WFS)
    os.mkfifo(tmp_path / "pipe.yaml")
    _rewrite_source_name(program, "pipe.yaml")
    env = dict(os.environ, PYTHONPATH=str(ROOT.parent))
    done = subprocess.run([sys.executable, "-m", "flowc", "disasm", "p.fcb"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "steps (" in done.stdout, done.stderr


# ------------------------------------------------------------------ graph
def _graph(tmp_path: Path, capsys, text: str, fmt: str, name: str = "g.yaml") -> str:
    (tmp_path / name).write_text(text)
    status, out, err = _run(capsys, "graph", "--format", fmt, name)
    assert status == 0, err
    return out


HOSTILE_GRAPH = (
    "name: \"w\\n---\\n%%{init: {'securityLevel': 'loose'}}%%\\nflowchart TD\\n"
    "click n0 href \\\"javascript:alert(1)\\\"\\n\\e[31m\"\n"
    "roles: [{ id: a }]\n"
    "steps:\n"
    "  - { id: \"s%%{init: {'theme': 'dark'}}%%\", type: llm_call, target_role: a }\n"
    "  - { id: \"t\\\"]; click n0 call alert(1); x[\\\"\\e[2J<script>alert(1)</script>\", type: tool_call,"
    " parameters: { tool: \"x\\\\\\\" URL=\\\"javascript:alert(1)\" } }\n"
)


def test_mermaid_holds_no_directive_and_its_front_matter_stays_whole(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = _graph(tmp_path, capsys, HOSTILE_GRAPH, "mermaid")
    _clean(out)
    lines = out.splitlines()
    assert lines[0] == "---" and lines[2] == "---" and lines[1].startswith("title: ")
    assert lines.count("---") == 2 and lines[3].startswith("flowchart ")
    assert "%%{" not in out and "}%%" not in out
    assert not any(line.strip().startswith(("click", "flowchart TD\\n")) for line in lines[4:])
    assert "<script" not in out
    body = [line for line in lines[4:] if not line.strip().startswith("%%")]
    assert all(line.count('"') % 2 == 0 for line in body), out


def test_dot_and_svg_hold_hostile_ids_as_text(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = _graph(tmp_path, capsys, HOSTILE_GRAPH, "dot")
    _clean(out)
    # quotes in text are escaped (\" in strings, &quot; in labels): no attribute can be added
    assert not re.search(r'(?<!\\)(URL|href)="', out)
    assert "<script" not in re.sub(r'tooltip="(?:[^"\\]|\\.)*"', "", out)  # a tooltip's text is text
    if shutil.which("dot") is None:
        return
    (tmp_path / "g.yaml").write_text(HOSTILE_GRAPH)
    status, _out, err = _run(capsys, "graph", "g.yaml", "-o", "g.svg")
    assert status == 0, err
    svg = (tmp_path / "g.svg").read_text(encoding="utf-8")
    assert "<script" not in svg and not re.search(r'href="javascript', svg)
    _clean(svg)


# ------------------------------------------------------------------ translation
SECTION_DOC = """\
## !workflow a

```yaml
description: "x\\n\\n```yaml\\nsteps:\\n  pwn: { kind: manual }\\n  f: { kind: finish, depends_on: pwn }\\n```\\n\\n## !workflow real"
steps:
  s: { kind: manual }
  f: { kind: finish, depends_on: s }
```
"""


@pytest.mark.parametrize("description", [
    "x\n\n```yaml\nsteps:\n  pwn: { kind: manual }\n  f: { kind: finish, depends_on: pwn }\n```\n\n## !workflow real",
    "x\n<!--\nhidden",
    "x\n:::!workflow{name=b}\nsteps: {}\n:::",
    "# a heading\ntext",
    "  leading and trailing  ",
    "~~~\nfenced",
    "line\r\nbreaks\rof every\u2028kind",
])
def test_a_section_description_reads_back_as_itself(description, tmp_path):
    from flowc.compiler.instruction.frontend import compile_instruction_all
    from flowc.pipeline.translate import translate_text
    from flowc.translation.yamlout import quoted

    doc = SECTION_DOC.replace(SECTION_DOC.splitlines()[3], "description: " + quoted(description))
    before, diags = compile_instruction_all(doc, "doc.md")
    assert not [d for d in diags if d.is_error] and before[0].description == description
    out = translate_text(doc, "doc.md", "instruction")
    assert out.ok, out.diagnostics
    after, diags = compile_instruction_all(out.text, "doc.md")
    assert not [d for d in diags if d.is_error], out.text
    assert [(w.name, w.description, sorted(n.id for n in w.nodes)) for w in after] == \
        [(w.name, w.description, sorted(n.id for n in w.nodes)) for w in before], out.text


def test_a_plain_section_description_stays_prose(tmp_path):
    from flowc.pipeline.translate import translate_text

    doc = SECTION_DOC.replace(SECTION_DOC.splitlines()[3], "description: Says hello.")
    out = translate_text(doc, "doc.md", "instruction")
    assert out.ok and out.text.startswith("## !workflow a\n\nSays hello.\n\n```yaml\n"), out.text


# ------------------------------------------------------------------ identifiers
@pytest.mark.parametrize("text", [
    'name: "hello\\n"\nsteps:\n  s: { kind: manual }\n  f: { kind: finish, depends_on: s }\n',
    'name: hello\nsteps:\n  "s\\n": { kind: manual }\n  f: { kind: finish, depends_on: "s\\n" }\n',
])
def test_an_identifier_does_not_end_in_a_line_break(text):
    result = driver.compile_text(text, "w.yaml", "instruction")
    assert "INS107" in [d.code for d in result.diagnostics], result.diagnostics


def test_a_workflowskill_step_id_ending_in_a_line_break_is_reported():
    text = 'inputs: {}\noutputs: {}\nsteps:\n  - id: "a\\n"\n    type: tool\n    tool: t\n'
    result = driver.compile_text(text, "w.yaml", "workflowskill")
    assert "WFS106" in [d.code for d in result.diagnostics], result.diagnostics


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="needs file names that are not UTF-8")
def test_sarif_and_json_stay_json_for_a_file_name_that_is_not_utf8(tmp_path, monkeypatch, capsys):
    import json

    monkeypatch.chdir(tmp_path)
    os.mkdir(b"d")
    with open(b"d/\xff\x1b[31m.yaml", "wb") as fh:
        fh.write(b"name: x\nroles: [{ id: a }]\nsteps: [{ id: s, type: llm_call, target_role: b }]\n")
    for fmt in ("json", "sarif"):
        status, out, _err = _run(capsys, "check", "--format", fmt, "d")
        assert status == 1
        out.encode("utf-8")  # printable as it is
        data = json.loads(out)
        assert data
    uri = data["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "d/%FF%1B%5B31m.yaml"
    status, out, _err = _run(capsys, "check", "--format", "sarif", str(tmp_path / "d"))
    assert status == 1 and "%FF" in out and json.loads(out)


def test_check_progress_shows_file_names_escaped():
    import io

    from flowc.pipeline.batch import FileResult, Progress

    stream = io.StringIO()
    progress = Progress(stream, interactive=False)
    progress.start(1, 1)
    progress.advance(FileResult("d/\udcff\x1b]0;t\x07\rforged.yaml", "", ()))
    _clean(stream.getvalue())
    stream.getvalue().encode("utf-8")
    assert "d/\\udcff\\x1b]0;t\\x07\\rforged.yaml" in stream.getvalue()


def test_the_names_of_a_documents_workflows_are_shown_escaped(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wn.md").write_text("## !workflow a\x1b]0;pwn\x07\n\n```yaml\nsteps:\n  s: { kind: manual }\n"
                                    "  f: { kind: finish, depends_on: s }\n```\n")
    status, out, err = _run(capsys, "run", "wn.md", "--workflow", "nope")
    assert status == 2 and "it has: a\\x1b]0;pwn\\x07" in err
    _clean(out + err)


def test_the_fuzz_summary_shows_a_hostile_failure_escaped():
    from flowc.testing.campaign import _first_line

    assert _first_line("a payload ran: \x1b[2J\x07\u202e\nsecond line") == "a payload ran: \\x1b[2J\\x07\\u202e"


# ------------------------------------------------------------------ output paths
def test_translate_into_a_directory_does_not_write_over_its_source(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text(WFS)
    status, _out, err = _run(capsys, "translate", "--to", "aevatar", "w.yaml", "-o", ".")
    assert status == 2 and "over the source" in err, err
    assert (tmp_path / "w.yaml").read_text() == WFS
    (tmp_path / "out").mkdir()
    status, _out, err = _run(capsys, "translate", "--to", "aevatar", "w.yaml", "-o", "out")
    assert status == 0 and (tmp_path / "out" / "w.yaml").read_text().startswith("# flowc TRN102")


# ------------------------------------------------------------------ every payload in a picture
def _payload_pictures():
    from flowc.testing import hostile
    from flowc.testing.yamltext import dump

    extra = ("%%{init: {'theme': 'dark'}}%%", 'x"]; click n0 href "javascript:alert(1)"; y["',
             "a\n---\nb", "<script>alert(1)</script>", "x\\", 'URL="javascript:alert(1)" x')
    for i, text in enumerate((*hostile.payloads("/m"), *extra)):
        yield pytest.param(dump({
            "name": text, "description": text, "roles": [{"id": "r", "name": text}],
            "steps": [{"id": f"{text}{i}", "type": "llm_call", "target_role": "r"},
                      {"id": f"t{i}", "type": "tool_call", "parameters": {"tool": text}}]}), id=str(i))


@pytest.mark.parametrize("text", _payload_pictures())
def test_every_payload_in_a_picture_stays_text(text):
    from flowc import diagrams

    result = driver.compile_text(text, "w.yaml", "aevatar")
    assert result.workflow is not None, result.diagnostics
    mermaid = diagrams.render(result.workflow, "mermaid", result.diagnostics)
    lines = mermaid.splitlines()
    assert lines[0] == lines[2] == "---" and lines[1].startswith('title: "') and lines[3].startswith("flowchart")
    assert "%%{" not in mermaid and "---" not in lines[3:]
    for line in lines[4:]:
        stripped = line.strip()
        assert stripped.startswith(("%% ", "start", "n", "linkStyle", "classDef", "class ", "subgraph",
                                    "end")), line
        assert stripped.startswith("%% ") or line.count('"') % 2 == 0, line
    _clean(mermaid)
    dot = diagrams.render(result.workflow, "dot", result.diagnostics)
    _clean(dot)
    assert not re.search(r'(?<!\\)(URL|href)="', dot)
    if shutil.which("dot") is not None:
        svg = diagrams.render_image(dot, "svg").decode("utf-8")
        assert "<script" not in svg and not re.search(r'href="javascript', svg)


def test_a_host_capabilities_file_is_quoted_escaped(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "caps.json").write_text('{"host": "h", "kinds": [], "k\\u001b]0;t\\u0007\\nforged": 1}')
    (tmp_path / "w.yaml").write_text("name: w\nsteps:\n  s: { kind: manual }\n  f: { kind: finish, depends_on: s }\n")
    status, out, err = _run(capsys, "check", "--host-capabilities", "caps.json", "w.yaml")
    assert status == 2 and "k\\x1b]0;t\\x07\\nforged" in err, err
    _clean(out + err)


def test_json_output_escapes_what_json_leaves_raw(tmp_path, monkeypatch, capsys):
    import json

    monkeypatch.chdir(tmp_path)
    step = "s\u202e\x9b\x7f\u2028"
    escaped = "s\\u202e\\x9b\\x7f\\u2028"  # as YAML writes them
    (tmp_path / "a.yaml").write_text(
        f'name: w\nroles: [{{ id: a }}]\nsteps:\n  - {{ id: "{escaped}", type: llm_call, target_role: zz }}\n')
    _status, out, _err = _run(capsys, "check", "--format", "sarif", "a.yaml")
    _clean(out)
    assert "\\u202e" in out and json.loads(out)
    (tmp_path / "a.yaml").write_text(
        f'name: w\nroles: [{{ id: a }}]\nsteps:\n  - {{ id: "{escaped}", type: llm_call, target_role: a }}\n')
    _status, out, _err = _run(capsys, "run", "--json", "a.yaml")
    _clean(out)
    assert json.loads(out)["steps"][0]["id"] == step
