"""The WorkflowSkill target's flags: what the emitter and its conversions
assume of WorkflowSkill, as named values."""

from __future__ import annotations

import re

from flowc.ir.semantics import WORKFLOWSKILL

__all__ = ["ID_DISALLOWED", "PROFILE", "STEP_ID", "TARGET"]

TARGET = "workflowskill"
# Sequential scheduling, JavaScript values and comparisons.
PROFILE = WORKFLOWSKILL
# A step id a `$steps.<id>` reference can hold, and what a renaming replaces.
STEP_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
ID_DISALLOWED = r"[^A-Za-z0-9_]"
