"""Renaming the ids a target dialect cannot hold.

Each dialect has its own rule for step ids (WorkflowSkill: what a
``$steps.<id>`` reference can hold; dialect 3: ``[a-zA-Z_][a-zA-Z0-9_-]``,
at most 64 characters) and for other names (dialect 3's ``writes``
variables). An emitter renames an id outside its target's rule the same way
whatever the source: the characters the rule does not allow become ``_``, a
name that would not start with a letter or ``_`` gets a prefix, a name too
long is cut, and a name already taken gets the first free ``_2``, ``_3`` ...
suffix. Each renaming is a recorded lowering (``'a.b' -> 'a_b'``), so the
translation says what it changed; ids that already fit are kept as they
are, so such a translation is byte for byte what it was without renaming.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from flowc.ir.span import NO_SPAN, Span
from flowc.translation.report import Report

__all__ = ["IdRenamer"]

_START = re.compile(r"[A-Za-z_]")


class IdRenamer:
    """The target's name for each source id; ``valid`` is the target's rule,
    ``disallowed`` the characters (a regex class) replaced by ``_``."""

    def __init__(self, valid: re.Pattern, disallowed: str, report: Report, taken: Iterable[str] = (),
                 construct: str = "step id", max_len: int | None = None, prefix: str = "s_") -> None:
        self.valid = valid
        self.disallowed = re.compile(disallowed)
        self.report = report
        self.taken: set[str] = set(taken)
        self.construct = construct
        self.max_len = max_len
        self.prefix = prefix
        self.names: dict[str, str] = {}

    def fits(self, name: str) -> bool:
        return self.valid.match(name) is not None

    def rename(self, name: str, span: Span = NO_SPAN) -> str:
        """``name`` itself when it fits the rule, else its renaming (the same every time)."""
        if name not in self.names:
            new = name
            if not self.fits(name):
                new = self.disallowed.sub("_", name)
                new = new if _START.match(new) else self.prefix + new
                if self.max_len is not None:
                    new = new[:self.max_len]
                new = new if new not in self.taken else self.fresh(new)
                self.taken.add(new)
                self.report.lowered(self.construct, f"{name!r} -> {new!r}", span)
            self.names[name] = new
        return self.names[name]

    def fresh(self, base: str) -> str:
        """A name not taken yet: ``base_2``, ``base_3`` ... (cut to fit ``max_len``)."""
        for i in itertools.count(2):
            suffix = f"_{i}"
            head = base if self.max_len is None else base[:self.max_len - len(suffix)]
            name = head + suffix
            if name not in self.taken:
                self.taken.add(name)
                return name
        raise AssertionError("unreachable")
