"""Shared test fixtures: where the test data lives, and the hypothesis profiles.

Test modules ask for ``corpus_path`` (every WorkflowSkill fixture and
example), ``clean_path`` (those that must check without errors) or
``malformed_path`` (those that must fail) and are parametrized over the
files by :func:`pytest_generate_tests`.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS_DIR = Path(__file__).resolve().parent
DATA_DIR = TESTS_DIR / "data"
WFS_DIR = DATA_DIR / "workflowskill"
WFS_FIXTURES_DIR = WFS_DIR / "fixtures"
WFS_EXAMPLES_DIR = WFS_DIR / "examples"
WFS_CASES = WFS_DIR / "cases.json"

# The reference runtime rejects these three; flowc must too.
MALFORMED = ("malformed-bad-schema.md", "malformed-bad-yaml.md", "malformed-no-block.md")


def corpus_files() -> list[Path]:
    """Every WorkflowSkill fixture and example, sorted."""
    return sorted(WFS_FIXTURES_DIR.glob("*.md")) + sorted(WFS_EXAMPLES_DIR.glob("*.md"))


def clean_files() -> list[Path]:
    return [p for p in corpus_files() if p.name not in MALFORMED]


def malformed_files() -> list[Path]:
    return [p for p in corpus_files() if p.name in MALFORMED]


def _ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in paths]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for name, files in (("corpus_path", corpus_files), ("clean_path", clean_files),
                        ("malformed_path", malformed_files)):
        if name in metafunc.fixturenames:
            paths = files()
            metafunc.parametrize(name, paths, ids=_ids(paths))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA_DIR


@pytest.fixture(scope="session")
def wfs_dir() -> Path:
    return WFS_DIR


@pytest.fixture(scope="session")
def wfs_fixtures_dir() -> Path:
    return WFS_FIXTURES_DIR


@pytest.fixture(scope="session")
def wfs_examples_dir() -> Path:
    return WFS_EXAMPLES_DIR


@pytest.fixture(scope="session")
def wfs_cases_path() -> Path:
    return WFS_CASES


@pytest.fixture
def write_workflow(tmp_path: Path):
    """Write (dedented) text to a file under tmp_path and return its path."""

    def write(text: str, name: str = "workflow.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


# ------------------------------------------------------------------ hypothesis
# `ci`: the same examples on every run and no example database, so a CI
# failure reproduces locally with HYPOTHESIS_PROFILE=ci.
settings.register_profile(
    "ci", derandomize=True, database=None, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))
