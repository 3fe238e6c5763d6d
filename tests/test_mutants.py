"""Every mutation operator's mutants are caught by flowc with exactly the
operator's finding code (a mutation score of 100 %)."""

from __future__ import annotations

from pathlib import Path

import pytest
from flowc.compiler.codes import CODES
from flowc.testing import mutants
from flowc.testing import strategies as wst
from hypothesis import HealthCheck, Phase, given, settings

OPERATORS = [pytest.param(dialect, op, id=f"{dialect}-{op.name}")
             for dialect in (*wst.dialects(), "ir") for op in mutants.operators_for(dialect)]


@pytest.mark.parametrize(("dialect", "op"), OPERATORS)
def test_every_mutant_is_caught_with_its_code(dialect, op):
    # No shrinking: the campaign (flowc fuzz) shrinks; here a failure shows its example as drawn.
    @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck),
              phases=(Phase.explicit, Phase.reuse, Phase.generate))
    @given(wst.invalid_workflows(dialect, max_steps=4, operators=[op.name]))
    def caught(mutant):
        assert mutant.operator == op.name
        codes = mutant.error_codes()
        assert codes == {op.code}, (sorted(codes), [f"{d.code} {d.message}" for d in mutant.findings()])

    caught()


def test_operator_codes_are_registered_and_names_unique():
    for dialect, table in mutants.OPERATORS.items():
        assert len({op.name for op in table}) == len(table), dialect
        for op in table:
            assert op.code in CODES, (dialect, op.name, op.code)
            assert op.description


def test_the_issue_s_defects_have_operators():
    codes = {op.code for op in mutants.operators_for("workflowskill")}
    assert {"WFS105", "WFS204", "WFS205", "WFS106", "WFS104", "WFS209", "ANA401", "WFS203", "WFS107",
            "WFS113", "WFS111"} <= codes


def test_mutant_knows_when_it_is_caught():
    mutant = wst.Mutant(wst.WorkflowText("steps:\n  - id: a\n    type: tol\n", "workflowskill"), "WFS106",
                        "unknown_step_type", "workflowskill", "a bad step type")
    assert mutant.caught()
    assert not mutant._replace(code="WFS105").caught()


def test_the_operator_table_of_docs_fuzzing_is_current():
    page = (Path(__file__).resolve().parent.parent / "docs" / "fuzzing.md").read_text(encoding="utf-8")
    table = page.split("<!-- mutation-operators -->\n", 1)[1].split("\n<!-- /mutation-operators -->", 1)[0]
    assert table == mutants.markdown_table()
