"""The README's opening commands: the first console block installs flowc and
runs the bundled example; it must print the readable record (and `--json`
the same record as JSON)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from flowc import cli

ROOT = Path(cli.__file__).resolve().parents[1]


def _first_console_block() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```console\n(.*?)```", text, re.DOTALL)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_first_block_installs_then_runs_the_example_readably(capsys, monkeypatch):
    lines = _first_console_block()
    assert lines[0] == "pip install ."
    argv = shlex.split(lines[1])
    assert argv[:2] == ["flowc", "run"] and "--json" not in argv
    monkeypatch.chdir(ROOT)
    assert cli.main(argv[1:]) == 0
    out = capsys.readouterr().out
    assert out.startswith("status: success\n")
    assert max(len(line) for line in out.splitlines()) <= 130  # readable, not one long JSON line
    assert cli.main([*argv[1:], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "success"
