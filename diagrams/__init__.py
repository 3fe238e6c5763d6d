"""The IR as a picture: Mermaid and Graphviz DOT text, SVG and PNG through Graphviz.

Nodes show their id and operation, edges their kind (sequence, dashed
fall-through, branch with its label, dependency, error route), regions are
clusters, the start and the terminal are marked, and findings passed in are
highlighted on the node they point at (unreachable nodes in red).

>>> from flowc.ir.workflow import Edge, EdgeKind, Node, Workflow
>>> wf = Workflow("demo", "workflowskill", "workflowskill",
...               nodes=(Node("a", "call", "tool"), Node("$end", "end", "end")),
...               edges=(Edge("a", "$end", EdgeKind.SEQUENCE),), entry=("a",), terminal="$end")
>>> print(render(wf, "mermaid").splitlines()[3])
flowchart TD
"""

from __future__ import annotations

from collections.abc import Iterable

from flowc.diagrams.dot import to_dot
from flowc.diagrams.image import (
    IMAGE_FORMATS,
    INSTALL_HINT,
    GraphvizFailed,
    GraphvizNotFound,
    find_dot,
    render_image,
)
from flowc.diagrams.mermaid import to_mermaid
from flowc.diagrams.model import Picture, build
from flowc.ir.diagnostics import Diagnostic
from flowc.ir.workflow import Workflow

TEXT_FORMATS = ("mermaid", "dot")
FORMATS = TEXT_FORMATS + IMAGE_FORMATS


def render(workflow: Workflow, fmt: str, findings: Iterable[Diagnostic] = (),
           rankdir: str = "TB") -> str | bytes:
    """The picture in ``fmt``: text for mermaid and dot, bytes for svg and png.

    Raises :class:`GraphvizNotFound` for svg/png when Graphviz is missing.
    """
    picture = build(workflow, findings)
    if fmt == "mermaid":
        return to_mermaid(picture, "TD" if rankdir == "TB" else rankdir)
    dot = to_dot(picture, rankdir)
    if fmt == "dot":
        return dot
    return render_image(dot, fmt)


__all__ = [
    "FORMATS", "IMAGE_FORMATS", "INSTALL_HINT", "TEXT_FORMATS", "GraphvizFailed", "GraphvizNotFound",
    "Picture", "build", "find_dot", "render", "render_image", "to_dot", "to_mermaid",
]
