"""The instruction target's flags: what the emitter and its conversions
assume of dialect 3, as named values."""

from __future__ import annotations

import re

from flowc.ir.semantics import INSTRUCTION

__all__ = ["CEL_FIELDS", "MAX_ID", "MAX_ITERATIONS", "PROFILE", "STEP_ID", "TARGET"]

TARGET = "instruction"
# Dataflow scheduling, CEL values (no truthiness; a missing key is an error).
PROFILE = INSTRUCTION
# A step id (and a run variable's name) dialect 3 accepts.
STEP_ID = re.compile(r"[a-zA-Z_][a-zA-Z0-9_-]{0,63}\Z")
MAX_ID = 64
MAX_ITERATIONS = 10_000
# Kind fields that are CEL whatever their prefix (compiler/instruction/frontend.py _CEL_FIELDS).
CEL_FIELDS = {
    ("assert", "condition"), ("map", "expr"), ("filter", "expr"), ("reduce", "expr"),
    ("iterate", "while"), ("iterate", "until"), ("wait", "condition"), ("think", "check"),
    ("loop", "until"), ("subscribe", "filter"), ("signal", "filter"), ("event", "filter"),
}
