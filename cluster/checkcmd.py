"""``flowc check PATH... --scheduler ADDR``: a very large tree on a Dask cluster.

The client reads the files (so workers need no shared file system) and
sends them in chunks; workers front-end and analyze them; results come back
in the order of the paths, as ``flowc check --jobs`` gives them, so the
report does not depend on where the checking ran.
"""

from __future__ import annotations

import sys

from flowc.cluster import engine
from flowc.pipeline import driver
from flowc.pipeline.batch import FileResult, Progress

FILES_PER_TASK = 32


def check_texts(items: list[tuple[str, str]], dialect: str | None, strict: bool,
                known_workflows: frozenset[str] | None) -> list[FileResult]:
    """One task: check each (path, text)."""
    return [FileResult(path, text, driver.compile_text(text, path, dialect, strict,
                                                        known_workflows=known_workflows).diagnostics)
            for path, text in items]


def check_on_cluster(args, paths: list[str], progress: Progress | None,
                     known_workflows: frozenset[str] | None) -> list[FileResult] | None:
    """Every path's result, in order; None (after saying why) when there is
    no cluster to run on."""
    try:
        with engine.client_for(args.workers, args.scheduler) as client:
            return _check(client, paths, args.dialect, args.strict, known_workflows, progress)
    except engine.MissingEngine as exc:
        print(f"flowc: error: {exc}", file=sys.stderr)
        return None


def _check(client, paths, dialect, strict, known_workflows, progress) -> list[FileResult]:
    results: list[FileResult | None] = [None] * len(paths)
    readable: list[tuple[int, str, str]] = []
    for i, path in enumerate(paths):
        text, problem = driver.read_source(path)
        if problem is not None:
            results[i] = FileResult(path, None, (problem,))
        else:
            readable.append((i, path, text))
    if progress is not None:
        progress.start(len(paths), engine.worker_slots(client))
        for result in results:
            if result is not None:
                progress.advance(result)
    futures = []
    for start in range(0, len(readable), FILES_PER_TASK):
        part = readable[start:start + FILES_PER_TASK]
        future = client.submit(check_texts, [(p, t) for _, p, t in part], dialect, strict, known_workflows,
                               retries=engine.TASK_RETRIES, pure=False)
        futures.append((future, [i for i, _, _ in part]))
    for future, indexes in futures:   # in order: a fast chunk waits for the ones before it
        for i, result in zip(indexes, future.result()):
            results[i] = result
            if progress is not None:
                progress.advance(result)
    if progress is not None:
        progress.finish()
    return [r for r in results if r is not None]
