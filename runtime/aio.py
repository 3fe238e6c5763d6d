"""The asyncio driver: every ready request runs at once.

``await drive_async(run, host)`` starts each request the kernel offers as an
asyncio task: ``host.call(capability, name, args)`` (awaited when it returns
an awaitable, bounded by the request's ``timeout_ms``: past it the answer is
``TimedOut``) and ``host.sleep(ms)`` (awaited when it returns an awaitable,
else ``asyncio.sleep``); the kernel's deadline timers (``Sleep(ms,
deadline=True)``) are ``asyncio.sleep`` alone, never the host's, and so
is the run's deadline timer (``run.deadline_timer``, its
``limits.deadline``): when it fires the kernel answers what still runs
itself, and the driver cancels those tasks. Answers go to the kernel in
the order the tasks finish (ties: the request issued first, the run's
deadline timer after the rest); requests the kernel cancels (race losers,
siblings of a failed step) have their tasks cancelled.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from flowc.runtime.drivers import answer_of_exception, finish, tell, watcher
from flowc.runtime.kernel import KernelError, Result, Thrown, TimedOut


async def perform_async(host: Any, req: Any) -> Any:
    """Carry out one request with a host whose methods may be coroutines."""
    if req.kind == "sleep" and getattr(req, "deadline", False):
        await asyncio.sleep(req.ms / 1000)  # the driver's own clock: a deadline, not a pause
        return Result(None)
    if req.kind == "sleep":
        try:
            done = host.sleep(req.ms)
            if inspect.isawaitable(done):
                await done
            else:
                await asyncio.sleep(req.ms / 1000)
        except Exception as exc:  # noqa: BLE001 - the kernel decides what a failed sleep means
            return Thrown(str(exc))
        return Result(None)
    try:
        value = host.call(req.capability, req.name, req.args)
        if inspect.isawaitable(value):
            if req.timeout_ms is not None:
                value = await asyncio.wait_for(value, req.timeout_ms / 1000)
            else:
                value = await value
        return Result(value)
    except TimeoutError:  # asyncio.wait_for past timeout_ms
        return TimedOut()
    except Exception as exc:  # noqa: BLE001 - every host failure is an answer
        return answer_of_exception(exc)


def stop_cancelled(run: Any, running: dict, watch: Any) -> None:
    """Cancel the tasks of the requests the kernel cancelled; tell ``watch``
    of each, except those the kernel answered itself (it told their answer)."""
    for rid in run.cancelled():
        task = running.pop(rid, None)
        if task is not None:
            task.cancel()
            if watch is not None and not run.answered_itself(rid):
                watch(("cancel", rid))


def tell_unstarted(run: Any, started: Any, watch: Any) -> None:
    """Before a driver answers the run's deadline timer: tell ``watch`` the
    requests it has not started (not in ``started``) as starting, since the
    kernel answers each of them next (nothing when not watched)."""
    if watch is not None:
        for req in run.ready():
            if req.id not in started:
                watch(("start", req))


class DeadlineTimer:
    """The run's deadline timer (``run.deadline_timer``) on the event loop:
    due ``seconds`` from now (default: the timer's own ms)."""

    def __init__(self, run: Any, seconds: float | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        seconds = run.deadline_timer.ms / 1000 if seconds is None else max(seconds, 0.0)
        self.due = self.loop.time() + seconds
        self.task = asyncio.ensure_future(asyncio.sleep(seconds))

    @classmethod
    def of(cls, run: Any, seconds: float | None = None) -> DeadlineTimer | None:
        return None if run.deadline_timer is None else cls(run, seconds)

    def passed(self) -> bool:
        """Due: answer it before anything more is sent."""
        return self.task.done() or self.loop.time() >= self.due

    def cancel(self) -> None:
        self.task.cancel()


def waiting_on(running: dict, timer: DeadlineTimer | None) -> list:
    return list(running.values()) if timer is None else [*running.values(), timer.task]


async def drive_async(run: Any, host: Any) -> dict:
    """Drive ``run`` with ``host``, every ready request at once; the record."""
    running: dict[int, asyncio.Task] = {}
    run.clock = True  # deadlines fire on the event loop's clock
    watch = watcher(run, host)
    if not run.started:
        run.start()
    tell(run, watch)
    timer = DeadlineTimer.of(run)
    try:
        while not run.finished:
            stop_cancelled(run, running, watch)
            if timer is not None and timer.passed():  # the kernel answers the rest itself
                timer.cancel()
                timer = None
                tell_unstarted(run, running, watch)
                run.answer(run.deadline_timer.id, Result(None))
                tell(run, watch)
                continue
            for req in run.ready():
                if req.id not in running:
                    if watch is not None:
                        watch(("start", req))
                    running[req.id] = asyncio.ensure_future(perform_async(host, req))
            if not running:
                raise KernelError("the run waits for nothing but has not finished")
            done, _pending = await asyncio.wait(waiting_on(running, timer), return_when=asyncio.FIRST_COMPLETED)
            for rid in sorted(rid for rid, task in running.items() if task in done):
                task = running.pop(rid)
                if watch is not None:
                    watch(("answer", rid, task.result()))
                run.answer(rid, task.result())
                tell(run, watch)
    finally:
        if timer is not None:
            timer.cancel()
        for rid, task in running.items():  # the run ended without them (a race's losers)
            task.cancel()
            if watch is not None and not run.answered_itself(rid):
                watch(("cancel", rid))
    return finish(run, watch)
