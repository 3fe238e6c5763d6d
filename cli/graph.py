"""``flowc graph``: draw a workflow's IR (mermaid, dot, svg, png)."""

from __future__ import annotations

import os
import sys

from flowc.cli.exits import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from flowc.cli.options import DIALECTS
from flowc.cli.output import fail, write

_SUFFIX_FORMAT = {".mmd": "mermaid", ".mermaid": "mermaid", ".md": "mermaid", ".dot": "dot", ".gv": "dot",
                  ".svg": "svg", ".png": "png"}


def add_parser(sub) -> None:
    graph = sub.add_parser("graph", help="draw a workflow's IR (mermaid, dot, svg, png)")
    graph.add_argument("workflow", metavar="WORKFLOW", help="the workflow file")
    graph.add_argument("--format", choices=("mermaid", "dot", "svg", "png"),
                       help="default: from the -o suffix, else mermaid; svg and png need Graphviz")
    graph.add_argument("-o", "--output", metavar="OUT", help="write here instead of standard output")
    graph.add_argument("--rankdir", choices=("TB", "LR"), default="TB",
                       help="top to bottom (default) or left to right")
    graph.add_argument("--dialect", choices=DIALECTS)
    graph.set_defaults(func=run)


def graph_format(fmt: str | None, out_path: str | None) -> str:
    if fmt:
        return fmt
    if out_path:
        return _SUFFIX_FORMAT.get(os.path.splitext(out_path)[1].lower(), "mermaid")
    return "mermaid"


def graph_format_conflict(fmt: str | None, out_path: str | None) -> str | None:
    """A message when ``--format`` contradicts the output file's suffix
    (``--format svg -o x.png`` would write SVG into a .png), else None."""
    if not (fmt and out_path):
        return None
    suffix = os.path.splitext(out_path)[1].lower()
    implied = _SUFFIX_FORMAT.get(suffix)
    if implied is None or implied == fmt:
        return None
    right = next(s for s, f in _SUFFIX_FORMAT.items() if f == fmt)
    return (f"--format {fmt} but {out_path} is named like a {implied} file; name it "
            f"{os.path.splitext(out_path)[0]}{right}, or use --format {implied} (or leave --format out: "
            f"the suffix decides)")


def run(args) -> int:
    from flowc import diagrams
    from flowc.cli import reporting
    from flowc.pipeline import driver

    conflict = graph_format_conflict(args.format, args.output)
    if conflict is not None:
        return fail(conflict)
    fmt = graph_format(args.format, args.output)
    if fmt in diagrams.IMAGE_FORMATS and not args.output and sys.stdout.isatty():
        return fail(f"{fmt.upper()} is binary; write it to a file with -o OUT.{fmt}")
    text, problem = driver.read_source(args.workflow)
    if problem is not None:
        print(reporting.render_text(problem, None), file=sys.stderr)
        return EXIT_USAGE
    result = driver.compile_text(text, args.workflow, args.dialect)
    if result.diagnostics:
        print(reporting.render_all_text(result.diagnostics, {args.workflow: text}), file=sys.stderr)
    if result.workflow is None:
        return fail("no picture: the workflow could not be read (see the findings above)", EXIT_FINDINGS)
    try:
        picture = diagrams.render(result.workflow, fmt, result.diagnostics, rankdir=args.rankdir)
    except diagrams.GraphvizNotFound as exc:
        return fail(str(exc))
    except diagrams.GraphvizFailed as exc:
        return fail(str(exc), EXIT_FINDINGS)
    if fmt == "mermaid" and args.output and args.output.lower().endswith(".md"):
        picture = f"```mermaid\n{picture}```\n"   # a Markdown page GitHub renders
    write(args.output, picture)
    return EXIT_OK
