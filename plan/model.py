"""Which execution model runs a workflow, from its profile's named flags.

Execution code never asks which dialect a workflow came from. The
workflow's :class:`~flowc.ir.semantics.DialectProfile` answers the
execution questions in named rows (``scheduling``, ``concurrency``,
``output_resolution``, ``resolution_errors``), and this module is the one
place that reads them: it returns the scheduling model whose code
generator (Python backend) or assembler (VM) runs the workflow, after
checking that the model implements every other row of the profile. A
profile no model implements is refused with the row that does not fit, so
a new profile never runs under rules it did not ask for.
"""

from __future__ import annotations

import attrs
from flowc.ir.workflow import Workflow

__all__ = ["MODELS", "ExecutionModel", "ExecutionModelError", "execution_model", "runs_under"]


class ExecutionModelError(Exception):
    """No execution model runs the workflow's profile."""


@attrs.frozen
class ExecutionModel:
    """The execution rows one scheduler implements (keys of the tables in
    :mod:`flowc.ir.semantics`)."""

    scheduling: str
    concurrency: str
    output_resolution: str
    resolution_errors: str


# One row per scheduler: "sequential" the WorkflowSkill walk
# (runtime/sequence_run.py, its steps generated code or plan rows), "kernel" the
# aevatar step loop (routing_run.py), "dataflow" runtime/dataflow_run.py.
MODELS: dict[str, ExecutionModel] = {m.scheduling: m for m in (
    ExecutionModel("sequential", "none", "declared_outputs", "abort_run"),
    ExecutionModel("kernel", "composite_workers", "last_output", "as_text"),
    ExecutionModel("dataflow", "ready_nodes", "finish_node", "step_failure"),
)}

_CHECKED_ROWS = ("concurrency", "output_resolution", "resolution_errors")


def execution_model(workflow: Workflow) -> str:
    """The scheduling model that runs ``workflow`` ("sequential", "kernel"
    or "dataflow"); :class:`ExecutionModelError` when none does."""
    profile = workflow.profile
    if profile is None:
        raise ExecutionModelError("the workflow's semantics key names no DialectProfile, so no execution "
                                  "model runs it")
    model = MODELS.get(profile.scheduling)
    if model is None:
        raise ExecutionModelError(f"no backend runs {profile.scheduling!r} scheduling")
    for row in _CHECKED_ROWS:
        wanted, implemented = getattr(profile, row), getattr(model, row)
        if wanted != implemented:
            raise ExecutionModelError(f"{model.scheduling} scheduling runs {row} {implemented!r}, not {wanted!r}")
    return model.scheduling


def runs_under(workflow: Workflow, scheduling: str) -> str | None:
    """None when ``workflow`` runs under ``scheduling``; otherwise why not
    (the message names the scheduling model, never the dialect)."""
    try:
        model = execution_model(workflow)
    except ExecutionModelError as exc:
        return str(exc)
    if model != scheduling:
        return f"this scheduler runs {scheduling} scheduling, not {model}"
    return None
