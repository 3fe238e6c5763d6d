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
from dataclasses import dataclass, field
from typing import Any

from flowc.host import ScriptedHost, loads_json
from flowc.termtext import json_text

SUCCESS = ("success", "completed")


@dataclass(frozen=True)
class HostSpec:
    """How each run of a batch gets a fresh host, built where it runs.

    ``kind`` is ``"script"`` (a :class:`flowc.host.ScriptedHost` script) for
    now; a host config (``--config``) is meant to be another kind carrying
    the config's text, built with ``flowc.hosts.from_config``."""

    kind: str = "script"
    script: dict = field(default_factory=dict)

    def build(self) -> Any:
        if self.kind == "script":
            return ScriptedHost(self.script)
        raise ValueError(f"no host of kind {self.kind!r}")

    def identity(self) -> bytes:
        return json.dumps([self.kind, self.script], sort_keys=True, ensure_ascii=False,
                          default=repr).encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class BatchJob:
    backend: str                      # "python" (module source, str) or "vm" (bytecode, bytes)
    program: str | bytes
    host: HostSpec
    budgets: tuple[tuple[str, int], ...] = ()


def digest(job: BatchJob) -> str:
    """The job's identity: equal jobs share one loaded program on a worker."""
    h = hashlib.sha256()
    program = job.program.encode("utf-8") if isinstance(job.program, str) else job.program
    for part in (job.backend.encode(), program, job.host.identity(), repr(job.budgets).encode()):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


# digest -> (job, loaded program): filled once per process (per worker).
_LOADED: dict[str, tuple[BatchJob, Any]] = {}


def install(job: BatchJob) -> str:
    """Load the job's program in this process (once) and give its digest."""
    key = digest(job)
    if key not in _LOADED:
        _LOADED[key] = (job, _load(job))
    return key


def uninstall(key: str) -> None:
    _LOADED.pop(key, None)


def _load(job: BatchJob) -> Any:
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
    job, program = _LOADED[key]
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
    try:
        inputs = loads_json(text, f"input line {line_no}")
    except ValueError as exc:
        return error_record(line_no, str(exc))
    if not isinstance(inputs, dict):
        return error_record(line_no, f"input line {line_no} must hold a JSON object")
    try:
        record = program.run(inputs, job.host.build(), **dict(job.budgets))
    except RecursionError:
        return error_record(line_no, "the run's values nest too deeply")
    except MemoryError:
        return error_record(line_no, "the run ran out of memory")
    except Exception as exc:  # noqa: BLE001 - a failing run is a record, never a lost line
        return error_record(line_no, f"the run stopped: {type(exc).__name__}: {' '.join(str(exc).split())}")
    return {"line": line_no, **record}


def error_record(line_no: int, message: str) -> dict:
    return {"line": line_no, "status": "error", "error": {"message": message}}


def as_json_line(record: dict) -> str:
    """One line of JSON, as ``flowc run --json`` prints a record."""
    return json_text(json.dumps(record, sort_keys=True, ensure_ascii=False, default=repr))
