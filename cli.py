"""The flowc command line."""

from __future__ import annotations

import argparse
import json
import sys
import time

from flowc import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage problems exit 2, never a traceback
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="flowc", description="Compile, check and run agent workflows.")
    parser.add_argument("--version", action="version", version=f"flowc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = sub.add_parser("check", help="check workflows and report every finding")
    check.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    check.add_argument("--dialect", choices=("workflowskill", "aevatar", "instruction"))
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.set_defaults(func=cmd_check)

    ev = sub.add_parser("eval", help="evaluate one expression through the compiler")
    ev.add_argument("expr", nargs="?", help="the expression (omit with --batch)")
    ev.add_argument("--lang", choices=("workflowskill", "aevatar", "cel"), required=True)
    ev.add_argument("--vars", help="JSON object of variables")
    ev.add_argument("--mode", choices=("expression", "value"), default="expression")
    ev.add_argument("--batch", action="store_true", help="read JSON lines from stdin")
    ev.set_defaults(func=cmd_eval)
    return parser


def cmd_check(args) -> int:
    from flowc import driver, reporting

    started = time.perf_counter()
    files = driver.expand_paths(args.paths)
    all_diags = []
    sources: dict[str, str] = {}
    io_error = False
    for path in files:
        text, problem = driver.read_source(path)
        if problem is not None:
            all_diags.append(problem)
            io_error = True
            continue
        sources[path] = text
        result = driver.compile_text(text, path, args.dialect)
        all_diags.extend(result.diagnostics)
    errors = sum(d.is_error for d in all_diags)
    warnings = len(all_diags) - errors
    if args.format == "json":
        print(reporting.render_json(all_diags))
    else:
        if all_diags:
            print(reporting.render_all_text(all_diags, sources))
        print(reporting.summary(len(files), errors, warnings, time.perf_counter() - started),
              file=sys.stderr)
    if io_error and errors == sum(1 for d in all_diags if d.code == "FLC003"):
        return EXIT_USAGE
    return EXIT_FINDINGS if errors else EXIT_OK


def cmd_eval(args) -> int:
    from flowc import evalcmd

    return evalcmd.eval_command(args.lang, args.expr, args.vars, args.mode, args.batch,
                                sys.stdin, sys.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
