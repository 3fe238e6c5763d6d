"""Durable runs: a journal of host answers that survives crashes (docs/durable.md).

flowc's kernel is deterministic and sans-I/O, so the journal of a run's
host requests and answers rebuilds it exactly. ::

    from flowc import journal

    store = journal.open_journal("runs.db")
    run_id = journal.begin(store, workflow="deploy.yaml", workflow_hash=h, inputs=inputs)
    outcome = journal.drive(store, run_id, lambda: module.new_run(inputs), host)
    # ... the process dies; later, in another one:
    outcome = journal.resume(store, run_id, lambda: module.new_run(inputs), host, workflow_hash=h)
    outcome.record, outcome.repeated

``new_run`` is any zero-argument callable that gives a fresh, unstarted run
with the kernel's protocol (every generated module and VM program has
``new_run(inputs, ...)``). Hosts whose ``call`` takes the keyword
``idempotency_key`` receive ``"<run id>:<request id>"`` on every call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from flowc.journal.driver import AGAIN, FAIL, InFlight, Session, takes_key
from flowc.journal.driver import drive_async as _drive_async
from flowc.journal.driver import drive_sync as _drive_sync
from flowc.journal.store import RESUME, RUNNING, STOPPED, JournalError, Store

__all__ = ["AGAIN", "FAIL", "InFlight", "JournalError", "Outcome", "Store", "begin", "drive",
           "drive_async", "open_journal", "resume", "resume_async", "takes_key", "workflow_hash"]


class Outcome:
    """What a journaled drive gave: the record (None when ``max_answers``
    stopped it first), the requests sent again because they were in flight
    at the crash, and what was repaired in a damaged journal."""

    def __init__(self, run_id: str, record: dict | None, repeated: list[dict], notes: list[str],
                 replayed: int) -> None:
        self.run_id = run_id
        self.record = record
        self.repeated = repeated
        self.notes = notes
        self.replayed = replayed

    @property
    def finished(self) -> bool:
        return self.record is not None


def open_journal(path: str, synchronous: str = "FULL") -> Store:
    """The journal file at ``path`` (created if need be). ``synchronous``:
    FULL (default) fsyncs every entry; NORMAL survives process crashes only."""
    return Store(path, synchronous)


def workflow_hash(source: str | bytes, *parts: str) -> str:
    """SHA-256 of the workflow's source and whatever else picks the program
    (the dialect, the workflow's name in a document that holds several)."""
    h = hashlib.sha256(source.encode("utf-8") if isinstance(source, str) else source)
    for part in parts:
        h.update(b"\x00" + (part or "").encode("utf-8"))
    return h.hexdigest()


def begin(store: Store, *, workflow: str, workflow_hash: str, inputs: dict, options: dict | None = None,
          run_id: str | None = None) -> str:
    """Record a new run (its workflow, hash, inputs, options and wall-clock start); its id."""
    return store.new_run(workflow, workflow_hash, inputs, options or {}, run_id)


def _check_hash(store: Store, run_id: str, workflow_hash: str | None) -> dict:
    info = store.run_info(run_id)
    if workflow_hash is not None and workflow_hash != info["workflow_hash"]:
        raise JournalError(f"run {run_id} was started with another version of {info['workflow']} (hash "
                           f"{info['workflow_hash'][:12]}, now {workflow_hash[:12]}); resuming it would not "
                           "replay the same run, so it is refused")
    return info


def _finish(store: Store, session: Session, record: dict | None, replayed: int) -> Outcome:
    if record is not None:
        store.set_status(session.run_id, str(record.get("status")), record)
    return Outcome(session.run_id, record, session.repeated, session.notes, replayed)


def _stored(info: dict) -> Outcome:
    return Outcome(info["run_id"], info["record"], [], ["the run had already finished"], 0)


def drive(store: Store, run_id: str, new_run: Callable[[], Any], host: Any, *, in_flight: str = AGAIN,
          max_answers: int | None = None, _resuming: bool = False) -> Outcome:
    """Drive run ``run_id`` with the sync driver: replay what its journal
    holds, then go on with ``host``. ``max_answers`` stops after that many
    new answers (the run stays resumable)."""
    session = Session(store, run_id, in_flight, max_answers)
    if _resuming:
        store.append(run_id, RESUME, None, {"replaying": len(session.answers)})
    try:
        record = _drive_sync(new_run(), host, session)
    except InFlight:
        store.set_status(run_id, STOPPED)
        raise
    return _finish(store, session, record, len(session.answers))


async def drive_async(store: Store, run_id: str, new_run: Callable[[], Any], host: Any, *,
                      in_flight: str = AGAIN, max_answers: int | None = None, _resuming: bool = False) -> Outcome:
    """:func:`drive` with the asyncio driver (every ready request at once)."""
    session = Session(store, run_id, in_flight, max_answers)
    if _resuming:
        store.append(run_id, RESUME, None, {"replaying": len(session.answers)})
    try:
        record = await _drive_async(new_run(), host, session)
    except InFlight:
        store.set_status(run_id, STOPPED)
        raise
    return _finish(store, session, record, len(session.answers))


def _resuming(store: Store, run_id: str, workflow_hash: str | None) -> dict:
    info = _check_hash(store, run_id, workflow_hash)
    if info["record"] is None and info["status"] != RUNNING:
        store.set_status(run_id, RUNNING)
    return info


def resume(store: Store, run_id: str, new_run: Callable[[], Any], host: Any, *,
           workflow_hash: str | None = None, in_flight: str = AGAIN, max_answers: int | None = None) -> Outcome:
    """Rebuild run ``run_id`` from its journal and go on (sync driver).
    Refused (:class:`JournalError`) when ``workflow_hash`` is not the one
    the run started with. A finished run gives its stored record."""
    info = _resuming(store, run_id, workflow_hash)
    if info["record"] is not None:
        return _stored(info)
    return drive(store, run_id, new_run, host, in_flight=in_flight, max_answers=max_answers, _resuming=True)


async def resume_async(store: Store, run_id: str, new_run: Callable[[], Any], host: Any, *,
                       workflow_hash: str | None = None, in_flight: str = AGAIN,
                       max_answers: int | None = None) -> Outcome:
    """:func:`resume` with the asyncio driver."""
    info = _resuming(store, run_id, workflow_hash)
    if info["record"] is not None:
        return _stored(info)
    return await drive_async(store, run_id, new_run, host, in_flight=in_flight, max_answers=max_answers,
                             _resuming=True)
