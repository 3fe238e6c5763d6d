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
