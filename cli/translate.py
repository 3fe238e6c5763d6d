"""``flowc translate``: write a workflow in another dialect, or reformat it in its own."""

from __future__ import annotations

import os
import sys

from flowc.cli.exits import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from flowc.cli.options import DIALECTS


def add_parser(sub) -> None:
    tr = sub.add_parser("translate", help="write a workflow in another dialect, or reformat it in its own")
    tr.add_argument("path", metavar="WORKFLOW", help="the workflow file (any dialect)")
    tr.add_argument("--to", dest="target", required=True, choices=DIALECTS,
                    help="the dialect to write (its own dialect: the canonical format)")
    tr.add_argument("-o", "--output", metavar="OUT", help="write here (a file, or a directory) instead of "
                    "standard output")
    tr.add_argument("--strict", action="store_true",
                    help="fail when a construct has no equivalent in the target, instead of writing the "
                         "closest form with a comment and a warning")
    tr.add_argument("--dialect", choices=DIALECTS,
                    help="the source dialect (default: recognised from the content)")
    tr.set_defaults(func=run)


def run(args) -> int:
    return command(args.path, args.target, args.output, args.strict, args.dialect)


def command(path: str, target: str, output: str | None, strict: bool, dialect: str | None) -> int:
    """``flowc translate``: findings on stderr, the document on stdout or in
    ``output``. Exit 0 (warnings allowed), 1 (the source has errors, or
    ``strict`` and something has no equivalent), 2 (usage or I/O)."""
    from flowc.cli import reporting
    from flowc.pipeline import driver
    from flowc.pipeline.translate import default_output_name, translate_text

    text, problem = driver.read_source(path)
    if problem is not None:
        print(reporting.render_text(problem, None), file=sys.stderr)
        return EXIT_USAGE
    result = translate_text(text, path, target, strict, dialect)
    diags = list(result.diagnostics)
    if diags:
        print(reporting.render_all_text(diags, {path: text}), file=sys.stderr)
    if not result.ok:
        if result.emission is not None:
            print(f"flowc: {path}: not translated: the workflow has no exact form in {target} "
                  "(see the errors above; without --strict the closest form is written)", file=sys.stderr)
        return EXIT_FINDINGS
    if output is None:
        sys.stdout.write(result.text)
        return EXIT_OK
    if os.path.isdir(output):
        output = os.path.join(output, default_output_name(path, target, result.workflow))
        if _same_file(output, path):
            # a name flowc chose must not replace the workflow it was made from
            print(f"flowc: error: {output} is the source itself; translate would write over the source "
                  "(give -o a file name or another directory)", file=sys.stderr)
            return EXIT_USAGE
    return _write(output, result.text)


def _write(output: str, text: str) -> int:
    try:
        with open(output, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:
        print(f"flowc: error: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
