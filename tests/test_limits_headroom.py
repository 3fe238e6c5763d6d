"""Every limit of flowc.ir.limits is far above what real workflows need.

The corpus (tests/data, examples/) is the evidence: its largest value of
each measure must stay at least HEADROOM times below the limit, so a limit
only ever stops hostile or runaway input. benchmarks/limits_headroom.py
prints the same table for docs/limits.md.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from flowc.ir import limits as L

HEADROOM = 8
_SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "limits_headroom.py"
_spec = importlib.util.spec_from_file_location("limits_headroom", _SCRIPT)
headroom = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(headroom)


@pytest.fixture(scope="module")
def maxima():
    found, count = headroom.corpus_maxima()
    assert count >= 200, "the corpus should hold the 200-odd workflows of tests/data and examples/"
    return found


@pytest.mark.parametrize("measure", sorted(headroom.LIMIT_OF))
def test_corpus_stays_far_below_the_limit(maxima, measure):
    assert maxima[measure] > 0, f"the corpus never exercises {measure}: the measure is broken"
    assert maxima[measure] * HEADROOM <= headroom.LIMIT_OF[measure]


def test_every_limit_is_documented():
    page = (Path(__file__).resolve().parent.parent / "docs" / "limits.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in page.splitlines() if line.startswith("| ")}
    for limit in L.LIMITS:
        assert limit.name in rows, f"docs/limits.md has no row for {limit.name}"
        assert f"{limit.value:,}" in rows[limit.name], f"docs/limits.md gives another value for {limit.name}"
        assert f"{limit.value:,}" in page, f"docs/limits.md does not give the value of {limit.name}"
        assert limit.code in page, f"docs/limits.md does not name {limit.code} ({limit.name})"
