"""Run a compiled workflow against the host of a config, from a command line.

:func:`run_with_config` starts the providers, runs the program with the
asyncio driver (``program.run_async``: every program of both backends has
one), and stops the providers, also when the run is interrupted: Ctrl-C cancels
the run, the servers are stopped, and the record so far is returned with
status ``interrupted``.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from flowc.hosts.router import RouterHost

__all__ = ["interrupted_record", "run_with_config"]


def run_with_config(program: Any, inputs: dict, host: RouterHost, budgets: dict) -> tuple[dict, bool]:
    """``(record, interrupted)``: the run's record, or the record of what it
    did before Ctrl-C (servers stopped in both cases)."""
    return asyncio.run(_main(program, inputs, host, budgets))


async def _main(program: Any, inputs: dict, host: RouterHost, budgets: dict) -> tuple[dict, bool]:
    try:
        async with host:
            return await run_on(program, inputs, host, budgets), False
    except asyncio.CancelledError:
        # Ctrl-C: asyncio.run cancelled this task; `async with` has stopped the
        # servers. Returning (not raising) lets the command print the record.
        return interrupted_record(host), True


async def run_on(program: Any, inputs: dict, host: Any, budgets: dict) -> dict:
    """The record of ``program`` run on ``host`` by the asyncio driver."""
    return await program.run_async(inputs, host, **budgets)


def interrupted_record(host: RouterHost) -> dict:
    """The record of an interrupted run: the calls it made, those still in
    flight when it stopped, no outputs."""
    calls = [{"capability": c["capability"], "name": c["name"], "args": c["args"]} for c in host.log]
    waiting = [{"capability": c["capability"], "name": c["name"]} for c in host.log
               if c["outcome"] in ("pending", "cancelled")]
    return {"status": "interrupted", "outputs": {}, "error": {"message": "interrupted", "step": None},
            "steps": [], "calls": calls, "sleeps_ms": [], "in_flight": waiting}


def configured_main(run: Any):
    """The ``--config``/``--mcp-config`` hook of a generated module's command
    line (:func:`flowc.host.script_main`): runs the module's ``run_async``
    against the config's providers, prints the record as JSON, and gives the
    exit status (130 after Ctrl-C, with the record so far)."""

    def configured(config: str | None, mcp_config: str | None, inputs: dict, trigger: str | None,
                   budgets: dict, success: str) -> int:
        from flowc.host import HostError, run_and_print
        from flowc.hosts.config import ConfigError, load_host_config

        module = sys.modules[run.__module__]
        program = _ModuleProgram(module.run_async, trigger)
        try:
            host = RouterHost(load_host_config(config, mcp_config))
            record, interrupted = run_with_config(program, inputs, host, budgets)
        except ConfigError as exc:
            print("error: " + _one_line(str(exc)), file=sys.stderr)
            return 2
        except HostError as exc:   # a server that did not start
            print("error: " + _one_line(str(exc)), file=sys.stderr)
            return 1
        status = run_and_print(lambda: record, (success,), "error: ")
        return 130 if interrupted else status

    return configured


def module_main(run: Any, argv: list[str] | None = None, *, success: str = "success",
                triggers: bool = False) -> int:
    """The ``__main__`` of a generated module: :func:`flowc.host.script_main`
    with the ``--config``/``--mcp-config`` hook (the runtime a module imports
    knows nothing of flowc's hosts)."""
    from flowc.host import script_main

    return script_main(run, argv, success=success, triggers=triggers, configured=configured_main(run))


class _ModuleProgram:
    """A generated module's ``run_async`` with its trigger bound."""

    def __init__(self, run_async: Any, trigger: str | None) -> None:
        self._run_async, self._trigger = run_async, trigger

    def run_async(self, inputs: dict, host: Any, **budgets: Any) -> Any:
        extra = {"trigger": self._trigger} if self._trigger is not None else {}
        return self._run_async(inputs, host, **extra, **budgets)


def _one_line(text: str) -> str:
    from flowc.termtext import shown

    return shown(" ".join(text.split()))
