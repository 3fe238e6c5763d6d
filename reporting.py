"""Rendering findings the way a good compiler does: location, code, source
line and caret for people; a JSON list for machines."""

from __future__ import annotations

import json
from collections.abc import Iterable

from flowc.ir.diagnostics import Diagnostic


def render_text(diag: Diagnostic, source_lines: list[str] | None) -> str:
    s = diag.span
    where = f"{s.file}:{s.line}:{s.col}" if s.line > 0 else (s.file or "<input>")
    out = [f"{where}: {diag.severity.value}[{diag.code}]: {diag.message}"]
    if source_lines and 0 < s.line <= len(source_lines):
        text = source_lines[s.line - 1].rstrip("\n").expandtabs(1)
        gutter = str(s.line)
        pad = " " * len(gutter)
        out.append(f"{'':>2}{gutter} | {text}")
        col = max(s.col, 1)
        if s.end_line == s.line and s.end_col > col:
            width = s.end_col - col
        else:
            width = max(len(text) - col + 1, 1)
        width = max(1, min(width, max(len(text) - col + 1, 1)))
        out.append(f"{'':>2}{pad} | {' ' * (col - 1)}{'^' * width}")
    for note in diag.notes:
        out.append(f"   = note: {note}")
    return "\n".join(out)


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
