"""``flowc exec``: run a bytecode file on the VM with a scripted host.

Every program kind runs (sequential, kernel, dataflow), with the options
and exit statuses of ``flowc run``: 0 for a completed run, 1 for a failed
one, 2 for a usage or input error. The record is printed as JSON, in the
VM's key order."""

from __future__ import annotations

import sys

from flowc.cli.exits import EXIT_USAGE
from flowc.cli.options import budget, budgets_of


def add_parser(sub) -> None:
    ex = sub.add_parser("exec", help="run a bytecode file on the VM with a scripted host")
    ex.add_argument("path", metavar="PROGRAM", help="a bytecode file (flowc compile --target bytecode)")
    ex.add_argument("--inputs", metavar="FILE", help="JSON object of workflow inputs (default: {})")
    ex.add_argument("--host", metavar="FILE", help="host script, JSON (see docs/host.md; default: {})")
    ex.add_argument("--max-iterations", metavar="N", type=budget,
                    help="fuel: fail the run after N loop iterations (default: 10,000,000)")
    ex.add_argument("--max-host-calls", metavar="N", type=budget,
                    help="fuel: fail the run after N host calls, retries included (default: 1,000,000)")
    ex.add_argument("--max-instructions", metavar="N", type=budget,
                    help="fuel: fail the run after N VM instructions (default: 200,000,000)")
    ex.set_defaults(func=run)


def run(args) -> int:
    from flowc.backends.vm import VMError, load
    from flowc.cli.disasm import read_program
    from flowc.host import load_host_script, load_inputs_file, run_and_print

    try:
        inputs = load_inputs_file(args.inputs)
        host = load_host_script(args.host)
        data = read_program(args.path)
        if data is None:
            return EXIT_USAGE
        program = load(data)
        if getattr(program, "plan", True) is None:
            raise VMError(f"{args.path} holds expressions only: there is no workflow to run")
    except (VMError, ValueError) as exc:
        print("flowc: error: " + " ".join(str(exc).split()), file=sys.stderr)
        return EXIT_USAGE
    budgets = budgets_of(args)
    return run_and_print(lambda: program.run(inputs, host, **budgets), ("success", "completed"),
                         "flowc: error: ", sort_keys=False)
