"""``flowc eval``: evaluate one expression through the compiler, or a batch of them."""

from __future__ import annotations

import sys
from typing import IO, Any

from flowc.cli.exits import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE


def add_parser(sub) -> None:
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
    ev.set_defaults(func=run)


def run(args) -> int:
    return eval_command(args.lang, args.expr, args.vars, args.mode, args.batch,
                        sys.stdin, sys.stdout, backend=args.backend, stderr=sys.stderr)


def eval_command(lang: str, expr: str | None, vars_json: str | None, mode: str | None, batch: bool,
                 stdin: IO[str], stdout: IO[str], backend: str = "python", stderr: IO[str] | None = None) -> int:
    """``flowc eval``. With ``batch``, reads JSON lines from ``stdin`` and
    writes one result line each (exit 0; per-line failures are data).
    Otherwise evaluates ``expr`` with ``vars_json`` (a JSON object, default
    ``{}``) and writes one line: exit 0 for a value or undefined, 1 for an
    error result, 2 for bad arguments."""
    from flowc.host import loads_json
    from flowc.pipeline.evaluate import evaluate_text, format_line, run_batch

    if batch:
        for line in run_batch(stdin, lang, backend):
            stdout.write(line + "\n")
        stdout.flush()
        return EXIT_OK
    if expr is None:
        stdout.write(format_line("error", "no expression given") + "\n")
        return EXIT_USAGE
    variables: Any = {}
    if vars_json is not None:
        try:
            variables = loads_json(vars_json, "--vars")
        except ValueError as e:
            stdout.write(format_line("error", str(e)) + "\n")
            return EXIT_USAGE
    if mode is None:
        mode = _default_mode(lang, expr, stderr)
    kind, value = evaluate_text(lang, expr, variables, mode, backend)
    stdout.write(format_line(kind, value) + "\n")
    return EXIT_FINDINGS if kind == "error" else EXIT_OK


def _default_mode(lang: str, expr: str, stderr: IO[str] | None) -> str:
    """``--mode`` not given: a text holding ``${`` is a template, which only
    the value mode reads as one (the expression mode would read
    ``${concat('a','b')}`` as a variable name and give ""). Say so."""
    from flowc.pipeline.evaluate import LANGUAGES

    language = LANGUAGES.get(lang)
    if language is not None and language.templates and "${" in expr:
        if stderr is not None:
            stderr.write("note: the text holds ${...}, so it is evaluated as a template (--mode value); "
                         "pass --mode expression to evaluate it as one expression\n")
        return "value"
    return "expression"
