"""The pre-commit hook other repositories use (.pre-commit-hooks.yaml)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml
from flowc import cli

ROOT = Path(cli.__file__).resolve().parents[1]
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def test_hook_definition():
    assert isinstance(HOOKS, list) and [h["id"] for h in HOOKS] == ["flowc-check"]
    hook = HOOKS[0]
    for key in ("id", "name", "entry", "language"):
        assert hook.get(key), key
    assert hook["language"] == "python"   # pre-commit installs this repository with pip


def test_entry_is_a_flowc_command_that_takes_file_names(capsys, wfs_fixtures_dir):
    argv = shlex.split(HOOKS[0]["entry"])
    assert argv[:2] == ["flowc", "check"]
    assert cli.main(argv[1:] + [str(wfs_fixtures_dir / "branch.md")]) == 0
    assert cli.main(argv[1:] + [str(wfs_fixtures_dir / "malformed-bad-schema.md")]) == 1
    capsys.readouterr()


def test_default_files_are_skill_files():
    pattern = re.compile(HOOKS[0]["files"])
    assert pattern.search("SKILL.md") and pattern.search("skills/triage/SKILL.md")
    assert not pattern.search("README.md") and not pattern.search(".github/workflows/ci.yml")


def test_documented():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "## Pre-commit hook" in text and "id: flowc-check" in text
