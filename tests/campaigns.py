"""How big the long campaigns of the test suite run.

CI runs every campaign at its bounded size; ``FLOWC_SLOW_TESTS=1`` runs the
full one (the size a release is checked with).
"""

from __future__ import annotations

import os


def campaign_size(full: int, bounded: int) -> int:
    """``full`` with FLOWC_SLOW_TESTS=1, else ``bounded``."""
    return full if os.environ.get("FLOWC_SLOW_TESTS") == "1" else bounded
