"""What `pip install .` installs: every package of the source tree.

A package left out of pyproject.toml's list works in an editable install
and is missing from a real one (the journal was, once)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOT_SHIPPED = {"tests", "benchmarks", "examples", "docs", "build", "dist"}


def _source_packages() -> set[str]:
    found = {"flowc"}
    for init in ROOT.rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if not rel.parts or rel.parts[0] in NOT_SHIPPED or any(p.startswith(".") or p.endswith(".egg-info")
                                                               or p == "node_modules" for p in rel.parts):
            continue
        found.add(".".join(("flowc", *rel.parts)))
    return found


def test_every_package_of_the_tree_is_installed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
                 ["packages"])
    assert _source_packages() == listed
