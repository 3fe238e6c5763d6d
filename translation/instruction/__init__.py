"""The instruction emitter: IR -> an agentd dialect-3 workflow document.

A workflow of another scheduling model becomes a dependency graph of
catalog kinds with CEL expressions and ``{{ }}`` templates
(:data:`CONVERSIONS`, picked by :func:`..control.convert`):
:mod:`.sequential` turns steps in order with branch arms into
``depends_on`` edges and ``when`` guards, :mod:`.kernel` aevatar's kernel
routes into switches; expressions go through the meaning-key tables of
:mod:`.wfs_cel` and :mod:`.lowerings`, ids through :mod:`.names`.
:mod:`.text` writes expressions, :mod:`.printer` the document.
"""

from __future__ import annotations

from flowc.ir.workflow import Workflow
from flowc.translation import control
from flowc.translation.instruction import kernel, sequential
from flowc.translation.instruction.flags import PROFILE, TARGET
from flowc.translation.instruction.names import fit_names
from flowc.translation.instruction.printer import print_document
from flowc.translation.report import Emission, Report

__all__ = ["CONVERSIONS", "PROFILE", "TARGET", "emit", "emit_document"]

# Source scheduling model -> the conversion into a dependency graph.
CONVERSIONS: dict[str, control.Conversion] = {
    "sequential": sequential.lower_sequence,
    "kernel": kernel.lower_kernel,
}


def emit(workflow: Workflow, strict: bool = False) -> Emission:
    """``workflow`` as an instruction workflow document (in its own carrier)."""
    return emit_document([workflow], strict)


def emit_document(workflows: list[Workflow], strict: bool = False) -> Emission:
    """Several workflows of one document (``workflows:`` entries, or the
    workflow blocks of an instruction.md) written as one document."""
    report = Report(TARGET, strict)
    lowered = []
    for wf in workflows:
        if not control.has_profile(wf, PROFILE):
            wf = fit_names(control.convert(wf, CONVERSIONS, TARGET, report), report)
        lowered.append(wf)
    return report.result(print_document(lowered, report))
