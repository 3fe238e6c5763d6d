"""The dataflow workflow program (the instruction dialect) on the sans-I/O kernel.

A compiled instruction workflow is a *plan*: plain data describing every
graph (the top level and each body) plus one callable per expression. The
Python backend generates the callables as Python functions; the VM gives
closures that run bytecode. Both hand the plan to :class:`DataflowRun`, a
:class:`~flowc.runtime.kernel.Kernel` whose tasks are the graph and its
steps written as generators: a host call is ``answer = yield Call(...)``,
a retry's pause ``yield Sleep(ms)``. Whoever drives the kernel (the sync,
asyncio or virtual-time driver of :mod:`flowc.runtime.drivers`) performs
the I/O, so both backends schedule by this code and produce the same record.

The standard library only (plus :mod:`flowc.runtime.cel`, the CEL value
semantics); MicroPython-compatible: no typing, dataclasses or f-strings.
:func:`run`, :func:`run_async` and :func:`run_virtual` bind the program to
a driver: the entry points of generated modules and the VM.

Scheduling (agentd's run.rs, see docs/instruction.md)
------------------------------------------------------
- One trigger fires (the first in id order unless ``trigger`` names one);
  the other triggers are ``skipped``. The trigger's output is the payload.
- A step is ready when each of its dependencies is ``done``, ``skipped``
  or ``pruned`` and not all are pruned; it is ``pruned`` when all are. A
  ``failed`` or ``cancelled`` dependency blocks it.
- Sequential runs (the default, the dialect's reference order): ready steps
  run one at a time, the smallest id first. Concurrent runs
  (``concurrent=True``): every ready step starts at once, each new scan in
  id order; ``parallel`` branches, ``race`` branches and up to ``parallel``
  foreach items / batch groups run side by side.
- A false ``when`` prunes the step; a switch prunes the arms it did not
  choose (the node's branch edges); a switch's chosen arm and an
  ``on_error: goto:`` target are forced: ready at once.
- ``on_error: continue`` makes a failed step ``done`` with output
  ``{"error": message}``; ``goto`` leaves it ``failed`` and forces the
  target; ``fail`` (the default) ends the graph: at the top level the run
  fails, in a body the step that owns the body fails.
- ``finish`` ends the run with its status and output; steps that have not
  run are ``cancelled``. With nothing ready and no finish the run is
  ``stalled``.
- Bodies: foreach/batch per item or group, iterate while/until, subgraph
  once, parallel branches in name order, race branches in name order with
  the winner the successful branch that slept least (ties: name order);
  concurrent race: the first branch to succeed wins and the others are
  cancelled. A body's value is its sinks.
- Retries sleep ``backoff * 2**(k-1)`` before retry k, spread by a
  deterministic +-``jitter`` drawn from the workflow, step and attempt.
"""

try:
    from flowc.runtime import cel as _c
    from flowc.runtime import drivers as _drivers
    from flowc.runtime.edges import edges_of
    from flowc.runtime.fuel import DEFAULT_MAX_HOST_CALLS, DEFAULT_MAX_ITERATIONS, Fuel, OutOfFuel
    from flowc.runtime.kernel import (
        Call,
        Cancel,
        Kernel,
        Sleep,
        Spawn,
        Wait,
        heappop,
        heappush,
        with_deadline,
    )
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import cel as _c
    import drivers as _drivers
    from edges import edges_of
    from fuel import DEFAULT_MAX_HOST_CALLS, DEFAULT_MAX_ITERATIONS, Fuel, OutOfFuel  # noqa: F401
    from kernel import Call, Cancel, Kernel, Sleep, Spawn, Wait, heappop, heappush, with_deadline

# The dialect's step budget: the workflow's ``limits.steps`` (ir/semantics.py,
# DialectProfile.step_budget of the instruction dialect; a test keeps them equal).
STEP_BUDGET = "workflow_limit"

STATUS_DONE = "done"
STATUS_FAILED = "failed"
STATUS_PRUNED = "pruned"
STATUS_SKIPPED = "skipped"
STATUS_CANCELLED = "cancelled"

# A step's deadline when it sets no ``timeout`` (agentd's default, 600 s), and
# the error of a step past its deadline (the message a timed-out call gives).
DEFAULT_TIMEOUT_MS = 600000
TIMEOUT_MESSAGE = "timeout"

# Host calls whose step ``timeout`` limits each call rather than the whole
# step (the kinds http, a2a.send, a2a.delegate, a2a.wait and workflow.wait:
# an HTTP request, an a2a message or wait, a wait for another run), by the
# plan's (capability, call name): every such call carries it as
# ``Call.timeout_ms``, which the driver enforces (a slower call is answered
# TimedOut, a failure of that attempt: retried, or handled by on_error);
# the step's own deadline is then the default one.
PER_CALL_TIMEOUTS = {"http": ("request",), "a2a": ("send", "delegate", "wait"), "workflow": ("workflow.wait",)}

# Attrs that steer a step rather than being an argument of its host call.
_CONTROL_ATTRS = ("capability", "name", "timeout_ms", "on_timeout", "on_error", "cache", "budget", "skills",
                  "otel", "on_replay", "idempotent", "truthiness", "ordering")

# Named flags of an operation, read by the scheduler (never the op's name).
ENTRY = 1    # starts a run (a trigger): never started by readiness, only by the run
HALTS = 2    # done, it ends the run (finish)


class StepFailure(Exception):
    """A step failed with ``message`` (and optionally an error ``code``)."""

    def __init__(self, message, code=None, timeout=False):
        super().__init__(message)
        self.message = message
        self.code = code
        self.timeout = timeout


class HostFailure(Exception):
    """The driver answered a sleep with a failure."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class _GraphFailed(Exception):
    def __init__(self, message, step):
        super().__init__(message)
        self.message = message
        self.step = step


class _Halt(Exception):
    """The run ended (finish, or a failure at the top level)."""


class _Refused(Exception):
    """The run is refused before any step: its inputs do not fit."""

    def __init__(self, message, step):
        super().__init__(message)
        self.message = message
        self.step = step


def _message(exc):
    if isinstance(exc, MemoryError):   # its text is empty
        return "out of memory"
    m = getattr(exc, "message", None)
    if isinstance(m, str):
        return m
    return str(exc)


def jitter_factor(workflow, step, attempt, spread):
    """A deterministic factor in [1 - spread, 1 + spread] (FNV-1a of the names)."""
    if not spread:
        return 1.0
    h = 2166136261
    for ch in workflow + "\x00" + step + "\x00" + str(attempt):
        h = ((h ^ ord(ch)) * 16777619) & 0xFFFFFFFF
    return 1.0 + spread * ((h % 20001) - 10000) / 10000.0


class _Board:
    """The scheduler's book of one graph, so that a scan looks only at the
    steps whose readiness may have changed since it last looked (a step
    whose last dependency got a status, a step a route forced), never at
    every step: a run stays linear in its number of steps. Steps are named
    by their position in id order. ``edges``: the graph's edges by kind."""

    def __init__(self, nodes, edges):
        self.edges = edges
        self.position = {}
        self.dependents = {}  # step id -> positions of the steps that depend on it
        self.unsettled = []   # per position: its dependencies without a status yet
        self.heap = []        # positions the next pass looks at, smallest first
        self.queued = set()   # ... each once
        self.ready = []       # positions found ready and not started yet (a heap; stale
        self.readied = set()  # entries are those no longer in readied)
        self.touched = []     # positions made worth a look since the last take
        for i in range(len(nodes)):
            node = nodes[i]
            self.position[node["id"]] = i
            deps = edges.deps.get(node["id"], ())
            self.unsettled.append(len(deps))
            for dep in deps:
                if dep in self.dependents:
                    self.dependents[dep].append(i)
                else:
                    self.dependents[dep] = [i]
            if not deps:  # in id order: a heap already
                self.heap.append(i)
                self.queued.add(i)

    def settled(self, sid, first):
        """Step ``sid`` got a status (``first``: its first one): a dependent
        whose dependencies all have one now is worth a look (one found
        ready before that was forced: it stays ready). A running step a
        switch pruned still ends done or failed: then its dependents that
        were ready may not be any more, so they are looked at again."""
        for i in self.dependents.get(sid, ()):
            if first:
                self.unsettled[i] -= 1
                if self.unsettled[i] == 0:
                    self.touched.append(i)
            elif self.unsettled[i] == 0:
                self.readied.discard(i)
                self.touched.append(i)

    def queue(self, pos):
        if pos not in self.queued:
            self.queued.add(pos)
            heappush(self.heap, pos)

    def take(self, after, later):
        """Queue the touched steps: those past position ``after`` for the
        pass under way, the others in ``later`` (the next pass)."""
        for pos in self.touched:
            if pos > after:
                self.queue(pos)
            else:
                later.append(pos)
        self.touched = []


def _limit(value):
    """A ``parallel`` bound: a positive int, else 1 (items one at a time)."""
    return value if type(value) is int and value > 0 else 1


class DataflowRun(Kernel):
    """One run of a plan. Nothing happens until a driver calls ``start()``
    and answers the requests of ``ready()``; ``record()`` is the run record."""

    def __init__(self, plan, inputs, trigger=None, payload=None, max_iterations=None, max_host_calls=None,
                 concurrent=False, max_instructions=None):
        Kernel.__init__(self)
        self.limits = plan.get("limits") or {}  # the workflow's limits {steps, deadline_ms}
        # iterations: items, iterations, retries and what CEL's comprehensions visit;
        # instructions: the VM's CEL machine draws on them (plan_vm.py)
        self.fuel = Fuel(max_iterations, max_host_calls, max_instructions, self.limits.get("steps"), STEP_BUDGET)
        self.concurrent = concurrent
        self.plan = plan
        self.workflow = plan["name"]
        self.calls = []
        self.sleeps = []
        self.records = []
        self.began = {}  # step name -> virtual start time (only with a virtual clock)
        self.vars = {}
        self.status = None
        self.output = None
        self.error = None
        self.slept = 0  # ms slept so far (sequential race: the winner slept least)
        self.chosen = None  # the arm the switch being run chose
        self.halting = False  # the step being run ends the run when done (finish)
        self._outer_fuel = None
        self._boards = {}  # id(state) -> _Board, one per graph running
        self._indexes = {}  # the edges of each graph run so far (edges_of), for this run only
        values = {}
        for key in plan["defaults"]:
            values[key] = plan["defaults"][key]
        if inputs:
            for key in inputs:
                values[key] = inputs[key]
        self.env = {"inputs": values, "steps": {}, "vars": self.vars, "run": {"workflow": plan["name"]},
                    "env": {"workflow": plan["name"]}, "memory": {}, "signals": {}}
        self.trigger = trigger
        self.payload = payload

    def start(self):
        return Kernel.start(self, self._main())

    # CEL's fuel hook belongs to this run only while the kernel works for it
    def enter(self):
        self._outer_fuel = _c.set_fuel(self.fuel.iterate)

    def leave(self):
        _c.set_fuel(self._outer_fuel)
        self._outer_fuel = None

    def _main(self):
        top = self.plan  # the plan is the top-level graph
        try:
            yield from self.run_graph(top, self.env, "", self.trigger, self.payload)
        except _Halt:
            pass
        except _GraphFailed as e:
            self.status = "failed"
            self.error = {"message": e.message, "step": e.step}
        except _Refused as e:
            self.status = "refused"
            self.error = {"message": e.message, "step": e.step}
        except OutOfFuel as e:
            self.status = "failed"
            self.error = {"message": e.message, "step": getattr(e, "step", None) or self.current}
        if self.status is None:
            self.status = "stalled"
        ran = set()
        for rec in self.records:
            ran.add(rec["id"])
        for node in top["nodes"]:
            if node["id"] not in ran:
                self.record_step(node["id"], STATUS_CANCELLED)

    def record(self):
        """The run record ``{"status", "outputs", "error", "steps", "calls", "sleeps_ms"}``."""
        self.outcome()  # re-raises what escaped the run (a driver's own failure)
        return {"status": self.status, "outputs": _c.to_json(self.output), "error": self.error,
                "steps": self.records, "calls": self.calls, "sleeps_ms": self.sleeps}

    # ------------------------------------------------------------ host
    def sleep(self, ms):
        ms = int(ms) if ms == int(ms) else ms
        self.sleeps.append(ms)
        self.slept += ms
        answer = yield Sleep(ms)
        if answer.kind != "result":
            raise HostFailure(answer.message)

    def iterate(self, step, n=1):
        """Charge ``n`` iterations of fuel to ``step`` (the step a run out of it names)."""
        try:
            self.fuel.iterate(n)
        except OutOfFuel:
            self.current = step
            raise

    def record_step(self, step_id, status, reason=None, error=None):
        entry = {"id": step_id, "status": status}
        if reason is not None:
            entry["reason"] = reason
        if error is not None:
            entry["error"] = error
        if self.now is not None:  # a virtual clock: when the step ran
            entry["start_ms"] = self.began.pop(step_id, self.now)
            entry["end_ms"] = self.now
        self.records.append(entry)
        self.note("step_end", step_id, status, error if error is not None else reason)

    # ------------------------------------------------------------ graphs
    def edges_at(self, state):
        """The edges of the graph whose steps' statuses ``state`` holds."""
        return self._boards[id(state)].edges

    def run_graph(self, graph, env, prefix, trigger=None, payload=None):
        """Run one graph to its end; returns (state, env). Raises _GraphFailed
        when a step fails under on_error: fail."""
        nodes = graph["nodes"]
        by_id = {}
        for node in nodes:
            by_id[node["id"]] = node
        steps = dict(env["steps"])
        for node in nodes:
            steps[node["id"]] = {"status": "pending", "output": None, "error": None, "attempt": 0}
        env = dict(env)
        env["steps"] = steps
        state = {}
        forced = []
        order = [node["id"] for node in nodes]
        self._boards[id(state)] = _Board(nodes, edges_of(graph, self._indexes))
        try:
            return (yield from self._run_graph(graph, env, prefix, trigger, payload, by_id, state, forced, order))
        finally:
            del self._boards[id(state)]

    def _run_graph(self, graph, env, prefix, trigger, payload, by_id, state, forced, order):
        """The body of run_graph: the trigger, then start what is ready until
        nothing is (run_graph keeps the graph's board while it runs)."""
        nodes = graph["nodes"]
        steps = env["steps"]
        top = graph is self.plan
        if top:
            entries = [n["id"] for n in nodes if _flags(n) & ENTRY]
            chosen = trigger if trigger in entries else (entries[0] if entries else None)
            for tid in entries:
                if tid != chosen:
                    self.settle(state, tid, STATUS_SKIPPED)
                    steps[tid] = {"status": STATUS_SKIPPED, "output": None, "error": None, "attempt": 0}
                    self.record_step(prefix + tid, STATUS_SKIPPED, "another trigger fired")
            if chosen is not None:
                self.admit(by_id[chosen], env, payload)
                yield from self.execute(by_id[chosen], env, prefix, state, forced, payload)
        # One loop for both orders: a sequential run starts one ready step
        # and waits for it; a concurrent run starts every ready step and
        # waits for any. Each scan goes in id order, so the order steps
        # start in is the same for the same answers.
        slots = None if self.concurrent else 1
        running = {}  # step id -> task
        owner = {}  # task -> step id
        try:
            while True:
                fresh = self.scan(order, by_id, env, prefix, state, forced, top, running, slots)
                if not fresh and not running:
                    break
                if not self.concurrent:
                    sid = fresh[0]
                    if sid in forced:
                        forced.remove(sid)
                    yield from self.execute(by_id[sid], env, prefix, state, forced, None)
                    continue
                for sid in fresh:
                    if sid in forced:
                        forced.remove(sid)
                tasks = yield Spawn([self.execute(by_id[sid], env, prefix, state, forced, None) for sid in fresh])
                for i in range(len(fresh)):
                    running[fresh[i]] = tasks[i]
                    owner[tasks[i]] = fresh[i]
                done = yield Wait(list(running.values()), True)
                for task in done:
                    del running[owner.pop(task)]
                for task in done:
                    task.result()  # a failure ends the graph (the others are cancelled below)
        except GeneratorExit:  # closed from outside: the kernel closes the children
            raise
        except Exception as e:  # a step failed or ended the run: its siblings stop
            yield from _cancel(list(running.values()))
            raise e  # noqa: TRY201 - named: the handler yielded (cancelled tasks) since it caught e
        return state, env

    def scan(self, order, by_id, env, prefix, state, forced, top, running, slots):
        """Prune what can be pruned and list the steps to start now (at most
        ``slots``, None: all), in id order.

        The reference semantics are passes over every step in id order,
        again while a pass pruned something (and, in a sequential run,
        started nothing). A step's verdict changes only when its last
        dependency gets a status, a dependency's status changes (a running
        step a switch pruned ends done or failed) or a route forces it, so
        each pass looks only at the steps the board queued, in id order:
        the same verdicts in the same order. A prune queues its dependents
        further on for this pass and those before it for the next. The
        steps started are the smallest ready ones; the others stay ready
        for the next scan."""
        board = self._boards[id(state)]
        deps = board.edges.deps
        heap = board.heap
        fresh = []
        picked = set()
        later = []
        board.take(-1, later)
        while True:
            for pos in later:
                board.queue(pos)
            later = []
            progress = False
            while heap:
                pos = heappop(heap)
                board.queued.discard(pos)
                sid = order[pos]
                if sid in state or sid in running or sid in picked or pos in board.readied:
                    continue
                verdict = self.readiness(by_id[sid], deps.get(sid, ()), state, forced, top)
                if verdict == "pruned":
                    self.prune(sid, env, prefix, state, "every dependency was pruned")
                    progress = True
                    board.take(pos, later)
                elif verdict == "ready":
                    board.readied.add(pos)
                    heappush(board.ready, pos)
            while board.ready and (slots is None or len(fresh) < slots):
                pos = heappop(board.ready)
                if pos not in board.readied:
                    continue  # looked at again since (a dependency's status changed)
                board.readied.discard(pos)
                sid = order[pos]
                if sid not in state and sid not in running:  # a route may have pruned it since
                    fresh.append(sid)
                    picked.add(sid)
            if not progress or (slots is not None and fresh):
                break
        for pos in later:
            board.queue(pos)
        return fresh

    def admit(self, trigger, env, payload):
        """The run's inputs: the trigger's ``inputs`` mapping (rendered against
        ``{payload, env}``) over the given inputs and defaults, checked
        against the workflow's input schema. Raises _Refused."""
        values = env["inputs"]
        mapping = trigger.get("inputs")
        if mapping:
            scope = {"payload": payload if payload is not None else {}, "env": env["env"]}
            for key in trigger.get("input_order") or sorted(mapping):
                try:
                    values[key] = mapping[key](scope)
                except _c.CelError as e:
                    raise _Refused("inputs." + key + ": " + e.message, trigger["id"])
        schema = self.plan.get("input_schema")
        if schema is not None:
            errs = schema_errors(values, schema, "inputs")
            if errs:
                raise _Refused("; ".join(errs), trigger["id"])

    def readiness(self, node, deps, state, forced, top):
        """``deps``: the sources of the node's dependency edges."""
        if node["id"] in forced:
            return "ready"
        if not deps:
            # A body's steps without dependencies are its entries; at the top
            # level only the trigger starts, and a step without dependencies
            # runs only when a route (goto, on_timeout) forces it.
            return "wait" if top or _flags(node) & ENTRY else "ready"
        pruned = 0
        for dep in deps:
            st = state.get(dep)
            if st is None or st == STATUS_FAILED or st == STATUS_CANCELLED:
                return "wait"
            if st == STATUS_PRUNED:
                pruned += 1
        return "pruned" if pruned == len(deps) else "ready"

    def settle(self, state, sid, status):
        """Give step ``sid`` of the graph of ``state`` its status; its
        dependents' readiness may change."""
        first = sid not in state
        state[sid] = status
        board = self._boards.get(id(state))
        if board is not None:
            board.settled(sid, first)

    def force(self, state, forced, sid):
        """A route (a switch's arm, goto, on_timeout) makes ``sid`` ready."""
        forced.append(sid)
        board = self._boards.get(id(state))
        if board is not None and sid in board.position:
            board.touched.append(board.position[sid])

    def prune(self, sid, env, prefix, state, reason):
        self.settle(state, sid, STATUS_PRUNED)
        env["steps"][sid] = {"status": STATUS_PRUNED, "output": None, "error": None, "attempt": 0}
        self.record_step(prefix + sid, STATUS_PRUNED, reason)

    # ------------------------------------------------------------ steps
    def execute(self, node, env, prefix, state, forced, payload):
        sid = node["id"]
        name = prefix + sid
        self.current = name
        self.note("step_start", name)
        if self.now is not None:
            self.began[name] = self.now
        guard = node.get("guard")
        if guard is not None:
            try:
                ok = _c.test(guard(env))
            except _c.CelError as e:
                return self.failed(node, env, prefix, state, forced, "when: " + e.message, 1)
            if not ok:
                self.prune(sid, env, prefix, state, "when is false")
                return None
        self.fuel.step()  # limits.steps: the steps that start, in the run
        ms = self.deadline_ms(node, env)
        tries = [0]  # attempts made, read when the deadline passes
        in_time, output = yield from with_deadline(
            self, self.attempts(node, env, prefix, state, forced, payload, tries), ms)
        if in_time:
            return output
        # past the deadline: the attempt running (and its bodies, branches,
        # calls, its retry's pause) was cancelled; no retry, the step fails
        # as a timeout (on_timeout, else on_error)
        self.current = name
        return self.failed(node, env, prefix, state, forced, TIMEOUT_MESSAGE, tries[0], True)

    def deadline_ms(self, node, env):
        """The step's deadline: its ``timeout`` (agentd's default, 600 s,
        when it sets none) over every attempt and the pauses between them;
        None when the run has no clock or the step never waits (it then
        takes no time at all). Not evaluated without a clock, so a sync run
        charges no fuel for it."""
        if not self.clock or not _flags(node) & SUSPENDS:
            return None
        if _per_call_timeout(node):  # its timeout is each call's (_op_call)
            return DEFAULT_TIMEOUT_MS
        ms = _timeout_ms(self, node, env)
        return DEFAULT_TIMEOUT_MS if ms is None else ms

    def attempts(self, node, env, prefix, state, forced, payload, tries):
        """The step's attempts under its ``retry``; its output (or the
        failure policy's)."""
        sid = node["id"]
        name = prefix + sid
        steps = env["steps"]
        retry = node.get("retry")
        attempts = 1 + (retry[0] if retry else 0)
        attempt = 0
        while True:
            attempt += 1
            tries[0] = attempt
            if attempt > 1:
                self.iterate(name)  # a retry is an iteration, whatever the step does
            self.current = name
            self.halting = False
            try:
                output = yield from self.perform(node, env, prefix, state, forced, payload)
            except _Halt:
                raise
            except OutOfFuel as e:
                if getattr(e, "step", None) is None:
                    e.step = self.current  # the innermost step running (tasks may interleave)
                raise
            except (StepFailure, _c.CelError, _GraphFailed) as e:
                failure = e
            except Exception as e:  # noqa: BLE001 - a host failure is a step failure
                failure = e
            else:
                self.settle(state, sid, STATUS_DONE)
                steps[sid] = {"status": STATUS_DONE, "output": output, "error": None, "attempt": attempt}
                self.record_step(name, STATUS_DONE)
                if self.halting:
                    raise _Halt()
                arms = self._boards[id(state)].edges.branches.get(sid)  # (inline: once per step)
                if arms:
                    self.route(arms, env, prefix, state, forced)
                return output
            if attempt >= attempts or getattr(failure, "timeout", False):
                return self.failed(node, env, prefix, state, forced, _message(failure), attempt,
                                   getattr(failure, "timeout", False))
            delay = retry[1] * (2 ** (attempt - 1)) * jitter_factor(self.workflow, name, attempt, retry[3])
            if delay > 0:
                yield from self.sleep(int(delay + 0.5))

    def route(self, arms, env, prefix, state, forced):
        """After a step with branch edges ``arms`` (a switch): prune the arms
        it did not choose, force the one it chose."""
        chosen = self.chosen
        self.chosen = None
        for _case, target in arms:
            if target != chosen and target not in state:
                self.prune(target, env, prefix, state, "switch chose another case")
        if chosen is not None and chosen not in state:
            self.force(state, forced, chosen)

    def failed(self, node, env, prefix, state, forced, message, attempt, timeout=False):
        sid = node["id"]
        steps = env["steps"]
        edges = self.edges_at(state)
        route = edges.route(sid, "timeout") if timeout else None
        policy = node.get("on_error") or "fail"
        if route is not None:
            self.settle(state, sid, STATUS_FAILED)
            steps[sid] = {"status": STATUS_FAILED, "output": None, "error": message, "attempt": attempt}
            self.record_step(prefix + sid, STATUS_FAILED, error=message)
            self.force(state, forced, route)
            return None
        if policy == "continue":
            self.settle(state, sid, STATUS_DONE)
            output = {"error": message}
            steps[sid] = {"status": STATUS_DONE, "output": output, "error": message, "attempt": attempt}
            self.record_step(prefix + sid, STATUS_DONE, error=message)
            return output
        self.settle(state, sid, STATUS_FAILED)
        steps[sid] = {"status": STATUS_FAILED, "output": None, "error": message, "attempt": attempt}
        self.record_step(prefix + sid, STATUS_FAILED, error=message)
        target = edges.route(sid, "goto") if policy == "goto" else None
        if target:
            self.force(state, forced, target)
            return None
        raise _GraphFailed(message, prefix + sid)

    def attr(self, node, key, env, default=None):
        fn = node["attrs"].get(key)
        if fn is None:
            return default
        return fn(env)

    def perform(self, node, env, prefix, state, forced, payload):
        entry = _OPS.get(node["op"])
        if entry is None:
            raise StepFailure("operation " + node["op"] + " is not supported by this runtime")
        handler, flags = entry
        if flags & SUSPENDS:
            return (yield from handler(self, node, env, prefix, state, forced, payload))
        output = handler(self, node, env, prefix, state, forced, payload)
        if flags & HALTS:
            self.halting = True
        return output

    # ------------------------------------------------------------ bodies
    def region_value(self, region, env, prefix, extra):
        """Run a body with ``extra`` names in scope; its sinks' outputs."""
        inner = dict(env)
        for k in extra:
            inner[k] = extra[k]
        _state, inner_env = yield from self.run_graph(region, inner, prefix)
        sinks = edges_of(region, self._indexes).sinks
        steps = inner_env["steps"]
        if len(sinks) == 1:
            return steps[sinks[0]]["output"]
        out = {}
        for sid in sinks:
            out[sid] = steps[sid]["output"]
        return out


SUSPENDS = 4  # the op's body is a generator (it may wait for the host)


def _cancel(tasks):
    """Stop the tasks of ``tasks`` still running."""
    left = [t for t in tasks if not t.done]
    if left:
        yield Cancel(left)


def _flags(node):
    entry = _OPS.get(node["op"])
    return entry[1] if entry is not None else 0


# --------------------------------------------------------------------- operations

def _op_trigger(run, node, env, prefix, state, forced, payload):
    return payload if payload is not None else {}


def _call_args(node, env):
    args = {}
    for key in node["attr_order"]:
        if key in _CONTROL_ATTRS:
            continue
        args[key] = _c.to_json(node["attrs"][key](env))
    return args


def _timeout_ms(run, node, env):
    """The call's ``timeout_ms`` for the driver (None: none, or not a number)."""
    if "timeout_ms" not in node["attrs"]:
        return None
    try:
        value = run.attr(node, "timeout_ms", env)
    except _c.CelError:
        return None
    return value if (type(value) is int or type(value) is float) and value > 0 else None


def _per_call_timeout(node):
    """Does the step's ``timeout`` bound each of its calls (PER_CALL_TIMEOUTS)?"""
    return node.get("call_name") in PER_CALL_TIMEOUTS.get(node.get("capability"), ())


def _op_call(run, node, env, prefix, state, forced, payload):
    args = _call_args(node, env)
    run.fuel.call()
    capability, name = node["capability"], node["call_name"]
    run.calls.append({"capability": capability, "name": name, "args": args})
    # with a clock the step's deadline (execute) bounds the call, unless the
    # kind's timeout is per call; without one the step's timeout goes with
    # the call, for the host to honour
    per_call = not run.clock or _per_call_timeout(node)
    answer = yield Call(capability, name, args, _timeout_ms(run, node, env) if per_call else None)
    if answer.kind == "result":
        return answer.value
    # a tool error, a host failure or a timeout: every one fails the step
    timeout = answer.kind == "timeout" or answer.message == "timeout"
    raise StepFailure(answer.message, None, timeout and run.edges_at(state).route(node["id"], "timeout") is not None)


def _write_var(run, name, value, mode):
    current = run.vars.get(name)
    if mode == "append":
        items = list(current) if isinstance(current, list) else ([] if current is None else [current])
        if isinstance(value, list):
            items.extend(value)
        else:
            items.append(value)
        run.vars[name] = items
    elif mode == "merge":
        merged = dict(current) if isinstance(current, dict) else {}
        if not isinstance(value, dict):
            raise StepFailure("merge needs an object value")
        for k in value:
            merged[k] = value[k]
        run.vars[name] = merged
    elif mode == "union":
        items = list(current) if isinstance(current, list) else []
        for v in (value if isinstance(value, list) else [value]):
            if not any(_c.eq(v, x) for x in items):
                items.append(v)
        run.vars[name] = items
    else:
        run.vars[name] = value


def _op_assign(run, node, env, prefix, state, forced, payload):
    if "text" in node["attrs"]:
        value = run.attr(node, "text", env)
    else:
        value = run.attr(node, "value", env)
    writes = run.attr(node, "writes", env)
    if writes is not None:
        mode = run.attr(node, "mode", env) or run.plan["reducers"].get(writes, "overwrite")
        _write_var(run, writes, value, mode)
    return value


def _op_noop(run, node, env, prefix, state, forced, payload):
    return None


def _op_sleep(run, node, env, prefix, state, forced, payload):
    ms = run.attr(node, "duration_ms", env, 0)
    yield from run.sleep(ms)


def _op_assert(run, node, env, prefix, state, forced, payload):
    if not _c.test(run.attr(node, "condition", env)):
        message = run.attr(node, "message", env)
        raise StepFailure(message if isinstance(message, str) else "assertion failed")


def _op_fail(run, node, env, prefix, state, forced, payload):
    message = run.attr(node, "message", env)
    code = run.attr(node, "code", env)
    raise StepFailure(message if isinstance(message, str) else "failed", code)


def _op_finish(run, node, env, prefix, state, forced, payload):
    status = run.attr(node, "status", env, "completed")
    output = run.attr(node, "output", env)
    run.status = status if status in ("completed", "failed", "refused", "cancelled") else "completed"
    run.output = output
    reason = run.attr(node, "reason", env)
    if run.status != "completed" and reason is not None:
        run.error = {"message": reason if isinstance(reason, str) else _c.to_text(reason),
                     "step": prefix + node["id"]}
    return output


def _switch_label(value):
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    return _c.to_text(value)


def _op_switch(run, node, env, prefix, state, forced, payload):
    value = run.attr(node, "on", env)
    label = _switch_label(value)
    chosen = None
    arms = run.edges_at(state).branches.get(node["id"], ())
    for case, target in arms:
        if case == label:
            chosen = target
            break
    if chosen is None:
        for case, target in arms:
            if case == "$default":
                chosen = target
                break
    if chosen is None and run.attr(node, "on_no_match", env) == "fail":
        raise StepFailure("switch: no case matches " + label)
    run.chosen = chosen
    return value


def _items(value, what):
    if isinstance(value, (list, tuple)):
        return list(value)
    raise StepFailure(what + " must be a list, not " + _c.type_name(value))


def _charged(run, prefix, node, value):
    """The list a transform runs over, one iteration charged per item."""
    items = _items(value, "over")
    run.iterate(prefix + node["id"], len(items))
    return items


def _op_map(run, node, env, prefix, state, forced, payload):
    fn = node["attrs"]["expr"]
    items = _charged(run, prefix, node, run.attr(node, "over", env))
    return [fn(env, x, i) for i, x in enumerate(items)]


def _op_filter(run, node, env, prefix, state, forced, payload):
    fn = node["attrs"]["expr"]
    items = _charged(run, prefix, node, run.attr(node, "over", env))
    return [x for i, x in enumerate(items) if _c.test(fn(env, x, i))]


def _op_reduce(run, node, env, prefix, state, forced, payload):
    fn = node["attrs"]["expr"]
    acc = run.attr(node, "initial", env)
    for i, x in enumerate(_charged(run, prefix, node, run.attr(node, "over", env))):
        acc = fn(env, acc, x, i)
    return acc


def _path(value, path):
    for part in path.split(".") if path else ():
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, (list, tuple)) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _sort_key_cmp(a, b):
    if a is None and b is None:
        return 0
    if a is None:
        return 1
    if b is None:
        return -1
    c = _c.compare(a, b, "sort")
    return 0 if c is None else c


def _stable_sort(items, keys, descending):
    """Insertion-merge sort by CEL ordering (MicroPython has no cmp_to_key)."""
    order = list(range(len(items)))

    def merge(lo, hi):
        if hi - lo <= 1:
            return order[lo:hi]
        mid = (lo + hi) // 2
        left, right = merge(lo, mid), merge(mid, hi)
        out = []
        i = j = 0
        while i < len(left) and j < len(right):
            c = _sort_key_cmp(keys[right[j]], keys[left[i]])
            if descending:
                c = -c
                if keys[left[i]] is None or keys[right[j]] is None:
                    c = -c  # null sorts last in both directions
            if c < 0:
                out.append(right[j])
                j += 1
            else:
                out.append(left[i])
                i += 1
        out.extend(left[i:])
        out.extend(right[j:])
        return out

    return [items[k] for k in merge(0, len(items))]


def _op_sort(run, node, env, prefix, state, forced, payload):
    items = _charged(run, prefix, node, run.attr(node, "over", env))
    by = run.attr(node, "by", env)
    keys = [_path(x, by) if isinstance(by, str) else x for x in items]
    return _stable_sort(items, keys, run.attr(node, "direction", env) == "desc")


def _op_dedupe(run, node, env, prefix, state, forced, payload):
    items = _charged(run, prefix, node, run.attr(node, "over", env))
    by = run.attr(node, "by", env)
    seen = []
    out = []
    for x in items:
        key = _path(x, by) if isinstance(by, str) else x
        if not any(_c.eq(key, k) for k in seen):
            seen.append(key)
            out.append(x)
    return out


def _op_chunk(run, node, env, prefix, state, forced, payload):
    value = run.attr(node, "value", env)
    size = run.attr(node, "size", env)
    overlap = run.attr(node, "overlap", env, 0) or 0
    by = run.attr(node, "by", env) or ("items" if isinstance(value, list) else "chars")
    if not isinstance(size, int) or size < 1 or not isinstance(overlap, int) or not 0 <= overlap < size:
        raise StepFailure("chunk needs size >= 1 and 0 <= overlap < size")
    if isinstance(value, list):
        parts, join = value, None
    elif isinstance(value, str):
        if by == "words":
            parts, join = value.split(), " "
        elif by == "lines":
            parts, join = value.split("\n"), "\n"
        else:
            parts, join = list(value), ""
    else:
        raise StepFailure("chunk needs a string or a list, not " + _c.type_name(value))
    out = []
    step = size - overlap
    i = 0
    while i < len(parts):
        piece = parts[i:i + size]
        out.append(piece if join is None else join.join(piece))
        if i + size >= len(parts):
            break
        i += step
    return out


def _csv_rows(text):
    rows, row, field, i, quoted = [], [], [], 0, False
    n = len(text)
    while i < n:
        ch = text[i]
        if quoted:
            if ch == '"':
                if i + 1 < n and text[i + 1] == '"':
                    field.append('"')
                    i += 1
                else:
                    quoted = False
            else:
                field.append(ch)
        elif ch == '"':
            quoted = True
        elif ch == ",":
            row.append("".join(field))
            field = []
        elif ch == "\n" or ch == "\r":
            if ch == "\r" and i + 1 < n and text[i + 1] == "\n":
                i += 1
            row.append("".join(field))
            rows.append(row)
            row, field = [], []
        else:
            field.append(ch)
        i += 1
    if field or row:
        row.append("".join(field))
        rows.append(row)
    return [r for r in rows if r != [""]]


def _op_parse(run, node, env, prefix, state, forced, payload):
    text = run.attr(node, "text", env)
    fmt = run.attr(node, "format", env) or "json"
    if not isinstance(text, str):
        raise StepFailure("parse needs text, not " + _c.type_name(text))
    if fmt == "json":
        import json
        try:
            return json.loads(text)
        except ValueError as e:
            raise StepFailure("invalid JSON: " + str(e))
    if fmt == "csv":
        rows = _csv_rows(text)
        if not rows:
            return []
        header = rows[0]
        out = []
        for r in rows[1:]:
            item = {}
            for k in range(len(header)):
                item[header[k]] = r[k] if k < len(r) else None
            out.append(item)
        return out
    if fmt == "lines":
        return text.split("\n")
    if fmt == "text":
        return text
    raise StepFailure("parse: the " + str(fmt) + " format is not supported by this runtime")


_JSON_TYPES = {"null": lambda v: v is None, "boolean": lambda v: v is True or v is False,
               "integer": lambda v: type(v) is int or (type(v) is float and v == int(v)),
               "number": lambda v: type(v) is int or type(v) is float,
               "string": lambda v: type(v) is str, "array": lambda v: isinstance(v, (list, tuple)),
               "object": lambda v: isinstance(v, dict)}


def schema_errors(value, schema, where="$"):
    """The subset of JSON Schema workflows use: type, enum, const, required,
    properties, additionalProperties (false), items, minimum, maximum,
    minLength, maxLength, minItems, maxItems."""
    if schema is True or not isinstance(schema, dict):
        return []
    if schema is False:
        return [where + ": no value is allowed"]
    errs = []
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_JSON_TYPES.get(k, lambda v: True)(value) for k in kinds):
            return [where + ": expected " + "/".join(str(k) for k in kinds) + ", got " + _c.type_name(value)]
    if "enum" in schema and not any(_c.eq(value, e) for e in schema["enum"]):
        errs.append(where + ": not one of the allowed values")
    if "const" in schema and not _c.eq(value, schema["const"]):
        errs.append(where + ": not the required constant")
    if isinstance(value, dict):
        required = schema.get("required") or []
        for key in (required if isinstance(required, list) else [required]):
            if key not in value:
                errs.append(where + ": missing " + str(key))
        props = schema.get("properties") or {}
        for key in value:
            if key in props:
                errs.extend(schema_errors(value[key], props[key], where + "." + key))
            elif schema.get("additionalProperties") is False:
                errs.append(where + ": unexpected " + key)
    if isinstance(value, (list, tuple)) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errs.extend(schema_errors(item, schema["items"], where + "[" + str(i) + "]"))
    if _JSON_TYPES["number"](value) and value is not True and value is not False:
        if "minimum" in schema and value < schema["minimum"]:
            errs.append(where + ": below the minimum")
        if "maximum" in schema and value > schema["maximum"]:
            errs.append(where + ": above the maximum")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errs.append(where + ": too short")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errs.append(where + ": too long")
    if isinstance(value, (list, tuple)):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errs.append(where + ": too few items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errs.append(where + ": too many items")
    return errs


def _op_validate(run, node, env, prefix, state, forced, payload):
    value = run.attr(node, "value", env)
    errs = schema_errors(value, run.attr(node, "schema", env))
    if errs:
        raise StepFailure("validate: " + "; ".join(errs))
    return value


def _collect(run, node, env, results):
    collect = run.attr(node, "collect", env)
    if isinstance(collect, dict) and isinstance(collect.get("into"), str):
        _write_var(run, collect["into"], results, collect.get("mode") or "overwrite")


def _per_item(run, node, env, prefix, groups, extra_for, lanes):
    region = node["regions"][0][1]
    policy = node.get("item_policy") or "fail"
    results = []
    if not run.concurrent or lanes <= 1:
        for i in range(len(groups)):
            run.iterate(prefix + node["id"])
            scope = prefix + node["id"] + "[" + str(i) + "]."
            try:
                results.append((yield from run.region_value(region, env, scope, extra_for(i, groups[i]))))
            except _GraphFailed as e:
                if policy != "error_object_and_continue":
                    raise StepFailure(e.message)
                results.append({"index": i, "error": e.message})
        return results
    # up to ``lanes`` items at once; results stay in item order
    results = [None] * len(groups)
    running = {}  # task -> index
    nxt = 0
    try:
        while nxt < len(groups) or running:
            while nxt < len(groups) and len(running) < lanes:
                run.iterate(prefix + node["id"])
                scope = prefix + node["id"] + "[" + str(nxt) + "]."
                task = (yield Spawn([run.region_value(region, env, scope, extra_for(nxt, groups[nxt]))]))[0]
                running[task] = nxt
                nxt += 1
            for task in (yield Wait(list(running), True)):
                i = running.pop(task)
                try:
                    results[i] = task.result()
                except _GraphFailed as e:
                    if policy != "error_object_and_continue":
                        raise StepFailure(e.message)
                    results[i] = {"index": i, "error": e.message}
    except GeneratorExit:
        raise
    except Exception as e:
        yield from _cancel(list(running))
        raise e  # noqa: TRY201 - named: the handler yielded (cancelled tasks) since it caught e
    return results


def _op_foreach(run, node, env, prefix, state, forced, payload):
    items = _items(node["over"](env), "over")
    alias = node.get("item_name") or "item"
    size = node.get("batch_size") or 0

    def extra(i, item):
        names = {"item": item, "index": i, "batch": (i // size) if size else 0}
        names[alias] = item
        return names

    batch = run.attr(node, "batch", env)
    lanes = _limit(batch.get("parallel") if isinstance(batch, dict) else None)
    results = yield from _per_item(run, node, env, prefix, items, extra, lanes)
    _collect(run, node, env, results)
    return results


def _op_batch(run, node, env, prefix, state, forced, payload):
    items = _charged(run, prefix, node, run.attr(node, "over", env))
    by = node["attrs"].get("by")
    size = run.attr(node, "size", env)
    groups = []
    if by is not None:
        keys = []
        for i, x in enumerate(items):
            key = by(env, x, i)
            for g in range(len(keys)):
                if _c.eq(keys[g], key):
                    groups[g].append(x)
                    break
            else:
                keys.append(key)
                groups.append([x])
    else:
        size = size if isinstance(size, int) and size > 0 else max(1, len(items))
        for i in range(0, len(items), size):
            groups.append(items[i:i + size])

    def extra(i, group):
        return {"item": group, "index": i, "batch": i}

    results = yield from _per_item(run, node, env, prefix, groups, extra, _limit(run.attr(node, "parallel", env)))
    _collect(run, node, env, results)
    return results


def _op_iterate(run, node, env, prefix, state, forced, payload):
    region = node["regions"][0][1]
    limit = run.attr(node, "max_iterations", env, 10000)
    cond_while = node["attrs"].get("while")
    cond_until = node["attrs"].get("until")
    results = []
    last = None
    for i in range(limit):
        run.iterate(prefix + node["id"])
        names = {"iteration": i, "last": last, "result": last}
        if cond_while is not None:
            scope_env = dict(env)
            scope_env.update(names)
            if not _c.test(cond_while(scope_env)):
                break
        try:
            result = yield from run.region_value(region, env, prefix + node["id"] + "[" + str(i) + "].", names)
        except _GraphFailed as e:
            raise StepFailure(e.message)
        results.append(result)
        if cond_until is not None:
            scope_env = dict(env)
            scope_env.update({"iteration": i, "last": last, "result": result})
            last = result
            if _c.test(cond_until(scope_env)):
                break
        last = result
    if run.attr(node, "collect", env):
        _collect(run, node, env, results)
        return results
    return last


def _op_subgraph(run, node, env, prefix, state, forced, payload):
    try:
        return (yield from run.region_value(node["regions"][0][1], env, prefix + node["id"] + ".", {}))
    except _GraphFailed as e:
        raise StepFailure(e.message)


def _branches(run, node, env, prefix):
    """One body generator per branch, in name order."""
    return [run.region_value(region, env, prefix + node["id"] + "{" + name + "}.", {"branch": name})
            for name, region in node["regions"]]


def _op_parallel(run, node, env, prefix, state, forced, payload):
    out = {}
    errors = {}
    policy = run.attr(node, "on_error", env) or "fail"
    names = [name for name, _region in node["regions"]]
    if not run.concurrent:
        bodies = _branches(run, node, env, prefix)
        for i in range(len(names)):
            try:
                out[names[i]] = yield from bodies[i]
            except _GraphFailed as e:
                if policy != "continue":
                    raise StepFailure("branch " + names[i] + ": " + e.message)
                out[names[i]] = None
                errors[names[i]] = e.message
        out["_errors"] = errors
        return out
    tasks = yield Spawn(_branches(run, node, env, prefix))
    try:
        left = list(tasks)
        while left:
            for task in (yield Wait(left, True)):
                left.remove(task)
                try:
                    task.result()
                except _GraphFailed as e:
                    if policy != "continue":
                        raise StepFailure("branch " + names[tasks.index(task)] + ": " + e.message)
    except GeneratorExit:
        raise
    except Exception as e:
        yield from _cancel(tasks)
        raise e  # noqa: TRY201 - named: the handler yielded (cancelled tasks) since it caught e
    for i in range(len(names)):  # the output in name order, whatever finished first
        if tasks[i].error is None:
            out[names[i]] = tasks[i].value
        else:
            out[names[i]] = None
            errors[names[i]] = tasks[i].error.message
    out["_errors"] = errors
    return out


def _op_race(run, node, env, prefix, state, forced, payload):
    names = [name for name, _region in node["regions"]]
    failures = []
    if not run.concurrent:
        # one branch after another: the winner is the one that slept least
        best = None
        bodies = _branches(run, node, env, prefix)
        for i in range(len(names)):
            before = run.slept
            try:
                result = yield from bodies[i]
            except _GraphFailed as e:
                failures.append(names[i] + ": " + e.message)
                continue
            took = run.slept - before
            if best is None or took < best[0]:
                best = (took, names[i], result)
        if best is None:
            raise StepFailure("race: every branch failed (" + "; ".join(failures) + ")")
        return {"winner": best[1], "output": best[2]}
    # side by side: the first branch to succeed wins, the others are cancelled
    tasks = yield Spawn(_branches(run, node, env, prefix))
    left = list(tasks)
    try:
        while left:
            for task in (yield Wait(left, True)):
                left.remove(task)
                name = names[tasks.index(task)]
                try:
                    value = task.result()
                except _GraphFailed as e:
                    failures.append(name + ": " + e.message)
                    continue
                yield from _cancel(left)
                return {"winner": name, "output": value}
    except GeneratorExit:
        raise
    except Exception as e:
        yield from _cancel(left)
        raise e  # noqa: TRY201 - named: the handler yielded (cancelled tasks) since it caught e
    raise StepFailure("race: every branch failed (" + "; ".join(failures) + ")")


_OPS = {
    "trigger": (_op_trigger, ENTRY), "call": (_op_call, SUSPENDS), "assign": (_op_assign, 0),
    "noop": (_op_noop, 0), "sleep": (_op_sleep, SUSPENDS), "assert": (_op_assert, 0), "fail": (_op_fail, 0),
    "finish": (_op_finish, HALTS), "switch": (_op_switch, 0), "transform.map": (_op_map, 0),
    "transform.filter": (_op_filter, 0), "transform.reduce": (_op_reduce, 0), "transform.sort": (_op_sort, 0),
    "transform.dedupe": (_op_dedupe, 0), "transform.chunk": (_op_chunk, 0), "parse": (_op_parse, 0),
    "validate": (_op_validate, 0), "foreach": (_op_foreach, SUSPENDS), "batch": (_op_batch, SUSPENDS),
    "iterate": (_op_iterate, SUSPENDS), "subgraph": (_op_subgraph, SUSPENDS),
    "parallel": (_op_parallel, SUSPENDS), "race": (_op_race, SUSPENDS),
}


def new_run(plan, inputs, trigger=None, payload=None, max_iterations=None, max_host_calls=None,
            concurrent=False, max_instructions=None):
    """A :class:`DataflowRun`, not started yet (a driver starts it; by hand:
    ``start()``, then its first requests are ``ready()``)."""
    return DataflowRun(plan, inputs, trigger, payload, max_iterations, max_host_calls, concurrent, max_instructions)


# --- the drivers: the entry points of generated modules and the VM ------------------

def run(plan, inputs, host, trigger=None, payload=None, max_iterations=None, max_host_calls=None):
    """Run a compiled plan with the sync driver (``host.call`` /
    ``host.sleep`` one request at a time, the reference record): returns
    ``{"status", "outputs", "error", "steps", "calls", "sleeps_ms"}``. A run
    past ``max_iterations`` loop iterations (items, iterations, retries) or
    ``max_host_calls`` host calls fails with "fuel exhausted"."""
    return _drivers.drive_sync(new_run(plan, inputs, trigger, payload, max_iterations, max_host_calls), host)


def run_async(plan, inputs, host, trigger=None, payload=None, max_iterations=None, max_host_calls=None,
              concurrent=True):
    """A coroutine: the record of the run driven by :mod:`flowc.runtime.aio`
    (``host.call`` may be a coroutine). ``concurrent=False`` keeps the sequential order
    (the same record as :func:`run` for the same answers)."""
    from flowc.runtime.aio import drive_async

    return drive_async(new_run(plan, inputs, trigger, payload, max_iterations, max_host_calls, concurrent), host)


def run_virtual(plan, inputs, script, trigger=None, payload=None, max_iterations=None, max_host_calls=None,
                concurrent=True):
    """The record of the run on a virtual clock (``script``: see
    :class:`flowc.runtime.drivers.VirtualHost`); steps carry ``start_ms``/``end_ms``."""
    host = script if hasattr(script, "answer") else _drivers.VirtualHost(script)
    r = new_run(plan, inputs, trigger, payload, max_iterations, max_host_calls, concurrent)
    return _drivers.drive_virtual(r, host)
