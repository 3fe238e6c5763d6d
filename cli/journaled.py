"""Journaled runs on the command line (docs/durable.md): `flowc run
--journal` begins one, `flowc resume` rebuilds one from its journal and
goes on."""

from __future__ import annotations

import asyncio
import inspect
import sys
from typing import Any

from flowc import journal
from flowc.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from flowc.cli.hosting import configured_host
from flowc.cli.options import budgets_of
from flowc.cli.programs import load_program
from flowc.cli.record import print_record
from flowc.cli.watch import watching
from flowc.host import load_host_script, write_json


def _err(message: str) -> None:
    from flowc.termtext import shown

    print(shown(f"flowc: error: {message}"), file=sys.stderr)


def _source_hash(path: str, dialect: str | None, workflow_name: str | None) -> str | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return journal.workflow_hash(data, dialect or "", workflow_name or "")


def _factory(program: Any, inputs: dict, budgets: dict, concurrent: bool):
    """``new_run`` bound to the run's inputs and budgets (None: the program
    does not run on the kernel). Under asyncio a run is concurrent when its
    program can be (as ``run_async``)."""
    new_run = getattr(program, "new_run", None)
    if new_run is None:
        return None
    extra = dict(budgets)
    if concurrent and "concurrent" in inspect.signature(new_run).parameters:
        extra["concurrent"] = True
    return lambda: new_run(dict(inputs), **extra)


def _report(outcome: journal.Outcome, resumed: bool) -> None:
    for note in outcome.notes:
        print(f"flowc: journal: {note}", file=sys.stderr)
    if resumed:
        print(f"flowc: resumed run {outcome.run_id}: {outcome.replayed} answers replayed from the journal",
              file=sys.stderr)
    for rep in outcome.repeated:
        print(f"flowc: sent again (in flight when the run stopped): request {rep['request']} "
              f"{rep['capability']} {rep['name']!r}", file=sys.stderr)


def _finish(outcome: journal.Outcome, args: Any, resumed: bool) -> int:
    _report(outcome, resumed)
    record = outcome.record
    if outcome.repeated:   # calls in flight when the run stopped, sent again by this resume
        record = {**record, "repeated": outcome.repeated}
    if args.json:
        write_json(record)
    else:
        print_record(record)
    return EXIT_OK if record["status"] in ("success", "completed") else EXIT_FAILED


def _go(store, run_id: str, factory, host, args, whash: str | None, resumed: bool, driver: str,
        managed: bool):
    """The outcome of the run, with the sync driver or (a configured host,
    whose calls are coroutines, or a run begun so) the asyncio one."""
    if driver == "sync":
        if resumed:
            return journal.resume(store, run_id, factory, host, workflow_hash=whash, in_flight=args.in_flight)
        return journal.drive(store, run_id, factory, host, in_flight=args.in_flight)

    async def main():
        if resumed:
            go = journal.resume_async(store, run_id, factory, host, workflow_hash=whash, in_flight=args.in_flight)
        else:
            go = journal.drive_async(store, run_id, factory, host, in_flight=args.in_flight)
        if managed:  # a configured host: its servers run for the run
            async with host:
                return await go
        return await go
    return asyncio.run(main())


def _drive(store, run_id: str, factory, host, args, whash: str | None, resumed: bool,
           driver: str, workflow_path: str) -> int:
    # --trace/--progress: the journaling driver tells the observed host what
    # the run does (a resume's trace starts where the resume starts)
    managed = hasattr(host, "__aenter__")  # asked before a trace wraps it (the wrapper always has one)
    watched = watching(args, host, workflow_path)
    if watched is None:
        return EXIT_USAGE
    host, end = watched
    record = None
    try:
        outcome = _go(store, run_id, factory, host, args, whash, resumed, driver, managed)
        record = outcome.record
    except journal.InFlight as exc:
        _err(str(exc))
        return EXIT_FAILED
    except journal.JournalError as exc:
        _err(str(exc))
        return EXIT_USAGE
    finally:
        end(record)
    return _finish(outcome, args, resumed)


def run_journaled(args: Any, db: str, host: Any, inputs: dict) -> int:
    """``flowc run W --journal DB`` (or a durable workflow under a host config
    that names a journal): a new journaled run; prints its id first."""
    budgets = budgets_of(args)
    program, status = load_program(args.path, args.dialect, args.backend, args.workflow)
    if program is None:
        return status
    driver = "async" if hasattr(host, "__aenter__") else "sync"
    factory = _factory(program, inputs, budgets, driver == "async")
    if factory is None:
        _err("a journaled run needs a program on the kernel; this one has no new_run")
        return EXIT_USAGE
    whash = _source_hash(args.path, args.dialect, args.workflow)
    options = {"backend": args.backend, "dialect": args.dialect, "workflow_name": args.workflow,
               "budgets": budgets, "driver": driver}
    try:
        store = journal.open_journal(db)
        run_id = journal.begin(store, workflow=args.path, workflow_hash=whash, inputs=inputs, options=options)
    except journal.JournalError as exc:
        _err(str(exc))
        return EXIT_USAGE
    print(f"flowc: run {run_id} (journal {db})", file=sys.stderr, flush=True)
    return _drive(store, run_id, factory, host, args, whash, False, driver, args.path)


def resume(args: Any) -> int:
    """``flowc resume RUN_ID --journal DB``: rebuild the run from its journal and go on."""
    try:
        store = journal.open_journal(args.journal)
        store.check()
        info = store.run_info(args.run_id)
    except journal.JournalError as exc:
        _err(str(exc))
        return EXIT_USAGE
    configured = bool(getattr(args, "config", None) or getattr(args, "mcp_config", None))
    if configured and args.host:
        _err("--host (a scripted host) and --config/--mcp-config (real tools) exclude each other")
        return EXIT_USAGE
    try:
        host = configured_host(args) if configured else load_host_script(args.host)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USAGE
    opts = info["options"]
    path = args.path or info["workflow"]
    program, status = load_program(path, opts.get("dialect"), opts.get("backend", "python"),
                                       opts.get("workflow_name"))
    if program is None:
        return status
    whash = _source_hash(path, opts.get("dialect"), opts.get("workflow_name"))
    # the driver the run began with: replay gives answers in the order that driver gave them
    driver = opts.get("driver", "sync")
    if driver == "sync" and hasattr(host, "__aenter__"):
        _err(f"run {args.run_id} began with a scripted host (the sync driver); resume it with --host")
        return EXIT_USAGE
    factory = _factory(program, info["inputs"], opts.get("budgets") or {}, driver == "async")
    if factory is None:
        _err("this program does not run on the kernel, so it cannot be resumed")
        return EXIT_USAGE
    return _drive(store, args.run_id, factory, host, args, whash, True, driver, path)
