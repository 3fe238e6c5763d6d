"""Findings: what a pass reports about a workflow, each with a code and span."""

from __future__ import annotations

import enum

import attrs
from flowc.ir.span import NO_SPAN, Span


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@attrs.frozen
class Diagnostic:
    code: str
    severity: Severity
    message: str
    span: Span = NO_SPAN
    # Optional follow-up lines ("did you mean ...", "declared here").
    notes: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def as_json(self) -> dict:
        s = self.span
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "file": s.file,
            "line": s.line,
            "col": s.col,
            "end_line": s.end_line,
            "end_col": s.end_col,
        }

    def sort_key(self) -> tuple:
        s = self.span
        return (s.file, s.line, s.col, self.code, self.message)


def error(code: str, message: str, span: Span = NO_SPAN, *notes: str) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, span, tuple(notes))


def warning(code: str, message: str, span: Span = NO_SPAN, *notes: str) -> Diagnostic:
    return Diagnostic(code, Severity.WARNING, message, span, tuple(notes))


class DiagnosticSink:
    """Collects findings so a pass can report all of them, not just the first."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def add(self, diag: Diagnostic) -> None:
        self.items.append(diag)

    def error(self, code: str, message: str, span: Span = NO_SPAN, *notes: str) -> None:
        self.items.append(error(code, message, span, *notes))

    def warning(self, code: str, message: str, span: Span = NO_SPAN, *notes: str) -> None:
        self.items.append(warning(code, message, span, *notes))

    def extend(self, diags) -> None:
        self.items.extend(diags)

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        return sorted(self.items, key=Diagnostic.sort_key)
