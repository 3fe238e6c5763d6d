"""A run's fuel: every budget that bounds a run, charged in one place.

Every scheduler on the kernel (the dataflow run, the aevatar step loop,
WorkflowSkill's module and VM runs) owns one :class:`Fuel` (``kernel.fuel``)
and charges it:

- ``iterate(n)``: loop iterations (items, iterations, retries, dispatches,
  the elements a CEL comprehension visits: what counts is the scheduler's);
- ``call()``: one host call, retries included;
- ``step()``: one step started, where the dialect has a step budget
  (``step_budget``: ``"workflow_limit"``, the workflow's ``limits.steps``;
  ``"dispatches"``, the engine's dispatch bound; None: no step budget);
- instructions: the VM's interpreter loops keep the count in a local (the
  hot path) starting from ``instructions_left`` and raise
  :meth:`out_of_instructions` when it runs out.

Past a budget the charge raises :class:`OutOfFuel`, which no step policy
catches: the run fails with the message below, the same on both backends.
The budgets' defaults are copies of flowc.ir.limits' figures (this module
runs on MicroPython without flowc; tests/test_runtime_limits.py keeps them
equal).

The standard library only (imports nothing at all); MicroPython-compatible:
no typing, dataclasses or f-strings.
"""

DEFAULT_MAX_INSTRUCTIONS = 200000000   # VM instructions per run
DEFAULT_MAX_ITERATIONS = 10000000      # loop iterations per run
DEFAULT_MAX_HOST_CALLS = 1000000       # host calls per run, retries included

# The step budgets a dialect may have (ir/semantics.py: DialectProfile.step_budget)
# and the message a run past one fails with.
STEP_BUDGET_MESSAGES = {
    "workflow_limit": ("limits.steps: the run may start at most ", " steps"),
    "dispatches": ("step budget exhausted (", " dispatches)"),
}


class OutOfFuel(Exception):
    """The run exceeded a budget. No step policy (retry, on_error) catches
    it: the run fails. ``step``: where a scheduler noted it happened."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


def exhausted(limit, what):
    """The message of a run past ``limit`` ``what`` (iterations, host calls, instructions)."""
    return "fuel exhausted: more than " + str(limit) + " " + what


class Fuel:
    """The budgets of one run and what is left of each (None: the default)."""

    def __init__(self, iterations=None, host_calls=None, instructions=None, steps=None, step_budget=None):
        self.max_iterations = DEFAULT_MAX_ITERATIONS if iterations is None else iterations
        self.max_host_calls = DEFAULT_MAX_HOST_CALLS if host_calls is None else host_calls
        self.max_instructions = DEFAULT_MAX_INSTRUCTIONS if instructions is None else instructions
        self.iterations_left = self.max_iterations
        self.calls_left = self.max_host_calls
        self.instructions_left = self.max_instructions
        self.max_steps = steps  # None: no step budget
        self.steps_left = steps
        self.step_budget = step_budget

    def iterate(self, n=1):
        """Charge ``n`` iterations (the hook CEL's comprehensions call)."""
        self.iterations_left -= n
        if self.iterations_left < 0:
            raise OutOfFuel(exhausted(self.max_iterations, "iterations"))

    def take(self, n):
        """As many of ``n`` iterations as the fuel pays for, charged: ``n``,
        or what was left (then none is; the caller raises
        :meth:`out_of_iterations` after the items paid for)."""
        left = self.iterations_left - n
        if left >= 0:
            self.iterations_left = left
            return n
        paid = self.iterations_left
        self.iterations_left = 0
        return paid

    def out_of_iterations(self):
        return OutOfFuel(exhausted(self.max_iterations, "iterations"))

    def call(self):
        """Charge one host call."""
        self.calls_left -= 1
        if self.calls_left < 0:
            raise OutOfFuel(exhausted(self.max_host_calls, "host calls"))

    def step(self):
        """Charge one step started (nothing without a step budget)."""
        if self.steps_left is None:
            return
        self.steps_left -= 1
        if self.steps_left < 0:
            head, tail = STEP_BUDGET_MESSAGES[self.step_budget]
            raise OutOfFuel(head + str(self.max_steps) + tail)

    def out_of_instructions(self):
        """The failure of an interpreter loop whose instructions ran out."""
        return OutOfFuel(exhausted(self.max_instructions, "instructions"))
