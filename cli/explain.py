"""``flowc explain``: a finding code's explanation, with a wrong and a right example."""

from __future__ import annotations

import sys
import textwrap

from flowc.cli.exits import EXIT_OK
from flowc.cli.output import fail


def add_parser(sub) -> None:
    explain = sub.add_parser("explain", help="explain a finding code, with a wrong and a right example")
    explain.add_argument("code", nargs="?", metavar="CODE", help="e.g. WFS205 (omit to list every code)")
    explain.set_defaults(func=run)


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
        reported = example_findings(info.code) if show_output else ""
        if reported:
            target = getattr(EXAMPLES.get(info.code), "translate_to", None)
            what = f"flowc translate --to {target}" if target else "flowc check"
            out += ["", f"{what} reports:", "", textwrap.indent(reported, "    ")]
    if info.right:
        out += ["", "Right:", "", textwrap.indent(info.right.rstrip("\n"), "    ")]
    return "\n".join(out) + "\n"


def example_findings(code: str) -> str:
    """What checking the wrong example reports for ``code`` (rendered)."""
    from flowc.cli import reporting
    from flowc.compiler.codes import EXAMPLES, NOT_STANDALONE
    from flowc.compiler.codes_examples import example_dialect
    from flowc.pipeline import driver

    example = EXAMPLES.get(code)
    if example is None or code in NOT_STANDALONE:
        return ""
    if example.translate_to is not None:
        from flowc.pipeline import translate

        result = translate.translate_text(example.wrong, example.file, example.translate_to,
                                          dialect=example_dialect(code, example))
    else:
        result = driver.compile_text(example.wrong, example.file, example_dialect(code, example))
    mine = [d for d in result.diagnostics if d.code == code]
    return reporting.render_all_text(mine, {example.file: example.wrong}) if mine else ""


def run(args) -> int:
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
        return fail(f"unknown finding code {args.code!r}" + (f"; {hint}" if hint else "")
                    + " (flowc explain lists every code)")
    sys.stdout.write(text)
    return EXIT_OK
