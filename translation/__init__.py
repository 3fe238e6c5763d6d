"""Translation between the dialects: a workflow's IR written in a target dialect.

One emitter per target (:mod:`.aevatar`, :mod:`.instruction`,
:mod:`.workflowskill`), each a printer, a table of lowerings keyed by IR
ops and meaning keys, and the target's flags; :mod:`.control` converts the
source's scheduling model (its DialectProfile's ``scheduling`` row) into the
target's. The package reads only the IR and the runtime (constant folding
evaluates with the runtime's own functions); the command line wraps it
(limits of the target, source documents).
"""

from __future__ import annotations

from flowc.ir.workflow import Workflow
from flowc.translation import aevatar, instruction, workflowskill
from flowc.translation.report import TARGETS, Emission, Lowering

__all__ = ["TARGETS", "Emission", "Lowering", "emit", "emit_document"]

_EMITTERS = {"workflowskill": workflowskill.emit, "aevatar": aevatar.emit, "instruction": instruction.emit}


def emit(workflow: Workflow, target: str, strict: bool = False) -> Emission:
    """``workflow`` written in ``target`` (one of :data:`TARGETS`)."""
    emitter = _EMITTERS.get(target)
    if emitter is None:
        raise ValueError(f"unknown target dialect {target!r} (expected one of {', '.join(TARGETS)})")
    return emitter(workflow, strict=strict)


def emit_document(workflows: list[Workflow], strict: bool = False) -> Emission:
    """Several dialect-3 workflows of one document written back as one document."""
    return instruction.emit_document(workflows, strict)
