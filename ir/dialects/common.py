"""Operations more than one dialect lowers to: the IR's base set (every
front end may call the host, branch and end) and the control operations
the instruction and aevatar front ends share."""

from __future__ import annotations

from flowc.ir.specs import OperationSpec

OPERATIONS: dict[str, OperationSpec] = {s.name: s for s in (
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
    OperationSpec("switch", "evaluate attr `on`; run the BRANCH edge whose label matches "
                  "(`$default` otherwise); prune the other arms", branching=True),
    OperationSpec("assign", "evaluate attr `value`; write it to run variable attr `writes` (if set) "
                  "by the reducer attr `mode`"),
    OperationSpec("assert", "fail unless attr `condition` holds, with attr `message`"),
    OperationSpec("sleep", "pause for attr `duration_ms` through host.sleep"),
    OperationSpec("foreach", "run Region body once per element of attr `over`"),
    OperationSpec("parallel", "run every Region concurrently; output keyed by region name"),
    OperationSpec("race", "run every Region; the first success wins, the others are cancelled"),
)}

# The id of the synthetic terminal that front ends without an explicit
# terminal node add. `$` can't start a user id in any dialect.
END_NODE_ID = "$end"
