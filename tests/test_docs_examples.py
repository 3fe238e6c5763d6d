"""The examples in docs/*.md are run.

A fenced block preceded by a marker comment is tested:

- ``<!-- test: check-clean -->``: a workflow `flowc check` accepts (no error);
- ``<!-- test: check-fails CODE -->``: a workflow for which it reports CODE;
- ``<!-- test: shell -->``: ``$ flowc ...`` lines, run in a scratch directory
  holding a copy of examples/; the lines after a command are its expected
  output (standard output then standard error), ``...`` matching anything.

A workflow block is written as SKILL.md when its fence says ``markdown``,
otherwise as workflow.yaml; ``title="name"`` in the fence line picks the name.
Relative links between the pages must lead somewhere too.
"""

from __future__ import annotations

import doctest
import re
import shlex
import shutil
from pathlib import Path

import attrs
import pytest
from flowc import cli
from flowc.pipeline import driver

ROOT = Path(cli.__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MARKER = re.compile(r"^<!--\s*test:\s*(?P<kind>[\w-]+)(?P<args>[^>]*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
TITLE = re.compile(r'title="(?P<name>[^"]+)"')
LINK = re.compile(r"\]\((?P<target>[^)#\s]+)(?:#[^)]*)?\)")


@attrs.frozen
class Block:
    page: str
    line: int
    kind: str
    args: tuple[str, ...]
    info: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}:{self.kind}"

    @property
    def file_name(self) -> str:
        m = TITLE.search(self.info)
        if m:
            return m.group("name")
        return "SKILL.md" if self.info.split()[:1] == ["markdown"] else "workflow.yaml"


def blocks() -> list[Block]:
    out = []
    for page in sorted(DOCS.glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            m = MARKER.match(lines[i].strip())
            i += 1
            if not m:
                continue
            while i < len(lines) and not lines[i].strip():
                i += 1
            opening = FENCE.match(lines[i]) if i < len(lines) else None
            assert opening, f"{page.name}:{i}: a test marker must be followed by a fenced block"
            fence, start = opening.group("fence"), i + 1
            end = start
            while end < len(lines) and lines[end].strip() != fence:
                end += 1
            out.append(Block(page.name, start, m.group("kind"), tuple(m.group("args").split()),
                             opening.group("info").strip(), "\n".join(lines[start:end]) + "\n"))
            i = end + 1
    return out


BLOCKS = blocks()
WORKFLOW_BLOCKS = [b for b in BLOCKS if b.kind in ("check-clean", "check-fails")]
SHELL_BLOCKS = [b for b in BLOCKS if b.kind == "shell"]


def test_markers_are_known_and_there_are_examples():
    assert {b.kind for b in BLOCKS} <= {"check-clean", "check-fails", "shell"}
    pages = {b.page for b in BLOCKS}
    assert {"README.md", "cli.md"} <= pages
    assert len(SHELL_BLOCKS) >= 8 and len(WORKFLOW_BLOCKS) >= 2


@pytest.mark.parametrize("block", WORKFLOW_BLOCKS, ids=lambda b: b.id)
def test_workflow_examples(block):
    result = driver.compile_text(block.text, block.file_name)
    codes = [d.code for d in result.diagnostics]
    if block.kind == "check-clean":
        errors = [(d.code, d.message) for d in result.diagnostics if d.is_error]
        assert not errors, f"{block.id}: expected no errors, got {errors}"
    else:
        assert block.args, f"{block.id}: check-fails needs the expected code"
        for code in block.args:
            assert code in codes, f"{block.id}: expected {code}, got {codes}"


def _commands(text: str) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a shell block."""
    pairs: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        else:
            assert pairs, f"output before any command: {line!r}"
            pairs[-1][1].append(line)
    return [(cmd, "\n".join(out).strip("\n")) for cmd, out in pairs]


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=lambda b: b.id)
def test_shell_examples(block, tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS
    for command, expected in _commands(block.text):
        argv = shlex.split(command)
        assert argv[0] == "flowc", f"{block.id}: only flowc commands are run ({command!r})"
        status = cli.main(argv[1:])
        out, err = capsys.readouterr()
        got = (out + err).strip("\n")
        assert status == 0, f"{block.id}: `{command}` exited {status}\n{got}"
        if not checker.check_output(expected + "\n", got + "\n", flags):
            pytest.fail(f"{block.id}: `{command}` printed\n{got}\n\nbut the page says\n{expected}")


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_relative_links_resolve(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    broken = []
    for m in LINK.finditer(text):
        target = m.group("target")
        if re.match(r"^[a-z]+:", target):
            continue
        if not (DOCS / target).exists():
            broken.append(target)
    assert not broken, f"{page} links to missing files: {broken}"

