"""The asyncio driver: every ready request runs at once.

``await drive_async(run, host)`` starts each request the kernel offers as an
asyncio task: ``host.call(capability, name, args)`` (awaited when it returns
an awaitable, bounded by the request's ``timeout_ms``: past it the answer is
``TimedOut``) and ``host.sleep(ms)`` (awaited when it returns an awaitable,
else ``asyncio.sleep``); the kernel's deadline timers (``Sleep(ms,
deadline=True)``) are ``asyncio.sleep`` alone, never the host's. Answers go to the kernel in the order the tasks
finish (ties: the request issued first); requests the kernel cancels (race
losers, siblings of a failed step) have their tasks cancelled.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from flowc.runtime.drivers import answer_of_exception, deadline_answer, finish, tell, watcher
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


async def _given(answer: Any) -> Any:
    return answer


async def drive_async(run: Any, host: Any) -> dict:
    """Drive ``run`` with ``host``, every ready request at once; the record.
    A run with ``limits.deadline`` (the instruction dialect's ``limits``)
    gets the event loop's clock from its start: past it nothing more is
    sent, and what is still running and what is asked later are answered
    ``TimedOut`` (as the journaling driver does, docs/durable.md)."""
    running: dict[int, asyncio.Task] = {}
    run.clock = True  # deadlines fire on the event loop's clock
    loop = asyncio.get_running_loop()
    deadline_ms = (getattr(run, "limits", None) or {}).get("deadline_ms")
    deadline_at = None if deadline_ms is None else loop.time() + deadline_ms / 1000
    watch = watcher(run, host)
    if not run.started:
        run.start()
    tell(run, watch)
    try:
        while not run.finished:
            for rid in run.cancelled():
                task = running.pop(rid, None)
                if task is not None:
                    task.cancel()
                    if watch is not None:
                        watch(("cancel", rid))
            late = deadline_at is not None and loop.time() >= deadline_at
            for req in run.ready():
                if req.id not in running:
                    if watch is not None:
                        watch(("start", req))
                    work = _given(deadline_answer(deadline_ms)) if late else perform_async(host, req)
                    running[req.id] = asyncio.ensure_future(work)
            if not running:
                raise KernelError("the run waits for nothing but has not finished")
            until = None if deadline_at is None else max(deadline_at - loop.time(), 0.0)
            done, _pending = await asyncio.wait(list(running.values()), return_when=asyncio.FIRST_COMPLETED,
                                                timeout=until)
            if not done:  # the run's deadline passed: what still runs is answered TimedOut
                for rid in sorted(running):
                    running.pop(rid).cancel()
                    answer = deadline_answer(deadline_ms)
                    if watch is not None:
                        watch(("answer", rid, answer))
                    run.answer(rid, answer)
                    tell(run, watch)
                continue
            for rid in sorted(rid for rid, task in running.items() if task in done):
                task = running.pop(rid)
                if watch is not None:
                    watch(("answer", rid, task.result()))
                run.answer(rid, task.result())
                tell(run, watch)
    finally:
        for rid, task in running.items():  # the run ended without them (a race's losers)
            task.cancel()
            if watch is not None:
                watch(("cancel", rid))
    return finish(run, watch)
