"""The flowc intermediate representation: one typed DAG for every dialect.

This package imports nothing else of flowc. Front ends build it, analyze
checks it, backends read it.
"""

from flowc.ir.diagnostics import Diagnostic, Severity
from flowc.ir.span import NO_SPAN, Span

__all__ = ["NO_SPAN", "Diagnostic", "Severity", "Span"]
