"""The IR's operations: what a node does, independent of dialect spelling.

``Node.op`` is a key of :data:`OPERATIONS`. The operations several
dialects lower to are in :mod:`flowc.ir.dialects.common`, each dialect's
own in its module of :mod:`flowc.ir.dialects`; this module combines them
into one new table.
"""

from __future__ import annotations

from flowc.ir.dialects import aevatar, common, instruction, workflowskill
from flowc.ir.dialects.common import END_NODE_ID
from flowc.ir.specs import OperationSpec, merged

__all__ = ["END_NODE_ID", "OPERATIONS", "OperationSpec"]

OPERATIONS: dict[str, OperationSpec] = merged(
    common.OPERATIONS, workflowskill.OPERATIONS, instruction.OPERATIONS, aevatar.OPERATIONS)
