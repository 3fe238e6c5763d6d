"""The record types the dialect tables are made of.

Each dialect (:mod:`flowc.ir.dialects`) fills these records: its
operators, functions and operations, and its :class:`DialectProfile` of
named flags. :mod:`flowc.ir.semantics` and :mod:`flowc.ir.ops` gather
them into the tables the compiler and the backends read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

import attrs


@attrs.frozen
class OperatorSpec:
    key: str
    symbol: str
    arity: int
    meaning: str


@attrs.frozen
class FunctionSpec:
    key: str
    arity: int          # number of arguments (a method's receiver counts); -1 = variable
    lazy: bool          # some arguments are Lambdas or are evaluated conditionally
    meaning: str


@attrs.frozen
class OperationSpec:
    name: str
    meaning: str
    terminal: bool = False      # ends the run when it executes
    branching: bool = False     # chooses among BRANCH edges
    effect: bool = False        # goes through the host


@attrs.frozen
class DialectProfile:
    """A dialect's semantic choices as named flags (sqlglot-style)."""

    name: str
    eq: str
    truthiness_guard: str
    truthiness_branch: str
    truthiness_filter: str
    stringify: str
    null_vs_missing: str  # "distinct": a missing value is not null
    parameters_are_strings: bool
    number_model: str
    # The execution rows (a key of SCHEDULING, CONCURRENCY and
    # OUTPUT_RESOLUTION each; plan/model.py reads them, in one
    # place, and chooses the code generator or assembler by them).
    # When a node may start: "sequential" (document order with branches),
    # "kernel" (aevatar's step kernel), "dataflow" (ready when dependencies
    # are done, skipped or pruned).
    scheduling: str = "sequential"
    # What may run at once when a driver runs requests concurrently.
    concurrency: str = "none"
    # Where the run's outputs come from.
    output_resolution: str = "declared_outputs"
    # How a Ref path is read: "wfs" (missing is undefined), "flat_keys"
    # (aevatar dotted keys), "cel" (CEL selection: a missing key is an error).
    access: str = "wfs"
    # What an expression that fails to resolve does: "abort_run",
    # "as_text" (aevatar returns the message), "step_failure" (the step
    # fails and its on_error applies).
    resolution_errors: str = "abort_run"
    timeouts_bypass_policies: bool = False
    # How many normal terminal nodes a workflow has: "exactly_one" (wfs
    # `$end`, aevatar's last step) or "at_least_one" (instruction `finish`).
    terminal_nodes: str = "exactly_one"
    # A step no path from the entry reaches: "warning" (it never runs) or
    # "error" (instruction: an unreachable root is refused at load).
    unreachable_steps: str = "warning"
    # Control flow may loop back (aevatar routes with `next`/branches to
    # earlier steps and its engine has no cycle check); when False, a
    # control or data cycle is ANA403. A loop that never gets out is still
    # ANA404 either way.
    control_cycles_allowed: bool = False
    # A branch arm continues along its own edges (`next` or document
    # order) instead of returning to its branch node's successor.
    branch_arms_route_on: bool = False
    # `.length` of an array is its size (JavaScript), so the type checker
    # types it int instead of reporting a field of an array (ANA504).
    array_length_field: bool = False
    # Fuel (flowc.runtime.fuel: one accounting for every scheduler): the
    # dialect's step budget (a key of STEP_BUDGETS) and the step a run out
    # of fuel fails at (a key of FUEL_FAILURE_STEPS).
    step_budget: str = "none"
    fuel_failure_step: str = "running_step"
    # What a filter, map or sort step's output is: "items" (an object with
    # the list under `items`) or "whole" (the list itself: instruction).
    transform_output: str = "items"


# The values of the execution rows, with their meaning. A backend runs a
# workflow only when it implements every row of the workflow's profile.
SCHEDULING: dict[str, str] = {
    "sequential": "one step at a time in document order; a branch chooses the next step; the run ends "
                  "at the terminal node",
    "kernel": "aevatar's step loop: routing by `next`, branches, fall-through and error strategies, "
              "each step's input the previous step's output",
    "dataflow": "a node starts when every dependency is done, skipped or pruned; switches prune the "
                "arms they do not take",
}
CONCURRENCY: dict[str, str] = {
    "none": "one step at a time, whatever the driver (iterations too)",
    "composite_workers": "top-level steps one at a time; the workers of parallel, race, foreach and "
                         "map_reduce may run at once",
    "ready_nodes": "every ready node may start at once; parallel and race branches, foreach and batch "
                   "lanes too",
}
OUTPUT_RESOLUTION: dict[str, str] = {
    "declared_outputs": "the workflow's declared outputs, resolved when the run reaches its end "
                        "(an exit node gives its own output)",
    "last_output": "one output, `output`: the output of the last step that ran",
    "finish_node": "the `output` of the finish node that ended the run (none without one)",
}
# A dialect's step budget: what bounds the steps a run starts, past its
# iteration, host-call and instruction budgets (every dialect has those).
STEP_BUDGETS: dict[str, str] = {
    "none": "no step budget",
    "workflow_limit": "the workflow's `limits.steps`: a run that would start one step more fails with "
                      "`limits.steps: the run may start at most N steps`",
    "dispatches": "the engine's bound on step dispatches (10,000): a run past it fails with "
                  "`step budget exhausted (N dispatches)`",
}
# The step a run out of fuel names in its error.
FUEL_FAILURE_STEPS: dict[str, str] = {
    "running_step": "the step running (an each's or a filter's own step)",
    "innermost_step": "the innermost step running, a body's step by its path (`loop[49].sq`)",
    "top_level_step": "the top-level step being dispatched (not a sub-step or worker)",
}


V = TypeVar("V")


def merged(*tables: Mapping[str, V]) -> dict[str, V]:
    """One new table with the entries of ``tables``, in order. A key may
    appear in several only with the same value: two dialects that mean
    different things by one key would make the key ambiguous."""
    out: dict[str, V] = {}
    for table in tables:
        for key, value in table.items():
            if out.setdefault(key, value) != value:
                raise ValueError(f"{key!r} is defined twice, differently")
    return out
