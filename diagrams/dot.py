"""Graphviz DOT for a :class:`~flowc.diagrams.model.Picture`."""

from __future__ import annotations

import html

from flowc.diagrams.model import Box, Cluster, Line, Picture
from flowc.termtext import shown, shown_lines

FONT = "Helvetica"
MONO = "Courier"

# category -> node attributes
_BOX_STYLE: dict[str, dict[str, str]] = {
    "start": {"shape": "circle", "style": "filled", "fillcolor": "#263238", "color": "#263238",
              "width": "0.22", "fixedsize": "true", "label": ""},
    "trigger": {"shape": "cds", "style": "filled", "fillcolor": "#e0f2f1", "color": "#00695c"},
    "call": {"shape": "box", "style": "rounded,filled", "fillcolor": "#e3f2fd", "color": "#1565c0"},
    "transform": {"shape": "box", "style": "filled", "fillcolor": "#f3e5f5", "color": "#6a1b9a"},
    "branch": {"shape": "box", "style": "filled,diagonals", "fillcolor": "#fff8e1", "color": "#f9a825"},
    "composite": {"shape": "box", "style": "rounded,filled,bold", "fillcolor": "#eceff1",
                  "color": "#455a64"},
    "step": {"shape": "box", "style": "rounded,filled", "fillcolor": "#fafafa", "color": "#616161"},
    "exit": {"shape": "box", "style": "rounded,filled", "fillcolor": "#e8f5e9", "color": "#2e7d32",
             "peripheries": "2"},
    "terminal": {"shape": "doublecircle", "style": "filled", "fillcolor": "#263238", "color": "#263238",
                 "fontcolor": "white", "width": "0.45", "fixedsize": "true"},
    "missing": {"shape": "box", "style": "dashed", "color": "#c62828", "fontcolor": "#c62828"},
}

# status -> attributes layered over the category's
_STATUS_STYLE: dict[str, dict[str, str]] = {
    "unreachable": {"fillcolor": "#ffcdd2", "color": "#c62828", "penwidth": "2.5", "extra": "dashed"},
    "error": {"color": "#c62828", "penwidth": "2.5"},
    "warning": {"color": "#ef6c00", "penwidth": "2"},
}

# edge kind -> edge attributes
_LINE_STYLE: dict[str, dict[str, str]] = {
    "sequence": {"color": "#37474f"},
    "fallthrough": {"color": "#78909c", "style": "dashed"},
    "branch": {"color": "#1565c0", "fontcolor": "#1565c0"},
    "dependency": {"color": "#546e7a", "arrowhead": "empty"},
    "error": {"color": "#c62828", "fontcolor": "#c62828", "style": "dashed", "penwidth": "1.5"},
    "start": {"color": "#263238", "arrowsize": "0.7"},
    "body": {"color": "#607d8b", "fontcolor": "#607d8b", "style": "dotted"},
    "layout": {"style": "invis"},
}

STATUS_TEXT = {"unreachable": "#c62828", "error": "#c62828", "warning": "#ef6c00"}


def to_dot(picture: Picture, rankdir: str = "TB") -> str:
    out = [
        "digraph workflow {",
        (f'  graph [rankdir={rankdir}, compound=true, newrank=true, nodesep=0.35, ranksep=0.4, '
         f'fontname="{FONT}", labelloc=t, labeljust=l, '
         f'label=<{_title(picture)}>, tooltip="{_attr(picture.title)}"];'),
        f'  node [fontname="{FONT}", fontsize=11, margin="0.14,0.06"];',
        f'  edge [fontname="{FONT}", fontsize=10, arrowsize=0.8];',
    ]
    boxes = {b.uid: b for b in picture.boxes}
    for uid in picture.top:
        out.append("  " + _box(boxes[uid]))
    for cluster in picture.clusters:
        out.extend(_cluster(cluster, boxes, "  "))
    for line in picture.lines:
        out.append("  " + _line(line))
    out.append("}")
    return "\n".join(out) + "\n"


def _title(picture: Picture) -> str:
    text = f"<b>{_h(picture.title)}</b>"
    if picture.subtitle:
        text += f'<br/><font point-size="10" color="#546e7a">{_h(picture.subtitle)}</font>'
    return text


def _cluster(cluster: Cluster, boxes: dict[str, Box], indent: str) -> list[str]:
    out = [f"{indent}subgraph {cluster.uid} {{",
           (f'{indent}  graph [label=<<i>{_h(cluster.title)}</i>>, style="rounded,dashed", '
            f'color="#90a4ae", fontcolor="#455a64", fontsize=10, margin=10];')]
    for uid in cluster.boxes:
        out.append(f"{indent}  {_box(boxes[uid])}")
    for inner in cluster.clusters:
        out.extend(_cluster(inner, boxes, indent + "  "))
    out.append(f"{indent}}}")
    return out


def _box(box: Box) -> str:
    attrs = dict(_BOX_STYLE.get(box.category, _BOX_STYLE["step"]))
    status = _STATUS_STYLE.get(box.status)
    if status:
        status = dict(status)
        extra = status.pop("extra", "")
        attrs.update(status)
        if extra:
            attrs["style"] = ",".join(filter(None, (attrs.get("style", ""), extra)))
    if box.category == "terminal":
        attrs["label"] = _h(box.title)
        label = None
    elif box.category == "start":
        label = None
    else:
        label = _label(box)
    parts = [f'{k}="{_attr(v)}"' for k, v in attrs.items()]
    if label is not None:
        parts.insert(0, f"label=<{label}>")
    tip = "\n".join((box.id,) + box.findings) if box.id else ""
    if tip:
        parts.append(f'tooltip="{_attr(tip)}"')
    return f"{box.uid} [{', '.join(parts)}];"


def _label(box: Box) -> str:
    rows = [f"<b>{_h(box.title)}</b>"]
    if box.op:
        rows.append(f'<font point-size="10" color="#455a64">{_h(box.op)}</font>')
    for line in box.lines:
        rows.append(f'<font face="{MONO}" point-size="10">{_h(line)}</font>')
    for mark in box.marks:
        rows.append(f'<font point-size="9" color="#6d4c41"><i>{_h(mark)}</i></font>')
    if box.findings:
        codes = ", ".join(dict.fromkeys(f.split(":", 1)[0] for f in box.findings))
        colour = STATUS_TEXT.get(box.status, "#455a64")
        word = "unreachable " if box.status == "unreachable" else ""
        rows.append(f'<font point-size="9" color="{colour}"><b>{_h(word + codes)}</b></font>')
    return "<br/>".join(rows)


def _line(line: Line) -> str:
    attrs = dict(_LINE_STYLE.get(line.kind, {}))
    if line.label:
        attrs["label"] = f" {line.label} "
    if line.kind == "body" and line.cluster:
        attrs["lhead"] = line.cluster
    if line.kind == "layout":
        attrs["weight"] = "2"
    parts = ", ".join(f'{k}="{_attr(v)}"' for k, v in attrs.items())
    return f"{line.source} -> {line.target}" + (f" [{parts}]" if parts else "") + ";"


def _h(text: str) -> str:
    """Text inside an HTML-like label (control characters, which XML does
    not allow, as visible escapes)."""
    return html.escape(shown(text), quote=True)


def _attr(text: str) -> str:
    """Text inside a double-quoted DOT attribute (its line breaks kept as
    DOT's \\n, other control characters as visible escapes)."""
    return shown_lines(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
