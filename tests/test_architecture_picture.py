"""The picture of the package layering in docs/ARCHITECTURE.md is the tree's.

The Mermaid block of section 1.3 draws which package imports which. It is
made from the import graph that tests/test_layering.py reads, so it cannot
drift from the code: this test draws it again and compares.
``python tests/test_architecture_picture.py --write`` redraws it.
"""

from __future__ import annotations

import sys

import test_layering as layering

DOC = layering.ROOT / "docs" / "ARCHITECTURE.md"
BEGIN, END = "```mermaid\n%% layering: drawn by tests/test_architecture_picture.py\n", "```\n"
# The boxes, most specific first: a module belongs to the first box whose
# package holds it. The leaf modules (sourcefile, termtext) and the
# version are left out: everyone may use them.
BOXES = (
    ("flowc.compiler.analyze", "compiler/analyze"), ("flowc.compiler", "compiler (front ends)"),
    ("flowc.ir", "ir"), ("flowc.grammar", "grammar"), ("flowc.plan", "plan"), ("flowc.runtime", "runtime"),
    ("flowc.backends.python", "backends/python"), ("flowc.backends.vm", "backends/vm"),
    ("flowc.translation", "translation"), ("flowc.diagrams", "diagrams"), ("flowc.journal", "journal"),
    ("flowc.hosts", "hosts"), ("flowc.host", "host"), ("flowc.pipeline", "pipeline"),
    ("flowc.cluster", "cluster"), ("flowc.testing", "testing"), ("flowc.cli", "cli"),
)


def _box(module: str) -> str | None:
    for package, label in BOXES:
        if layering._in(module, package):
            return label
    return None


def picture() -> str:
    """The Mermaid flowchart of the imports between boxes."""
    edges = set()
    for src, dst in layering.GRAPH.edges:
        a, b = _box(src), _box(dst)
        if a and b and a != b:
            edges.add((a, b))
    ids = {label: f"p{i}" for i, (_pkg, label) in enumerate(BOXES)}
    lines = ["flowchart TD"]
    lines += [f'  {ids[label]}["{label}"]' for _pkg, label in BOXES]
    lines += [f"  {ids[a]} --> {ids[b]}" for a, b in sorted(edges)]
    return BEGIN + "\n".join(lines) + "\n" + END


def _current() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(BEGIN)
    return text[start:text.index(END, start + len(BEGIN)) + len(END)]


def test_the_layering_picture_is_the_trees():
    assert _current() == picture(), "redraw it: python tests/test_architecture_picture.py --write"


def test_the_picture_has_no_arrow_back_up():
    ids = {label: f"p{i}" for i, (_pkg, label) in enumerate(BOXES)}
    drawn = picture()
    for bottom in ("ir", "runtime", "grammar"):
        assert f"  {ids[bottom]} --> " not in drawn     # the lowest layers import no other box
    assert f"{ids['plan']} --> {ids['runtime']}" not in drawn


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    text = DOC.read_text(encoding="utf-8")
    DOC.write_text(text.replace(_current(), picture()), encoding="utf-8")
