"""The WorkflowSkill emitter: IR -> a SKILL.md with a ```workflow block.

A workflow of another scheduling model becomes a sequence of steps with
branch arms and ``wfs.*`` operators (:data:`CONVERSIONS`, picked by
:func:`..control.convert`): :mod:`.dataflow` orders a dependency graph and
turns pruning into guards, :mod:`.kernel` follows aevatar's kernel routes
into arms; each reports what has no WorkflowSkill form. :mod:`.lowerings`
holds the tables (kinds, operators, primitives), :mod:`.text` writes
expressions, :mod:`.printer` the document. A workflow that already has
WorkflowSkill semantics is printed as it is, which makes ``translate --to
workflowskill`` a canonical formatter.
"""

from __future__ import annotations

from flowc.ir.workflow import Workflow
from flowc.translation import control
from flowc.translation.report import Emission, Report
from flowc.translation.workflowskill import dataflow, kernel
from flowc.translation.workflowskill.flags import PROFILE, TARGET
from flowc.translation.workflowskill.printer import print_workflow

__all__ = ["CONVERSIONS", "PROFILE", "TARGET", "emit"]

# Source scheduling model -> the conversion into a WorkflowSkill step sequence.
CONVERSIONS: dict[str, control.Conversion] = {
    "dataflow": dataflow.lower_dataflow,
    "kernel": kernel.lower_kernel,
}


def emit(workflow: Workflow, strict: bool = False) -> Emission:
    """``workflow`` as a WorkflowSkill SKILL.md document."""
    report = Report(TARGET, strict)
    own = control.has_profile(workflow, PROFILE)
    if not own:
        workflow = control.convert(workflow, CONVERSIONS, TARGET, report)
    return report.result(print_workflow(workflow, report, own_carrier=own))
