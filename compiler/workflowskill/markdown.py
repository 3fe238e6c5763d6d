"""Finding the workflow inside a SKILL.md: frontmatter and the ```workflow block.

Matches the reference runtime: frontmatter must start at byte 0; the first
```workflow fence wins; the block ends at the first line that is a closing
fence. We also keep where the block starts so spans point into the .md file.
"""

from __future__ import annotations

import re

import attrs

_FRONTMATTER = re.compile(r"\A---\n([\s\S]*?)\n---")
_WORKFLOW_BLOCK = re.compile(r"```workflow[ \t]*\n([\s\S]*?)\n```")
_ANY_WORKFLOW_FENCE = re.compile(r"^```+\s*workflow", re.MULTILINE)


@attrs.frozen
class SkillDocument:
    frontmatter: str | None          # raw YAML text of the frontmatter, if any
    frontmatter_line: int            # 0-based line where the frontmatter YAML starts
    workflow: str | None             # raw YAML text of the workflow block, if any
    workflow_line: int               # 0-based line where the workflow YAML starts
    # The Markdown around the block, verbatim: between the frontmatter (or
    # the start) and the opening fence, and after the closing fence.
    before: str = ""
    after: str = ""


def split_skill(text: str) -> SkillDocument:
    text = text.replace("\r\n", "\n")
    fm = _FRONTMATTER.match(text)
    block = _WORKFLOW_BLOCK.search(text)
    workflow_line = text.count("\n", 0, block.start(1)) if block else 0
    start = fm.end() if fm else 0
    return SkillDocument(
        frontmatter=fm.group(1) if fm else None,
        frontmatter_line=1 if fm else 0,
        workflow=block.group(1) if block else None,
        workflow_line=workflow_line,
        before=text[start:block.start()] if block and block.start() >= start else "",
        after=text[block.end():] if block else "",
    )


def has_workflow_fence(text: str) -> bool:
    return bool(_ANY_WORKFLOW_FENCE.search(text))
