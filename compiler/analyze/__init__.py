"""analyze: the dialect-independent checks every workflow goes through.

Structure (ids, edges, reachability, cycles, the single terminal, caps)
and wiring types. Every finding has a stable code, a severity and a span;
all findings are reported, not just the first.
"""

from flowc.compiler.analyze.limits import check_limits
from flowc.compiler.analyze.structure import check_structure
from flowc.compiler.analyze.typecheck import check_types
from flowc.ir.diagnostics import Diagnostic
from flowc.ir.workflow import Workflow


def analyze(workflow: Workflow) -> list[Diagnostic]:
    limits = check_limits(workflow)
    if any(d.is_error for d in limits):
        # The other checks walk every expression; one beyond the limits is
        # not walked any further (nor compiled).
        return limits
    findings = check_structure(workflow)
    findings.extend(check_types(workflow))
    return findings


__all__ = ["analyze"]
