"""Connecting to Dask: a local cluster of worker processes, or a scheduler.

The one place that imports ``distributed``; a missing install is a
:class:`MissingEngine` with the line to print, never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

INSTALL_HINT = ("--workers and --scheduler run on Dask distributed, which is not installed: "
                "pip install 'flowc[distributed]'")

# A task whose worker died is rescheduled by Dask itself (the scheduler's
# allowed-failures); these retries cover a task that raised on a worker
# that then went away mid-answer.
TASK_RETRIES = 3


class MissingEngine(RuntimeError):
    """``distributed`` is not importable; the message says how to install it."""


def require_engine():
    """The ``distributed`` module, or :class:`MissingEngine`."""
    try:
        import distributed
    except ImportError:
        raise MissingEngine(INSTALL_HINT) from None
    return distributed


@contextmanager
def client_for(workers: int | None = None, scheduler: str | None = None) -> Iterator:
    """A Dask client: on a running scheduler at ``scheduler``, else on a
    local cluster of ``workers`` processes (one thread each: flowc's work is
    pure Python, threads would share one interpreter lock) started for the
    block and shut down after it."""
    distributed = require_engine()
    if scheduler:
        with distributed.Client(scheduler) as client:
            yield client
        return
    with distributed.LocalCluster(n_workers=max(1, workers or 1), threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield client


def worker_slots(client) -> int:
    """How many tasks the cluster runs at once (its threads)."""
    return max(1, sum(client.nthreads().values()))
