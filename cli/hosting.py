"""Runs against real tools: the host of ``--config``/``--mcp-config``
(docs/hosts.md), started for the run and stopped after it."""

from __future__ import annotations

import sys

from flowc.cli.exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE


def configured_host(args):
    """The host of ``--config``/``--mcp-config`` (not started); ValueError for a bad config."""
    from flowc.hosts.config import load_host_config
    from flowc.hosts.router import RouterHost

    return RouterHost(load_host_config(args.config, args.mcp_config))


def run_configured(program, inputs: dict, host, budgets: dict, show) -> int:
    """Run against the host config's providers (asyncio driver); Ctrl-C prints
    the record so far and exits 130. ``show`` prints the record (None: as JSON)."""
    from flowc.host import HostError, run_and_print
    from flowc.hosts.config import ConfigError
    from flowc.hosts.runner import run_with_config
    from flowc.termtext import shown

    outcome: list = []
    crash: list = []
    try:
        outcome.extend(run_with_config(program, inputs, host, budgets))
    except ConfigError as exc:   # found when the providers start (a variable not set, a route)
        print(shown(f"flowc: error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except HostError as exc:     # a server that did not start
        print(shown(f"flowc: error: {exc}"), file=sys.stderr)
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - run_and_print reports the run's own crash in one line
        crash.append(exc)

    def start() -> dict:
        if crash:
            raise crash[0]
        return outcome[0]

    status = run_and_print(start, ("success", "completed"), "flowc: error: ", show=show)
    if outcome and outcome[1]:
        print("flowc: interrupted: the servers were stopped; the record above holds the calls made so far",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    return status
