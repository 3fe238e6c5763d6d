"""flowc's limits on what a workflow may hold, in one table.

Any workflow may be hostile, so every size, depth, count and duration that
the compiler or a backend must hold has a limit here. Exceeding one is a
finding with the limit's code and the span of what exceeded it, never an
exception; every check of a limit is linear in the input. Each limit is
chosen so that the largest legitimate workflow of the corpus is far below
it (docs/limits.md lists them with the corpus maxima).

Run-time budgets (fuel) are here too: they stop a run cleanly, as a failed
run, instead of letting it loop or grow without bound. The standalone VM
(flowc.runtime.fuel, the device side) cannot import this module, so it keeps its own copies of
the run-time figures; a test keeps them equal.
"""

from __future__ import annotations

import attrs

__all__ = ["LIMITS", "Limit"]


@attrs.frozen
class Limit:
    name: str
    value: int
    code: str
    what: str


# --- the source text ---------------------------------------------------------
MAX_SOURCE_BYTES = 4 * 1024 * 1024      # one file, as read from disk
MAX_YAML_DEPTH = 200                    # nested collections in one YAML document
MAX_YAML_NODES = 1_000_000              # YAML nodes after alias expansion
MAX_STEPS = 10_000                      # steps of one workflow, nested steps included
MAX_ID_LENGTH = 256                     # characters of an id

# --- expressions and values --------------------------------------------------
MAX_EXPR_DEPTH = 64                     # nesting of one expression or template
MAX_EXPR_ITEMS = 1_000                  # arguments of a call, elements of a list or map, path segments
MAX_VALUE_DEPTH = 64                    # nesting of a constant (a default, a literal object)
MAX_BRANCH_DEPTH = 64                   # conditional steps nested in each other's arms (each a call at run time)
MAX_INT_DIGITS = 20                     # decimal digits of an integer literal (int64/uint64 fit)
MAX_RETRIES = 1_000                     # a retry policy's attempts
MAX_DURATION_MS = 2**31 - 1             # a delay, timeout or backoff (about 24.8 days)
MAX_BACKOFF = 1_000_000                 # a retry policy's backoff factor (the VM verifies the same bound)
MAX_DECLARED_ITERATIONS = 1_000_000     # a declared loop bound (max_iterations, a while's max)

# --- run-time budgets (fuel) -------------------------------------------------
DEFAULT_MAX_INSTRUCTIONS = 200_000_000  # VM instructions per run
DEFAULT_MAX_ITERATIONS = 10_000_000     # loop iterations per run (each, foreach, while, transforms)
DEFAULT_MAX_HOST_CALLS = 1_000_000      # host calls per run, retries included


LIMITS: tuple[Limit, ...] = (
    Limit("source bytes", MAX_SOURCE_BYTES, "LIM001", "size of one workflow file"),
    Limit("YAML depth", MAX_YAML_DEPTH, "YAML005", "nested collections in one YAML document"),
    Limit("YAML nodes", MAX_YAML_NODES, "YAML005", "YAML nodes after alias expansion"),
    Limit("steps", MAX_STEPS, "LIM002", "steps of one workflow, nested steps included"),
    Limit("id length", MAX_ID_LENGTH, "ANA406", "characters of a step id"),
    Limit("expression depth", MAX_EXPR_DEPTH, "LIM101", "nesting of one expression or template"),
    Limit("expression items", MAX_EXPR_ITEMS, "LIM102",
          "arguments of a call, elements of a list or map, segments of a path"),
    Limit("value depth", MAX_VALUE_DEPTH, "LIM101", "nesting of a constant value"),
    Limit("branch depth", MAX_BRANCH_DEPTH, "LIM101",
          "conditional steps nested in each other's arms (WorkflowSkill)"),
    Limit("integer digits", MAX_INT_DIGITS, "LIM103", "decimal digits of an integer literal"),
    Limit("retries", MAX_RETRIES, "LIM104", "attempts of a retry policy"),
    Limit("duration", MAX_DURATION_MS, "LIM105", "milliseconds of a delay, timeout or backoff"),
    Limit("backoff factor", MAX_BACKOFF, "LIM103", "the factor a retry delay grows by"),
    Limit("declared iterations", MAX_DECLARED_ITERATIONS, "LIM106", "a declared loop bound"),
    Limit("instructions per run", DEFAULT_MAX_INSTRUCTIONS, "run", "VM instructions (fuel)"),
    Limit("iterations per run", DEFAULT_MAX_ITERATIONS, "run", "loop iterations (fuel)"),
    Limit("host calls per run", DEFAULT_MAX_HOST_CALLS, "run", "host calls, retries included (fuel)"),
)
