"""``flowc resume``: rebuild a journaled run from its journal and go on (docs/durable.md)."""

from __future__ import annotations


def add_parser(sub) -> None:
    res = sub.add_parser("resume", help="rebuild a journaled run from its journal and go on")
    res.add_argument("run_id", metavar="RUN_ID")
    res.add_argument("path", nargs="?", metavar="WORKFLOW", help="the workflow file (default: the run's own)")
    res.add_argument("--journal", metavar="DB", required=True, help="the journal (SQLite file)")
    res.add_argument("--host", metavar="FILE", help="host script, JSON (see docs/host.md; default: {})")
    res.add_argument("--config", metavar="FILE", help="host config, TOML (docs/hosts.md), as for flowc run")
    res.add_argument("--mcp-config", metavar="FILE", help="MCP servers, JSON, as for flowc run")
    res.add_argument("--json", action="store_true", help="print the run record as one JSON object")
    res.add_argument("--in-flight", choices=("again", "fail"), default="again",
                     help="a call sent and never answered before the run stopped: send it again "
                          "(default; the host gets the same idempotency key) or stop")
    res.add_argument("--trace", metavar="FILE", help="write the events of this resume (steps, host calls) to "
                                                     "FILE, as flowc run --trace (docs/durable.md)")
    res.add_argument("--trace-values", action="store_true", help="with --trace: also the calls' arguments "
                                                                 "and results (credentials redacted)")
    res.add_argument("--progress", action="store_true", help="show the steps and host calls live (on a terminal; needs rich)")
    res.set_defaults(func=run)


def run(args) -> int:
    from flowc.cli.journaled import resume

    return resume(args)
