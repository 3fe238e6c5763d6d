"""``flowc check``: check workflows and report every finding."""

from __future__ import annotations

import argparse
import os
import sys
import time

from flowc.cli.exits import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from flowc.cli.options import DIALECTS, cluster_options
from flowc.cli.output import usage_error

_IMPORTED = time.perf_counter()  # python -m flowc and the flowc script import the command line first


def add_parser(sub) -> None:
    check = sub.add_parser("check", help="check workflows and report every finding")
    check.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    check.add_argument("--dialect", choices=DIALECTS)
    check.add_argument("--format", choices=("text", "json", "sarif"), default="text",
                       help="text for people (default), json, or sarif for code-scanning dashboards")
    check.add_argument("-j", "--jobs", type=int, metavar="N",
                       help="check on N processes (0 = every core; default: 1, or every core "
                            "for 64 files or more)")
    check.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="show progress on stderr (default: when stderr is a terminal)")
    check.add_argument("--host-capabilities", metavar="FILE",
                       help="instruction dialect: a JSON list of the node kinds the target host "
                            "supports (or {\"host\": name, \"kinds\": [...]}); steps of other kinds "
                            "are reported (INS401)")
    check.add_argument("--strict", action="store_true",
                       help="the dialect's strictest validation (aevatar: extension primitives and "
                            "keys of the newer engine generation only are errors)")
    check.add_argument("--workflows-from", action="append", default=[], metavar="PATH",
                       help="aevatar: a file or directory of workflows that a workflow_call may name "
                            "(repeatable); with it, a call to any other workflow is an error (AEV138). "
                            "The aevatar files being checked are in the registry too")
    check.add_argument("--config", metavar="FILE",
                       help="host config, TOML (docs/hosts.md): every host call a workflow makes must be "
                            "granted by it (HST001, HST002); MCP servers without a `tools` list are "
                            "started to list their tools")
    check.add_argument("--mcp-config", metavar="FILE",
                       help="MCP servers as MCP clients write them, JSON ({\"mcpServers\": {...}}), for "
                            "the same check")
    cluster_options(check, "check")
    check.set_defaults(func=run)


def seconds_since_start() -> float:
    """Wall-clock seconds since this process started, interpreter start-up
    and imports included (what the user waited): from /proc where there is
    one, else since the command line was imported."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return time.perf_counter() - _IMPORTED


def run(args) -> int:
    from flowc.pipeline import batch, driver

    files = driver.expand_paths(args.paths)
    show_progress = sys.stderr.isatty() if args.progress is None else args.progress
    context = _context(args, files)
    if context is None:
        return EXIT_USAGE
    caps, table, registry = context
    if args.workers is not None or args.scheduler:
        from flowc.cluster.checkcmd import check_on_cluster

        results = check_on_cluster(args, files, batch.Progress() if show_progress else None, registry)
        if results is None:
            return EXIT_USAGE
    else:
        results = batch.check_files(files, args.dialect, args.jobs,
                                    batch.Progress() if show_progress else None, strict=args.strict,
                                    known_workflows=registry)
    return _report(args, files, results, caps, table)


def _context(args, files: list[str]) -> tuple | None:
    """What the options add to the check: (host capabilities, host config
    route table, aevatar workflow registry), each None when not asked
    for; None after reporting a usage error."""
    from flowc.pipeline import driver

    caps = None
    if getattr(args, "host_capabilities", None):
        from flowc.compiler.instruction.capabilities import load_capabilities

        try:
            caps = load_capabilities(args.host_capabilities)
        except ValueError as exc:
            usage_error(f"--host-capabilities: {exc}")  # quotes the file
            return None
    table = None
    if getattr(args, "config", None) or getattr(args, "mcp_config", None):
        from flowc.host import HostError
        from flowc.hosts.check import route_table

        try:
            table = route_table(args.config, args.mcp_config)
        except (ValueError, HostError) as exc:   # a bad config, a server that did not start
            usage_error(str(exc))
            return None
    registry = None
    if getattr(args, "workflows_from", None):
        registry, problem = driver.workflow_registry(args.workflows_from, files, args.dialect)
        if problem is not None:
            print(f"flowc: error: --workflows-from: {problem}", file=sys.stderr)
            return None
    return caps, table, registry


def _report(args, files: list[str], results, caps, table) -> int:
    """Print every finding (text, JSON or SARIF) and pick the exit status."""
    from flowc import __version__
    from flowc.cli import reporting

    all_diags = []
    sources: dict[str, str] = {}
    io_error = False
    for result in results:
        if result.text is None:
            io_error = True
        else:
            sources[result.path] = result.text
        all_diags.extend(result.diagnostics)
        if result.text is not None:
            all_diags.extend(_host_findings(args, result, caps, table))
    errors = sum(d.is_error for d in all_diags)
    warnings = len(all_diags) - errors
    if args.format == "json":
        print(reporting.render_json(all_diags))
    elif args.format == "sarif":
        print(reporting.render_sarif(all_diags, __version__))
    else:
        if all_diags:
            print(reporting.render_all_text(all_diags, sources))
        print(reporting.summary(len(files), errors, warnings, seconds_since_start()), file=sys.stderr)
    if io_error and errors == sum(1 for d in all_diags if d.code == "FLC003"):
        return EXIT_USAGE
    return EXIT_FINDINGS if errors else EXIT_OK


def _host_findings(args, result, caps, table) -> list:
    """INS401 (--host-capabilities) and HST/INS402 (--config) findings of one file."""
    from flowc.pipeline import driver, frontends

    found = []
    if caps is not None:
        front_end = frontends.by_name(args.dialect or driver.detect_dialect(result.text, result.path))
        if front_end is not None and front_end.check_host is not None:
            found.extend(front_end.check_host(result.text, result.path, caps))
    if table is not None:
        found.extend(_config_findings(result.text, result.path, args.dialect, table))
    return found


def _config_findings(text: str, path: str, dialect: str | None, table) -> list:
    """HST findings: the host calls of every workflow of the file that ``table`` does not grant."""
    from flowc.cli.durable import durable_findings
    from flowc.hosts.check import check_calls
    from flowc.pipeline import driver, frontends

    dialect = dialect or driver.detect_dialect(text, path)
    front_end = frontends.by_name(dialect)
    if front_end is not None and front_end.compile_all is not None:
        workflows, _ = front_end.compile_all(text, path)
    else:
        result = driver.compile_text(text, path, dialect)
        workflows = [result.workflow] if result.workflow is not None else []
    return [d for wf in workflows for d in [*check_calls(wf, table), *durable_findings(wf, table)]]
