"""``flowc fuzz ... --workers N | --scheduler ADDR``: a campaign on Dask.

The campaign is cut into the same shares as ``flowc fuzz --jobs J`` (each
with its own seed, :func:`flowc.testing.campaign.campaign_tasks`); the
shares run on the workers and their results are merged in share order, so
the summary, the mutation score and the reproducers are those of the local
campaign with the same ``--seed`` and ``--jobs``. A worker writes its
reproducers into a private directory and sends them back; the client writes
them to ``--out``, so workers need no shared file system.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings

from flowc.cluster import engine
from flowc.testing.campaign import Result, campaign_tasks, run_kind
from hypothesis.errors import HypothesisDeprecationWarning

# A Dask worker's own threads draw from the global `random` module while a
# share generates examples; hypothesis sees the global state move and
# blames the strategies. flowc's strategies never use it (a local campaign
# does not warn), so the warning would only be noise on the workers' stderr.
warnings.filterwarnings("ignore", message="Do not use the `random` module inside strategies",
                        category=HypothesisDeprecationWarning)


def run_share(task: tuple) -> tuple[Result, dict[str, bytes]]:
    """One share, on a worker: its result and its reproducer files (by name)."""
    dialect, kind, n, run_seed, out_dir, max_steps, timeout = task
    with tempfile.TemporaryDirectory(prefix="flowc-fuzz-") as scratch:
        result = run_kind(dialect, kind, n, run_seed, scratch, max_steps, timeout)
        files = {}
        for name in sorted(os.listdir(scratch)):
            with open(os.path.join(scratch, name), "rb") as fh:
                files[name] = fh.read()
    for failure in result.failures:   # where the client will write it, as a local campaign names it
        if failure.reproducer:
            failure.reproducer = os.path.join(out_dir, os.path.basename(failure.reproducer))
    return result, files


def run_tasks(client, tasks: list[tuple], dialect: str, out_dir: str, progress=None) -> Result:
    """Run the shares on ``client``; merge in share order; write the reproducers."""
    futures = [client.submit(run_share, task, retries=engine.TASK_RETRIES, pure=False) for task in tasks]
    total = Result(dialect)
    for task, future in zip(tasks, futures):
        part, files = future.result()
        total.merge(part)
        if files:
            os.makedirs(out_dir, exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(out_dir, name), "wb") as fh:
                fh.write(data)
        if progress is not None:
            progress.advance(task[2])
    if progress is not None:
        progress.finish()
    return total


def fuzz_on_cluster(args, run_seed: int, progress, kinds: tuple[str, ...]) -> tuple[Result, int] | None:
    """The campaign's result and its number of shares; None (after saying
    why) when there is no cluster to run on."""
    try:
        with engine.client_for(args.workers, args.scheduler) as client:
            shares = args.jobs if args.jobs and args.jobs > 0 else engine.worker_slots(client)
            tasks = campaign_tasks(args.dialect, args.examples, run_seed, shares, args.out, args.max_steps,
                                   args.timeout or None, kinds)
            return run_tasks(client, tasks, args.dialect, args.out, progress), shares
    except engine.MissingEngine as exc:
        print(f"flowc: error: {exc}", file=sys.stderr)
        return None
