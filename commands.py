"""The `flowc graph`, `flowc schema` and `flowc explain` commands."""

from __future__ import annotations

import os
import sys
import textwrap

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

_SUFFIX_FORMAT = {".mmd": "mermaid", ".mermaid": "mermaid", ".md": "mermaid", ".dot": "dot", ".gv": "dot",
                  ".svg": "svg", ".png": "png"}


def _fail(message: str, status: int = EXIT_USAGE) -> int:
    from flowc.termtext import shown_lines

    # Graphviz's own messages may quote the picture's text
    print(f"flowc: {shown_lines(message)}", file=sys.stderr)
    return status


def _write(out_path: str | None, data: str | bytes) -> None:
    if out_path and out_path != "-":
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(out_path, mode, **({} if isinstance(data, bytes) else {"encoding": "utf-8"})) as fh:
            fh.write(data)
    elif isinstance(data, bytes):
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        sys.stdout.write(data)


# ------------------------------------------------------------------ graph
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


def cmd_graph(args) -> int:
    from flowc import driver, reporting
    from flowc.backends import graph

    conflict = graph_format_conflict(args.format, args.output)
    if conflict is not None:
        return _fail(conflict)
    fmt = graph_format(args.format, args.output)
    if fmt in graph.IMAGE_FORMATS and not args.output and sys.stdout.isatty():
        return _fail(f"{fmt.upper()} is binary; write it to a file with -o OUT.{fmt}")
    text, problem = driver.read_source(args.workflow)
    if problem is not None:
        print(reporting.render_text(problem, None), file=sys.stderr)
        return EXIT_USAGE
    result = driver.compile_text(text, args.workflow, args.dialect)
    if result.diagnostics:
        print(reporting.render_all_text(result.diagnostics, {args.workflow: text}), file=sys.stderr)
    if result.workflow is None:
        return _fail("no picture: the workflow could not be read (see the findings above)", EXIT_FINDINGS)
    try:
        picture = graph.render(result.workflow, fmt, result.diagnostics, rankdir=args.rankdir)
    except graph.GraphvizNotFound as exc:
        return _fail(str(exc))
    except graph.GraphvizFailed as exc:
        return _fail(str(exc), EXIT_FINDINGS)
    if fmt == "mermaid" and args.output and args.output.lower().endswith(".md"):
        picture = f"```mermaid\n{picture}```\n"   # a Markdown page GitHub renders
    _write(args.output, picture)
    return EXIT_OK


# ----------------------------------------------------------------- schema
def cmd_schema(args) -> int:
    from flowc.compiler import schema

    if args.dialect == "host":
        from flowc.hosts.schema import schema_text

        _write(args.output, schema_text())
        return EXIT_OK
    available = schema.available()
    if args.dialect not in available:
        return _fail(f"no schema for the {args.dialect} dialect in this version of flowc "
                     f"(available: {', '.join(available)})")
    _write(args.output, schema.schema_text(args.dialect))
    return EXIT_OK


# ---------------------------------------------------------------- explain
def explain_text(code: str, show_output: bool = True) -> str | None:
    """The long explanation of ``code``, with its examples; None if unknown."""
    from flowc.compiler.codes import EXAMPLES, explain

    info = explain(code)
    if info is None:
        return None
    out = [f"{info.code}: {info.title}", ""]
    out.extend(textwrap.fill(para, 78) for para in info.explanation.split("\n\n"))
    if info.wrong:
        out += ["", f"Wrong ({info.example_file}):", "", textwrap.indent(info.wrong.rstrip("\n"), "    ")]
        reported = _example_findings(info.code) if show_output else ""
        if reported:
            target = getattr(EXAMPLES.get(info.code), "translate_to", None)
            what = f"flowc translate --to {target}" if target else "flowc check"
            out += ["", f"{what} reports:", "", textwrap.indent(reported, "    ")]
    if info.right:
        out += ["", "Right:", "", textwrap.indent(info.right.rstrip("\n"), "    ")]
    return "\n".join(out) + "\n"


def _example_findings(code: str) -> str:
    """What checking the wrong example reports for ``code`` (rendered)."""
    from flowc import driver, reporting
    from flowc.compiler.codes import EXAMPLES, NOT_STANDALONE
    from flowc.compiler.codes_examples import example_dialect

    example = EXAMPLES.get(code)
    if example is None or code in NOT_STANDALONE:
        return ""
    if example.translate_to is not None:
        from flowc import translate

        result = translate.translate_text(example.wrong, example.file, example.translate_to,
                                          dialect=example_dialect(code, example))
    else:
        result = driver.compile_text(example.wrong, example.file, example_dialect(code, example))
    mine = [d for d in result.diagnostics if d.code == code]
    return reporting.render_all_text(mine, {example.file: example.wrong}) if mine else ""


def cmd_explain(args) -> int:
    from flowc.compiler.codes import CODES
    from flowc.compiler.suggest import did_you_mean

    if not args.code:
        width = max(len(c) for c in CODES)
        for code, info in CODES.items():
            print(f"{code:<{width}}  {info.title}")
        return EXIT_OK
    text = explain_text(args.code)
    if text is None:
        hint = did_you_mean(args.code.upper(), list(CODES))
        return _fail(f"unknown finding code {args.code!r}" + (f"; {hint}" if hint else "")
                     + " (flowc explain lists every code)")
    sys.stdout.write(text)
    return EXIT_OK
