"""Running a batch: chunks of input lines, in-process or on Dask, records
written in input order.

Input lines are grouped into chunks (one task each) so the cost of a task
(scheduling, a round trip) is shared by many runs. Results are written as
soon as every chunk before them is in, so the output is in input order
whatever order the workers finish in, and a long batch streams.
"""

from __future__ import annotations

import math
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO

from flowc.cluster import configured
from flowc.cluster import job as batch_job

# Chunks in flight per worker slot: enough to keep every worker busy while
# the client writes, few enough that a huge batch is not all submitted at once.
CHUNKS_PER_SLOT = 4
MAX_CHUNK = 256


def read_lines(stream: Iterable[str]) -> list[tuple[int, str]]:
    """The input lines, each with its line number (from 1); lines of
    whitespace only are no input."""
    return [(n, line) for n, line in enumerate(stream, 1) if line.strip()]


def chunk_size(total: int, slots: int) -> int:
    """Runs per task: about 8 tasks per worker slot (so a slow or lost
    task holds back little), at most MAX_CHUNK runs. A task costs about
    3 ms of scheduling and round trip on a local cluster, a run of a small
    workflow about 0.1 ms: 256 runs keep that overhead near a tenth
    (benchmarks/bench_batch.py measures both)."""
    return max(1, min(MAX_CHUNK, math.ceil(total / (slots * 8))))


def chunks(lines: list[tuple[int, str]], size: int) -> list[list[tuple[int, str]]]:
    return [lines[i:i + size] for i in range(0, len(lines), size)]


class Progress:
    """``batch: 340/1000 runs, 2 not successful, 120.3/s`` on stderr."""

    def __init__(self, total: int, stream: TextIO | None = None, interval: float = 1.0) -> None:
        self.total, self.done, self.failed = total, 0, 0
        self.stream = stream if stream is not None else sys.stderr
        self.started = self.last = time.perf_counter()
        self.interval = interval

    def advance(self, runs: int, failed: int) -> None:
        self.done += runs
        self.failed += failed
        now = time.perf_counter()
        if now - self.last >= self.interval or self.done == self.total:
            self.last = now
            rate = self.done / max(now - self.started, 1e-9)
            self.stream.write(f"batch: {self.done}/{self.total} runs, {self.failed} not successful, "
                              f"{rate:.1f}/s\n")
            self.stream.flush()


def run_batch(job: batch_job.BatchJob, lines: list[tuple[int, str]], write: Callable[[str], None],
              client=None, size: int | None = None, progress: Progress | None = None) -> int:
    """Run one workflow per line; ``write`` each record's JSON line, in
    input order. On ``client`` (a Dask client) or, without one, here (a
    host config's batch: :func:`flowc.cluster.configured.run_in_process`,
    which raises ``Interrupted`` after Ctrl-C). Gives how many runs did not
    succeed."""
    failed = 0
    if client is None and job.host.kind == "config":
        return configured.run_in_process(job, lines, write, progress)
    if client is None:
        results = _in_process(job, chunks(lines, size or MAX_CHUNK))
    else:
        from flowc.cluster.engine import worker_slots

        slots = worker_slots(client)
        results = _on_cluster(client, job, chunks(lines, size or chunk_size(len(lines), slots)), slots)
    for texts, not_ok in results:
        for text in texts:
            write(text + "\n")
        failed += not_ok
        if progress is not None:
            progress.advance(len(texts), not_ok)
    return failed


def _in_process(job, parts) -> Iterator[tuple[list[str], int]]:
    key = batch_job.install(job)
    try:
        for part in parts:
            yield batch_job.run_chunk(key, part)
    finally:
        batch_job.uninstall(key)


def _on_cluster(client, job, parts, slots: int) -> Iterator[tuple[list[str], int]]:
    """Submit chunks (a bounded window of them), give their results in order."""
    from distributed import as_completed
    from flowc.cluster import remote
    from flowc.cluster.engine import TASK_RETRIES

    plugin = remote.install_everywhere(client, job)
    window = max(2, slots * CHUNKS_PER_SLOT)
    done: dict[int, tuple[list[str], int]] = {}
    index_of: dict[str, int] = {}
    running = as_completed(with_results=True, raise_errors=False)
    token = uuid.uuid4().hex[:12]
    submitted = next_out = 0
    try:
        while next_out < len(parts):
            while submitted < len(parts) and submitted - next_out < window:
                future = client.submit(batch_job.run_chunk, plugin.key, parts[submitted], retries=TASK_RETRIES,
                                       key=f"flowc-batch-{token}-{submitted}")
                index_of[future.key] = submitted
                running.add(future)
                submitted += 1
            while next_out not in done:
                future, result = next(running)
                index = index_of.pop(future.key)
                done[index] = result if future.status == "finished" else _lost(parts[index], result)
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1
    finally:
        running.clear()
        remote.remove(client, plugin)


def _lost(part: list[tuple[int, str]], exc: BaseException) -> tuple[list[str], int]:
    """A chunk the cluster gave up on (its workers kept dying past Dask's
    allowed failures): one error record per line, never a lost line."""
    message = f"the cluster lost this run: {type(exc).__name__}: {' '.join(str(exc).split())}"
    return [batch_job.as_json_line(batch_job.error_record(n, message)) for n, _ in part], len(part)
