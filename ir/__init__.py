"""The flowc intermediate representation: one typed DAG for every dialect.

This package imports nothing else of flowc. Front ends build it, analyze
checks it, backends read it.
"""

from flowc.ir.span import Span, NO_SPAN
from flowc.ir.diagnostics import Diagnostic, Severity

__all__ = ["Span", "NO_SPAN", "Diagnostic", "Severity"]
