"""What several commands' parsers share: the parser class, the dialect
choices, the budget type and the cluster options."""

from __future__ import annotations

import argparse
import sys

from flowc.cli.exits import EXIT_USAGE
from flowc.pipeline.frontends import FRONT_ENDS

# --dialect's choices: the dialects with a front end.
DIALECTS = tuple(FRONT_ENDS)


class CliParser(argparse.ArgumentParser):
    def error(self, message: str):  # usage problems exit 2, never a traceback
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def budget(text: str) -> int:
    """A run budget: a non-negative integer (argparse reports anything else, exit 2)."""
    from flowc.host import parse_budget

    try:
        return parse_budget(text, "the budget")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None


def budgets_of(args) -> dict:
    """The fuel options given (--max-iterations, ...), by keyword."""
    return {key: getattr(args, key) for key in ("max_iterations", "max_host_calls", "max_instructions")
            if getattr(args, key, None) is not None}


def cluster_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--workers N`` / ``--scheduler ADDR``: run on Dask distributed (docs/batch.md)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N",
                       help=f"{what} on a local Dask cluster of N worker processes (needs flowc[distributed])")
    where.add_argument("--scheduler", metavar="ADDR",
                       help=f"{what} on the Dask cluster of this scheduler, e.g. tcp://host:8786")
