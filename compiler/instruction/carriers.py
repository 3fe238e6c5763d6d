"""Finding the workflow documents in a file: the three carriers of dialect 3.

1. A **standalone** YAML/JSON document: a mapping with ``steps``.
2. A **config entry**: every item of ``workflows: [...]`` in a config
   document (``config_version: "2"``), with the config's ``vars:`` for
   ``{{config.*}}`` (:mod:`.config_vars`). A config without ``workflows:``
   has nothing to compile and says so.
3. An **instruction document** (``instruction.md``), with two embeddings:
   - the container ``:::!workflow{name=x armed=false}`` + YAML body + ``:::``
     (three or more colons at column 0; the attribute ``name`` overrides the
     body's);
   - the section ``## !workflow x``: prose (the description), then exactly
     one fenced yaml block, ending at the next heading of the same or a
     higher level.

   ``::!workflow`` (the leaf form) and a bare ``:::workflow`` are refused.

Every body is read with :mod:`flowc.compiler.yamlsrc` with its line offset,
so spans point into the original file.
"""

from __future__ import annotations

import re

import attrs
from flowc.compiler import yamlsrc
from flowc.compiler.instruction import config_vars
from flowc.compiler.yamlsrc import YMap, YNode, YSeq
from flowc.ir.diagnostics import Diagnostic, error
from flowc.ir.span import Span

__all__ = ["Carried", "body_map", "is_markdown", "locate"]

_CONTAINER_OPEN = re.compile(r"^(:{3,})(!?)([A-Za-z][\w-]*)(\{[^\n]*\})?[ \t]*$")
_LEAF = re.compile(r"^::(!?)workflow\b")
_FENCE_CLOSE = re.compile(r"^(:{3,})[ \t]*$")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_SECTION = re.compile(r"^!workflow[ \t]+(\S+)[ \t]*$")
_CODE_FENCE = re.compile(r"^(`{3,}|~{3,})[ \t]*([^\s`]*)")
_ATTR = re.compile(r"\s*([A-Za-z_][\w-]*)\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s\"'}]+)")


@attrs.frozen
class Carried:
    """One workflow body and what its carrier says about it."""

    body: YNode | None
    span: Span                          # where the workflow is (for whole-workflow findings)
    carrier: str                        # standalone | config | container | section
    name: str | None = None             # from the fence attribute or the heading
    name_span: Span | None = None
    description: str | None = None      # section prose
    armed: bool | None = None           # fence attribute
    variables: YMap | None = None       # a config's `vars:`, for {{config.*}}


def is_markdown(text: str, path: str) -> bool:
    return path.endswith(".md") or bool(re.search(r"^(:{3,}!?workflow|#{1,6}\s+!workflow)", text,
                                                  re.MULTILINE))


def locate(text: str, path: str) -> tuple[list[Carried], list[Diagnostic]]:
    """Every workflow document in ``text``, and the findings about carriers."""
    text = text.replace("\r\n", "\n")
    if is_markdown(text, path):
        return _markdown(text, path)
    root, diags = yamlsrc.load(text, path)
    whole = Span(path, 1, 1, 1, 2)
    if root is None:
        if not diags:
            diags = [error("INS101", "the document is empty", whole)]
        return [], diags
    if isinstance(root, YMap) and "workflows" in root and "steps" not in root:
        entries = root.get("workflows")
        if not isinstance(entries, YSeq):
            return [], diags + [error("INS102", "`workflows` must be a list of workflow documents, not "
                                      f"{yamlsrc.type_name(entries)}", entries.span)]
        if not entries.items:
            return [], diags + [error("INS101", "`workflows` is empty", entries.span)]
        variables = root.get("vars")
        variables = variables if isinstance(variables, YMap) else None
        if variables is not None:
            # agentd types the config (its `vars` included) after one pass of
            # substitution over everything but `workflows`: a var may use another.
            more: list[Diagnostic] = []
            folded = config_vars.substitute(variables, variables, more)
            variables = folded if isinstance(folded, YMap) else variables
            diags = diags + more
        return [Carried(item, item.span, "config", variables=variables) for item in entries.items], diags
    if isinstance(root, YMap) and "config_version" in root and "steps" not in root:
        # An agentd config that only configures (services, agent, mcp ...).
        return [], diags + [error("INS101", "this config has no workflows: it has no `workflows:` list",
                                  root.key_node("config_version").span)]
    return [Carried(root, root.span, "standalone")], diags


def _markdown(text: str, path: str) -> tuple[list[Carried], list[Diagnostic]]:
    lines = text.split("\n")
    found: list[Carried] = []
    diags: list[Diagnostic] = []
    i = 0
    in_comment = False
    fence: str | None = None
    # Front matter is not Markdown.
    if lines and lines[0].strip() == "---":
        for j in range(1, len(lines)):
            if lines[j].strip() in ("---", "..."):
                i = j + 1
                break
    while i < len(lines):
        line = lines[i]
        if in_comment:
            if "-->" in line:
                in_comment = False
            i += 1
            continue
        if fence is not None:
            if line.startswith(fence):
                fence = None
            i += 1
            continue
        if line.lstrip().startswith("<!--") and "-->" not in line:
            in_comment = True
            i += 1
            continue
        code = _CODE_FENCE.match(line)
        if code:
            fence = code.group(1)
            i += 1
            continue
        # (made only for a line that may be reported: most lines are text)
        here = Span(path, i + 1, 1, i + 1, max(2, len(line) + 1)) if line.startswith(":") else None
        leaf = _LEAF.match(line)
        if leaf and not line.startswith(":::"):
            diags.append(error("INS109", "a workflow requires a body: use `:::!workflow{name=...}` with "
                               "the YAML on the following lines and a closing `:::`", here))
            i += 1
            continue
        opened = _CONTAINER_OPEN.match(line)
        if opened:
            colons, bang, directive, attrs_text = opened.groups()
            close = _find_close(lines, i + 1, len(colons))
            if directive == "workflow":
                if not bang:
                    diags.append(error("INS109", "`:::workflow` is not a workflow container", here,
                                       "did you mean `:::!workflow`?"))
                else:
                    found.append(_container(lines, i, close, attrs_text or "", path, diags))
            i = (close if close is not None else len(lines)) + 1
            continue
        heading = _HEADING.match(line)
        if heading:
            section = _SECTION.match(heading.group(2))
            if section:
                carried, i = _section(lines, i, len(heading.group(1)), section, path, diags)
                if carried is not None:
                    found.append(carried)
                continue
        i += 1
    if not found and not diags:
        diags.append(error("INS101", "no workflow found: an instruction document carries workflows in "
                           "`:::!workflow{name=...}` containers or `## !workflow <name>` sections",
                           Span(path, 1, 1, 1, 2)))
    return found, diags


def _find_close(lines: list[str], start: int, width: int) -> int | None:
    for j in range(start, len(lines)):
        m = _FENCE_CLOSE.match(lines[j])
        if m and len(m.group(1)) >= width:
            return j
    return None


def _attributes(text: str) -> dict[str, str]:
    out = {}
    for m in _ATTR.finditer(text.strip("{}")):
        value = m.group(2)
        if value[:1] in "\"'":
            value = value[1:-1]
        out[m.group(1)] = value
    return out


def _container(lines, start, close, attrs_text, path, diags) -> Carried:
    opener = Span(path, start + 1, 1, start + 1, len(lines[start]) + 1)
    if close is None:
        diags.append(error("INS109", "the `:::!workflow` container is not closed (a line of `:::`)", opener))
        close = len(lines)
    attributes = _attributes(attrs_text)
    body_text = "\n".join(lines[start + 1:close])
    body, more = yamlsrc.load(body_text, path, start + 1)
    diags.extend(more)
    name = attributes.get("name")
    name_span = None
    if name is not None:
        col = lines[start].find("name=") + 1
        name_span = Span(path, start + 1, col, start + 1, col + len("name=") + len(name))
    armed = None
    if "armed" in attributes:
        if attributes["armed"] in ("true", "false"):
            armed = attributes["armed"] == "true"
        else:
            diags.append(error("INS105", f"the `armed` attribute must be true or false, not "
                               f"{attributes['armed']!r}", opener))
    if body is None and not more:
        diags.append(error("INS101", "the workflow container is empty", opener))
    return Carried(body, opener, "container", name, name_span, None, armed)


def _section(lines, start, level, match, path, diags) -> tuple[Carried | None, int]:
    """A `## !workflow name` section: prose, then exactly one yaml block."""
    heading = Span(path, start + 1, 1, start + 1, len(lines[start]) + 1)
    name = match.group(1)
    col = lines[start].find(name) + 1
    name_span = Span(path, start + 1, col, start + 1, col + len(name))
    prose: list[str] = []
    blocks: list[tuple[int, int, str]] = []   # (first body line, close line, info string)
    j = start + 1
    fence = None
    block_start = 0
    info = ""
    while j < len(lines):
        line = lines[j]
        if fence is None:
            heading_m = _HEADING.match(line)
            if heading_m and len(heading_m.group(1)) <= level:
                break
            code = _CODE_FENCE.match(line)
            if code:
                fence, info, block_start = code.group(1), code.group(2), j + 1
            elif not blocks:
                prose.append(line)
        elif line.startswith(fence) and not line[len(fence):].strip():
            blocks.append((block_start, j, info))
            fence = None
        j += 1
    if fence is not None:
        blocks.append((block_start, len(lines), info))
        diags.append(error("INS109", "a fenced block in the workflow section is not closed",
                           Span(path, block_start, 1, block_start, 4)))
    yaml_blocks = [b for b in blocks if b[2].lower() in ("yaml", "yml", "json", "")]
    if len(yaml_blocks) != 1:
        what = "no fenced yaml block" if not yaml_blocks else f"{len(yaml_blocks)} fenced yaml blocks"
        diags.append(error("INS109", f"the `!workflow {name}` section has {what}; it needs exactly one",
                           heading))
        return None, j
    first, close, _info = yaml_blocks[0]
    body, more = yamlsrc.load("\n".join(lines[first:close]), path, first)
    diags.extend(more)
    description = "\n".join(prose).strip() or None
    return Carried(body, heading, "section", name, name_span, description), j


def body_map(carried: Carried) -> YMap | None:
    """The body when it is a mapping."""
    return carried.body if isinstance(carried.body, YMap) else None

