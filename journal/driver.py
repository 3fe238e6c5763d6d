"""Journaling drivers: the sync and asyncio drivers of flowc.runtime, with
every request written to the journal before it is sent and every answer
after it returns; a run resumes by replaying the journal's answers through
a fresh kernel run (no host call for an answered request) and going on.

Works for any run object with the kernel's protocol (``start``, ``ready``,
``answer``, ``cancelled``, ``finished``, ``record``): the run's program
does not matter, only that the same answers in the same order rebuild it.

Wall clock lives here, never in the kernel: a request's entry notes when it
was sent, so a sleep in flight at a crash resumes with the time it has left,
and the run's start is recorded (``runs.started``), so a resumed run is told
how much of its ``limits.deadline`` has gone (``run.elapsed_ms``) and its
deadline timer fires at the original instant.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any

from flowc.journal import codec
from flowc.journal.store import ANSWER, DROPPED, REPEAT, REQUEST, JournalError, Store
from flowc.runtime.aio import DeadlineTimer, stop_cancelled, tell_unstarted, waiting_on
from flowc.runtime.drivers import answer_of_exception, finish, tell
from flowc.runtime.kernel import KernelError, Result, Thrown, TimedOut

AGAIN, FAIL = "again", "fail"
_UNKNOWN = object()  # a request whose entry was dropped as damaged: its description is lost


class InFlight(JournalError):
    """``in_flight="fail"``: a request was sent before the crash and never answered."""


class Session:
    """One process's turn at one journaled run: replay, then go on."""

    def __init__(self, store: Store, run_id: str, in_flight: str = AGAIN, max_answers: int | None = None):
        if in_flight not in (AGAIN, FAIL):
            raise ValueError(f"in_flight is {AGAIN!r} or {FAIL!r}, not {in_flight!r}")
        self.store = store
        self.run_id = run_id
        self.in_flight = in_flight
        self.max_answers = max_answers
        self.requests: dict[int, Any] = {}  # request id -> its description (the first sending)
        self.sent_at: dict[int, float] = {}  # request id -> wall clock of its last sending
        self.answers: list[tuple[int, dict]] = []
        self.inflight: set[int] = set()
        self.repeated: list[dict] = []  # requests sent again by this session
        self.answered = 0  # answers written by this session
        self.started = store.run_info(run_id)["started"]
        self.sent: set[int] = set()  # request ids journaled by this session
        self.deadline_at: float | None = None  # wall clock at which the run's deadline timer fires
        self.own_answers = 0  # of the kernel's own answers (run.deadline_answers), those journaled
        entries, self.notes = store.entries(run_id)
        for e in entries:
            if e.kind in (REQUEST, REPEAT):
                self.requests.setdefault(e.request_id, e.body)
                self.sent_at[e.request_id] = e.at
            elif e.kind == ANSWER:
                self.answers.append((e.request_id, e.body))
            elif e.kind == DROPPED and e.body.get("kind") in (REQUEST, REPEAT):
                # a half-written request may or may not have been sent: count it in flight
                self.requests.setdefault(e.request_id, _UNKNOWN)
                self.sent_at.setdefault(e.request_id, e.at)

    # ---------------------------------------------------------------- replay
    def replay(self, run: Any) -> None:
        """Give the run every journaled answer, in the journal's order."""
        if not run.started:
            now = time.time()
            run.elapsed_ms = (now - self.started) * 1000.0  # limits.deadline counts from the recorded start
            run.start()
            if run.deadline_timer is not None:
                self.deadline_at = now + run.deadline_timer.ms / 1000.0
        for rid, body in self.answers:
            run.cancelled()
            self._verify(run)
            run.answer(rid, codec.decode_answer(body))
        self._verify(run)
        done = {rid for rid, _body in self.answers}
        self.inflight = {rid for rid in self.requests if rid not in done}

    def _verify(self, run: Any) -> None:
        for req in run.ready():
            journaled = self.requests.get(req.id, None)
            if journaled is None or journaled is _UNKNOWN or codec.same_request(journaled, req):
                continue
            raise JournalError(f"run {self.run_id} does not follow its journal at request {req.id}: the "
                               f"journal has {_label(journaled)}, the workflow asks for "
                               f"{_label(codec.describe(req))}")

    # ---------------------------------------------------------------- going on
    def stop_now(self) -> bool:
        return self.max_answers is not None and self.answered >= self.max_answers

    def before(self, req: Any) -> float | None:
        """Journal ``req`` before it is sent; for a sleep resumed in flight,
        the milliseconds it has left (else None: the request as asked)."""
        self.sent.add(req.id)
        if req.id not in self.inflight:
            self.store.append(self.run_id, REQUEST, req.id, codec.describe(req))
            return None
        if self.in_flight == FAIL:
            raise InFlight(f"request {req.id} ({_label(codec.describe(req))}) of run {self.run_id} was sent "
                           "before the run stopped and never answered; with --in-flight fail the run "
                           "stops here (resume without it to send it again)")
        left = None
        if req.kind == "sleep":
            elapsed_ms = (time.time() - self.sent_at.get(req.id, time.time())) * 1000.0
            left = max(0.0, req.ms - elapsed_ms)
            left = int(left) if left == int(left) else left
        else:
            self.repeated.append({"request": req.id, "capability": req.capability, "name": req.name})
        self.inflight.discard(req.id)
        self.store.append(self.run_id, REPEAT, req.id, codec.describe(req))
        return left

    def after(self, req: Any, answer: Any) -> None:
        try:
            body = codec.encode_answer(answer)
        except codec.NotSerialisable as exc:
            raise JournalError(f"request {req.id} of run {self.run_id}: {exc}; a journaled run needs "
                               "answers JSON can hold") from None
        self.store.append(self.run_id, ANSWER, req.id, body)
        self.answered += 1

    def seconds_left(self) -> float | None:
        """Until the run's deadline timer fires (None: it has none)."""
        return None if self.deadline_at is None else self.deadline_at - time.time()

    def deadline_due(self) -> bool:
        left = self.seconds_left()
        return left is not None and left <= 0

    def deadline_passed(self, run: Any) -> None:
        """Answer the run's deadline timer; journal the answers the kernel
        then gives itself (a request never sent is journaled first, as if
        sent), like any other: a replay gives them back whatever the clock
        says then."""
        run.answer(run.deadline_timer.id, Result(None))
        own = run.deadline_answers
        for req, answer in own[self.own_answers:]:
            if req.id not in self.sent:
                self.before(req)
            self.after(req, answer)
        self.own_answers = len(own)

    def key(self, req: Any) -> str:
        return f"{self.run_id}:{req.id}"


def _label(desc: Any) -> str:
    if desc.get("kind") == "sleep":
        return f"a sleep of {desc.get('ms')} ms"
    return f"{desc.get('capability')} {desc.get('name')!r}"


# -------------------------------------------------------------------- hosts
def takes_key(host: Any) -> bool:
    """Does ``host.call`` accept the keyword ``idempotency_key``? (Hosts
    that do not are called exactly as before: docs/host.md.)"""
    try:
        params = inspect.signature(host.call).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "idempotency_key" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _call(host: Any, req: Any, key: str, keyed: bool) -> Any:
    if keyed:
        return host.call(req.capability, req.name, req.args, idempotency_key=key)
    return host.call(req.capability, req.name, req.args)


def _message(exc: BaseException) -> str:
    m = getattr(exc, "message", None)
    return m if isinstance(m, str) else str(exc)


def perform_sync(host: Any, req: Any, key: str, keyed: bool, sleep_ms: float | None) -> Any:
    if req.kind == "sleep":
        try:
            host.sleep(req.ms if sleep_ms is None else sleep_ms)
        except Exception as exc:  # noqa: BLE001 - the kernel decides what a failed sleep means
            return Thrown(_message(exc))
        return Result(None)
    try:
        return Result(_call(host, req, key, keyed))
    except Exception as exc:  # noqa: BLE001 - every host failure is an answer
        return answer_of_exception(exc)


async def perform_async(host: Any, req: Any, key: str, keyed: bool, sleep_ms: float | None) -> Any:
    if req.kind == "sleep":
        ms = req.ms if sleep_ms is None else sleep_ms
        if getattr(req, "deadline", False):  # a kernel deadline: the driver's clock, never the host's
            await asyncio.sleep(ms / 1000)
            return Result(None)
        try:
            done = host.sleep(ms)
            if inspect.isawaitable(done):
                await done
            else:
                await asyncio.sleep(ms / 1000)
        except Exception as exc:  # noqa: BLE001
            return Thrown(str(exc))
        return Result(None)
    try:
        value = _call(host, req, key, keyed)
        if inspect.isawaitable(value):
            if req.timeout_ms is not None:
                value = await asyncio.wait_for(value, req.timeout_ms / 1000)
            else:
                value = await value
        return Result(value)
    except TimeoutError:
        return TimedOut()
    except Exception as exc:  # noqa: BLE001
        return answer_of_exception(exc)


# -------------------------------------------------------------------- traces
def replay_watched(run: Any, host: Any, session: Session) -> Any:
    """Replay, then the host's observer (``host.observer``, a trace) told the
    run from here on (None when the host has none). A new run is told whole.
    A trace of a resumed run starts where the resume starts: replayed answers
    and the steps they finished are not told again; the steps still running
    and the requests still waiting at that point are told as starting now,
    so every call the trace shows starts and ends."""
    watch = getattr(host, "observer", None)
    if watch is None:
        session.replay(run)
        return None
    run.observe()  # before replay: what is still open after it is told below
    session.replay(run)
    watch(("run_start", run))
    events = run.drain_events()
    if session.answers:  # a resume: what the replay did again is not told again
        events = _still_open(events, {req.id for req in run.ready()})
    for event in events:
        watch(event)
    return watch


def _still_open(events: list, waiting: set) -> list:
    """Of the replay's events, the step starts never ended and the issues of
    requests still waiting, in their order."""
    kept: list = []
    for event in events:
        if event[0] == "step_end":
            for i in range(len(kept) - 1, -1, -1):
                if kept[i][0] == "step_start" and kept[i][1] == event[1]:
                    del kept[i]
                    break
        elif event[0] == "step_start" or (event[0] == "issue" and event[1].id in waiting):
            kept.append(event)
    return kept


# -------------------------------------------------------------------- drivers
def drive_sync(run: Any, host: Any, session: Session) -> dict | None:
    """Replay, then answer the run's requests one at a time (the reference
    order of ``flowc.runtime.drivers.drive_sync``). The record, or None when
    ``max_answers`` stopped the session first."""
    watch = replay_watched(run, host, session)
    keyed = takes_key(host)
    while not run.finished:
        run.cancelled()
        reqs = run.ready()
        if not reqs:
            raise KernelError("the run waits for nothing but has not finished")
        if session.stop_now():
            return None
        if session.deadline_due():  # between requests: a sync host call is never cut short
            tell_unstarted(run, (), watch)
            session.deadline_passed(run)
            tell(run, watch)
            continue
        req = reqs[0]
        left = session.before(req)
        if watch is not None:
            watch(("start", req))
        answer = perform_sync(host, req, session.key(req), keyed, left)
        session.after(req, answer)
        if watch is not None:
            watch(("answer", req.id, answer))
        run.answer(req.id, answer)
        tell(run, watch)
    return finish(run, watch)


async def drive_async(run: Any, host: Any, session: Session) -> dict | None:
    """Replay, then run every ready request at once (as
    ``flowc.runtime.aio.drive_async``); answers are journaled in the order
    they are given to the kernel, which is the order replay gives them.
    The kernel's deadline timers run on the event loop's clock (a timer in
    flight at a crash resumes with the time it had left)."""
    run.clock = True  # as flowc.runtime.aio: deadlines fire on the event loop's clock
    watch = replay_watched(run, host, session)
    keyed = takes_key(host)
    running: dict[int, asyncio.Task] = {}
    timer = DeadlineTimer.of(run, session.seconds_left())
    try:
        while not run.finished:
            stop_cancelled(run, running, watch)
            if session.stop_now():
                return None
            if timer is not None and timer.passed():  # the kernel answers the rest itself
                timer.cancel()
                timer = None
                tell_unstarted(run, running, watch)
                session.deadline_passed(run)
                tell(run, watch)
                continue
            for req in run.ready():
                if req.id not in running:
                    left = session.before(req)
                    if watch is not None:
                        watch(("start", req))
                    running[req.id] = asyncio.ensure_future(perform_async(host, req, session.key(req), keyed, left))
            if not running:
                raise KernelError("the run waits for nothing but has not finished")
            done, _pending = await asyncio.wait(waiting_on(running, timer), return_when=asyncio.FIRST_COMPLETED)
            for rid in sorted(rid for rid, task in running.items() if task in done):
                task = running.pop(rid)
                if session.stop_now():
                    return None
                session.after(_Req(rid), task.result())
                if watch is not None:
                    watch(("answer", rid, task.result()))
                run.answer(rid, task.result())
                tell(run, watch)
    finally:
        if timer is not None:
            timer.cancel()
        for rid, task in running.items():
            task.cancel()
            if watch is not None and not run.answered_itself(rid):
                watch(("cancel", rid))
    return finish(run, watch)


class _Req:
    __slots__ = ("id",)

    def __init__(self, rid: int) -> None:
        self.id = rid
