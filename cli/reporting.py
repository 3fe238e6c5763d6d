"""Rendering findings the way a good compiler does: location, code, source
line and caret for people; a JSON list for machines."""

from __future__ import annotations

import json
from collections.abc import Iterable

from flowc.ir.diagnostics import Diagnostic
from flowc.termtext import json_text, shown, shown_lines


def render_text(diag: Diagnostic, source_lines: list[str] | None) -> str:
    """A finding for people. Workflow text in it (the file name, the
    message, the source line, notes) is shown with :mod:`flowc.termtext`
    escapes, and a line break in a message or note starts an indented line:
    only a finding's location line starts at column 0."""
    s = diag.span
    where = f"{s.file}:{s.line}:{s.col}" if s.line > 0 else (s.file or "<input>")
    out = [f"{shown(where)}: {diag.severity.value}[{shown(diag.code)}]: {_indented(diag.message)}"]
    if source_lines and 0 < s.line <= len(source_lines):
        text = source_lines[s.line - 1].rstrip("\n").expandtabs(1)
        gutter = str(s.line)
        pad = " " * len(gutter)
        col = max(s.col, 1)
        if s.end_line == s.line and s.end_col > col:
            width = s.end_col - col
        else:
            width = max(len(text) - col + 1, 1)
        width = max(1, min(width, max(len(text) - col + 1, 1)))
        # the caret under the escaped text: as wide as what it marks is shown
        lead = len(shown(text[: col - 1])) + max(0, col - 1 - len(text))
        width = max(1, len(shown(text[col - 1: col - 1 + width])))
        out.append(f"{'':>2}{gutter} | {shown(text)}")
        out.append(f"{'':>2}{pad} | {' ' * lead}{'^' * width}")
    for note in diag.notes:
        out.append(f"   = note: {_indented(note)}")
    return "\n".join(out)


def _indented(text: str) -> str:
    """Message text, its own line breaks kept, each following line indented."""
    return "\n".join(line if i == 0 or line[:1].isspace() else "    " + line
                     for i, line in enumerate(shown_lines(text).split("\n")))


def render_all_text(diags: Iterable[Diagnostic], sources: dict[str, str]) -> str:
    lines_cache: dict[str, list[str]] = {}
    blocks = []
    for d in diags:
        f = d.span.file
        if f not in lines_cache:
            lines_cache[f] = sources.get(f, "").replace("\r\n", "\n").split("\n") if f in sources else []
        blocks.append(render_text(d, lines_cache[f]))
    return "\n".join(blocks)


def render_json(diags: Iterable[Diagnostic]) -> str:
    return json.dumps([d.as_json() for d in diags], indent=2, sort_keys=True)


def summary(files: int, errors: int, warnings: int, seconds: float) -> str:
    def plural(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"
    return (f"checked {plural(files, 'file')}: {plural(errors, 'error')}, {plural(warnings, 'warning')} "
            f"in {seconds:.2f}s")


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {"error": "error", "warning": "warning", "note": "note"}


def render_sarif(diags: Iterable[Diagnostic], tool_version: str = "") -> str:
    """SARIF 2.1.0, for code-scanning dashboards (GitHub, GitLab, Azure DevOps).

    One run; one rule per code that occurs (title, explanation, examples as
    help); one result per finding, located by file, line and column.
    """
    from flowc.compiler.codes import CODES

    diags = list(diags)
    rule_ids = sorted({d.code for d in diags})
    index = {code: i for i, code in enumerate(rule_ids)}
    rules = [_sarif_rule(code, CODES.get(code), diags) for code in rule_ids]
    results = []
    for d in diags:
        result = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": SARIF_LEVEL.get(d.severity.value, "warning"),
            "message": {"text": d.message + "".join(f"\n{note}" for note in d.notes)},
        }
        location = _sarif_location(d)
        if location is not None:
            result["locations"] = [location]
        results.append(result)
    driver = {"name": "flowc", "rules": rules}
    if tool_version:
        driver["version"] = driver["semanticVersion"] = tool_version
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}],
    }
    # A lone surrogate (a file name that is not UTF-8, read with surrogateescape)
    # can't be written as UTF-8, and C1 or bidi characters would act on a
    # terminal: inside a JSON string each is its \u escape.
    return json_text(json.dumps(log, indent=2, sort_keys=False, ensure_ascii=False))


def _sarif_rule(code: str, info, diags: list[Diagnostic]) -> dict:
    severities = {d.severity.value for d in diags if d.code == code}
    level = "error" if "error" in severities else ("warning" if "warning" in severities else "note")
    rule: dict = {"id": code, "defaultConfiguration": {"level": level}}
    if info is None:
        return rule
    rule["name"] = "".join(w.capitalize() for w in info.title.replace("/", " ").split() if w.isalnum())
    rule["shortDescription"] = {"text": info.title}
    rule["fullDescription"] = {"text": info.explanation}
    from flowc.compiler.codes_examples import fenced

    help_md = [info.explanation]
    if info.wrong:
        help_md += ["", "Wrong:", "", fenced(info.wrong, info.example_file)]
    if info.right:
        help_md += ["", "Right:", "", fenced(info.right, info.example_file)]
    rule["help"] = {"text": f"{info.explanation}\nRun `flowc explain {code}` for examples.",
                    "markdown": "\n".join(help_md)}
    return rule


def _sarif_location(d: Diagnostic) -> dict | None:
    s = d.span
    if not s.file:
        return None
    physical: dict = {"artifactLocation": _sarif_artifact(s.file)}
    if s.line > 0:
        region = {"startLine": s.line, "startColumn": max(s.col, 1)}
        if s.end_line >= s.line and s.end_line > 0:
            region["endLine"] = s.end_line
            if s.end_col > 0 and (s.end_line > s.line or s.end_col > region["startColumn"]):
                region["endColumn"] = s.end_col
        physical["region"] = region
    return {"physicalLocation": physical}


def _sarif_artifact(path: str) -> dict:
    import os
    from pathlib import PurePath
    from urllib.parse import quote

    if os.path.isabs(path):
        return {"uri": PurePath(path).as_uri()}
    rel = path.replace(os.sep, "/")
    while rel.startswith("./"):
        rel = rel[2:]
    # a name that is not UTF-8 is percent-encoded byte by byte, as a URI holds it
    return {"uri": quote(rel, errors="surrogateescape"), "uriBaseId": "%SRCROOT%"}
