"""``flowc run WORKFLOW --batch inputs.jsonl``: one run per input line.

The workflow is compiled once here (module source or bytecode) and sent to
each worker once; every input line gives one JSON record on ``--out`` (or
stdout), in input order, with ``line`` (its line number) added to the run
record ``flowc run --json`` prints. Exit status: 0 when every run
succeeded, 1 when one did not (its record says why), 2 for a usage problem,
130 after Ctrl-C (a host config's batch in-process: the records written so
far are whole).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from flowc.cli.exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from flowc.cluster import configured, engine, runner
from flowc.cluster.job import BatchJob, HostSpec
from flowc.host import HostError, ScriptedHost, ScriptError, load_json_file
from flowc.hosts.config import ConfigError, host_config_from_texts, read_config_texts


def host_spec(args) -> HostSpec:
    """The host of the runs: ``--config``/``--mcp-config`` (the files' text,
    parsed here to check it and again where the host starts), else
    ``--host script.json`` (an empty script without one). ``ValueError``
    (one line) for a config or script that is not well formed."""
    if args.config or args.mcp_config:
        texts = read_config_texts(args.config, args.mcp_config)
        host_config_from_texts(texts)   # a bad file is a usage error here, not one per worker
        return HostSpec("config", config=texts)
    script = load_json_file(args.host, "host script") if args.host else {}
    try:
        ScriptedHost(script)   # checked here once, not once per run on the workers
    except ScriptError as exc:
        raise ValueError(f"the host script {args.host}: {' '.join(str(exc).split())}") from None
    return HostSpec("script", script)


def compiled(workflow, use_vm: bool) -> tuple[str, str | bytes]:
    """The workflow's compiled form for the chosen backend (may raise the
    backend's errors; the command line reports them)."""
    if use_vm:
        from flowc.backends.vm import compile_workflow

        return "vm", compile_workflow(workflow, strip=False)
    from flowc.backends.python import compile_workflow

    return "python", compile_workflow(workflow)


def batch_command(args, workflow, use_vm: bool, budgets: dict) -> int:
    """Run the batch of ``args.batch`` (see the module doc)."""
    if args.workers is not None and args.scheduler:
        return _usage("--workers and --scheduler exclude each other")
    if args.chunk_size is not None and args.chunk_size < 1:
        return _usage("--chunk-size takes a positive number of runs")
    if args.workers is not None and args.workers < 1:
        return _usage("--workers takes a positive number of worker processes")
    if args.batch_concurrency < 1:
        return _usage("--batch-concurrency takes a positive number of runs")
    try:
        spec = host_spec(args)
        lines = _input_lines(args.batch)
    except ValueError as exc:
        return _usage(str(exc))
    backend, program = compiled(workflow, use_vm)
    concurrency = args.batch_concurrency if spec.kind == "config" else 1
    job = BatchJob(backend, program, spec, tuple(sorted(budgets.items())), concurrency)
    show = bool(args.progress) or sys.stderr.isatty()
    progress = runner.Progress(len(lines)) if show else None
    try:
        with _output(args.out) as out:
            failed = _run(job, lines, out, args, progress)
    except OSError as exc:
        return _usage(f"cannot write {args.out}: {exc.strerror or exc}")
    except engine.MissingEngine as exc:
        return _usage(str(exc))
    except configured.Interrupted as exc:
        print(f"flowc: interrupted: the servers were stopped; {exc.written} of {len(lines)} records written",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    except ConfigError as exc:   # found when the servers start: a variable not set, a route to nothing
        return _usage(str(exc))
    except HostError as exc:     # a server that did not start
        from flowc.termtext import shown

        print(shown(f"flowc: error: {' '.join(str(exc).split())}"), file=sys.stderr)
        return EXIT_FAILED
    return EXIT_FAILED if failed else EXIT_OK


@contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    if not path:
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        yield fh


def _run(job, lines, out, args, progress) -> int:
    write = out.write
    if job.host.kind == "config":
        def write(text: str) -> None:   # runs against real tools are slow: each record as it comes
            out.write(text)
            out.flush()
    if args.workers is None and not args.scheduler:
        return runner.run_batch(job, lines, write, None, args.chunk_size, progress)
    with engine.client_for(args.workers, args.scheduler) as client:
        return runner.run_batch(job, lines, write, client, args.chunk_size, progress)


def _input_lines(path: str) -> list[tuple[int, str]]:
    if path == "-":
        return runner.read_lines(sys.stdin)
    try:
        with open(path, encoding="utf-8-sig") as fh:
            return runner.read_lines(fh)
    except OSError as exc:
        raise ValueError(f"cannot read the batch file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"the batch file {path} is not UTF-8 ({exc.reason} at byte {exc.start})") from None


def _usage(message: str) -> int:
    from flowc.termtext import shown

    print(shown(f"flowc: error: {message}"), file=sys.stderr)
    return EXIT_USAGE
