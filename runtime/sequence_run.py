"""The sequence run: what WorkflowSkill runs on, generated modules and the VM.

Generated code imports this module as ``_rt``: the run state (:class:`Run`)
and its kernel (:class:`SkillRun`), the step helpers (host calls with their
retry loop, sleeps, step records, the ``each`` input rule, the workflow
outputs) and, imported from :mod:`flowc.runtime.wfs`, WorkflowSkill's
values (with the sort, the declared types and the transform input: the VM
runs the same functions), so a module reaches everything as ``_rt.<name>``.

The scheduler is :meth:`Run.walk`: it reads the module's sequential plan
(``PLAN``, flowc.plan.sequential) and runs the top-level steps from its
entry along its ``sequence`` edges, each by the module's table of step
functions (``STEPS``); a conditional's function runs its arm in place. The
VM runs a loaded program's plan the same way, with step functions that
flowc.backends.vm.plan_steps makes of the plan's rows.
The walk is a task of the sans-I/O kernel (:mod:`flowc.runtime.kernel`)
and a driver answers its requests.

Standard library only (the kernel, drivers, edges and values of
flowc.runtime, themselves standard library only) and MicroPython-compatible
(records are built key by key: a dict display forgets its order there): a
generated module runs wherever these files are copied beside it, and a
device's VM bundles them.
"""

try:
    from flowc.runtime import drivers as _drivers
    from flowc.runtime.edges import Edges
    from flowc.runtime.fuel import DEFAULT_MAX_HOST_CALLS, DEFAULT_MAX_ITERATIONS, Fuel, OutOfFuel
    from flowc.runtime.kernel import Call, Kernel, Sleep
    from flowc.runtime.wfs import *  # the values generated code reaches as _rt.<name>
    from flowc.runtime.wfs import (
        MISSING,
        EvalError,
        _is_array,
        _Obj,
        compact,
        error_message,
        js_typeof,
        key_or_null,
        retry_sleep,
        shape_outputs,
        type_mismatch,
        type_name,
        whole_ms,
    )
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import drivers as _drivers
    from edges import Edges
    from fuel import DEFAULT_MAX_HOST_CALLS, DEFAULT_MAX_ITERATIONS, Fuel, OutOfFuel  # noqa: F401
    from kernel import Call, Kernel, Sleep
    from wfs import *
    from wfs import (
        MISSING,
        EvalError,
        _is_array,
        _Obj,
        compact,
        error_message,
        js_typeof,
        key_or_null,
        retry_sleep,
        shape_outputs,
        type_mismatch,
        type_name,
        whole_ms,
    )

# =============================================================================
# Run orchestration
# =============================================================================
#
# The helpers generated modules call to run steps and build the run record:
# the host calls with their retry loop, sleeps, step records, the `each`
# input rule and the workflow outputs (the value rules, the sort and the
# transform input among them, are flowc.runtime.wfs's). The VM runs the
# same helpers with step functions made from its plan rows; tests check
# that the two backends give the same records. See docs/host.md for the
# record's shape.
#
# Invariant: MISSING is never stored inside a list or dict that a run
# builds, except at the top level of a step's argument dict (the transform
# input rule sees those keys), which `Run.call` drops before the host sees
# it. Wherever else an expression's value goes into a container, a missing
# value drops its key (`compact`) or becomes None. So records and host
# arguments are plain JSON without a deep walk.

# What a step function returns: go on, halt the run (a failure under
# on_error fail), or end the run (an exit step fired).
NEXT = 0
HALT = 1
EXIT = 2

GUARD_FALSE = "Guard condition evaluated to false"
BRANCH_NOT_SELECTED = "Branch not selected"
WORKFLOW_HALTED = "Workflow halted"




class StepFailure(Exception):
    """A step failed at run time (a tool error after its retries, a host
    failure, a non-array ``each``)."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


# What fails a step (and not the whole run): the step's own failures, and
# any error evaluating its expressions, including Python errors on data no
# JSON document holds (a host returning a set, data nested too deeply).
try:
    STEP_ERRORS = (StepFailure, EvalError, ArithmeticError, LookupError, TypeError, ValueError,
                   RecursionError)
except NameError:  # pragma: no cover - MicroPython has no RecursionError (it raises RuntimeError)
    STEP_ERRORS = (StepFailure, EvalError, ArithmeticError, LookupError, TypeError, ValueError,
                   RuntimeError)


def _copy_json(v):
    if isinstance(v, dict):
        out = _Obj()
        for k in v:
            out[k] = _copy_json(v[k])
        return out
    if _is_array(v):
        return [_copy_json(x) for x in v]
    return v


# Records and errors are built key by key: on MicroPython a dict display
# forgets its order (_Obj is an OrderedDict there, a dict on CPython).
def _entry(step_id, status, reason=None):
    e = _Obj()
    e["id"] = step_id
    e["status"] = status
    if reason is not None:
        e["reason"] = reason
    return e


def _error(message, step_id):
    e = _Obj()
    e["message"] = message
    e["step"] = step_id
    return e


def type_matches(v, kind):
    """Does ``v`` fit the declared type ``kind`` (wfs.type_mismatch)?"""
    return type_mismatch(v, kind) is None


def check_output(step_id, output, declared):
    """Fail the step unless each declared output ``(name, type)`` present in
    ``output`` has its declared type (SPEC lifecycle step 6)."""
    if isinstance(output, dict):
        for name, kind in declared:
            v = output.get(name)
            if not type_matches(v, kind):
                raise StepFailure('Step "' + step_id + '" output "' + name + '": expected ' + kind
                                  + ", got " + type_name(v))


def each_items(value):
    """The array an ``each`` iterates over; any other value fails the step."""
    if _is_array(value):
        return value
    raise StepFailure("each expression must resolve to an array, got " + js_typeof(value))


# --- the run ----------------------------------------------------------------------

class Run:
    """The state of one run: the context expressions read (``inputs``,
    ``steps``), the step records, and what the host was asked to do.

    :meth:`walk` runs the plan's top-level steps. Generated step functions
    with effects are kernel tasks (flowc.runtime.kernel): they ``yield
    from`` :meth:`call` and :meth:`sleep`, which yield the kernel's
    ``Call``/``Sleep`` requests and read the driver's answers; they start
    with :meth:`begin` and end with :meth:`done`, :meth:`skip`,
    :meth:`fail`, :meth:`exit` (or :meth:`branch` / :meth:`branch_output`
    for conditionals); :meth:`finish` builds the run record. Steps without
    effects (transforms) stay plain functions: their loops are not
    generators. :class:`SkillRun` is the kernel that runs all this.
    """

    def __init__(self, host, inputs, defaults, step_ids, branch_step_ids, max_iterations=None,
                 max_host_calls=None, max_instructions=None):
        if not isinstance(inputs, dict):
            raise TypeError("the inputs of a run must be a dict, not " + type(inputs).__name__)
        merged = _Obj()
        for key in inputs:
            merged[key] = inputs[key]
        for key in defaults:
            if key not in merged:
                merged[key] = _copy_json(defaults[key])
        self.host = host
        self.inputs = merged
        self.steps = _Obj()
        self.step_ids = step_ids
        self.branch_step_ids = branch_step_ids
        self.records = []
        self.calls = []
        self.sleeps = []
        self.status = "success"
        self.error = None
        self.last = None
        self.exited = False
        self.exit_output = None
        # the run's fuel (its kernel's, kernel.fuel; iterations: each, filter
        # and map items), and the step that spends it
        self.fuel = Fuel(max_iterations, max_host_calls, max_instructions)
        self.cur = None
        self.out_of_fuel = False
        self.kernel = None  # the SkillRun running this (its clock: kernel.now)
        self.began = None   # virtual time the current step began at (a clock only)
        self.branch_records = None  # a clock only: a conditional's record, to end after its arm
        self.chosen = None  # (conditional, label): the arm a conditional just chose, for walk to run

    def main(self, plan, steps):
        """:meth:`walk` the plan; a run out of fuel stops there and fails,
        as on the VM: error ``{"message": "fuel exhausted: ...", "step":
        <the step running>}``, no outputs."""
        try:
            yield from self.walk(plan, steps)
        except OutOfFuel as exc:
            self.status = "failed"
            self.error = _error(exc.message, self.cur)
            self.out_of_fuel = True

    def walk(self, plan, steps):
        """The sequential scheduler: from the plan's ``entry`` along its
        ``sequence`` edges to its ``terminal``, run each step by ``steps``
        (id -> ``(function, generator)``: ``yield from`` a generator, call
        a plain function) until one returns a true signal (it halted or
        exited the run); each step that does not is settled, the last value.
        A conditional that chose an arm has it run in place (:meth:`arm`)."""
        edges = Edges(plan)
        successor = edges.successor
        branches = edges.branches
        terminal = plan["terminal"]
        step_id = plan["entry"]
        while step_id is not None and step_id != terminal:
            function, generator = steps[step_id]
            if generator:
                signal = yield from function(self)
            else:
                signal = function(self)
            if not signal and self.chosen is not None:
                signal = yield from self.arm(branches, steps)
            if signal:
                return
            self.settle(step_id)
            step_id = successor.get(step_id)

    def arm(self, branches, steps):
        """Run the arm a conditional chose (``chosen``): the targets of its
        ``branch`` edges with that label, in plan order, each as the walk
        runs a step but not settled, and in place the arms their own
        conditionals choose. A true signal ends every arm it is in. Each
        conditional's output is set when its arm ends (:meth:`branch_output`).
        An explicit stack: arms nest as deep as the workflow does. The
        signal of the last step run, or NEXT."""
        frames = []  # [conditional, its arm's targets, the next one's index]
        signal = NEXT
        while True:
            if self.chosen is not None:
                step_id, label = self.chosen
                self.chosen = None
                frames.append([step_id, [t for lab, t in branches.get(step_id, ()) if lab == label], 0])
            frame = frames[-1]
            targets = frame[1]
            if signal or frame[2] == len(targets):
                frames.pop()
                self.branch_output(frame[0], targets[-1] if targets else None)
                if not frames:
                    return signal
                continue
            function, generator = steps[targets[frame[2]]]
            frame[2] += 1
            if generator:
                signal = yield from function(self)
            else:
                signal = function(self)

    def begin(self, step_id):
        """A step starts: it is the one a run out of fuel names; on a
        virtual clock, its record gets the time it began."""
        self.cur = step_id
        kernel = self.kernel
        if kernel is not None:
            kernel.note("step_start", step_id)
            if kernel.now is not None:
                self.began = kernel.now

    # fuel
    def charge(self, items):
        """``items`` (a list a filter or map runs over), its iterations
        charged. Short of fuel: the items the fuel pays for, then OutOfFuel
        (so an item that fails first fails the step, as on the VM)."""
        paid = self.fuel.take(len(items))
        if paid == len(items):
            return items
        return self._last_items(items, paid)

    def _last_items(self, items, paid):
        yield from items[:paid]
        raise self.fuel.out_of_iterations()

    def each(self, items):
        """The items of an ``each``, one iteration charged as each starts
        (Fuel.iterate inlined: a call per item costs more than the charge)."""
        fuel = self.fuel
        for item in items:
            fuel.iterations_left -= 1
            if fuel.iterations_left < 0:
                raise fuel.out_of_iterations()
            yield item

    def check_inputs(self, declared):
        """Check the inputs against their declared ``(name, type)``s; a
        mismatch fails the run before any step runs."""
        for name, kind in declared:
            v = self.inputs.get(name)
            if not type_matches(v, kind):
                self.status = "failed"
                self.error = _error('workflow input "' + name + '": expected ' + kind + ", got " + type_name(v),
                                    None)
                return False
        return True

    # effects: generators, ``yield from`` them (the kernel answers their requests)
    def call(self, capability, name, args, retry=None):
        """Call the host; ``retry`` is ``(max_retries, delay_ms, backoff)``.
        Only a tool error (an ``Error`` answer: an exception whose
        ``retriable`` is true) is retried; it fails the step as
        ``<Capability> "<name>": <message>``. Any other failure fails the
        step with its own message. WorkflowSkill has no call timeout."""
        args = compact(args)
        attempts = 0
        while True:
            self.fuel.call()
            call = _Obj()
            call["capability"] = capability
            call["name"] = name
            call["args"] = args
            self.calls.append(call)
            answer = yield Call(capability, name, args)
            if answer.kind == "result":
                return answer.value
            message = answer_message(answer)
            if not answer_retriable(answer):
                raise StepFailure(message)
            if retry is None or attempts >= retry[0]:
                raise StepFailure(capability[:1].upper() + capability[1:] + ' "' + name + '": ' + message)
            attempts += 1
            yield from self.sleep(retry_sleep(retry[1], retry[2], attempts))

    def sleep(self, ms):
        """Ask the host to pause; a host that fails to fails the step."""
        ms = whole_ms(ms)
        self.sleeps.append(ms)
        answer = yield Sleep(ms)
        if answer.kind != "result":
            raise StepFailure(answer_message(answer))

    # step outcomes
    def _record(self, entry):
        if self.began is not None:  # a virtual clock: when the step ran
            entry["start_ms"] = self.began
            entry["end_ms"] = self.kernel.now
        self.records.append(entry)
        if self.kernel is not None:
            self.kernel.note("step_end", entry["id"], entry["status"], entry.get("reason"))
        return entry

    def _set(self, step_id, output):
        self.steps[step_id] = {} if output is MISSING else {"output": output}

    def output_or_null(self, step_id):
        """``steps[id].output ?? null``."""
        v = self.steps.get(step_id)
        if v is None:
            return None
        v = v.get("output")
        return None if v is MISSING else v

    def done(self, step_id, output):
        self._set(step_id, output)
        self._record(_entry(step_id, "success"))
        return NEXT

    def skip(self, step_id):
        """The guard was false: the output is null and the step is skipped."""
        self.steps[step_id] = {"output": None}
        self._record(_entry(step_id, "skipped", GUARD_FALSE))
        return NEXT

    def fail(self, step_id, exc, ignore=False, output=None):
        """The step failed: its output is ``output`` (null, or the partial
        array of an ``each``). Under on_error ignore the run goes on;
        otherwise it halts and fails with this error."""
        self.steps[step_id] = {"output": output}
        self._record(_entry(step_id, "failed"))
        if ignore:
            return NEXT
        self.status = "failed"
        self.error = _error(error_message(exc), step_id)
        return HALT

    def exit(self, step_id, status, output):
        """An exit step fired: the run ends with ``status``."""
        self._set(step_id, output)
        self._record(_entry(step_id, "success"))
        self.exited = True
        self.exit_output = output
        if status == "failed":
            self.status = "failed"  # a chosen outcome, not an error: error stays null
        return EXIT

    def branch(self, step_id, label):
        """A conditional chose its arm ``label`` (then or else), which the
        walk runs next: its record comes before the arm's (on a virtual
        clock it ends when the arm does)."""
        entry = self._record(_entry(step_id, "success"))
        if self.began is not None:
            if self.branch_records is None:
                self.branch_records = {}
            self.branch_records[step_id] = entry
        self.chosen = (step_id, label)
        return NEXT

    def branch_output(self, step_id, last_listed):
        """After the arm: the conditional's output is that of the arm's last
        *listed* step (``?? null``), whether or not it ran."""
        output = None if last_listed is None else self.output_or_null(last_listed)
        self.steps[step_id] = {"output": output}
        if self.branch_records is not None and step_id in self.branch_records:
            self.branch_records.pop(step_id)["end_ms"] = self.kernel.now

    def settle(self, step_id):
        """A top-level step finished without ending the run: it is the last
        value, which workflow outputs without ``value`` read."""
        self.last = self.output_or_null(step_id)

    # the record
    def finish(self, outputs):
        """The run record. ``outputs`` computes the workflow outputs from
        this run (they are built for failed runs too, but not after the run
        ran out of fuel)."""
        try:
            result = {} if self.out_of_fuel else outputs(self)
        except STEP_ERRORS as exc:
            result = {}
            self.status = "failed"
            if self.error is None:
                self.error = _error("workflow outputs: " + error_message(exc), None)
        steps = list(self.records)
        recorded = {r["id"] for r in steps}
        for step_id in self.step_ids:
            if step_id not in recorded:
                reason = BRANCH_NOT_SELECTED if step_id in self.branch_step_ids else WORKFLOW_HALTED
                steps.append(_entry(step_id, "skipped", reason))
        record = _Obj()
        record["status"] = self.status
        record["outputs"] = result
        record["error"] = self.error
        record["steps"] = steps
        record["calls"] = self.calls
        record["sleeps_ms"] = self.sleeps
        return record


def answer_message(answer):
    """The message of a failed request's answer, as :func:`error_message`
    gives it for the host's exception (its type's name when empty)."""
    message = answer.message
    if type(message) is not str:
        message = str(message)
    return message or getattr(answer, "type_name", None) or answer.kind


def answer_retriable(answer):
    """Is the failure a tool error (retried under ``retry``)? An exception
    both retriable and a timeout stays retriable, as it always was."""
    return getattr(answer, "retriable", answer.kind == "error")


class SkillRun(Kernel):
    """A WorkflowSkill run on the sans-I/O kernel: one task, the input
    check and then the walk of the sequential ``plan`` (:meth:`Run.walk`,
    steps one after another, as the dialect says, by the table ``steps``),
    fed by any driver of flowc.runtime. ``record()`` is the run record."""

    def __init__(self, ctx, input_types, plan, steps, outputs):
        Kernel.__init__(self)
        ctx.kernel = self
        self.fuel = ctx.fuel  # the budgets the run was made with
        self.ctx = ctx
        self.input_types = input_types
        self.plan = plan
        self.steps = steps
        self.outputs = outputs

    def start(self):
        return Kernel.start(self, self._main())

    def _main(self):
        if self.ctx.check_inputs(self.input_types):
            yield from self.ctx.main(self.plan, self.steps)

    def record(self):
        if self.finished:
            self.outcome()  # what no step catches (a bug, not a step's failure) surfaces, as before
        return self.ctx.finish(self.outputs)


def drive_sync(run, host):
    """The reference record: ``host.call`` / ``host.sleep`` one request at a time."""
    return _drivers.drive_sync(run, host)


def drive_async(run, host):
    """A coroutine: the record of ``run`` driven by asyncio (the host's
    methods may be coroutines)."""
    from flowc.runtime.aio import drive_async as drive

    return drive(run, host)


def drive_virtual(run, script):
    """The record of ``run`` on a virtual clock (``script``: see
    flowc.runtime.drivers.VirtualHost); steps carry ``start_ms``/``end_ms``."""
    host = script if hasattr(script, "answer") else _drivers.VirtualHost(script)
    return _drivers.drive_virtual(run, host)


def exit_outputs(keys, output):
    """Workflow outputs after an exit: an object output gives every declared
    key ``output[k] ?? null``; any other output goes to the first key."""
    return shape_outputs(output, keys)


def match_outputs(keys, last):
    """Workflow outputs with no ``value``: key-matched against the last
    value, or the last value under the first key when it is no object."""
    if not keys:
        return {}
    if isinstance(last, dict):
        out = _Obj()
        for k in keys:
            out[k] = key_or_null(last, k)
        return out
    return {keys[0]: last}
