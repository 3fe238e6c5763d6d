"""'Did you mean' suggestions for misspelt keys, types and ids."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """A note suggesting the closest candidate, or None."""
    if not isinstance(word, str):
        return None
    matches = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f'did you mean "{matches[0]}"?' if matches else None
