"""The Dask side of a batch: the job installed once per worker.

A worker plugin carries the :class:`~flowc.cluster.job.BatchJob` (compiled
program and host script or config text): the scheduler sends it to every worker once, and
again to any worker that joins later, a restarted one included, so a task
carries only the job's digest and its lines. Imported only once
``distributed`` is known to be installed (engine.require_engine).
"""

from __future__ import annotations

import asyncio

from distributed.diagnostics.plugin import WorkerPlugin
from flowc.cluster import configured
from flowc.cluster import job as batch_job


class InstallJob(WorkerPlugin):
    """Load a batch's program on each worker before its tasks run."""

    idempotent = True   # registered again with the same name: nothing to redo

    def __init__(self, job: batch_job.BatchJob) -> None:
        self.job = job
        self.key = batch_job.digest(job)
        self.name = f"flowc-batch-{self.key[:16]}"

    async def setup(self, worker) -> None:
        # a host config's servers start here, once per worker, and live until
        # teardown; in a thread, so the worker's own loop keeps answering
        start = configured.LiveHost if self.job.host.kind == "config" else None
        await asyncio.to_thread(batch_job.install, self.job, start)

    async def teardown(self, worker) -> None:
        await asyncio.to_thread(batch_job.uninstall, self.key)


def install_everywhere(client, job: batch_job.BatchJob) -> InstallJob:
    plugin = InstallJob(job)
    client.register_plugin(plugin, name=plugin.name)
    return plugin


def remove(client, plugin: InstallJob) -> None:
    try:
        client.unregister_worker_plugin(plugin.name)
    except (ValueError, KeyError):  # already gone with its workers
        pass
