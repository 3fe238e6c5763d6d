"""Another dialect's IR -> aevatar IR.

aevatar runs one step after another and every value is text: a run's
output is the last step's output, a step's input the previous step's
output, and a step's id and each run parameter are variables. A
WorkflowSkill or instruction workflow becomes a step list whose kernel
path is the source's path: :mod:`.from_workflowskill` and
:mod:`.from_instruction` rebuild the control flow (guards, branches,
exits) with ``conditional`` steps, ``next`` and fall-through
(:mod:`.layout`), conditions through :mod:`.conditions`, the single steps
and values through :mod:`.steps`, by the source's scheduling model
(``DialectProfile.scheduling``).
"""

from __future__ import annotations

from flowc.ir.semantics import PROFILES
from flowc.ir.workflow import Workflow
from flowc.translation.aevatar.steps import STEP_RULES
from flowc.translation.report import Report

__all__ = ["STEP_RULES", "lower"]


def lower(wf: Workflow, report: Report) -> Workflow:
    profile = PROFILES.get(wf.semantics)
    scheduling = profile.scheduling if profile is not None else None
    if scheduling == "sequential":
        from flowc.translation.aevatar.sequential import lower_workflowskill

        return lower_workflowskill(wf, report)
    if scheduling == "dataflow":
        from flowc.translation.aevatar.dataflow import lower_instruction

        return lower_instruction(wf, report)
    raise ValueError(f"no translation from {wf.semantics!r} semantics to aevatar")

