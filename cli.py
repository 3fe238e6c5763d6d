"""The flowc command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from flowc import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

_IMPORTED = time.perf_counter()  # python -m flowc and the flowc script import this first


def seconds_since_start() -> float:
    """Wall-clock seconds since this process started, interpreter start-up
    and imports included (what the user waited): from /proc where there is
    one, else since the command line was imported."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return time.perf_counter() - _IMPORTED


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage problems exit 2, never a traceback
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _budget(text: str) -> int:
    """A run budget: a non-negative integer (argparse reports anything else, exit 2)."""
    from flowc.host import parse_budget

    try:
        return parse_budget(text, "the budget")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None


def _cluster_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--workers N`` / ``--scheduler ADDR``: run on Dask distributed (docs/batch.md)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N",
                       help=f"{what} on a local Dask cluster of N worker processes (needs flowc[distributed])")
    where.add_argument("--scheduler", metavar="ADDR",
                       help=f"{what} on the Dask cluster of this scheduler, e.g. tcp://host:8786")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="flowc", description="Compile, check and run agent workflows.")
    parser.add_argument("--version", action="version", version=f"flowc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = sub.add_parser("check", help="check workflows and report every finding")
    check.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    check.add_argument("--dialect", choices=("workflowskill", "aevatar", "instruction"))
    check.add_argument("--format", choices=("text", "json", "sarif"), default="text",
                       help="text for people (default), json, or sarif for code-scanning dashboards")
    check.add_argument("-j", "--jobs", type=int, metavar="N",
                       help="check on N processes (0 = every core; default: 1, or every core "
                            "for 64 files or more)")
    check.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="show progress on stderr (default: when stderr is a terminal)")
    check.add_argument("--host-capabilities", metavar="FILE",
                       help="instruction dialect: a JSON list of the node kinds the target host "
                            "supports (or {\"host\": name, \"kinds\": [...]}); steps of other kinds "
                            "are reported (INS401)")
    check.add_argument("--strict", action="store_true",
                       help="the dialect's strictest validation (aevatar: extension primitives and "
                            "keys of the newer engine generation only are errors)")
    check.add_argument("--workflows-from", action="append", default=[], metavar="PATH",
                       help="aevatar: a file or directory of workflows that a workflow_call may name "
                            "(repeatable); with it, a call to any other workflow is an error (AEV138). "
                            "The aevatar files being checked are in the registry too")
    check.add_argument("--config", metavar="FILE",
                       help="host config, TOML (docs/hosts.md): every host call a workflow makes must be "
                            "granted by it (HST001, HST002); MCP servers without a `tools` list are "
                            "started to list their tools")
    check.add_argument("--mcp-config", metavar="FILE",
                       help="MCP servers as MCP clients write them, JSON ({\"mcpServers\": {...}}), for "
                            "the same check")
    _cluster_options(check, "check")
    check.set_defaults(func=cmd_check)

    ev = sub.add_parser("eval", help="evaluate one expression through the compiler")
    ev.add_argument("expr", nargs="?", help="the expression (omit with --batch)")
    ev.add_argument("--lang", choices=("workflowskill", "aevatar", "cel"), required=True)
    ev.add_argument("--vars", help="JSON object of variables")
    ev.add_argument("--mode", choices=("expression", "value"),
                    help="expression (the default) or value: a parameter value with ${...} templates "
                         "(the default for a text that holds ${)")
    ev.add_argument("--batch", action="store_true", help="read JSON lines from stdin")
    ev.add_argument("--backend", choices=("python", "vm"), default="python",
                    help="which backend's compiled form evaluates the expression (cel)")
    ev.set_defaults(func=cmd_eval)

    comp = sub.add_parser("compile", help="compile a workflow to a Python module or bytecode")
    comp.add_argument("path", metavar="WORKFLOW", help="the workflow file")
    comp.add_argument("--target", choices=("python", "bytecode"), default="python",
                      help="what to emit (default: python); bytecode runs on the VM (docs/bytecode.md)")
    comp.add_argument("--strip", action="store_true", help="bytecode: leave the source map out")
    comp.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    comp.add_argument("--dialect", choices=("workflowskill", "aevatar", "instruction"))
    comp.add_argument("--workflow", metavar="NAME",
                      help="instruction documents with several workflows: the one to compile "
                           "(default: the first)")
    comp.set_defaults(func=cmd_compile)

    run = sub.add_parser("run", help="compile a workflow in memory and run it with a scripted host")
    run.add_argument("path", metavar="WORKFLOW", help="the workflow file")
    run.add_argument("--inputs", metavar="FILE", help="JSON object of workflow inputs (default: {})")
    run.add_argument("--host", metavar="FILE", help="host script, JSON (see docs/host.md; default: {})")
    run.add_argument("--config", metavar="FILE",
                     help="host config, TOML: run against real MCP servers, HTTP tools and LLM APIs "
                          "(docs/hosts.md); not with --host")
    run.add_argument("--mcp-config", metavar="FILE",
                     help="MCP servers as MCP clients write them, JSON ({\"mcpServers\": {...}}); "
                          "with or without --config, not with --host")
    run.add_argument("--backend", choices=("python", "vm"), default="python")
    run.add_argument("--json", action="store_true", help="print the run record as one JSON object")
    run.add_argument("--dialect", choices=("workflowskill", "aevatar", "instruction"))
    run.add_argument("--workflow", metavar="NAME",
                     help="instruction documents with several workflows: the one to run (default: the first)")
    run.add_argument("--max-iterations", metavar="N", type=_budget,
                     help="fuel: fail the run after N loop iterations (default: 10,000,000)")
    run.add_argument("--max-host-calls", metavar="N", type=_budget,
                     help="fuel: fail the run after N host calls, retries included (default: 1,000,000)")
    run.add_argument("--max-instructions", metavar="N", type=_budget,
                     help="fuel, --backend vm only: fail the run after N VM instructions "
                          "(default: 200,000,000)")
    run.add_argument("--journal", metavar="DB",
                     help="journal the run in this SQLite file (docs/durable.md); prints the run id")
    run.add_argument("--in-flight", choices=("again", "fail"), default="again",
                     help="with --journal: what resuming does with a call sent and never answered")
    run.add_argument("--trace", metavar="FILE", help="write the run's events (steps, host calls) to FILE, "
                     "one JSON object a line (docs/hosts-providers.md)")
    run.add_argument("--trace-values", action="store_true", help="with --trace: also the calls' arguments "
                     "and results (cut short; credentials redacted)")
    run.add_argument("--progress", action="store_true",
                     help="show the steps and host calls live while the run goes (on a terminal; needs rich); "
                          "with --batch: a progress line on stderr (shown anyway when stderr is a terminal)")
    run.add_argument("--batch", metavar="FILE",
                     help="JSON lines of inputs (- for stdin): one run per line, one JSON record per line "
                          "in input order (docs/batch.md)")
    run.add_argument("--out", metavar="FILE", help="--batch: write the records here instead of stdout")
    run.add_argument("--chunk-size", type=int, metavar="N", help="--batch: runs per task (default: picked)")
    run.add_argument("--batch-concurrency", type=int, metavar="N", default=8,
                     help="--batch with --config/--mcp-config: runs at once on the shared host, per process "
                          "(default: 8)")
    _cluster_options(run, "--batch: run")
    run.set_defaults(func=cmd_run)

    res = sub.add_parser("resume", help="rebuild a journaled run from its journal and go on")
    res.add_argument("run_id", metavar="RUN_ID")
    res.add_argument("path", nargs="?", metavar="WORKFLOW", help="the workflow file (default: the run's own)")
    res.add_argument("--journal", metavar="DB", required=True, help="the journal (SQLite file)")
    res.add_argument("--host", metavar="FILE", help="host script, JSON (see docs/host.md; default: {})")
    res.add_argument("--config", metavar="FILE", help="host config, TOML (docs/hosts.md), as for flowc run")
    res.add_argument("--mcp-config", metavar="FILE", help="MCP servers, JSON, as for flowc run")
    res.add_argument("--json", action="store_true", help="print the run record as one JSON object")
    res.add_argument("--in-flight", choices=("again", "fail"), default="again",
                     help="a call sent and never answered before the run stopped: send it again "
                          "(default; the host gets the same idempotency key) or stop")
    res.add_argument("--trace", metavar="FILE", help="write the events of this resume (steps, host calls) to "
                                                     "FILE, as flowc run --trace (docs/durable.md)")
    res.add_argument("--trace-values", action="store_true", help="with --trace: also the calls' arguments "
                                                                 "and results (credentials redacted)")
    res.add_argument("--progress", action="store_true", help="show the steps and host calls live (on a terminal; needs rich)")
    res.set_defaults(func=cmd_resume)

    runs = sub.add_parser("runs", help="list or show the runs of a journal")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True, parser_class=_Parser)
    rl = runs_sub.add_parser("list", help="every run of the journal")
    rl.add_argument("--journal", metavar="DB", required=True)
    rl.add_argument("--json", action="store_true", help="a JSON list of {run_id, status, workflow, started, ...}")
    rl.set_defaults(func=cmd_runs_list)
    rs = runs_sub.add_parser("show", help="one run: its header, entries, repeated calls and record")
    rs.add_argument("run_id", metavar="RUN_ID")
    rs.add_argument("--journal", metavar="DB", required=True)
    rs.add_argument("--json", action="store_true")
    rs.set_defaults(func=cmd_runs_show)

    dis = sub.add_parser("disasm", help="list bytecode: constants, names, steps and code with source lines")
    dis.add_argument("path", metavar="PROGRAM", help="a bytecode file (flowc compile --target bytecode)")
    dis.add_argument("--source-root", metavar="DIR", help="where to look for the source file it names")
    dis.set_defaults(func=cmd_disasm)

    from flowc import commands

    graph = sub.add_parser("graph", help="draw a workflow's IR (mermaid, dot, svg, png)")
    graph.add_argument("workflow", metavar="WORKFLOW", help="the workflow file")
    graph.add_argument("--format", choices=("mermaid", "dot", "svg", "png"),
                       help="default: from the -o suffix, else mermaid; svg and png need Graphviz")
    graph.add_argument("-o", "--output", metavar="OUT", help="write here instead of standard output")
    graph.add_argument("--rankdir", choices=("TB", "LR"), default="TB",
                       help="top to bottom (default) or left to right")
    graph.add_argument("--dialect", choices=("workflowskill", "aevatar", "instruction"))
    graph.set_defaults(func=commands.cmd_graph)

    tr = sub.add_parser("translate", help="write a workflow in another dialect, or reformat it in its own")
    tr.add_argument("path", metavar="WORKFLOW", help="the workflow file (any dialect)")
    tr.add_argument("--to", dest="target", required=True, choices=("workflowskill", "aevatar", "instruction"),
                    help="the dialect to write (its own dialect: the canonical format)")
    tr.add_argument("-o", "--output", metavar="OUT", help="write here (a file, or a directory) instead of "
                    "standard output")
    tr.add_argument("--strict", action="store_true",
                    help="fail when a construct has no equivalent in the target, instead of writing the "
                         "closest form with a comment and a warning")
    tr.add_argument("--dialect", choices=("workflowskill", "aevatar", "instruction"),
                    help="the source dialect (default: recognised from the content)")
    tr.set_defaults(func=cmd_translate)

    schema = sub.add_parser("schema", help="print the JSON Schema of a dialect or of the host config (for editors)")
    schema.add_argument("dialect", choices=("workflowskill", "aevatar", "instruction", "host"),
                        help="a dialect, or host: the host config of run/check --config (docs/hosts.md)")
    schema.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    schema.set_defaults(func=commands.cmd_schema)

    explain = sub.add_parser("explain", help="explain a finding code, with a wrong and a right example")
    explain.add_argument("code", nargs="?", metavar="CODE", help="e.g. WFS205 (omit to list every code)")
    explain.set_defaults(func=commands.cmd_explain)

    fuzz = sub.add_parser("fuzz", help="fuzz flowc with generated workflows, mutants and malformed input")
    fuzz.add_argument("--dialect", required=True, metavar="D",
                      help="workflowskill, aevatar, instruction, or ir (mutants of the IR)")
    fuzz.add_argument("--examples", type=int, default=300, metavar="N",
                      help="examples in all: a third valid workflows, a third mutants, a third malformed "
                           "input (default: 300)")
    fuzz.add_argument("--seed", type=int, metavar="S", help="replay a campaign (default: a random seed)")
    fuzz.add_argument("-j", "--jobs", type=int, metavar="J",
                      help="split the campaign over J processes (0 = every core; default: 1; with "
                           "--workers/--scheduler: J shares, default one per worker thread)")
    fuzz.add_argument("--out", default="fuzz-crashes", metavar="DIR",
                      help="where minimal reproducers of failures go (default: fuzz-crashes)")
    fuzz.add_argument("--max-steps", type=int, default=6, metavar="K", help="steps per generated workflow")
    fuzz.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                      help="an example taking longer is a hang (default: 30; 0 = no limit)")
    fuzz.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                      help="show progress on stderr (default: when stderr is a terminal)")
    fuzz.add_argument("--hostile", action="store_true",
                      help="only workflows with injection payloads in every text field and hostile file "
                           "names: no payload may run, compile both targets, run both backends, translate")
    fuzz.add_argument("--json", action="store_true", help="print the summary as JSON")
    _cluster_options(fuzz, "fuzz")
    fuzz.set_defaults(func=cmd_fuzz)
    return parser


def cmd_fuzz(args) -> int:
    from flowc.testing.campaign import fuzz_command

    if args.workers is not None or args.scheduler:
        from flowc.cluster.fuzzrun import fuzz_on_cluster

        return fuzz_command(args, fuzz_on_cluster)
    return fuzz_command(args)


def cmd_check(args) -> int:
    from flowc import batch, driver, reporting

    files = driver.expand_paths(args.paths)
    show_progress = sys.stderr.isatty() if args.progress is None else args.progress
    caps = None
    if getattr(args, "host_capabilities", None):
        from flowc.compiler.instruction.capabilities import load_capabilities

        try:
            caps = load_capabilities(args.host_capabilities)
        except ValueError as exc:
            from flowc.termtext import shown

            print(shown(f"flowc: error: --host-capabilities: {exc}"), file=sys.stderr)  # quotes the file
            return EXIT_USAGE
    table = None
    if getattr(args, "config", None) or getattr(args, "mcp_config", None):
        from flowc.host import HostError
        from flowc.hosts.check import route_table

        try:
            table = route_table(args.config, args.mcp_config)
        except (ValueError, HostError) as exc:   # a bad config, a server that did not start
            from flowc.termtext import shown

            print(shown(f"flowc: error: {exc}"), file=sys.stderr)
            return EXIT_USAGE
    registry = None
    if getattr(args, "workflows_from", None):
        registry, problem = driver.workflow_registry(args.workflows_from, files, args.dialect)
        if problem is not None:
            print(f"flowc: error: --workflows-from: {problem}", file=sys.stderr)
            return EXIT_USAGE
    if args.workers is not None or args.scheduler:
        from flowc.cluster.checkcmd import check_on_cluster

        results = check_on_cluster(args, files, batch.Progress() if show_progress else None, registry)
        if results is None:
            return EXIT_USAGE
    else:
        results = batch.check_files(files, args.dialect, args.jobs,
                                    batch.Progress() if show_progress else None, strict=args.strict,
                                    known_workflows=registry)
    all_diags = []
    sources: dict[str, str] = {}
    io_error = False
    for result in results:
        if result.text is None:
            io_error = True
        else:
            sources[result.path] = result.text
        all_diags.extend(result.diagnostics)
        if caps is not None and result.text is not None and \
                (args.dialect or driver.detect_dialect(result.text, result.path)) == "instruction":
            from flowc.compiler.instruction.capabilities import check_host

            all_diags.extend(check_host(result.text, result.path, caps))
        if table is not None and result.text is not None:
            all_diags.extend(_config_findings(result.text, result.path, args.dialect, table))
    errors = sum(d.is_error for d in all_diags)
    warnings = len(all_diags) - errors
    if args.format == "json":
        print(reporting.render_json(all_diags))
    elif args.format == "sarif":
        print(reporting.render_sarif(all_diags, __version__))
    else:
        if all_diags:
            print(reporting.render_all_text(all_diags, sources))
        print(reporting.summary(len(files), errors, warnings, seconds_since_start()), file=sys.stderr)
    if io_error and errors == sum(1 for d in all_diags if d.code == "FLC003"):
        return EXIT_USAGE
    return EXIT_FINDINGS if errors else EXIT_OK


def _config_findings(text: str, path: str, dialect: str | None, table) -> list:
    """HST findings: the host calls of every workflow of the file that ``table`` does not grant."""
    from flowc import driver
    from flowc.hosts.check import check_calls

    dialect = dialect or driver.detect_dialect(text, path)
    if dialect == "instruction":
        from flowc.compiler.instruction.frontend import compile_instruction_all

        workflows, _ = compile_instruction_all(text, path)
    else:
        result = driver.compile_text(text, path, dialect)
        workflows = [result.workflow] if result.workflow is not None else []
    return [d for wf in workflows for d in [*check_calls(wf, table), *_durable_findings(wf, table)]]


def cmd_translate(args) -> int:
    from flowc import translate

    return translate.command(args.path, args.target, args.output, args.strict, args.dialect)


def cmd_eval(args) -> int:
    from flowc import evalcmd

    return evalcmd.eval_command(args.lang, args.expr, args.vars, args.mode, args.batch,
                                sys.stdin, sys.stdout, backend=args.backend, stderr=sys.stderr)


def _error(path: str, exc: Exception) -> None:
    """A backend's refusal on stderr; its message may quote workflow text."""
    from flowc.termtext import shown

    print(shown(f"{path}: error: {exc}"), file=sys.stderr)


def _compile_for_backend(path: str, dialect: str | None, show_warnings: bool,
                         workflow_name: str | None = None):
    """Front end + analyze; print the findings (to stderr). The workflow, or
    None with the exit status to use. ``workflow_name`` picks one workflow
    of an instruction document that holds several (default: the first);
    only its own findings (and the document's) can stop it."""
    from flowc import driver, reporting

    text, problem = driver.read_source(path)
    if problem is not None:
        print(reporting.render_text(problem, None), file=sys.stderr)
        return None, EXIT_USAGE
    result = driver.compile_text(text, path, dialect, workflow=workflow_name)
    if workflow_name is not None and not _has_workflow(text, path, result, workflow_name):
        return None, EXIT_USAGE
    if result.diagnostics and (show_warnings or not result.ok):
        print(reporting.render_all_text(result.diagnostics, {path: text}), file=sys.stderr)
    if not result.ok:
        return None, EXIT_FINDINGS
    return result.workflow, EXIT_OK


def _has_workflow(text: str, path: str, result, name: str) -> bool:
    """``--workflow NAME`` names a workflow of an instruction document (a
    config with several `workflows:` entries, an instruction.md with
    several); say so when it does not."""
    from flowc.compiler.instruction.frontend import workflow_names

    if result.dialect is None:
        return True  # the findings say why
    if result.dialect != "instruction":
        print(f"flowc: error: --workflow picks a workflow of an instruction document; {path} is "
              f"{result.dialect}", file=sys.stderr)
        return False
    if result.workflow is not None:
        return True
    names = workflow_names(text, path)
    if name in names:
        return True
    from flowc.termtext import shown

    print(shown(f"flowc: error: {path} has no workflow named {name!r} (it has: {', '.join(names)})"),
          file=sys.stderr)
    return False


def cmd_compile(args) -> int:
    from flowc.backends.python import BackendError, compile_workflow

    workflow, status = _compile_for_backend(args.path, args.dialect, show_warnings=True,
                                            workflow_name=args.workflow)
    if workflow is None:
        return status
    if args.target == "bytecode":
        return _compile_bytecode(args, workflow)
    try:
        source = compile_workflow(workflow)
    except BackendError as exc:
        _error(args.path, exc)
        return EXIT_FINDINGS
    if args.output is None:
        sys.stdout.write(source)
        return EXIT_OK
    try:
        with open(args.output, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(source)
    except OSError as exc:
        print(f"flowc: error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _compile_bytecode(args, workflow) -> int:
    from flowc.backends.vm import compile_workflow
    from flowc.backends.vm.assemble import AssembleError

    try:
        data = compile_workflow(workflow, strip=args.strip)
    except AssembleError as exc:
        _error(args.path, exc)
        return EXIT_FINDINGS
    if args.output is None:
        if sys.stdout.isatty():
            print("flowc: error: bytecode is binary; write it to a file with -o FILE", file=sys.stderr)
            return EXIT_USAGE
        sys.stdout.buffer.write(data)
        return EXIT_OK
    try:
        with open(args.output, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        print(f"flowc: error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


# ------------------------------------------------------------------ disasm
def cmd_disasm(args) -> int:
    from flowc.backends.vm import VMError, disassemble
    from flowc.ir.limits import MAX_SOURCE_BYTES
    from flowc.sourcefile import FileTooLarge, read_limited

    try:
        data = read_limited(args.path, MAX_SOURCE_BYTES)
    except FileTooLarge:
        print(f"flowc: error: {args.path} is larger than {MAX_SOURCE_BYTES} bytes", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"flowc: error: cannot read {args.path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        text = disassemble(data, args.source_root)
    except VMError as exc:
        _error(args.path, exc)
        return EXIT_FINDINGS
    from flowc.termtext import shown_lines

    sys.stdout.write(shown_lines(text))  # the listings escape names; this fences the rest
    return EXIT_OK


def _vm_backend():
    """The VM's (compile, load) pair, or None while backends/vm lacks them."""
    try:
        from flowc.backends import vm
    except ImportError:
        return None
    compile_fn = getattr(vm, "compile_workflow", None)
    load_fn = getattr(vm, "load", None)
    if callable(compile_fn) and callable(load_fn):
        return compile_fn, load_fn
    return None


def _vm_errors(used: bool) -> tuple:
    """What the bytecode backend raises for a workflow it can't compile or load."""
    if not used:
        return ()
    from flowc.backends.vm import VMError
    from flowc.backends.vm.assemble import AssembleError

    return (AssembleError, VMError)


def _watched(args, host):
    """``(host, wrap)`` for --trace/--progress: the host the run is told to
    (an ObservedHost) and what wraps the program so its run's end is told
    and the trace file closed; None after reporting a usage error."""
    observers = _observers(args)
    if observers is None:
        return None
    if not observers:
        return host, lambda program: program
    from flowc.hosts.trace import ObservedHost, ObservedProgram

    observed = ObservedHost(host, *observers)
    closing = [o.sink.close for o in observers if hasattr(o, "sink")]
    return observed, lambda program: ObservedProgram(program, observed, closing)


def _watching(args, host, workflow_path: str):
    """``(host, end)`` for a journaled run's --trace/--progress: the host its
    driver tells, and ``end(record)``, which ends a run the driver did not
    (one that crashed) and closes the trace file; None after a usage error."""
    observers = _observers(args, workflow_path)
    if observers is None:
        return None
    if not observers:
        return host, lambda record: None
    from flowc.hosts.trace import ObservedHost

    observed = ObservedHost(host, *observers)

    def end(record) -> None:
        observed.finish(record)
        for o in observers:
            if hasattr(o, "sink"):
                o.sink.close()
    return observed, end


def _observers(args, workflow_path: str | None = None) -> list | None:
    """What watches the run: a trace file (--trace), a live display
    (--progress, on a terminal). None after reporting a usage error."""
    from flowc.termtext import shown

    observers = []
    if args.trace_values and not args.trace:
        print("flowc: error: --trace-values needs --trace FILE", file=sys.stderr)
        return None
    if args.trace:
        from flowc.hosts.trace import open_trace

        try:
            observers.append(open_trace(args.trace, values=args.trace_values,
                                        workflow=os.path.basename(workflow_path or args.path)))
        except OSError as exc:
            print(shown(f"flowc: error: cannot write the trace file {args.trace}: {exc.strerror or exc}"),
                  file=sys.stderr)
            return None
    if args.progress and sys.stderr.isatty():
        try:
            from flowc.hosts.progress import progress_on_stderr
        except ImportError:
            print("flowc: error: --progress needs rich: pip install 'flowc[progress]'", file=sys.stderr)
            return None
        observers.append(progress_on_stderr(os.path.basename(workflow_path or args.path)))
    return observers


def _print_record(record: dict) -> None:
    """The run record for people: status, outputs, steps, calls, sleeps.
    Ids, names and messages are shown with :mod:`flowc.termtext` escapes."""
    from flowc.termtext import shown, shown_lines

    out = [f"status: {shown(record['status'])}"]
    if record["error"] is not None:
        step = record["error"].get("step")
        out.append(f"error: {shown(record['error']['message'])}" + (f" (step {shown(step)})" if step else ""))
    out.append("outputs: " + json.dumps(record["outputs"], indent=2, sort_keys=True, ensure_ascii=False,
                                        default=repr))
    out.append("steps:")
    ids = [shown(s["id"]) for s in record["steps"]]
    width = max((len(i) for i in ids), default=0)
    for sid, s in zip(ids, record["steps"]):
        reason = f"  ({shown(s['reason'])})" if s.get("reason") else ""
        out.append(f"  {sid:<{width}}  {shown(s['status'])}{reason}")
    out.append(f"calls: {len(record['calls'])}")
    for c in record["calls"]:
        args = json.dumps(c["args"], sort_keys=True, ensure_ascii=False, default=repr)
        if len(args) > 100:
            args = args[:97] + "..."
        out.append(f"  {shown(c['capability'])} {shown(c['name'])} {args}")
    if record["sleeps_ms"]:
        out.append("sleeps (ms): " + ", ".join(str(ms) for ms in record["sleeps_ms"]))
    if record.get("in_flight"):
        out.append("in flight when interrupted: " + ", ".join(
            f"{shown(c['capability'])} {shown(c['name'])}" for c in record["in_flight"]))
    # JSON escapes C0 controls only: the outputs and arguments go through it too
    print(shown_lines("\n".join(out)))


def cmd_run(args) -> int:
    from flowc.backends.python import BackendError, compile_workflow, load_module
    from flowc.host import load_host_script, load_inputs_file, run_and_print

    if args.batch is None and (args.workers is not None or args.scheduler or args.out):
        print("flowc: error: --out, --workers and --scheduler go with --batch", file=sys.stderr)
        return EXIT_USAGE
    if args.batch is not None and args.journal:
        print("flowc: error: --journal journals one run, not a batch: leave out --batch or --journal",
              file=sys.stderr)
        return EXIT_USAGE
    if args.batch is not None and (args.inputs or args.json or args.trace):
        print("flowc: error: --batch reads the inputs of each run from its lines and prints JSON records: "
              "leave out --inputs, --json and --trace", file=sys.stderr)
        return EXIT_USAGE
    configured = bool(args.config or args.mcp_config)
    if configured and args.host:
        print("flowc: error: --host (a scripted host) and --config/--mcp-config (real tools) exclude each "
              "other", file=sys.stderr)
        return EXIT_USAGE
    try:
        inputs = load_inputs_file(args.inputs)
        host = _configured_host(args) if configured else load_host_script(args.host)
    except ValueError as exc:
        from flowc.termtext import shown

        print(shown(f"flowc: error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    budgets = {key: getattr(args, key) for key in ("max_iterations", "max_host_calls", "max_instructions")
               if getattr(args, key) is not None}
    vm = None
    if args.backend == "vm":
        vm = _vm_backend()
        if vm is None:
            print("flowc: error: the vm backend is not available yet; use --backend python", file=sys.stderr)
            return EXIT_USAGE
    elif "max_instructions" in budgets:
        print("flowc: error: --max-instructions counts VM instructions: use it with --backend vm",
              file=sys.stderr)
        return EXIT_USAGE
    workflow, status = _compile_for_backend(args.path, args.dialect, show_warnings=False,
                                            workflow_name=args.workflow)
    if workflow is None:
        return status
    if args.batch is not None:
        from flowc.cluster.batchcmd import batch_command

        try:
            return batch_command(args, workflow, vm is not None, budgets)
        except BackendError as exc:
            _error(args.path, exc)
            return EXIT_FINDINGS
        except _vm_errors(vm is not None) as exc:
            _error(args.path, exc)
            return EXIT_FINDINGS
    journal_db = _journal_for(args, workflow, host if configured else None)
    if journal_db is not None:
        from flowc import runs_cmd

        return runs_cmd.run_journaled(args, _journal_kit(), journal_db, host, inputs)
    _warn_durable(workflow, args.path)
    watched = _watched(args, host)
    if watched is None:
        return EXIT_USAGE
    host, watching = watched
    try:
        if vm is not None:
            compile_fn, load_fn = vm
            program = watching(load_fn(compile_fn(workflow)))
        else:
            program = watching(load_module(compile_workflow(workflow)))
    except BackendError as exc:
        _error(args.path, exc)
        return EXIT_FINDINGS
    except _vm_errors(vm is not None) as exc:
        _error(args.path, exc)
        return EXIT_FINDINGS
    if configured:
        return _run_configured(program, inputs, host, budgets, args.json)
    return run_and_print(lambda: program.run(inputs, host, **budgets), ("success", "completed"),
                         "flowc: error: ", show=None if args.json else _print_record)


def _configured_host(args):
    """The host of ``--config``/``--mcp-config`` (not started); ValueError for a bad config."""
    from flowc.hosts.config import load_host_config
    from flowc.hosts.router import RouterHost

    return RouterHost(load_host_config(args.config, args.mcp_config))


def _run_configured(program, inputs: dict, host, budgets: dict, as_json: bool) -> int:
    """Run against the host config's providers (asyncio driver); Ctrl-C prints
    the record so far and exits 130."""
    from flowc.host import HostError, run_and_print
    from flowc.hosts.config import ConfigError
    from flowc.hosts.runner import run_with_config
    from flowc.termtext import shown

    outcome: list = []
    crash: list = []
    try:
        outcome.extend(run_with_config(program, inputs, host, budgets))
    except ConfigError as exc:   # found when the providers start (a variable not set, a route)
        print(shown(f"flowc: error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except HostError as exc:     # a server that did not start
        print(shown(f"flowc: error: {exc}"), file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - run_and_print reports the run's own crash in one line
        crash.append(exc)

    def start() -> dict:
        if crash:
            raise crash[0]
        return outcome[0]

    status = run_and_print(start, ("success", "completed"), "flowc: error: ",
                           show=None if as_json else _print_record)
    if outcome and outcome[1]:
        print("flowc: interrupted: the servers were stopped; the record above holds the calls made so far",
              file=sys.stderr)
        return 130
    return status


# ------------------------------------------------------------------ durable runs
def _durable(workflow) -> bool:
    return (workflow.metadata or {}).get("durable") is True


def _journal_for(args, workflow, configured_host) -> str | None:
    """The journal of this run: --journal, else the host config's `journal`
    when the workflow is durable; None: no journal."""
    if args.journal:
        return args.journal
    config = getattr(configured_host, "config", None)
    if _durable(workflow) and getattr(config, "journal", None):
        return config.journal
    return None


def _durable_findings(workflow, table) -> list:
    """`flowc check --config`: a durable workflow whose host config names no journal (INS402)."""
    if not _durable(workflow) or getattr(table.config, "journal", None):
        return []
    from flowc.ir.diagnostics import warning

    return [warning("INS402", f"workflow {workflow.name!r} is durable (`durable: true`) but the host config "
                    "names no journal: a crash loses its runs", workflow.span,
                    "add `journal = \"runs.db\"` to the host config, or run with --journal FILE")]


def _warn_durable(workflow, path: str) -> None:
    """A workflow that asks to be durable, run without a journal: INS402."""
    if _durable(workflow):
        from flowc import reporting
        from flowc.ir.diagnostics import warning

        print(reporting.render_text(warning("INS402", "the workflow is durable (`durable: true`) but runs "
                                            "without a journal: a crash loses the run", workflow.span,
                                            "give --journal FILE (docs/durable.md)"), None), file=sys.stderr)


def _load_program(path: str, dialect: str | None, backend: str, workflow_name: str | None):
    """The compiled program (module or VM program) of a workflow, or None
    and the exit status (the findings are printed)."""
    from flowc.backends.python import BackendError, compile_workflow, load_module

    vm = _vm_backend() if backend == "vm" else None
    if backend == "vm" and vm is None:
        print("flowc: error: the vm backend is not available yet; use --backend python", file=sys.stderr)
        return None, EXIT_USAGE
    workflow, status = _compile_for_backend(path, dialect, show_warnings=False, workflow_name=workflow_name)
    if workflow is None:
        return None, status
    try:
        if vm is not None:
            return vm[1](vm[0](workflow)), EXIT_OK
        return load_module(compile_workflow(workflow)), EXIT_OK
    except BackendError as exc:
        _error(path, exc)
    except _vm_errors(vm is not None) as exc:
        _error(path, exc)
    return None, EXIT_FINDINGS


def _journal_kit():
    from types import SimpleNamespace

    def budgets(args) -> dict:
        return {key: getattr(args, key) for key in ("max_iterations", "max_host_calls", "max_instructions")
                if getattr(args, key, None) is not None}

    return SimpleNamespace(load_program=_load_program, print_record=_print_record, budgets=budgets,
                           configured_host=_configured_host, watching=_watching)


def cmd_resume(args) -> int:
    from flowc import runs_cmd

    return runs_cmd.resume(args, _journal_kit())


def cmd_runs_list(args) -> int:
    from flowc import runs_cmd

    return runs_cmd.runs_list(args)


def cmd_runs_show(args) -> int:
    from flowc import runs_cmd

    return runs_cmd.runs_show(args)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except MemoryError:
        # Limits bound what flowc holds for a workflow, but not the memory
        # the machine has: the last resort is one line, never a traceback.
        print("flowc: error: out of memory", file=sys.stderr)
        return 1
    except BrokenPipeError:  # a reader that went away (flowc ... | head) is no error
        from flowc.host import silence_stdout

        silence_stdout()
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
