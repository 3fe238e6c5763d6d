"""Run a compiled workflow against the host of a config, from a command line.

:func:`run_with_config` starts the providers, runs the program with the
asyncio driver (``program.run_async``; a program without one, WorkflowSkill
bytecode, runs on a worker thread whose host calls hop to the event loop),
and stops the providers, also when the run is interrupted: Ctrl-C cancels
the run, the servers are stopped, and the record so far is returned with
status ``interrupted``.
"""

from __future__ import annotations

import asyncio
import sys
import time
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
    run_async = getattr(program, "run_async", None)
    if callable(run_async):
        return await run_async(inputs, host, **budgets)
    bridge = _ThreadHost(host, asyncio.get_running_loop())
    return await asyncio.to_thread(program.run, inputs, bridge, **budgets)


class _ThreadHost:
    """A synchronous host for a run on a worker thread: each call runs on the loop."""

    def __init__(self, host: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.host, self.loop = host, loop

    def call(self, capability: str, name: str, args: dict) -> Any:
        return asyncio.run_coroutine_threadsafe(self.host.call(capability, name, args), self.loop).result()

    def sleep(self, ms: float) -> None:
        time.sleep(ms / 1000)


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

        module = sys.modules.get(getattr(run, "__module__", ""), None)
        program = _ModuleProgram(run, getattr(module, "run_async", None), trigger)
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


class _ModuleProgram:
    """A generated module's ``run``/``run_async`` with its trigger bound."""

    def __init__(self, run: Any, run_async: Any, trigger: str | None) -> None:
        self._run, self._run_async, self._trigger = run, run_async, trigger
        # WorkflowSkill bytecode has no run_async: run_on then uses run on a thread
        self.run_async = self._call_async if run_async is not None else None

    def _extra(self) -> dict:
        return {"trigger": self._trigger} if self._trigger is not None else {}

    def run(self, inputs: dict, host: Any, **budgets: Any) -> dict:
        return self._run(inputs, host, **self._extra(), **budgets)

    def _call_async(self, inputs: dict, host: Any, **budgets: Any) -> Any:
        return self._run_async(inputs, host, **self._extra(), **budgets)


def _one_line(text: str) -> str:
    from flowc.termtext import shown

    return shown(" ".join(text.split()))
