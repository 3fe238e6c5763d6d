"""The plan: a workflow as plain data, built from the IR once for both backends.

:mod:`flowc.plan.model` chooses the execution model from the workflow's
``DialectProfile`` (its named flags, never the dialect);
:mod:`flowc.plan.builder` builds the plan every scheduling model reads,
in one shape::

    {"model", "name", "nodes": [node...], "edges": [[source, target, kind, label]...], run-wide fields...}

A node's ``regions`` are ``[name, {"nodes", "edges"}]`` pairs: a body is
a graph of the same shape. Routing and readiness are edges by
:class:`~flowc.ir.workflow.EdgeKind` (``kind`` is its value:
``"sequence"``, ``"fallthrough"``, ``"branch"``, ``"dependency"``,
``"error"``); the schedulers index them by kind when a run loads its plan
(:mod:`flowc.runtime.plan`). What the nodes hold besides edges (the
step's body, retry, error policy, iteration, timeout) is described in
:mod:`flowc.plan.builder`. The backends differ only in how a body is
represented: the Python backend names a generated function, the VM a
bytecode block.
"""

from flowc.plan.builder import Bodies, PlanError, build_plan
from flowc.plan.model import MODELS, ExecutionModel, ExecutionModelError, execution_model, runs_under

__all__ = ["MODELS", "Bodies", "ExecutionModel", "ExecutionModelError", "PlanError", "build_plan",
           "execution_model", "runs_under"]
