"""A batch against a host config: one started host shared by many runs.

MCP servers are processes: a batch starts them once per process (the
flowc process, or each Dask worker), not once per run. The runs go through
the asyncio driver (``program.run_async``), up to ``job.concurrency`` at
once on the one host, and their records come out in input order.

- In-process, :func:`run_in_process` owns the event loop (``asyncio.run``):
  Ctrl-C cancels the runs in flight, stops the servers, and leaves the
  records written so far whole.
- On a worker, :class:`LiveHost` keeps the host on an event loop of its
  own thread, from the worker plugin's ``setup`` to its ``teardown``; each
  task hands its chunk to that loop and waits for the records.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from flowc.cluster import job as batch_job

# Finished records held back for a slow run before them, per run slot: the
# window bounds what a long batch holds while one run takes long.
WINDOW_PER_SLOT = 4


async def stream_records(job: batch_job.BatchJob, program: Any, host: Any, lines: list[tuple[int, str]],
                         write: Callable[[str, bool], None]) -> int:
    """Run each line on the started ``host``, up to ``job.concurrency`` at
    once; ``write`` each record's JSON line (and whether the run succeeded)
    in input order. Gives how many
    runs did not succeed. Cancelled, it cancels the runs in flight and
    writes nothing more."""
    limit = max(1, job.concurrency)
    window = limit * WINDOW_PER_SLOT
    running: dict[asyncio.Task, int] = {}
    done: dict[int, dict] = {}
    submitted = written = failed = 0
    try:
        while written < len(lines):
            while submitted < len(lines) and len(running) < limit and submitted - written < window:
                line_no, text = lines[submitted]
                running[asyncio.ensure_future(run_line(job, program, host, line_no, text))] = submitted
                submitted += 1
            finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                done[running.pop(task)] = task.result()
            while written in done:
                record = done.pop(written)
                ok = record.get("status") in batch_job.SUCCESS
                failed += not ok
                write(batch_job.as_json_line(record), ok)
                written += 1
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
    return failed


async def run_line(job: batch_job.BatchJob, program: Any, host: Any, line_no: int, text: str) -> dict:
    """The record of one input line run on the shared host (as
    :func:`flowc.cluster.job.run_line` gives it for a fresh one)."""
    inputs = batch_job.inputs_of(line_no, text)
    if "line" in inputs:
        return inputs
    try:
        record = await program.run_async(inputs["inputs"], host, **dict(job.budgets))
    except Exception as exc:  # noqa: BLE001 - a failing run is a record, never a lost line
        return batch_job.crash_record(line_no, exc)
    return {"line": line_no, **record}


class Interrupted(Exception):
    """Ctrl-C stopped an in-process batch; ``written`` records are whole."""

    def __init__(self, written: int) -> None:
        super().__init__(f"interrupted after {written} records")
        self.written = written


def run_in_process(job: batch_job.BatchJob, lines: list[tuple[int, str]], write: Callable[[str], None],
                   progress: Any = None) -> int:
    """Start the host once, run every line on it, stop it. Gives how many
    runs did not succeed; raises :class:`Interrupted` after Ctrl-C (the
    servers stopped) and the host's own errors (a server that did not
    start: :class:`flowc.host.HostError`, a bad route: ConfigError)."""
    program = batch_job.load_program(job)
    host = job.host.build()
    count = [0]

    def emit(text: str, ok: bool) -> None:
        write(text + "\n")
        count[0] += 1
        if progress is not None:
            progress.advance(1, int(not ok))

    async def main() -> int:
        async with host:
            return await stream_records(job, program, host, lines, emit)

    try:
        return asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise Interrupted(count[0]) from None


class LiveHost:
    """A started shared host on an event loop of its own thread (a Dask
    worker runs tasks in threads, its own loop does its networking)."""

    def __init__(self, spec: batch_job.HostSpec) -> None:
        self.problem: str | None = None
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="flowc-batch-host", daemon=True)
        self.thread.start()
        try:
            self.host = spec.build()
            self._wait(self.host.start())
        except Exception as exc:  # noqa: BLE001 - every run of the chunk says why, no lost line
            self.host = None
            self.problem = f"the host did not start: {' '.join(str(exc).split())}"

    def _wait(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def run_chunk(self, job: batch_job.BatchJob, program: Any, lines: list[tuple[int, str]]) -> tuple[list[str], int]:
        if self.host is None:
            return [batch_job.as_json_line(batch_job.error_record(n, self.problem or "")) for n, _ in lines], len(lines)
        out: list[str] = []
        failed = self._wait(stream_records(job, program, self.host, lines, lambda text, _ok: out.append(text)))
        return out, failed

    def stop(self) -> None:
        """Stop the servers, then the loop and its thread."""
        try:
            if self.host is not None:
                self._wait(self.host.aclose())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(30)
            if not self.thread.is_alive():
                self.loop.close()
