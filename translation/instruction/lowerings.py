"""Another dialect's IR -> instruction IR, by the source's scheduling model
(semantics.DialectProfile.scheduling): sequential steps (WorkflowSkill) or
the aevatar step kernel."""

from __future__ import annotations

from flowc.ir.semantics import PROFILES
from flowc.ir.workflow import Workflow
from flowc.translation.report import Report

__all__ = ["lower"]


def lower(wf: Workflow, report: Report) -> Workflow:
    profile = PROFILES.get(wf.semantics)
    scheduling = profile.scheduling if profile is not None else None
    if scheduling == "sequential":
        from flowc.translation.instruction.sequential import lower_workflowskill

        return lower_workflowskill(wf, report)
    if scheduling == "kernel":
        from flowc.translation.instruction.kernel import lower_aevatar

        return lower_aevatar(wf, report)
    raise ValueError(f"no translation from {wf.semantics!r} semantics to instruction")
