"""The source path a program embeds is the file's base name: no machine
path in the artifact, the same bytes however the path is spelled, and
``flowc disasm --source-root`` still finds the source."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from flowc.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("example", ["triage/SKILL.md", "instruction/pipeline.yaml"])
def test_every_spelling_of_the_path_gives_the_same_bytes(example, tmp_path, monkeypatch, capsys):
    (tmp_path / "a").mkdir()
    name = os.path.basename(example)
    shutil.copy(EXAMPLES / example, tmp_path / "a" / name)
    monkeypatch.chdir(tmp_path)
    outputs = []
    for i, spelled in enumerate([f"a/{name}", f"./a/../a/{name}", str(tmp_path / "a" / name)]):
        assert main(["compile", "--target", "bytecode", spelled, "-o", f"out{i}.fcb"]) == 0
        outputs.append((tmp_path / f"out{i}.fcb").read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    assert str(tmp_path).encode() not in outputs[0] and b"/a/" not in outputs[0]
    capsys.readouterr()


def test_disasm_finds_the_source_under_the_source_root(tmp_path, monkeypatch, capsys):
    (tmp_path / "src").mkdir()
    shutil.copy(EXAMPLES / "triage/SKILL.md", tmp_path / "src" / "SKILL.md")
    monkeypatch.chdir(tmp_path)
    assert main(["compile", "--target", "bytecode", "src/SKILL.md", "-o", "p.fcb"]) == 0
    capsys.readouterr()
    assert main(["disasm", "p.fcb", "--source-root", "src"]) == 0
    out = capsys.readouterr().out
    assert 'source map: "SKILL.md"' in out
    first_step_line = next(line for line in (tmp_path / "src" / "SKILL.md").read_text().splitlines()
                           if line.strip().startswith("- id:"))
    assert first_step_line.strip() in out  # source lines are shown next to the code
