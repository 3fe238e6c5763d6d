"""Durable workflows (``durable: true``) on the command line: which journal
a run gets, and the INS402 warning when there is none (docs/durable.md)."""

from __future__ import annotations

import sys


def is_durable(workflow) -> bool:
    return (workflow.metadata or {}).get("durable") is True


def journal_for(args, workflow, configured_host) -> str | None:
    """The journal of this run: --journal, else the host config's `journal`
    when the workflow is durable; None: no journal."""
    if args.journal:
        return args.journal
    config = getattr(configured_host, "config", None)
    if is_durable(workflow) and getattr(config, "journal", None):
        return config.journal
    return None


def durable_findings(workflow, table) -> list:
    """`flowc check --config`: a durable workflow whose host config names no journal (INS402)."""
    if not is_durable(workflow) or getattr(table.config, "journal", None):
        return []
    from flowc.ir.diagnostics import warning

    return [warning("INS402", f"workflow {workflow.name!r} is durable (`durable: true`) but the host config "
                    "names no journal: a crash loses its runs", workflow.span,
                    "add `journal = \"runs.db\"` to the host config, or run with --journal FILE")]


def warn_durable(workflow, path: str) -> None:
    """A workflow that asks to be durable, run without a journal: INS402."""
    if is_durable(workflow):
        from flowc.cli import reporting
        from flowc.ir.diagnostics import warning

        print(reporting.render_text(warning("INS402", "the workflow is durable (`durable: true`) but runs "
                                            "without a journal: a crash loses the run", workflow.span,
                                            "give --journal FILE (docs/durable.md)"), None), file=sys.stderr)
