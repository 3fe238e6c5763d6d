"""The ``flowc`` parser, assembled from each command's ``add_parser``, and
``main``, which runs the command the arguments name."""

from __future__ import annotations

import sys

from flowc import __version__
from flowc.cli import bundle, check, disasm, explain, fuzz, graph, resume, run, runs, schema, translate
from flowc.cli import compile as compile_command
from flowc.cli import eval as eval_command
from flowc.cli import exec as exec_command
from flowc.cli.exits import EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK
from flowc.cli.options import CliParser

# In the order `flowc --help` lists them.
COMMANDS = (check, eval_command, compile_command, run, resume, runs, disasm, graph, translate, schema, explain,
            fuzz, bundle, exec_command)


def build_parser() -> CliParser:
    parser = CliParser(prog="flowc", description="Compile, check and run agent workflows.")
    parser.add_argument("--version", action="version", version=f"flowc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=CliParser)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except MemoryError:
        # Limits bound what flowc holds for a workflow, but not the memory
        # the machine has: the last resort is one line, never a traceback.
        print("flowc: error: out of memory", file=sys.stderr)
        return EXIT_FINDINGS
    except BrokenPipeError:  # a reader that went away (flowc ... | head) is no error
        from flowc.host import silence_stdout

        silence_stdout()
        return EXIT_OK
