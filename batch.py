"""Checking many files: in order, optionally on several processes, with progress.

``check_files`` gives one :class:`FileResult` per path, in the order of the
paths whatever the number of worker processes, so the output of
``flowc check`` does not depend on ``--jobs``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import attrs
from flowc import driver
from flowc.ir.diagnostics import Diagnostic
from flowc.termtext import shown

# Below this many files one process is faster than starting a pool.
PARALLEL_THRESHOLD = 64


@attrs.frozen
class FileResult:
    path: str
    text: str | None                 # None when the file could not be read
    diagnostics: tuple[Diagnostic, ...]


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # not on Linux
        return max(1, os.cpu_count() or 1)


def worker_count(jobs: int | None, files: int) -> int:
    """``--jobs``: None picks (one process for a few files, every core for
    many), 0 means every core, N means N processes."""
    if jobs is None:
        jobs = 1 if files < PARALLEL_THRESHOLD else 0
    if jobs <= 0:
        jobs = cpu_count()
    return max(1, min(jobs, files or 1))


def check_one(path: str, dialect: str | None = None, strict: bool = False,
              known_workflows: frozenset[str] | None = None) -> FileResult:
    text, problem = driver.read_source(path)
    if problem is not None:
        return FileResult(path, None, (problem,))
    result = driver.compile_text(text, path, dialect, strict, known_workflows=known_workflows)
    return FileResult(path, text, result.diagnostics)


def _check_args(args: tuple[str, str | None, bool, frozenset[str] | None]) -> FileResult:
    return check_one(*args)


def check_files(paths: list[str], dialect: str | None = None, jobs: int | None = None,
                progress: Progress | None = None, strict: bool = False,
                known_workflows: frozenset[str] | None = None) -> list[FileResult]:
    """Check every path; results come back in the order of ``paths``.
    ``known_workflows``: the aevatar workflow registry (driver.workflow_registry)."""
    workers = worker_count(jobs, len(paths))
    results: list[FileResult] = []
    if progress is not None:
        progress.start(len(paths), workers)
    for result in _results(paths, dialect, workers, strict, known_workflows):
        results.append(result)
        if progress is not None:
            progress.advance(result)
    if progress is not None:
        progress.finish()
    return results


def _results(paths: list[str], dialect: str | None, workers: int,
             strict: bool = False, known_workflows: frozenset[str] | None = None) -> Iterator[FileResult]:
    if workers <= 1:
        for path in paths:
            yield check_one(path, dialect, strict, known_workflows)
        return
    chunk = max(1, min(16, len(paths) // (workers * 8)))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        # map() yields in submission order: deterministic output.
        yield from pool.map(_check_args, [(p, dialect, strict, known_workflows) for p in paths], chunksize=chunk)


class Progress:
    """``[ 12/300] path`` on stderr: rewritten in place on a terminal,
    a line every second otherwise (``--progress`` into a log)."""

    def __init__(self, stream=None, interactive: bool | None = None, interval: float = 0.1) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self.interval = interval if self.interactive else 1.0
        self.total = self.done = self.errors = self.warnings = 0
        self.last = 0.0
        self.width = 0

    def start(self, total: int, workers: int) -> None:
        self.total = total
        self.last = time.monotonic()
        if not self.interactive and total:
            self._line(f"checking {total} file{'s' if total != 1 else ''} with {workers} "
                       f"process{'es' if workers != 1 else ''}")

    def advance(self, result: FileResult) -> None:
        self.done += 1
        self.errors += sum(d.is_error for d in result.diagnostics)
        self.warnings += sum(not d.is_error for d in result.diagnostics)
        now = time.monotonic()
        if now - self.last >= self.interval or self.done == self.total:
            self.last = now
            self._show(result.path)

    def finish(self) -> None:
        if self.interactive and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()

    def _show(self, path: str) -> None:
        path = shown(path)  # a file name may hold escape sequences (flowc.termtext)
        digits = len(str(self.total))
        head = f"[{self.done:>{digits}}/{self.total}] {self.errors} E, {self.warnings} W  "
        if self.interactive:
            room = max(10, _columns(self.stream) - len(head) - 1)
            tail = path if len(path) <= room else "…" + path[-(room - 1):]
            text = head + tail
            self.stream.write("\r" + text.ljust(self.width))
            self.width = max(self.width, len(text))
            self.stream.flush()
        else:
            self._line(head + path)

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()


def _columns(stream) -> int:
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        columns = 0
    return columns if columns > 0 else 80   # a new pseudo-terminal reports 0
