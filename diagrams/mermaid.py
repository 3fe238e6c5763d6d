"""Mermaid flowchart text for a :class:`~flowc.diagrams.model.Picture`.

Renders on GitHub, GitLab and in most Markdown previews without any tool
installed. Labels are always quoted and every character Mermaid treats
specially is written as an entity code, so no id or expression text can
break the chart.
"""

from __future__ import annotations

from flowc.diagrams.model import Box, Cluster, Line, Picture
from flowc.termtext import shown

# category -> (open, close) of the node shape
_SHAPE: dict[str, tuple[str, str]] = {
    "start": ("((", "))"),
    "trigger": (">", "]"),
    "call": ("(", ")"),
    "transform": ("[", "]"),
    "branch": ("{{", "}}"),
    "composite": ("[[", "]]"),
    "step": ("(", ")"),
    "exit": ("([", "])"),
    "terminal": ("(((", ")))"),
    "missing": ("[", "]"),
}

# Class names get a prefix: some words (`call`, `end`, `click`) are Mermaid keywords.
CLASS_PREFIX = "fc_"
_CLASS_DEFS = (
    ("start", "fill:#263238,stroke:#263238,color:#ffffff"),
    ("trigger", "fill:#e0f2f1,stroke:#00695c"),
    ("call", "fill:#e3f2fd,stroke:#1565c0"),
    ("transform", "fill:#f3e5f5,stroke:#6a1b9a"),
    ("branch", "fill:#fff8e1,stroke:#f9a825"),
    ("composite", "fill:#eceff1,stroke:#455a64,stroke-width:2px"),
    ("step", "fill:#fafafa,stroke:#616161"),
    ("exit", "fill:#e8f5e9,stroke:#2e7d32,stroke-width:3px"),
    ("terminal", "fill:#263238,stroke:#263238,color:#ffffff"),
    ("missing", "fill:#ffffff,stroke:#c62828,color:#c62828,stroke-dasharray:4 3"),
    # findings, defined last so they win over the category
    ("warning", "stroke:#ef6c00,stroke-width:3px"),
    ("error", "stroke:#c62828,stroke-width:3px"),
    ("unreachable", "fill:#ffcdd2,stroke:#c62828,stroke-width:3px,stroke-dasharray:5 3"),
)

# edge kind -> (arrow, linkStyle or "")
_ARROW: dict[str, tuple[str, str]] = {
    "sequence": ("-->", ""),
    "fallthrough": ("-.->", "stroke:#78909c"),
    "branch": ("-->", "stroke:#1565c0,color:#1565c0"),
    "dependency": ("-->", "stroke:#546e7a"),
    "error": ("-.->", "stroke:#c62828,color:#c62828"),
    "start": ("-->", ""),
    "body": ("-.->", "stroke:#607d8b"),
}


def to_mermaid(picture: Picture, direction: str = "TD") -> str:
    out = ["---", f"title: {_yaml_text(picture.title)}", "---", f"flowchart {direction}"]
    if picture.subtitle:
        out.append(f"  %% {shown(picture.subtitle).replace('%', '#37;')}")
    boxes = {b.uid: b for b in picture.boxes}
    for uid in picture.top:
        out.append("  " + _box(boxes[uid]))
    for cluster in picture.clusters:
        out.extend(_cluster(cluster, boxes, "  "))
    styles: list[str] = []
    visible = [ln for ln in picture.lines if ln.kind != "layout"]
    for index, line in enumerate(visible):
        arrow, style = _ARROW.get(line.kind, ("-->", ""))
        out.append("  " + _line(line, arrow))
        if style:
            styles.append(f"  linkStyle {index} {style}")
    # Invisible layout links go last so they never shift linkStyle indices.
    for line in picture.lines:
        if line.kind == "layout":
            out.append(f"  {line.source} ~~~ {line.target}")
    out.extend(styles)
    used = {b.category for b in picture.boxes} | {b.status for b in picture.boxes if b.status}
    for name, style in _CLASS_DEFS:
        if name in used:
            out.append(f"  classDef {CLASS_PREFIX}{name} {style}")
    by_class: dict[str, list[str]] = {}
    for box in picture.boxes:
        by_class.setdefault(box.category, []).append(box.uid)
    for box in picture.boxes:
        if box.status:
            by_class.setdefault(box.status, []).append(box.uid)
    for name, _ in _CLASS_DEFS:
        if name in by_class:
            out.append(f"  class {','.join(by_class[name])} {CLASS_PREFIX}{name}")
    return "\n".join(out) + "\n"


def _cluster(cluster: Cluster, boxes: dict[str, Box], indent: str) -> list[str]:
    out = [f'{indent}subgraph {cluster.uid}["{_text(cluster.title)}"]']
    for uid in cluster.boxes:
        out.append(f"{indent}  {_box(boxes[uid])}")
    for inner in cluster.clusters:
        out.extend(_cluster(inner, boxes, indent + "  "))
    out.append(f"{indent}end")
    return out


def _box(box: Box) -> str:
    opening, closing = _SHAPE.get(box.category, _SHAPE["step"])
    if box.category == "start":
        label = " "
    elif box.category == "terminal":
        label = _text(box.title)
    else:
        rows = [f"<b>{_text(box.title)}</b>"]
        if box.op:
            rows.append(f"<small>{_text(box.op)}</small>")
        rows.extend(f"<code>{_text(line)}</code>" for line in box.lines)
        rows.extend(f"<i>{_text(mark)}</i>" for mark in box.marks)
        if box.findings:
            codes = ", ".join(dict.fromkeys(f.split(":", 1)[0] for f in box.findings))
            word = "unreachable " if box.status == "unreachable" else ""
            rows.append(f"<b>{_text(word + codes)}</b>")
        label = "<br/>".join(rows)
    return f'{box.uid}{opening}"{label}"{closing}'


def _line(line: Line, arrow: str) -> str:
    target = line.cluster if line.kind == "body" and line.cluster else line.target
    if line.label:
        return f'{line.source} {arrow}|"{_text(line.label)}"| {target}'
    return f"{line.source} {arrow} {target}"


def _text(text: str) -> str:
    """Text inside a quoted Mermaid label: entity codes for anything special."""
    out = []
    for ch in text:
        # no `%`: `%%{...}%%` anywhere in the text is a Mermaid directive
        if (ch.isalnum() and ch.isprintable()) or ch in " .,:;_-+*/=!?()[]{}$@'~^→×·…":
            out.append(ch)
        else:
            out.append(f"#{ord(ch)};")
    return "".join(out)


def _yaml_text(text: str) -> str:
    """A double-quoted YAML scalar on one line for the front matter: line
    breaks (a line ``---`` would end the front matter and make the rest
    diagram text), control characters and ``%`` escaped."""
    out = ['"']
    for ch in text:
        o = ord(ch)
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch.isprintable() and ch != "%":
            out.append(ch)
        else:
            out.append(f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}")
    out.append('"')
    return "".join(out)
