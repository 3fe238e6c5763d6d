"""Translation reads a workflow's profile rows, never its dialect's name.

A dialect that has another dialect's rows under a name of its own is
translated exactly as that dialect: for every corpus workflow of each
dialect (and a dialect-3 probe whose translation depends on its rows), the
workflow relabelled (``semantics`` and ``dialect`` both a new
name, its profile a copy of the original's) is written, to every other
target, with the same bytes and findings as the original. A profile whose
scheduling model no target converts is refused with a message naming it.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from flowc import translation
from flowc.ir.semantics import PROFILES
from flowc.pipeline import driver

DATA = Path(__file__).resolve().parent / "data"
SOURCES = {
    "workflowskill": sorted((DATA / "workflowskill").rglob("*.md"))[:12],
    "aevatar": sorted(p for p in (DATA / "aevatar").rglob("*.yaml") if "negative" not in p.parts)[:40],
    "instruction": sorted(p for p in (DATA / "instruction").iterdir() if p.suffix in (".yaml", ".md")),
}


# Rows that make a difference: a filter's output is the list itself
# (transform_output), an input the run may not be given fails the step that
# reads it (access).
PROBE = """\
name: rows_probe
inputs:
  schema:
    type: object
    properties:
      rows: {type: array}
      want: {type: string}
steps:
  s0: {kind: manual}
  f:
    kind: filter
    depends_on: [s0]
    over: '{{ inputs.rows }}'
    expr: item.score > 1
  t:
    kind: template
    depends_on: [f]
    text: 'want {{ inputs.want }}'
  done:
    kind: finish
    depends_on: [t]
    output: {n: 'CEL: size(steps.f.output) == 1'}
"""


def _workflows(dialect: str):
    for path in SOURCES[dialect]:
        result = driver.compile_file(str(path), dialect)
        if result.ok:
            yield str(path), result.workflow
    if dialect == "instruction":
        result = driver.compile_text(PROBE, "probe.yaml", "instruction")
        assert result.ok, result.diagnostics
        yield "probe.yaml", result.workflow


def _relabelled(wf, monkeypatch):
    twin = attrs.evolve(PROFILES[wf.semantics], name=f"{wf.semantics}_twin")
    monkeypatch.setitem(PROFILES, twin.name, twin)
    return attrs.evolve(wf, semantics=twin.name, dialect=twin.name)


def _findings(emission):
    return [(d.code, d.severity, d.message, d.span) for d in emission.diagnostics]


@pytest.mark.parametrize("dialect", sorted(SOURCES))
def test_a_relabelled_dialect_translates_the_same(dialect, monkeypatch):
    compared = 0
    for path, wf in _workflows(dialect):
        twin = _relabelled(wf, monkeypatch)
        for target in translation.TARGETS:
            if target == dialect:
                continue
            original, again = translation.emit(wf, target), translation.emit(twin, target)
            assert again.text == original.text, (path, target)
            assert _findings(again) == _findings(original), (path, target)
            compared += 1
    assert compared >= 8


def test_a_scheduling_model_no_target_converts_is_refused(monkeypatch):
    wf = driver.compile_file(str(SOURCES["workflowskill"][0]), "workflowskill").workflow
    odd = attrs.evolve(PROFILES["workflowskill"], name="odd", scheduling="by_moon_phase")
    monkeypatch.setitem(PROFILES, "odd", odd)
    with pytest.raises(ValueError, match="'odd' semantics to aevatar"):
        translation.emit(attrs.evolve(wf, semantics="odd"), "aevatar")
