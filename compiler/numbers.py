"""Numbers from hostile text, without exceptions or bignums.

Python's ``int()`` refuses digit strings longer than 4,300 characters and
``int(float)`` refuses infinities; both are reachable from a workflow, so
the front ends read numbers of bounded fields through these helpers: digits
are counted before they are converted, and an out-of-range number becomes
a finding (``LIM103``..``LIM106``) with the span of the text that holds it.
"""

from __future__ import annotations

import math

__all__ = ["bounded_digits", "shown"]

_SHOWN = 24


def shown(text: str) -> str:
    """A number's source text for a message, shortened when it is long."""
    if len(text) <= _SHOWN:
        return text
    return f"{text[:12]}… ({len(text)} characters)"


def bounded_digits(digits: str, limit: int) -> int | None:
    """The value of a string of ASCII decimal digits when it is at most
    ``limit``, else None. Leading zeros are skipped before counting, so the
    conversion never sees more digits than ``limit`` has."""
    significant = digits.lstrip("0")
    if len(significant) > len(str(limit)):
        return None
    value = int(significant or "0")
    return value if value <= limit else None


def as_count(value) -> int | float | None:
    """A YAML number as a count to compare with a limit: ints as they are,
    finite and infinite floats as they are (a float beyond a limit is still
    beyond it); anything else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
