"""The plan: a workflow as plain data, built from the IR once for both backends.

:mod:`flowc.plan.model` chooses the execution model from the workflow's
``DialectProfile`` (its named flags, never the dialect);
:mod:`flowc.plan.builder` builds the plan of every scheduling model, in
one shape::

    {"model", "name", "nodes": [node...], "edges": [[source, target, kind, label]...], run-wide fields...}

A node's ``regions`` are ``[name, {"nodes", "edges"}]`` pairs: a body is
a graph of the same shape. Routing and readiness are edges by
:class:`~flowc.ir.workflow.EdgeKind` (``kind`` is its value:
``"sequence"``, ``"fallthrough"``, ``"branch"``, ``"dependency"``,
``"error"``); the schedulers index them by kind when a run loads its plan
(:mod:`flowc.runtime.edges`); under sequential scheduling both backends'
runs walk the plan's sequence edges (the steps' bodies a generated
function each, or the VM's step rows). What the nodes hold besides
edges (the step's body, retry, error policy, iteration, timeout) is the
model's: :mod:`flowc.plan.sequential`, :mod:`flowc.plan.kernel`,
:mod:`flowc.plan.dataflow`. The backends differ only in how a body is
represented: the Python backend names a generated function, the VM a
bytecode block.
"""

from flowc.plan.builder import Bodies, PlanError, build_plan
from flowc.plan.model import MODELS, ExecutionModel, ExecutionModelError, execution_model, runs_under
from flowc.plan.shape import NO_BODIES

__all__ = ["MODELS", "NO_BODIES", "Bodies", "ExecutionModel", "ExecutionModelError", "PlanError", "build_plan",
           "execution_model", "runs_under"]
