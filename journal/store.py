"""The journal's storage: one SQLite file (the standard library's sqlite3).

Settings, and why:

- ``journal_mode=WAL``: an append is one small write to the write-ahead log,
  readers (``flowc runs list``) never block the run that writes;
- ``synchronous=FULL``: every commit fsyncs the log before it returns, so an
  entry the driver has written survives a crash of the process *and* of the
  machine. The driver writes a request before it sends it, so a request
  whose commit never completed was never sent;
  (``synchronous="NORMAL"`` fsyncs at checkpoints only: an entry survives
  a crash of the process, not a power cut; faster, for tests and batch work);
- every entry is its own transaction (autocommit), in order;
- every entry carries a checksum chained to the previous one (SHA-256 of
  the previous checksum and the entry's fields). SQLite's own WAL checksums
  drop a torn last frame on recovery; the chain catches a row whose bytes
  are damaged. A damaged *last* entry is dropped (the run resumes from the
  entry before it, and a request it named counts as in flight); a damaged
  entry with good ones after it makes the run refuse to resume.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import uuid
from typing import Any

FORMAT = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs(
    run_id TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    workflow_hash TEXT NOT NULL,
    inputs TEXT NOT NULL,
    options TEXT NOT NULL,
    started REAL NOT NULL,
    checksum TEXT NOT NULL,
    status TEXT NOT NULL,
    finished REAL,
    record TEXT
);
CREATE TABLE IF NOT EXISTS entries(
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    request_id INTEGER,
    body TEXT NOT NULL,
    at REAL NOT NULL,
    checksum TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
"""

# what an entry is
REQUEST, ANSWER, REPEAT, RESUME, DROPPED = "request", "answer", "repeat", "resume", "dropped"
RUNNING, STOPPED = "running", "stopped"


class JournalError(Exception):
    """The journal cannot be used (damaged, unknown run, another workflow ...)."""


def dumps(value: Any) -> str:
    """JSON in the value's own key order (a host's answer is replayed as it
    came: the order of an object's keys shows in what a workflow prints)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _digest(*parts: Any) -> str:
    return hashlib.sha256("\x00".join(map(repr, parts)).encode("utf-8", "surrogatepass")).hexdigest()


class Entry:
    """One journal entry, as read back."""

    __slots__ = ("at", "body", "kind", "request_id", "seq")

    def __init__(self, seq: int, kind: str, request_id: int | None, body: Any, at: float) -> None:
        self.seq = seq
        self.kind = kind
        self.request_id = request_id
        self.body = body
        self.at = at


class Store:
    """A journal file. Open it once per process; every method commits."""

    def __init__(self, path: str, synchronous: str = "FULL") -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous is FULL or NORMAL, not {synchronous!r}")
        self.path = str(path)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={synchronous}")
            self.db.executescript(_SCHEMA)
            self.db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('format', ?)", (FORMAT,))
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"the journal {self.path} cannot be used: {exc}") from None
        self._last: dict[str, tuple[int, str]] = {}  # run id -> (last seq, last checksum)

    def close(self) -> None:
        self.db.close()

    def _query(self, sql: str, params: tuple = ()) -> list[tuple]:
        try:
            return self.db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"the journal {self.path} is damaged: {exc}") from None

    # ---------------------------------------------------------------- runs
    def new_run(self, workflow: str, workflow_hash: str, inputs: dict, options: dict,
                run_id: str | None = None, started: float | None = None) -> str:
        run_id = run_id or uuid.uuid4().hex[:16]
        started = time.time() if started is None else started
        fields = (run_id, workflow, workflow_hash, dumps(inputs), dumps(options), started)
        self._query("INSERT INTO runs(run_id, workflow, workflow_hash, inputs, options, started, checksum, "
                    "status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (*fields, _digest(*fields), RUNNING))
        self._last[run_id] = (0, _digest(*fields))
        return run_id

    def run_info(self, run_id: str) -> dict:
        rows = self._query("SELECT run_id, workflow, workflow_hash, inputs, options, started, checksum, status, "
                           "finished, record FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise JournalError(f"the journal {self.path} has no run {run_id!r}")
        rid, workflow, whash, inputs, options, started, checksum, status, finished, record = rows[0]
        if _digest(rid, workflow, whash, inputs, options, started) != checksum:
            raise JournalError(f"the journal {self.path} is damaged: the header of run {run_id} does not "
                               "match its checksum; refusing to use it")
        return {"run_id": rid, "workflow": workflow, "workflow_hash": whash, "inputs": json.loads(inputs),
                "options": json.loads(options), "started": started, "status": status, "finished": finished,
                "record": json.loads(record) if record is not None else None, "checksum": checksum}

    def runs(self) -> list[dict]:
        rows = self._query("SELECT run_id, workflow, workflow_hash, started, status, finished FROM runs "
                           "ORDER BY started, run_id")
        out = []
        for run_id, workflow, whash, started, status, finished in rows:
            count = self._query("SELECT count(*), sum(kind = 'repeat') FROM entries WHERE run_id = ?",
                                (run_id,))[0]
            out.append({"run_id": run_id, "status": status, "workflow": workflow, "workflow_hash": whash,
                        "started": started, "finished": finished, "entries": count[0],
                        "repeated": count[1] or 0})
        return out

    def set_status(self, run_id: str, status: str, record: dict | None = None) -> None:
        self._query("UPDATE runs SET status = ?, finished = ?, record = ? WHERE run_id = ?",
                    (status, time.time() if record is not None else None,
                     dumps(record) if record is not None else None, run_id))

    # ---------------------------------------------------------------- entries
    def append(self, run_id: str, kind: str, request_id: int | None, body: Any) -> None:
        """Write one entry and commit it (fsync'd: synchronous=FULL)."""
        seq, prev = self._last[run_id]
        seq += 1
        text = dumps(body)
        at = time.time()
        checksum = _digest(prev, run_id, seq, kind, request_id, text, at)
        self._query("INSERT INTO entries(run_id, seq, kind, request_id, body, at, checksum) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", (run_id, seq, kind, request_id, text, at, checksum))
        self._last[run_id] = (seq, checksum)

    def entries(self, run_id: str, repair: bool = True) -> tuple[list[Entry], list[str]]:
        """The run's entries, verified, and notes on what was repaired. A
        damaged last entry is dropped (and noted, with a DROPPED entry;
        ``repair=False``: only noted, the file is left as it is); a damaged
        entry before good ones raises :class:`JournalError`."""
        info = self.run_info(run_id)
        rows = self._query("SELECT seq, kind, request_id, body, at, checksum FROM entries WHERE run_id = ? "
                           "ORDER BY seq", (run_id,))
        prev = info["checksum"]
        out: list[Entry] = []
        notes: list[str] = []
        for i, (seq, kind, request_id, text, at, checksum) in enumerate(rows):
            problem = None
            if seq != i + 1:
                problem = f"entry {i + 1} is missing"
            elif _digest(prev, run_id, seq, kind, request_id, text, at) != checksum:
                problem = f"entry {seq} does not match its checksum (half written or damaged)"
            else:
                try:
                    body = json.loads(text)
                except ValueError:
                    problem = f"entry {seq} is not valid JSON"
            if problem is not None:
                if i + 1 < len(rows):
                    raise JournalError(f"the journal {self.path} is damaged in run {run_id}: {problem}, and "
                                       f"{len(rows) - i - 1} entries follow it; refusing to resume")
                if not repair:
                    notes.append(f"{problem}: a resume drops it and goes on from entry {seq - 1}")
                    return out, notes
                notes.append(f"{problem}: it was dropped; the run resumes from entry {seq - 1}")
                self._query("DELETE FROM entries WHERE run_id = ? AND seq >= ?", (run_id, seq))
                self._last[run_id] = (seq - 1, prev)
                self.append(run_id, DROPPED, request_id, {"kind": kind, "problem": problem})
                out.append(Entry(seq, DROPPED, request_id, {"kind": kind, "problem": problem}, time.time()))
                return out, notes
            out.append(Entry(seq, kind, request_id, body, at))
            prev = checksum
        self._last[run_id] = (len(rows), prev)
        return out, notes

    def check(self) -> None:
        """SQLite's own consistency check of the whole file."""
        rows = self._query("PRAGMA quick_check")
        if not rows or rows[0][0] != "ok":
            raise JournalError(f"the journal {self.path} is damaged: {rows[0][0] if rows else 'no answer'}")
