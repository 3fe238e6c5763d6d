"""The one plan builder: IR -> the plan every scheduling model reads.

Shape (every model)::

    plan  = {"model", "name", "nodes": [node...], "edges": [edge...], run-wide fields...}
    graph = {"nodes": [node...], "edges": [edge...]}          (a region's body)
    edge  = [source, target, kind, label]

``kind`` is an :class:`~flowc.ir.workflow.EdgeKind` value and ``label``
the edge's label (a branch arm, an error route's name) or None. Edges are
listed node by node in the order the schedulers take them: a node's
``dependency`` edges (its predecessors, in the order the node names them),
its ``sequence`` edge, its ``branch`` edges (in arm order), its ``error``
edges and its ``fallthrough`` edge. The edges a model does not use are
simply absent: a model's activation rule is which kinds it reads
(:mod:`flowc.runtime.edges` indexes them for the schedulers).

A node's contents besides its edges come from the model
(:mod:`flowc.plan.sequential`, :mod:`flowc.plan.kernel`,
:mod:`flowc.plan.dataflow`); every node has ``id``, ``on_error`` (the
failure policy's action), ``retry`` (the model's retry row; absent or None
without one) and,
when it has bodies, ``regions``: ``[name, graph]`` pairs.

Bodies (parameters, guards, attributes, conditions) are whatever the
backend's :class:`Bodies` returns: the Python backend names a generated
function, the VM a bytecode block or expression index. Under sequential
scheduling the builder leaves the bodies to the backends (a generated
function per step; the VM's step rows); both backends' runs walk its
top-level sequence.
"""

from __future__ import annotations

from typing import Any

from flowc.ir.workflow import Workflow
from flowc.plan import dataflow, kernel, sequential
from flowc.plan.model import ExecutionModelError, execution_model
from flowc.plan.shape import Bodies, PlanError

__all__ = ["Bodies", "PlanError", "build_plan"]

# Each model's builder of its nodes, edges and run-wide fields.
_BUILDERS = {"sequential": sequential.build, "kernel": kernel.build, "dataflow": dataflow.build}


def build_plan(workflow: Workflow, bodies: Bodies, model: str | None = None) -> dict:
    """The plan of a checked workflow under the model its profile selects;
    :class:`PlanError` when that model is not ``model`` (when given: the
    one whose bodies ``bodies`` represents) or the workflow holds
    something the model does not run."""
    try:
        selected = execution_model(workflow)
    except ExecutionModelError as exc:
        raise PlanError(f"the plan: {exc}") from None
    if model is not None and selected != model:
        raise PlanError(f"the plan: this backend builds {model} plans, and the workflow runs under {selected} "
                        "scheduling")
    plan: dict[str, Any] = {"model": selected, "name": workflow.name}
    plan.update(_BUILDERS[selected](workflow, bodies))   # every key of MODELS has a builder
    return plan
