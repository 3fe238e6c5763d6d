"""One batch: a compiled workflow, how each run gets its host, its budgets.

A :class:`BatchJob` is what reaches a worker once per batch (a worker
plugin, :mod:`flowc.cluster.remote`), keyed by its :func:`digest`; each task
then carries only the digest and its input lines. :func:`run_chunk` is the
work of one task, in-process or on a worker: it never raises, every input
line gives exactly one record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flowc.host import ScriptedHost, loads_json
from flowc.termtext import json_text

SUCCESS = ("success", "completed")


@dataclass(frozen=True)
class HostSpec:
    """How the runs of a batch get their host, built where they run.

    ``"script"``: a fresh :class:`flowc.host.ScriptedHost` per run from
    ``script``. ``"config"``: one host built from a host config's text
    (``config``: the ``(path, text)`` of ``--config`` and of
    ``--mcp-config``, either may be None, as
    :func:`flowc.hosts.config.read_config_texts` reads them), started once
    per process and shared by its runs (:mod:`flowc.cluster.configured`).
    The text is the file as written: its ``${NAME}`` and ``api_key_env``
    are read from the environment of the process that starts the host."""

    kind: str = "script"
    script: dict = field(default_factory=dict)
    config: tuple = ()

    def build(self) -> Any:
        if self.kind == "script":
            return ScriptedHost(self.script)
        if self.kind == "config":
            from flowc.hosts.config import host_config_from_texts
            from flowc.hosts.router import RouterHost

            return RouterHost(host_config_from_texts(self.config), log_calls=False)
        raise ValueError(f"no host of kind {self.kind!r}")

    def identity(self) -> bytes:
        return json.dumps([self.kind, self.script, self.config], sort_keys=True, ensure_ascii=False,
                          default=repr).encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class BatchJob:
    backend: str                      # "python" (module source, str) or "vm" (bytecode, bytes)
    program: str | bytes
    host: HostSpec
    budgets: tuple[tuple[str, int], ...] = ()
    concurrency: int = 1              # runs at once on a shared (config) host, per process


def digest(job: BatchJob) -> str:
    """The job's identity: equal jobs share one loaded program on a worker."""
    h = hashlib.sha256()
    program = job.program.encode("utf-8") if isinstance(job.program, str) else job.program
    for part in (job.backend.encode(), program, job.host.identity(), repr((job.budgets, job.concurrency)).encode()):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


# digest -> (job, loaded program, started host or None): filled once per process (per worker).
_LOADED: dict[str, tuple[BatchJob, Any, Any]] = {}


def install(job: BatchJob, start_host: Callable[[HostSpec], Any] | None = None) -> str:
    """Load the job's program in this process (once), and give its digest.
    ``start_host``: how a shared host is started for the runs of this
    process (a config's, :class:`flowc.cluster.configured.LiveHost`); its
    ``run_chunk`` then runs the job's chunks and its ``stop`` ends it."""
    key = digest(job)
    if key not in _LOADED:
        _LOADED[key] = (job, load_program(job), start_host(job.host) if start_host is not None else None)
    return key


def uninstall(key: str) -> None:
    entry = _LOADED.pop(key, None)
    if entry is not None and entry[2] is not None:
        entry[2].stop()


def load_program(job: BatchJob) -> Any:
    if job.backend == "vm":
        from flowc.backends.vm import load

        return load(job.program)
    from flowc.backends.python import load_module

    return load_module(job.program)


def run_chunk(key: str, lines: list[tuple[int, str]]) -> tuple[list[str], int]:
    """Run one workflow per input line; give one JSON text per line (in
    order) and how many of the runs did not succeed."""
    if key not in _LOADED:
        # The worker plugin installs the job before any task of it runs.
        raise LookupError(f"batch program {key[:12]} is not loaded in this process")
    job, program, live = _LOADED[key]
    if live is not None:
        return live.run_chunk(job, program, lines)
    out, failed = [], 0
    for line_no, text in lines:
        record = run_line(job, program, line_no, text)
        failed += record.get("status") not in SUCCESS
        out.append(as_json_line(record))
    return out, failed


def run_line(job: BatchJob, program: Any, line_no: int, text: str) -> dict:
    """The run record of one input line, with ``line`` (its line number);
    a line that is no JSON object, or a run that crashes, is a record with
    status ``error`` and the reason."""
    inputs = inputs_of(line_no, text)
    if "line" in inputs:
        return inputs
    try:
        record = program.run(inputs["inputs"], job.host.build(), **dict(job.budgets))
    except Exception as exc:  # noqa: BLE001 - a failing run is a record, never a lost line
        return crash_record(line_no, exc)
    return {"line": line_no, **record}


def inputs_of(line_no: int, text: str) -> dict:
    """``{"inputs": ...}`` of an input line, or its error record."""
    try:
        inputs = loads_json(text, f"input line {line_no}")
    except ValueError as exc:
        return error_record(line_no, str(exc))
    if not isinstance(inputs, dict):
        return error_record(line_no, f"input line {line_no} must hold a JSON object")
    return {"inputs": inputs}


def crash_record(line_no: int, exc: Exception) -> dict:
    """The record of a run that raised (``run_line``'s ``except``)."""
    if isinstance(exc, RecursionError):
        return error_record(line_no, "the run's values nest too deeply")
    if isinstance(exc, MemoryError):
        return error_record(line_no, "the run ran out of memory")
    return error_record(line_no, f"the run stopped: {type(exc).__name__}: {' '.join(str(exc).split())}")


def error_record(line_no: int, message: str) -> dict:
    return {"line": line_no, "status": "error", "error": {"message": message}}


def as_json_line(record: dict) -> str:
    """One line of JSON, as ``flowc run --json`` prints a record."""
    return json_text(json.dumps(record, sort_keys=True, ensure_ascii=False, default=repr))
