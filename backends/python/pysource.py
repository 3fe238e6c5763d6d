"""Python source for plain constants: the one way data from a workflow
(ids, names, strings, numbers) enters generated code.

Only the base types' own ``repr`` is used (``str.__repr__`` and so on), so a
subclass can't change what is written, and anything that is not a plain
constant is refused.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["NotAConstant", "const"]


class NotAConstant(TypeError):
    """The value is not None, a bool, an int, a float or a str."""


def const(value: Any, runtime: str | None = None) -> str:
    """Source for ``value``. Non-finite floats have no literal: they are
    ``<runtime>.NAN`` / ``<runtime>.INF`` when the generated code has a
    runtime module under that name, else ``float('nan')`` / ``float('inf')``."""
    if value is None:
        return "None"
    if value is True:
        return "True"
    if value is False:
        return "False"
    if isinstance(value, int):
        return int.__repr__(int(value))
    if isinstance(value, float):
        value = float(value)
        if math.isnan(value):
            return runtime + ".NAN" if runtime else "float('nan')"
        if math.isinf(value):
            inf = runtime + ".INF" if runtime else "float('inf')"
            return inf if value > 0 else "(-" + inf + ")"
        return float.__repr__(value)
    if isinstance(value, str):
        return str.__repr__(str(value))
    raise NotAConstant(f"not a plain constant: {type(value).__name__}")
