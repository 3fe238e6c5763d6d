"""The sans-I/O execution kernel: runs generator tasks, asks a driver for host work.

The kernel performs no I/O, reads no clock and starts no thread. A run is a
tree of *tasks*; each task is a generator that yields either a host request
(:class:`Call`, :class:`Sleep`) and is resumed with the driver's answer
(:class:`Result`, :class:`Error`, :class:`Thrown`, :class:`TimedOut`), or a
kernel instruction (:class:`Spawn`, :class:`Wait`, :class:`Cancel`) that
the kernel carries out at once. A driver loops::

    while not run.finished:
        for rid in run.cancelled(): ...       # stop work nobody waits for
        for req in run.ready(): ...           # start what is not started yet
        run.answer(req.id, Result(value))     # one answer at a time, any order
    record = run.record()

Why generators: a node body stays ordinary sequential code (``answer =
yield Call(...)``; ``yield from`` for nested bodies), the same source runs
on CPython and MicroPython (no asyncio, no threads), and the kernel decides
alone when each task resumes, so the same answers given in the same order
always give the same record.

A deadline is a timer task raced against the body it bounds
(:func:`with_deadline`); only a driver with a clock fires one.

Request ids count from 1 in the order the kernel issues requests; since
issuing depends only on earlier answers, a journal of ``(id, answer)``
pairs replays a run exactly.

The standard library only (imports nothing at all); MicroPython-compatible:
no typing, dataclasses or f-strings.
"""


# ------------------------------------------------------------------ requests

class Call:
    """Ask the host to call ``capability``/``name`` with ``args``; the
    driver answers within ``timeout_ms`` (None: no limit) or with TimedOut."""

    kind = "call"

    def __init__(self, capability, name, args, timeout_ms=None):
        self.id = None  # set by the kernel when the request is issued
        self.capability = capability
        self.name = name
        self.args = args
        self.timeout_ms = timeout_ms

    def __repr__(self):
        return "Call(" + repr(self.id) + ", " + repr(self.capability) + ", " + repr(self.name) + ")"


class Sleep:
    """Ask the driver to wait ``ms`` milliseconds (answer: Result(None)).
    ``deadline``: the kernel's own timer (see :func:`with_deadline`), not a
    pause the workflow asked for: a driver waits on its clock and never
    asks the host to sleep; on a tie it is answered after the other
    requests finishing at the same instant."""

    kind = "sleep"

    def __init__(self, ms, deadline=False):
        self.id = None
        self.ms = ms
        self.deadline = deadline

    def __repr__(self):
        return "Sleep(" + repr(self.id) + ", " + repr(self.ms) + ")"


# ------------------------------------------------------------------ answers

class Result:
    """The request succeeded with ``value``."""

    kind = "result"

    def __init__(self, value=None):
        self.value = value


class Error:
    """The tool reported an error (``message``)."""

    kind = "error"

    def __init__(self, message):
        self.message = message


class Thrown:
    """The host itself failed (``message``)."""

    kind = "thrown"

    def __init__(self, message):
        self.message = message


class TimedOut:
    """The driver gave up after the request's ``timeout_ms``."""

    kind = "timeout"

    def __init__(self, message="timeout"):
        self.message = message


# ------------------------------------------------------------------ kernel instructions

class Spawn:
    """Start ``gens`` as child tasks of the yielding task; resumes it at once
    with the list of :class:`Task` objects, in the same order."""

    def __init__(self, gens):
        self.gens = gens


class Wait:
    """Suspend until one (``any=True``) or all of ``tasks`` are done;
    resumes with the list of those done, in the order they finished."""

    def __init__(self, tasks, any=False):
        self.tasks = tasks
        self.any = any


class Cancel:
    """Stop ``tasks`` (and their children): their generators are closed and
    their outstanding requests are listed by :meth:`Kernel.cancelled`."""

    def __init__(self, tasks):
        self.tasks = tasks


class Task:
    """One generator of the run. ``done`` once it returned or raised:
    ``value`` or ``error``; ``result()`` gives the value or re-raises."""

    def __init__(self, gen, parent, seq):
        self.gen = gen
        self.parent = parent
        self.seq = seq          # creation order: ties are broken by it
        self.children = []
        self.done = False
        self.cancelled = False
        self.value = None
        self.error = None
        self.request = None     # the request it waits for
        self.waiting = None     # the Wait it is suspended on
        self.finished = []      # children done and not yet reported to a Wait
        self.current = None     # the kernel's ``current`` while it runs

    def result(self):
        if self.error is not None:
            raise self.error
        return self.value


class KernelError(Exception):
    """The driver broke the protocol (answered an unknown id, twice ...)."""


class Kernel:
    """Runs the root generator ``main`` (give it to :meth:`start`).
    Subclasses hold the workflow state; :meth:`enter`/:meth:`leave` bracket
    every stretch of kernel work (a place to install per-run hooks)."""

    def __init__(self):
        self.now = None          # virtual time (ms) set by a driver that has one
        self.clock = False       # the driver has a clock: it answers deadline timers (with_deadline)
        self.current = None      # what runs now (named in failures); saved per task
        self.journal = []        # (request id, answer) in the order answered: replays the run
        self.late = []           # ids answered after they were cancelled
        # limits a driver with a wall clock enforces (the workflow's own:
        # {"deadline_ms": n}); the kernel reads no clock
        self.limits = {}
        self._root = None
        self._next_id = 1
        self._seq = 0
        self._pending = {}       # request id -> task
        self._issued = []        # requests issued, in order (answered ones are dropped lazily)
        self._cancelled = []     # ids to report through cancelled()
        self._dropped = set()    # every id cancelled so far
        self._runnable = []      # (task, value to send, exception to throw)
        self.events = None       # while observed: what happened, in order (see observe)

    # -------------------------------------------------------------- driver API
    def start(self, main):
        self._root = self._task(main, None)
        self._pump()
        return self

    @property
    def started(self):
        return self._root is not None

    @property
    def finished(self):
        return self._root is not None and self._root.done

    def ready(self):
        """The requests issued and not yet answered or cancelled, in issue order."""
        out = []
        keep = []
        for req in self._issued:
            if req.id in self._pending:
                out.append(req)
                keep.append(req)
        self._issued = keep
        return out

    def cancelled(self):
        """Ids of requests cancelled since the last call: the driver should
        stop them; an answer that still comes is ignored (listed in ``late``)."""
        out = self._cancelled
        self._cancelled = []
        return out

    def observe(self):
        """Keep events for a driver that reports them (a trace): ``("issue",
        request, step)`` as each request is issued, and what the run's steps
        note (``("step_start", step)``, ``("step_end", step, status,
        detail)``). The driver takes them with :meth:`drain_events`."""
        if self.events is None:
            self.events = []

    def drain_events(self):
        """The events noted since the last call (none unless observed)."""
        out = self.events
        if not out:
            return []
        self.events = []
        return out

    def note(self, *event):
        """A run notes a step starting or ending; kept only while observed."""
        if self.events is not None:
            self.events.append(event)

    def set_time(self, ms):
        """A driver with a clock says what time it is (virtual time)."""
        self.now = ms

    def answer(self, rid, answer):
        task = self._pending.pop(rid, None)
        if task is None:
            if rid in self._dropped:
                self.late.append(rid)
                return
            raise KernelError("no request " + repr(rid) + " is waiting for an answer")
        self.journal.append((rid, answer))
        task.request = None
        self._runnable.append((task, answer, None))
        self._pump()

    def close(self):
        """Abandon the run: every task stops, every outstanding request is
        listed by :meth:`cancelled`."""
        if self._root is not None and not self._root.done:
            self._cancel(self._root)

    def outcome(self):
        """The root task's value (raises what it raised)."""
        if not self.finished:
            raise KernelError("the run has not finished")
        return self._root.result()

    # -------------------------------------------------------------- hooks
    def enter(self):
        pass

    def leave(self):
        pass

    # -------------------------------------------------------------- the scheduler
    def _task(self, gen, parent):
        self._seq += 1
        task = Task(gen, parent, self._seq)
        if parent is not None:
            parent.children.append(task)
            task.current = self.current  # a child runs on behalf of what spawned it
        self._runnable.append((task, None, None))
        return task

    def _pump(self):
        self.enter()
        try:
            while self._runnable:
                task, value, error = self._runnable.pop(0)
                if not task.done:
                    self._resume(task, value, error)
        finally:
            self.leave()

    def _resume(self, task, value, error):
        self.current = task.current
        while True:
            try:
                if error is not None:
                    e, error = error, None
                    item = task.gen.throw(e)
                else:
                    item = task.gen.send(value)
            except StopIteration as stop:
                self._finish(task, stop.args[0] if stop.args else None, None)
                return
            except Exception as exc:  # noqa: BLE001 - a task's failure goes to its parent
                self._finish(task, None, exc)
                return
            value = None
            if isinstance(item, (Call, Sleep)):
                item.id = self._next_id
                self._next_id += 1
                task.request = item
                task.current = self.current
                self._pending[item.id] = task
                self._issued.append(item)
                if self.events is not None:
                    self.events.append(("issue", item, self.current))
                return
            if isinstance(item, Spawn):
                value = [self._task(g, task) for g in item.gens]
            elif isinstance(item, Wait):
                got = self._collect(task, item)
                if got is None:
                    task.waiting = item
                    task.current = self.current
                    return
                value = got
            elif isinstance(item, Cancel):
                for t in item.tasks:
                    self._cancel(t)
            else:
                error = KernelError("a task yielded " + repr(item))

    def _collect(self, task, wait):
        """The tasks of ``wait`` done (in finishing order) if that satisfies it, else None."""
        done = [t for t in task.finished if t in wait.tasks]
        if not done and not wait.tasks:
            return []
        if not done:
            return None
        if not wait.any:
            for t in wait.tasks:
                if not t.done:
                    return None
        for t in done:
            task.finished.remove(t)
        return done

    def _finish(self, task, value, error):
        for child in task.children:  # children never outlive their task
            self._cancel(child)
        task.children = []
        task.done = True
        task.value = value
        task.error = error
        task.gen = None
        parent = task.parent
        if parent is None or parent.done:
            return
        parent.finished.append(task)
        if parent.waiting is not None:
            got = self._collect(parent, parent.waiting)
            if got is not None:
                parent.waiting = None
                self._runnable.append((parent, got, None))

    def _cancel(self, task):
        if task.done:
            return
        for child in task.children:
            self._cancel(child)
        task.cancelled = True
        task.done = True
        if task.request is not None:
            rid = task.request.id
            self._pending.pop(rid, None)
            self._cancelled.append(rid)
            self._dropped.add(rid)
            task.request = None
        gen = task.gen
        task.gen = None
        if gen is not None:
            try:
                gen.close()
            except Exception:  # noqa: BLE001,S110 - a closing body has nothing left to report
                pass


# ------------------------------------------------------------------ deadlines

def _timer(ms):
    yield Sleep(ms, True)


def with_deadline(kernel, body, ms):
    """Run the generator ``body`` against a deadline of ``ms`` milliseconds:
    ``(True, value)`` when the body finished first, ``(False, None)`` when
    the deadline passed first; then the body is cancelled with everything
    it started (its outstanding requests come out of ``cancelled()``). An
    exception of the body propagates. Use: ``in_time, value = yield from
    with_deadline(run, body, ms)``.

    The deadline is a ``Sleep(ms, deadline=True)`` raced against the body:
    both are spawned, the first done wins, the other is cancelled. The
    kernel reads no clock, so only a driver with one (``kernel.clock``:
    the virtual-time and event-loop drivers) can fire a deadline. Without a
    clock, or with ``ms`` None, the body runs inline as if there were no
    deadline: no task, no timer, no request, so a sync run gives the same
    requests, journal and record as before deadlines existed."""
    if ms is None or not kernel.clock:
        return True, (yield from body)
    tasks = yield Spawn([body, _timer(ms)])
    first = (yield Wait(tasks, True))[0]
    if first is tasks[0]:
        yield Cancel([tasks[1]])
        return True, first.result()
    yield Cancel([tasks[0]])
    return False, None
