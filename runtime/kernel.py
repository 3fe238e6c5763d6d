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
(:func:`with_deadline`); only a driver with a clock fires one. The run's
own deadline (``limits.deadline``, ``kernel.limits["deadline_ms"]``) is
the kernel's too: one timer, ``kernel.deadline_timer``, that a driver
with a clock answers when its time has passed; then the kernel answers
every request itself (see :meth:`Kernel.answer`).

Request ids count from 1 in the order the kernel issues requests; since
issuing depends only on earlier answers, a journal of ``(id, answer)``
pairs replays a run exactly.

A run's budgets are the kernel's: ``kernel.fuel`` (:mod:`flowc.runtime.fuel`),
which every scheduler on it charges.

The standard library only (imports nothing but :mod:`flowc.runtime.fuel`);
MicroPython-compatible: no typing, dataclasses or f-strings.
"""

try:
    from flowc.runtime.fuel import Fuel, OutOfFuel
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    from fuel import Fuel, OutOfFuel  # noqa: F401


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
        self.members = None     # while waiting: the set of the Wait's tasks, once built
        self.checks = 0         # while waiting: membership checks made without that set
        self.scan = 0           # while in an all-wait: its tasks known done, from the front
        self.hit = False        # while waiting: one of its tasks is done and unreported

    def result(self):
        if self.error is not None:
            raise self.error
        return self.value


# The id of the run's deadline timer (``Kernel.deadline_timer``): the kernel's
# requests count from 1, so it never names one of them, and it never enters
# ``ready()``, the journal or a record.
DEADLINE_TIMER = 0


def deadline_answer(deadline_ms):
    """The answer of a request past the run's ``limits.deadline``."""
    return TimedOut("limits.deadline: the run's deadline of " + str(deadline_ms) + " ms has passed")


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
        # the workflow's own limits ({"deadline_ms": n}); the kernel keeps the
        # deadline with a timer a driver with a clock answers (deadline_timer)
        self.limits = {}
        self.elapsed_ms = 0          # of the deadline, gone before start (a resumed run's): told by its driver
        self.deadline_timer = None   # Sleep(ms left, deadline=True), id DEADLINE_TIMER, once started
        self.past_deadline = False   # the timer was answered: the kernel answers every request itself
        self.deadline_answers = []   # (request, answer) the kernel gave itself past the deadline, in order
        self._answered_itself = set()  # ids of those
        self._asked_past = []        # requests issued past the deadline, not answered yet
        self._deadline_at = None     # the deadline on the clock of a driver that tells the time (set_time)
        # the run's budgets, charged by the scheduler (a subclass gives its own)
        self.fuel = Fuel()
        self._root = None
        self._next_id = 1
        self._seq = 0
        self._pending = {}       # request id -> task
        self._issued = []        # requests issued, in order; None where answered or cancelled
        self._slot = {}          # request id -> its index in _issued while outstanding
        self._holes = 0          # the Nones in _issued
        self._cancelled = []     # ids to report through cancelled()
        self._dropped = set()    # every id cancelled so far
        self._runnable = []      # FIFO of (task, value to send, exception to throw) from _head on
        self._head = 0           # the next entry of _runnable to resume
        self.events = None       # while observed: what happened, in order (see observe)

    # -------------------------------------------------------------- driver API
    def start(self, main):
        deadline_ms = (self.limits or {}).get("deadline_ms")
        if deadline_ms is not None:
            timer = Sleep(max(deadline_ms - self.elapsed_ms, 0), True)
            timer.id = DEADLINE_TIMER
            self.deadline_timer = timer
            if self.now is not None:  # a driver that tells the time: the deadline's instant on its clock
                self._deadline_at = self.now + timer.ms
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
        if not self._holes:
            return self._issued[:]
        return list(filter(None, self._issued))  # a request is never false; None marks a hole

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
        detail)``); past the run's deadline, the requests the kernel answers
        itself: ``("answer", id, answer)``, after ``("start", request)`` for
        one the driver was never handed. The driver takes them with
        :meth:`drain_events`."""
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
        """Give request ``rid`` its answer. Answering ``deadline_timer``
        (its ``ms`` have passed) ends the run's deadline: the kernel answers
        every request still outstanding ``TimedOut("limits.deadline: ...")``
        itself, in issue order (their ids come out of ``cancelled()``: the
        driver stops them), and every request issued from then on as it is
        issued, without handing it to the driver; a request asked while one
        of those is answered is answered before the next (at once). A
        driver without a clock never answers the timer, so the deadline
        never passes there.

        A driver that tells the time (:meth:`set_time`, virtual time) has
        the deadline's instant on its clock: a request asked from then on
        is past it too. The kernel answers those after the calls and sleeps
        the driver answers at that instant, before any deadline timer due
        then (the virtual clock's order for everything due at one instant)."""
        if self._asked_past and self._is_timer(rid):
            self._answer_asked_past()
            if rid not in self._pending and rid != DEADLINE_TIMER:
                return  # its deadline no longer matters: cancelled by those answers
        if rid == DEADLINE_TIMER and self.deadline_timer is not None:
            if not self.past_deadline and not self.finished:
                self._deadline_passed()
            return
        task = self._pending.pop(rid, None)
        if task is None:
            if rid in self._dropped:
                self.late.append(rid)
                return
            raise KernelError("no request " + repr(rid) + " is waiting for an answer")
        self.journal.append((rid, answer))
        self._settled(rid)
        task.request = None
        self._runnable.append((task, answer, None))
        self._pump()

    def answered_itself(self, rid):
        """Did the kernel answer request ``rid`` itself (past the deadline)?"""
        return rid in self._answered_itself

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

    # -------------------------------------------------------------- the run's deadline
    def _is_timer(self, rid):
        """Is ``rid`` a deadline timer (a step's or the run's)?"""
        if rid == DEADLINE_TIMER:
            return True
        task = self._pending.get(rid)
        return task is not None and task.request.kind == "sleep" and task.request.deadline

    def _deadline_passed(self):
        """The deadline timer was answered: answer what is outstanding, in
        issue order, each followed by what was asked meanwhile."""
        self.past_deadline = True
        for req in self.ready():
            if req.id in self._pending:  # not cancelled by an earlier answer
                self._cancelled.append(req.id)
                self._answer_itself(req, False)
                self._answer_asked_past()

    def _answer_asked_past(self):
        """Answer the requests issued past the deadline, first asked first
        (answering one may ask more: they join the end)."""
        asked = self._asked_past
        i = 0
        while i < len(asked):
            req = asked[i]
            i += 1
            if req.id in self._pending:
                self._answer_itself(req, True)
        self._asked_past = []

    def _answer_itself(self, req, unseen):
        rid = req.id
        task = self._pending.pop(rid)
        if rid in self._slot:
            self._settled(rid)
        self._dropped.add(rid)  # a driver's answer that still comes is late
        self._answered_itself.add(rid)
        answer = deadline_answer(self.limits["deadline_ms"])
        self.journal.append((rid, answer))
        self.deadline_answers.append((req, answer))
        if self.events is not None:
            if unseen:
                self.events.append(("start", req))
            self.events.append(("answer", rid, answer))
        task.request = None
        self._runnable.append((task, answer, None))
        self._pump()

    # -------------------------------------------------------------- hooks
    def enter(self):
        pass

    def leave(self):
        pass

    # -------------------------------------------------------------- the scheduler
    # Every task event (a request issued or answered, a task spawned, resumed
    # or finished) costs the kernel constant work, so a fan of N branches
    # costs O(N): the run queue is a list read from a moving head, requests
    # leave _issued by index, a Wait's membership checks use a set once a
    # list scan would repeat, and an all-wait remembers how far its list is
    # known done. Beyond that the kernel walks only what a call hands it or
    # returns (a Wait's tasks, ready()), in C-level scans and copies.

    def _settled(self, rid):
        """Request ``rid`` is answered or cancelled: it leaves ``ready()``."""
        issued = self._issued
        issued[self._slot.pop(rid)] = None
        self._holes += 1
        if self._holes > 16 and 2 * self._holes > len(issued):
            issued = [req for req in issued if req is not None]
            slot = self._slot
            for i in range(len(issued)):
                slot[issued[i].id] = i
            self._issued = issued
            self._holes = 0

    def _next_runnable(self):
        """The oldest runnable entry (the queue must not be empty)."""
        queue = self._runnable
        head = self._head
        entry = queue[head]
        queue[head] = None
        head += 1
        if head == len(queue):
            self._runnable = []
            head = 0
        elif head > 64 and 2 * head > len(queue):
            del queue[:head]
            head = 0
        self._head = head
        return entry

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
            while self._head < len(self._runnable):
                task, value, error = self._next_runnable()
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
                if self.past_deadline or self._deadline_at is not None and self.now >= self._deadline_at:
                    self._asked_past.append(item)  # the kernel answers it (_answer_asked_past), never the driver
                else:
                    self._slot[item.id] = len(self._issued)
                    self._issued.append(item)
                if self.events is not None:
                    self.events.append(("issue", item, self.current))
                return
            if isinstance(item, Spawn):
                value = [self._task(g, task) for g in item.gens]
            elif isinstance(item, Wait):
                got = self._collect(task, item)
                if got is None:
                    task.waiting = item  # _collect reset its membership checks and scan
                    task.current = self.current
                    return
                value = got
            elif isinstance(item, Cancel):
                for t in item.tasks:
                    self._cancel(t)
            else:
                error = KernelError("a task yielded " + repr(item))

    def _collect(self, task, wait):
        """The tasks of ``wait`` done (in finishing order) if that satisfies it,
        else None (the task then waits; ``task.scan``: how many of the list,
        from the front, are known done)."""
        if not wait.tasks:
            return []
        task.members = None
        task.checks = 0
        task.scan = 0
        task.hit = False
        for t in task.finished:
            if self._member(task, wait, t):
                task.hit = True
                return self._satisfied(task, wait)
        return None

    def _member(self, task, wait, t):
        """Is ``t`` one of the tasks ``wait`` (yielded by ``task``) names?
        The first checks scan the list (cheaper than building a set when the
        Wait is answered at once, the usual case); later ones use a set."""
        members = task.members
        if members is None:
            task.checks += 1
            if task.checks <= 2:
                return t in wait.tasks
            members = task.members = set(wait.tasks)
        return t in members

    def _satisfied(self, task, wait):
        """A child in ``wait`` is done and unreported: the tasks it reports,
        or None (an all-wait with some still running)."""
        if not wait.any:
            tasks = wait.tasks
            scan = task.scan
            while scan < len(tasks) and tasks[scan].done:  # done never reverts: scan only advances
                scan += 1
            task.scan = scan
            if scan < len(tasks):
                return None
        done = []
        rest = []
        for t in task.finished:
            if self._member(task, wait, t):
                done.append(t)
            else:
                rest.append(t)
        task.finished = rest
        task.members = None
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
        if parent.waiting is None:
            return
        if self._member(parent, parent.waiting, task):
            parent.hit = True
        if parent.hit:  # an all-wait is checked again at every child's end, as it always was
            got = self._satisfied(parent, parent.waiting)
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
            if rid in self._slot:  # handed to the driver: it stops it
                self._settled(rid)
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


# ------------------------------------------------------------------ a heap
# A binary min-heap (heapq's heappush and heappop) for what runs on the
# kernel: the dataflow scheduler's candidates and the virtual clock's
# finish times. Not every MicroPython build has heapq, and the order must
# be the same on each.

def heappush(heap, item):
    heap.append(item)
    i = len(heap) - 1
    while i:
        parent = (i - 1) >> 1
        if heap[parent] <= item:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = item


def heappop(heap):
    last = heap.pop()
    if not heap:
        return last
    top = heap[0]
    n = len(heap)
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and heap[child + 1] < heap[child]:
            child += 1
        if last <= heap[child]:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = last
    return top
