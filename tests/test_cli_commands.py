"""The command line's layout: one module per command, each with its
``add_parser`` and ``run``; every exit status in ``flowc.cli.exits``."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

from flowc import cli
from flowc.cli import app, exits

ROOT = Path(cli.__file__).resolve().parents[1]
NOT_PACKAGE = {"tests", "benchmarks", "build", "dist", "docs", "examples", "node_modules"}


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_each_command_is_one_module_of_the_cli_package():
    commands = _subcommands(cli.build_parser())
    assert list(commands) == [m.__name__.rsplit(".", 1)[1] for m in app.COMMANDS]
    assert list(commands) == ["check", "eval", "compile", "run", "resume", "runs", "disasm", "graph",
                                   "translate", "schema", "explain", "fuzz"]   # the order --help has always had
    for name, sub in commands.items():
        func = sub.get_default("func")
        if name == "runs":   # list and show: the subcommands of its own parser
            func = _subcommands(sub)["list"].get_default("func")
        assert func.__module__ == f"flowc.cli.{name}", name


def _exit_constants(path: Path) -> list[str]:
    """Module-level names bound to exit statuses (``EXIT_X = 1``, ``EXIT_A, EXIT_B = 0, 1``)."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                found += [n.id for n in names if isinstance(n, ast.Name) and n.id.startswith("EXIT_")
                          and not n.id.endswith("STATUSES")]
    return found


def test_exit_statuses_are_defined_in_one_place():
    defining = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in NOT_PACKAGE or any(p.startswith(".") for p in rel.parts):
            continue
        names = _exit_constants(path)
        if names:
            defining[rel.as_posix()] = names
    assert list(defining) == ["cli/exits.py"], defining
    assert (exits.EXIT_OK, exits.EXIT_FINDINGS, exits.EXIT_USAGE, exits.EXIT_INTERRUPTED) == (0, 1, 2, 130)
