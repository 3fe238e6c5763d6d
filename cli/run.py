"""``flowc run``: compile a workflow in memory and run it, with a scripted
host or real tools; one run, a journaled run, or a batch of runs."""

from __future__ import annotations

import sys

from flowc.cli.exits import EXIT_FINDINGS, EXIT_USAGE
from flowc.cli.options import DIALECTS, budget, budgets_of, cluster_options
from flowc.cli.output import backend_error, usage_error


def add_parser(sub) -> None:
    run_parser = sub.add_parser("run", help="compile a workflow in memory and run it with a scripted host")
    _run_options(run_parser)
    _watch_options(run_parser)
    _batch_options(run_parser)
    cluster_options(run_parser, "--batch: run")
    run_parser.set_defaults(func=run)


def _run_options(run_parser) -> None:
    run_parser.add_argument("path", metavar="WORKFLOW", help="the workflow file")
    run_parser.add_argument("--inputs", metavar="FILE", help="JSON object of workflow inputs (default: {})")
    run_parser.add_argument("--host", metavar="FILE", help="host script, JSON (see docs/host.md; default: {})")
    run_parser.add_argument("--config", metavar="FILE",
                            help="host config, TOML: run against real MCP servers, HTTP tools and LLM APIs "
                                 "(docs/hosts.md); not with --host")
    run_parser.add_argument("--mcp-config", metavar="FILE",
                            help="MCP servers as MCP clients write them, JSON ({\"mcpServers\": {...}}); "
                                 "with or without --config, not with --host")
    run_parser.add_argument("--backend", choices=("python", "vm"), default="python")
    run_parser.add_argument("--json", action="store_true", help="print the run record as one JSON object")
    run_parser.add_argument("--dialect", choices=DIALECTS)
    run_parser.add_argument("--workflow", metavar="NAME",
                            help="instruction documents with several workflows: the one to run (default: the "
                                 "first)")
    run_parser.add_argument("--max-iterations", metavar="N", type=budget,
                            help="fuel: fail the run after N loop iterations (default: 10,000,000)")
    run_parser.add_argument("--max-host-calls", metavar="N", type=budget,
                            help="fuel: fail the run after N host calls, retries included (default: 1,000,000)")
    run_parser.add_argument("--max-instructions", metavar="N", type=budget,
                            help="fuel, --backend vm only: fail the run after N VM instructions "
                                 "(default: 200,000,000)")
    run_parser.add_argument("--journal", metavar="DB",
                            help="journal the run in this SQLite file (docs/durable.md); prints the run id")
    run_parser.add_argument("--in-flight", choices=("again", "fail"), default="again",
                            help="with --journal: what resuming does with a call sent and never answered")


def _watch_options(run_parser) -> None:
    run_parser.add_argument("--trace", metavar="FILE", help="write the run's events (steps, host calls) to "
                            "FILE, one JSON object a line (docs/hosts-providers.md)")
    run_parser.add_argument("--trace-values", action="store_true", help="with --trace: also the calls' "
                            "arguments and results (cut short; credentials redacted)")
    run_parser.add_argument("--progress", action="store_true",
                            help="show the steps and host calls live while the run goes (on a terminal; needs "
                                 "rich); with --batch: a progress line on stderr (shown anyway when stderr is "
                                 "a terminal)")


def _batch_options(run_parser) -> None:
    run_parser.add_argument("--batch", metavar="FILE",
                            help="JSON lines of inputs (- for stdin): one run per line, one JSON record per "
                                 "line in input order (docs/batch.md)")
    run_parser.add_argument("--out", metavar="FILE", help="--batch: write the records here instead of stdout")
    run_parser.add_argument("--chunk-size", type=int, metavar="N",
                            help="--batch: runs per task (default: picked)")
    run_parser.add_argument("--batch-concurrency", type=int, metavar="N", default=8,
                            help="--batch with --config/--mcp-config: runs at once on the shared host, per "
                                 "process (default: 8)")


def _option_conflict(args) -> str | None:
    """The message for options that do not go together, else None."""
    if args.batch is None and (args.workers is not None or args.scheduler or args.out):
        return "--out, --workers and --scheduler go with --batch"
    if args.batch is not None and args.journal:
        return "--journal journals one run, not a batch: leave out --batch or --journal"
    if args.batch is not None and (args.inputs or args.json or args.trace):
        return ("--batch reads the inputs of each run from its lines and prints JSON records: "
                "leave out --inputs, --json and --trace")
    if (args.config or args.mcp_config) and args.host:
        return "--host (a scripted host) and --config/--mcp-config (real tools) exclude each other"
    return None


def _backend(args) -> tuple:
    """``(vm, problem)``: the VM's (compile, load) pair for --backend vm
    (else None), and the message of a usage error, or None."""
    from flowc.cli.programs import VM_MISSING, vm_backend

    if args.backend == "vm":
        vm = vm_backend()
        return vm, (VM_MISSING if vm is None else None)
    if args.max_instructions is not None:
        return None, "--max-instructions counts VM instructions: use it with --backend vm"
    return None, None


def run(args) -> int:
    from flowc.cli.hosting import configured_host
    from flowc.cli.programs import compile_for_backend
    from flowc.host import load_host_script, load_inputs_file

    conflict = _option_conflict(args)
    if conflict is not None:
        print(f"flowc: error: {conflict}", file=sys.stderr)   # our own text: nothing to escape
        return EXIT_USAGE
    configured = bool(args.config or args.mcp_config)
    try:
        inputs = load_inputs_file(args.inputs)
        host = configured_host(args) if configured else load_host_script(args.host)
    except ValueError as exc:
        return usage_error(str(exc))
    vm, problem = _backend(args)
    if problem is not None:
        print(f"flowc: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    workflow, status = compile_for_backend(args.path, args.dialect, show_warnings=False,
                                           workflow_name=args.workflow)
    if workflow is None:
        return status
    if args.batch is not None:
        return _run_batch(args, workflow, vm is not None)
    return _run_one(args, workflow, vm, inputs, host, configured)


def _run_batch(args, workflow, use_vm: bool) -> int:
    from flowc.backends.python import BackendError
    from flowc.cli.programs import vm_errors
    from flowc.cli.run_batch import batch_command

    try:
        return batch_command(args, workflow, use_vm, budgets_of(args))
    except BackendError as exc:
        backend_error(args.path, exc)
        return EXIT_FINDINGS
    except vm_errors(use_vm) as exc:
        backend_error(args.path, exc)
        return EXIT_FINDINGS


def _run_one(args, workflow, vm, inputs: dict, host, configured: bool) -> int:
    """One run: journaled (--journal, or a durable workflow under a host
    config that names a journal), or not; the record printed."""
    from flowc.cli import programs
    from flowc.cli.durable import journal_for, warn_durable
    from flowc.cli.hosting import run_configured
    from flowc.cli.record import print_record
    from flowc.cli.watch import watched
    from flowc.host import run_and_print

    journal_db = journal_for(args, workflow, host if configured else None)
    if journal_db is not None:
        from flowc.cli.journaled import run_journaled

        return run_journaled(args, journal_db, host, inputs)
    warn_durable(workflow, args.path)
    watch = watched(args, host)
    if watch is None:
        return EXIT_USAGE
    host, wrap = watch
    program = programs.load(args.path, workflow, vm)
    if program is None:
        return EXIT_FINDINGS
    program = wrap(program)
    budgets = budgets_of(args)
    show = None if args.json else print_record
    if configured:
        return run_configured(program, inputs, host, budgets, show)
    return run_and_print(lambda: program.run(inputs, host, **budgets), ("success", "completed"),
                         "flowc: error: ", show=show)
