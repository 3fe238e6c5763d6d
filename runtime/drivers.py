"""Drivers of the kernel that need nothing but the standard library.

- :func:`drive_sync` answers each request by calling the host, one request
  at a time in the order the kernel issued them (``host.call`` /
  ``host.sleep``): the behaviour of ``run(inputs, host)``.
- :func:`drive_virtual` keeps a virtual clock: every request finishes
  ``latency_ms`` after it started (a sleep after its ``ms``); the driver
  answers the earliest first (ties: the request issued first), so timeouts
  and race winners are decided by the script, never by the machine. A call
  slower than its ``timeout_ms`` is answered ``TimedOut`` at the deadline;
  the kernel's deadline timers (``Sleep(ms, deadline=True)``) fire on the
  same clock, after any other request finishing at the same instant. The
  run's own deadline timer (``run.deadline_timer``, its
  ``limits.deadline``) fires on it too, after everything else due at that
  instant, the other deadline timers included; the kernel then answers
  what is still running, and what is asked later, itself.

The sync driver has no clock: it leaves ``run.clock`` false, so the kernel
never issues a deadline timer to it (see :func:`kernel.with_deadline`),
and it never answers the run's deadline timer: a deadline never fires
there.

The asyncio driver is :mod:`flowc.runtime.aio` (MicroPython has no asyncio
of the same shape). MicroPython-compatible: no typing, no f-strings.
"""

try:
    from flowc.runtime.kernel import Error, KernelError, Result, Thrown, TimedOut, heappop, heappush
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    from kernel import Error, KernelError, Result, Thrown, TimedOut, heappop, heappush


def _message(exc):
    m = getattr(exc, "message", None)
    return m if isinstance(m, str) else str(exc)


def answer_of_exception(exc):
    """The answer for a host's exception: a timeout (``exc.timeout`` true),
    a tool error (``exc.retriable`` true, flowc.host.ToolError) or a host failure."""
    retriable = bool(getattr(exc, "retriable", False))
    if getattr(exc, "timeout", False):
        answer = TimedOut(_message(exc))
    elif retriable:
        answer = Error(_message(exc))
    else:
        answer = Thrown(_message(exc))
    # what a dialect may read besides the kind (WorkflowSkill retries every
    # retriable failure and names a failure without message by its type)
    answer.retriable = retriable
    answer.type_name = type(exc).__name__
    return answer


def perform_sync(host, req):
    """Carry out one request with a synchronous host; the answer."""
    if req.kind == "sleep":
        try:
            host.sleep(req.ms)
        except Exception as exc:  # noqa: BLE001 - the kernel decides what a failed sleep means
            return Thrown(_message(exc))
        return Result(None)
    try:
        return Result(host.call(req.capability, req.name, req.args))
    except Exception as exc:  # noqa: BLE001 - every host failure is an answer
        return answer_of_exception(exc)


def watcher(run, host):
    """The observer a host carries (``host.observer``, a trace), told what
    the run does: ``("run_start", run)``, the kernel's events (see
    ``Kernel.observe``), ``("start", request)`` as the driver starts one,
    ``("answer", id, answer)``, ``("cancel", id)``, ``("run_end", record)``
    (None when the record raised). None when the host has no observer."""
    watch = getattr(host, "observer", None)
    if watch is not None:
        run.observe()
        watch(("run_start", run))
    return watch


def tell(run, watch):
    """Hand the kernel's events to ``watch`` (nothing when not watched)."""
    if watch is not None:
        for event in run.drain_events():
            watch(event)


def finish(run, watch):
    """The run's record, told to ``watch`` as ``("run_end", record)``."""
    if watch is None:
        return run.record()
    try:
        record = run.record()
    except BaseException:
        watch(("run_end", None))
        raise
    watch(("run_end", record))
    return record


def drive_sync(run, host):
    """Answer ``run``'s requests with ``host`` one at a time; the record."""
    watch = watcher(run, host)
    if not run.started:
        run.start()
    tell(run, watch)
    while not run.finished:
        reqs = run.ready()
        if not reqs:
            raise KernelError("the run waits for nothing but has not finished")
        req = reqs[0]
        if watch is not None:
            watch(("start", req))
        answer = perform_sync(host, req)
        if watch is not None:
            watch(("answer", req.id, answer))
        run.answer(req.id, answer)
        tell(run, watch)
    return finish(run, watch)


class VirtualHost:
    """A scripted host for virtual time. ``script`` maps ``"capability:name"``
    or ``"name"`` to an answer or a list of answers given in turn (the last
    repeats); an answer is ``{"output": v}``, ``{"error": msg}`` (a tool
    error), ``{"throw": msg}`` (a host failure) or ``{"timeout": true}``,
    each with an optional ``"latency_ms"`` (default 0). Unscripted calls
    are tool errors."""

    def __init__(self, script):
        self.script = script
        self.turn = {}

    def answer(self, req):
        """(answer, latency in ms) for call request ``req``."""
        key = req.capability + ":" + req.name
        spec = self.script.get(key, self.script.get(req.name))
        if isinstance(spec, list):
            n = self.turn.get(key, 0)
            self.turn[key] = n + 1
            spec = spec[min(n, len(spec) - 1)] if spec else None
        if not isinstance(spec, dict):
            return Error(key + " not registered"), 0
        latency = spec.get("latency_ms", 0)
        if "error" in spec:
            return Error(spec["error"]), latency
        if "throw" in spec:
            return Thrown(spec["throw"]), latency
        if spec.get("timeout"):
            return TimedOut(), latency
        return Result(spec.get("output")), latency


def _new_requests(run, seen):
    """The requests issued after id ``seen``, in issue order: ids grow as
    they are issued and ``ready()`` lists them in issue order, so the new
    ones are its tail (read from the end: work for the new ones only)."""
    reqs = run.ready()
    i = len(reqs)
    while i and reqs[i - 1].id > seen:
        i -= 1
    return reqs[i:]


def _finishing(req, now, host):
    """((finish time, 1 for a deadline timer else 0), answer) for ``req``
    started at ``now``."""
    if req.kind == "sleep":
        late = 1 if getattr(req, "deadline", False) else 0
        return (now + req.ms, late), Result(None)
    answer, latency = host.answer(req)
    if req.timeout_ms is not None and latency > req.timeout_ms:
        return (now + req.timeout_ms, 0), TimedOut()
    return (now + latency, 0), answer


class _InFlight:
    """The requests in flight, given back in the order answers are due:
    by finish time; at the same instant a deadline timer after the rest
    (a body that finishes exactly at its deadline is in time); else the
    request issued first. Requests sharing (finish time, timer or not)
    wait in one first-in first-out bucket: they are added in issue order,
    so a bucket is in id order already, and the heap holds one key per
    bucket. Adding or taking one costs O(log K) for K buckets (K <= N);
    a cancelled request is skipped when it comes up."""

    def __init__(self):
        self.keys = []     # heap of (finish time, timer or not), one per bucket
        self.buckets = {}  # key -> [index of the next entry, [(id, finish time, answer), ...]]
        self.live = set()  # ids added and neither taken nor cancelled

    def add(self, rid, key, answer):
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = [0, []]
            heappush(self.keys, key)
        bucket[1].append((rid, key[0], answer))  # its own time: 5 and 5.0 share a bucket
        self.live.add(rid)

    def cancel(self, rid):
        self.live.discard(rid)

    def take(self):
        """(finish time, id, answer) of the next answer due; None when none is."""
        while self.keys:
            key = self.keys[0]
            bucket = self.buckets[key]
            entries = bucket[1]
            while bucket[0] < len(entries):
                rid, at, answer = entries[bucket[0]]
                bucket[0] += 1
                if rid in self.live:
                    self.live.discard(rid)
                    if bucket[0] == len(entries):
                        self._drop(key)
                    return at, rid, answer
            self._drop(key)
        return None

    def _drop(self, key):
        del self.buckets[key]
        heappop(self.keys)


def drive_virtual(run, host):
    """Run on a virtual clock starting at 0 ms; ``host`` gives each call's
    answer and latency (:class:`VirtualHost`). The record's steps carry
    ``start_ms``/``end_ms``. Returns the record.

    Each event costs O(log N) for N requests in flight (see
    :class:`_InFlight`), and only the requests issued since the last event
    are started."""
    now = 0
    run.set_time(now)
    run.clock = True
    if not run.started:
        run.start()
    inflight = _InFlight()
    seen = -1  # the largest request id started so far
    timer = run.deadline_timer
    if timer is not None:  # the run's deadline: after everything due at its instant, deadline timers too
        inflight.add(timer.id, (now + timer.ms, 2), Result(None))
    while not run.finished:
        for rid in run.cancelled():
            inflight.cancel(rid)
        for req in _new_requests(run, seen):
            seen = req.id
            key, answer = _finishing(req, now, host)
            inflight.add(req.id, key, answer)
        due = inflight.take()
        if due is None:
            raise KernelError("the run waits for nothing but has not finished")
        now, rid, answer = due
        run.set_time(now)
        run.answer(rid, answer)
    return run.record()
