"""The aevatar emitter: IR -> an aevatar workflow YAML (roles + steps).

aevatar runs one step after another and every value is text: a run's
output is the last step's output, a step's input the previous step's
output, and a step's id and each run parameter are variables. A workflow
of another scheduling model becomes a step list whose kernel path is the
source's path (:data:`CONVERSIONS`, picked by :func:`..control.convert`):
:mod:`.sequential` (steps in order with branch arms) and :mod:`.dataflow`
(a dependency graph) rebuild the control flow with ``conditional`` steps,
``next`` and fall-through (:mod:`.layout`), conditions through
:mod:`.conditions`; each step is lowered by its op through the table of
:mod:`.lowerings` (:mod:`.steps`, :mod:`.llm`); :mod:`.text` writes
expressions and :mod:`.printer` the document.
"""

from __future__ import annotations

from flowc.ir.workflow import Workflow
from flowc.translation import control
from flowc.translation.aevatar import dataflow, sequential
from flowc.translation.aevatar.flags import PROFILE, TARGET
from flowc.translation.aevatar.printer import print_workflow
from flowc.translation.report import Emission, Report

__all__ = ["CONVERSIONS", "PROFILE", "TARGET", "emit"]

# Source scheduling model -> the conversion into aevatar's step kernel.
CONVERSIONS: dict[str, control.Conversion] = {
    "sequential": sequential.lower_sequence,
    "dataflow": dataflow.lower_dataflow,
}


def emit(workflow: Workflow, strict: bool = False) -> Emission:
    """``workflow`` as an aevatar workflow document."""
    report = Report(TARGET, strict)
    if not control.has_profile(workflow, PROFILE):
        workflow = control.convert(workflow, CONVERSIONS, TARGET, report)
    return report.result(print_workflow(workflow, report))
