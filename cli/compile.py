"""``flowc compile``: a workflow to a Python module or to bytecode."""

from __future__ import annotations

import sys

from flowc.cli.exits import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from flowc.cli.options import DIALECTS
from flowc.cli.output import backend_error


def add_parser(sub) -> None:
    comp = sub.add_parser("compile", help="compile a workflow to a Python module or bytecode")
    comp.add_argument("path", metavar="WORKFLOW", help="the workflow file")
    comp.add_argument("--target", choices=("python", "bytecode"), default="python",
                      help="what to emit (default: python); bytecode runs on the VM (docs/bytecode.md)")
    comp.add_argument("--strip", action="store_true", help="bytecode: leave the source map out")
    comp.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    comp.add_argument("--dialect", choices=DIALECTS)
    comp.add_argument("--workflow", metavar="NAME",
                      help="instruction documents with several workflows: the one to compile "
                           "(default: the first)")
    comp.set_defaults(func=run)


def run(args) -> int:
    from flowc.backends.python import BackendError, compile_workflow
    from flowc.cli.programs import compile_for_backend

    workflow, status = compile_for_backend(args.path, args.dialect, show_warnings=True,
                                           workflow_name=args.workflow)
    if workflow is None:
        return status
    if args.target == "bytecode":
        return _compile_bytecode(args, workflow)
    try:
        source = compile_workflow(workflow)
    except BackendError as exc:
        backend_error(args.path, exc)
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
    from flowc.backends.vm.plan_assemble import AssembleError

    try:
        data = compile_workflow(workflow, strip=args.strip)
    except AssembleError as exc:
        backend_error(args.path, exc)
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
