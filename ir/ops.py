"""The IR's operations: what a node does, independent of dialect spelling."""

from __future__ import annotations

import attrs


@attrs.frozen
class OperationSpec:
    name: str
    meaning: str
    terminal: bool = False      # ends the run when it executes
    branching: bool = False     # chooses among BRANCH edges
    effect: bool = False        # goes through the host


OPERATIONS: dict[str, OperationSpec] = {
    s.name: s
    for s in (
        OperationSpec("call", "call the host: attrs capability and name, args from the inputs",
                      effect=True),
        OperationSpec("transform.filter", "keep the items of the input array for which `where` holds"),
        OperationSpec("transform.map", "build one object per item from the `expression` map"),
        OperationSpec("transform.sort", "stable sort of the input array by `field`, `direction`"),
        OperationSpec("branch", "evaluate `condition`; run the BRANCH edges labelled then or else",
                      branching=True),
        OperationSpec("exit", "end the run with `status` and `output`", terminal=True),
        OperationSpec("end", "the normal end of the run: resolve the workflow outputs",
                      terminal=True),
    )
}

# The id of the synthetic terminal that front ends without an explicit
# terminal node add. `$` can't start a user id in any dialect.
END_NODE_ID = "$end"


# --- instruction dialect (agentd dialect 3) ----------------------------------
# Operations the instruction front end lowers to. Shared ones (switch,
# assign, assert, sleep, foreach, parallel, race) may already have been
# registered by another front end; the first registration wins.
_INSTRUCTION_OPERATIONS = (
    OperationSpec("trigger", "a start node: fires with a payload; the run starts here"),
    OperationSpec("finish", "end the run with attrs `status`, `output`, `reason`; cancels what is "
                  "still in flight", terminal=True),
    OperationSpec("fail", "fail as an ordinary step with attrs `message`, `code` (its on_error applies)"),
    OperationSpec("noop", "complete without an effect (a join or routing point)"),
    OperationSpec("parse", "parse attr `text` in attr `format` (json, yaml, csv, lines)"),
    OperationSpec("validate", "return attr `value` if it conforms to the JSON Schema attr `schema`"),
    OperationSpec("transform.reduce", "fold attr `over` from attr `initial` with the Lambda attr `expr`"),
    OperationSpec("transform.dedupe", "drop later duplicates of attr `over` (by the optional path `by`)"),
    OperationSpec("transform.chunk", "split attr `value` into pieces of `size` (by chars, words, lines "
                  "or items) with `overlap`"),
    OperationSpec("batch", "run Region body once per group of attr `over` (grouped by `by` or `size`)"),
    OperationSpec("iterate", "run Region body repeatedly while/until a CEL condition, at most "
                  "`max_iterations` times"),
    OperationSpec("subgraph", "run Region body once; its result is its sinks"),
    OperationSpec("switch", "evaluate attr `on`; run the BRANCH edge whose label matches "
                  "(`$default` otherwise); prune the other arms", branching=True),
    OperationSpec("assign", "evaluate attr `value`; write it to run variable attr `writes` (if set) "
                  "by the reducer attr `mode`"),
    OperationSpec("assert", "fail unless attr `condition` holds, with attr `message`"),
    OperationSpec("sleep", "pause for attr `duration_ms` through host.sleep"),
    OperationSpec("foreach", "run Region body once per element of attr `over`"),
    OperationSpec("parallel", "run every Region concurrently; output keyed by region name"),
    OperationSpec("race", "run every Region; the first success wins, the others are cancelled"),
)
for _spec in _INSTRUCTION_OPERATIONS:
    OPERATIONS.setdefault(_spec.name, _spec)
del _spec


# --- aevatar -----------------------------------------------------------------
# Operations the aevatar front end lowers to, besides the shared ones above
# (switch, assign, assert, sleep, foreach, parallel, race). Composite
# primitives hold their sub-steps as Regions; their output is the
# sub-outputs joined by "\n---\n" unless stated otherwise.
_AEVATAR_OPERATIONS = (
    OperationSpec("transform.apply", "apply the pure string function named by attr `function` "
                  "(aevatar.transform.<op>, aevatar.retrieve_facts) to the input and attr `parameters`"),
    OperationSpec("while", "run Region body (one sub-step) repeatedly while the deferred attr "
                  "`condition` holds, at most `max_iterations` times; output = the last iteration's"),
    OperationSpec("map_reduce", "run Region map once per item of the input, then Region reduce (if "
                  "present) on the joined map outputs"),
    OperationSpec("cache", "return the memoised output for attr `cache_key`, else run Region child"),
    OperationSpec("reflect", "draft / critique rounds (Region round) until the critique passes or "
                  "`max_rounds`; output = the final draft"),
    OperationSpec("vote", "pick the longest of the input's \\n---\\n-separated candidates"),
)
for _spec in _AEVATAR_OPERATIONS:
    OPERATIONS.setdefault(_spec.name, _spec)
del _spec
