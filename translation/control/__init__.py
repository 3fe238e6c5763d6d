"""The control graph of a translation, shared by every target.

A workflow's scheduling model is its DialectProfile's ``scheduling`` row
(``sequential``: document order with branch arms; ``kernel``: aevatar's
step kernel; ``dataflow``: a dependency graph), never its dialect's name.
Each target names one conversion per model it reads (its ``CONVERSIONS``);
:func:`convert` picks it. A workflow that already has the target's profile
is printed as it is. Each model's control graph is read from the IR's edge
kinds once, here, for every target: :mod:`.sequence` (arms and the chain
from the entry), :mod:`.kernel` (the kernel's routes, loops cut, orders and
joins), :mod:`.dataflow` (dependencies, switch cases, what may be pruned,
the run order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from flowc.ir.semantics import DialectProfile
from flowc.ir.workflow import Workflow
from flowc.translation.report import Report

__all__ = ["Conversion", "convert", "has_profile", "scheduling_of"]

# A conversion from one scheduling model into a target's: the workflow in
# the target's semantics and shapes (lowerings and findings in the report).
Conversion = Callable[[Workflow, Report], Workflow]


def scheduling_of(wf: Workflow) -> str | None:
    """The source's scheduling model (DialectProfile.scheduling), None when unknown."""
    profile = wf.profile
    return profile.scheduling if profile is not None else None


def has_profile(wf: Workflow, profile: DialectProfile) -> bool:
    """Does ``wf`` already have ``profile``'s semantics (nothing to convert)?"""
    return wf.profile is profile


def convert(wf: Workflow, conversions: Mapping[str, Conversion], target: str, report: Report) -> Workflow:
    """``wf`` converted by the target's conversion for its scheduling model."""
    conversion = conversions.get(scheduling_of(wf) or "")
    if conversion is None:
        raise ValueError(f"no translation from {wf.semantics!r} semantics to {target}")
    return conversion(wf, report)
