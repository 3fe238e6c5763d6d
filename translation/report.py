"""What the three translation emitters share: the result of an emission and
the record of what had to be lowered or could not be expressed.

An emitter reads only the IR. Where the target dialect has the construct,
it writes it (*native*). Where it does not but an equivalent form exists,
it writes that form and records a :class:`Lowering` (*lowered*; each kind
is documented in docs/translation.md). Where no equivalent exists, it
writes the closest form with a ``# flowc:`` comment and reports a finding
(a warning, or an error with ``strict``) with the construct's source span:
the translation is then *approximate*, never silently different.
"""

from __future__ import annotations

import attrs
from flowc.ir.diagnostics import Diagnostic, Severity
from flowc.ir.span import NO_SPAN, Span

__all__ = ["TARGETS", "Emission", "Lowering", "Report", "Untranslatable"]

TARGETS = ("workflowskill", "aevatar", "instruction")


@attrs.frozen
class Lowering:
    """One construct written in another form the target has (same meaning)."""

    construct: str      # short name, e.g. "parallel", "wfs.contains", "while"
    how: str            # what it became
    span: Span = NO_SPAN


@attrs.frozen
class Emission:
    """An emitted document, the findings, and the lowerings applied."""

    text: str
    diagnostics: tuple[Diagnostic, ...] = ()
    lowerings: tuple[Lowering, ...] = ()

    @property
    def verdict(self) -> str:
        """``native``, ``lowered`` or ``approximate`` (some finding)."""
        if any(d.code.startswith("TRN") and d.severity is not Severity.NOTE for d in self.diagnostics):
            return "approximate"
        return "lowered" if self.lowerings else "native"

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


class Untranslatable(Exception):
    """An expression or value the target cannot write (raised inside an
    emitter; the emitter turns it into a finding and a closest form)."""

    def __init__(self, message: str, span: Span = NO_SPAN) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


class Report:
    """Collects the findings and lowerings of one emission."""

    def __init__(self, target: str, strict: bool = False) -> None:
        self.target = target
        self.strict = strict
        self.diagnostics: list[Diagnostic] = []
        self.lowerings: list[Lowering] = []
        self._seen: set[tuple] = set()
        # Comment lines to write above a node (by node id; "" for the
        # document) in the output, and the node being translated, whose
        # findings become comments on it.
        self.comments: dict[str, list[str]] = {}
        self.current: str = ""

    def lowered(self, construct: str, how: str, span: Span = NO_SPAN) -> None:
        self.lowerings.append(Lowering(construct, how, span))

    def finding(self, code: str, message: str, span: Span = NO_SPAN, *notes: str) -> str:
        """Report a construct the target cannot express; returns the comment
        text to put next to the closest form."""
        key = (code, message, span)
        if key not in self._seen:
            self._seen.add(key)
            severity = Severity.ERROR if self.strict else Severity.WARNING
            self.diagnostics.append(Diagnostic(code, severity, message, span, tuple(notes)))
        text = f"flowc {code}: {message}"
        self.comment(self.current, text)
        return text

    def comment(self, node_id: str, text: str) -> None:
        lines = self.comments.setdefault(node_id, [])
        if text not in lines:
            lines.append(text)

    def note(self, code: str, message: str, span: Span = NO_SPAN) -> None:
        """Something worth knowing that changes nothing (not a finding)."""
        key = (code, message, span)
        if key not in self._seen:
            self._seen.add(key)
            self.diagnostics.append(Diagnostic(code, Severity.NOTE, message, span))

    def result(self, text: str) -> Emission:
        diags = sorted(self.diagnostics, key=Diagnostic.sort_key)
        return Emission(text, tuple(diags), tuple(self.lowerings))
