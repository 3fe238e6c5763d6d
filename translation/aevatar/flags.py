"""The aevatar target's flags: what the emitter and its conversions assume
of aevatar, as named values."""

from __future__ import annotations

from flowc.ir.semantics import AEVATAR

__all__ = ["PROFILE", "TARGET"]

TARGET = "aevatar"
# Kernel scheduling, every value a string, a missing variable is blank text.
PROFILE = AEVATAR
