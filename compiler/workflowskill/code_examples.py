"""Wrong and right examples of the WFS finding codes (``flowc explain``).

Listed by compiler/codes.py; tests/test_explain.py checks that every wrong
example produces its code and every right one checks clean.
"""

from __future__ import annotations

from flowc.compiler.code_types import Example

__all__ = ["EXAMPLES", "NOT_STANDALONE"]

_SKILL = """\
---
name: greet
description: Greet someone by name.
---

# Greet

```workflow
steps:
  - id: greet
    type: tool
    tool: greet
```
"""

EXAMPLES: dict[str, Example] = {
    "WFS101": Example(
        wrong=_SKILL.replace("```workflow", "```yaml"),
        right=_SKILL, file="SKILL.md"),
    "WFS102": Example(
        wrong="# steps to be written\n",
        right="""\
steps:
  - id: greet
    type: tool
    tool: greet
"""),
    "WFS103": Example(
        wrong="""\
steps:
  greet:
    type: tool
    tool: greet
""",
        right="""\
steps:
  - id: greet
    type: tool
    tool: greet
"""),
    "WFS104": Example(
        wrong="""\
steps:
  - id: greet
    type: tool
""",
        right="""\
steps:
  - id: greet
    type: tool
    tool: greet
"""),
    "WFS105": Example(
        wrong="""\
steps:
  - id: greet
    type: tool
    tool: greet
    on_eror: ignore
""",
        right="""\
steps:
  - id: greet
    type: tool
    tool: greet
    on_error: ignore
"""),
    "WFS106": Example(
        wrong="""\
steps:
  - id: greet
    type: tool
    tool: greet
    on_error: skip
""",
        right="""\
steps:
  - id: greet
    type: tool
    tool: greet
    on_error: ignore
"""),
    "WFS107": Example(
        wrong="""\
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      name: { type: string, default: world }
""",
        right="""\
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      name: { type: string, value: world }
"""),
    "WFS108": Example(
        wrong="""\
inputs:
  name: { type: string }
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      name: $inputs.name
""",
        right="""\
inputs:
  name: { type: string }
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      name: { type: string, value: $inputs.name }
"""),
    "WFS109": Example(
        wrong="""\
inputs:
  name: { type: string }
steps: []
""",
        right="""\
inputs:
  name: { type: string }
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      name: { type: string, value: $inputs.name }
"""),
    "WFS110": Example(
        wrong=_SKILL.split("---\n\n", 1)[1],
        right=_SKILL, file="SKILL.md"),
    "WFS111": Example(
        wrong="""\
inputs:
  urls: { type: array }
steps:
  - id: fetch
    type: tool
    tool: http.get
    each: $inputs.urls
    delay: "1.5s"
    inputs:
      url: { type: string, value: $item }
""",
        right="""\
inputs:
  urls: { type: array }
steps:
  - id: fetch
    type: tool
    tool: http.get
    each: $inputs.urls
    delay: "1500ms"
    inputs:
      url: { type: string, value: $item }
"""),
    "WFS112": Example(
        wrong="""\
steps:
  - id: fetch
    type: tool
    tool: http.get
    retry: { max: 3, delay: "1s" }
""",
        right="""\
steps:
  - id: fetch
    type: tool
    tool: http.get
    retry: { max: 3, delay: "1s", backoff: 2 }
"""),
    "WFS113": Example(
        wrong="""\
steps:
  - id: fetch
    type: tool
    tool: http.get
    delay: "1s"
""",
        right="""\
inputs:
  urls: { type: array }
steps:
  - id: fetch
    type: tool
    tool: http.get
    each: $inputs.urls
    delay: "1s"
    inputs:
      url: { type: string, value: $item }
"""),
    "WFS201": Example(
        wrong="""\
steps:
  - id: fetch-page
    type: tool
    tool: http.get
  - id: summarize
    type: tool
    tool: llm.summarize
    inputs:
      text: { type: string, value: $steps.fetch-page.output.body }
""",
        right="""\
steps:
  - id: fetch_page
    type: tool
    tool: http.get
  - id: summarize
    type: tool
    tool: llm.summarize
    inputs:
      text: { type: string, value: $steps.fetch_page.output.body }
"""),
    "WFS202": Example(
        wrong="""\
inputs:
  name: { type: string }
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      name: { type: string, value: $input.name }
""",
        right="""\
inputs:
  name: { type: string }
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      name: { type: string, value: $inputs.name }
"""),
    "WFS203": Example(
        wrong="""\
outputs:
  greeting: { type: string, value: $result.text }
steps:
  - id: greet
    type: tool
    tool: greet
""",
        right="""\
outputs:
  greeting: { type: string, value: $steps.greet.output.text }
steps:
  - id: greet
    type: tool
    tool: greet
"""),
    "WFS204": Example(
        wrong="""\
outputs:
  greeting: { type: string, value: $steps.great.output.text }
steps:
  - id: greet
    type: tool
    tool: greet
""",
        right="""\
outputs:
  greeting: { type: string, value: $steps.greet.output.text }
steps:
  - id: greet
    type: tool
    tool: greet
"""),
    "WFS205": Example(
        wrong="""\
steps:
  - id: notify
    type: tool
    tool: slack.post
    inputs:
      text: { type: string, value: $steps.summarize.output.text }
  - id: summarize
    type: tool
    tool: llm.summarize
""",
        right="""\
steps:
  - id: summarize
    type: tool
    tool: llm.summarize
  - id: notify
    type: tool
    tool: slack.post
    inputs:
      text: { type: string, value: $steps.summarize.output.text }
"""),
    "WFS206": Example(
        wrong="""\
steps:
  - id: login
    type: tool
    tool: auth.login
  - id: fetch
    type: tool
    tool: http.get
    outputs:
      user: { type: string, value: $steps.login.output.user }
""",
        right="""\
steps:
  - id: login
    type: tool
    tool: auth.login
  - id: fetch
    type: tool
    tool: http.get
    inputs:
      user: { type: string, value: $steps.login.output.user }
    outputs:
      body: { type: string, value: $result.body }
"""),
    "WFS208": Example(
        wrong="""\
inputs:
  name: { type: string }
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      name: { type: string, value: $inputs.nmae }
""",
        right="""\
inputs:
  name: { type: string }
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      name: { type: string, value: $inputs.name }
"""),
    "WFS209": Example(
        wrong="""\
inputs:
  urgent: { type: boolean }
steps:
  - id: route
    type: conditional
    condition: $inputs.urgent
    then: [page_oncall]
  - id: page
    type: tool
    tool: pager.send
""",
        right="""\
inputs:
  urgent: { type: boolean }
steps:
  - id: route
    type: conditional
    condition: $inputs.urgent
    then: [page]
  - id: page
    type: tool
    tool: pager.send
"""),
    "WFS210": Example(
        wrong="""\
inputs:
  urgent: { type: boolean }
steps:
  - id: page
    type: tool
    tool: pager.send
  - id: route
    type: conditional
    condition: $inputs.urgent
    then: [page]
""",
        right="""\
inputs:
  urgent: { type: boolean }
steps:
  - id: route
    type: conditional
    condition: $inputs.urgent
    then: [page]
  - id: page
    type: tool
    tool: pager.send
"""),
    "WFS211": Example(
        wrong="""\
inputs:
  items: { type: array }
outputs:
  count: { type: int }
steps:
  - id: nothing_to_do
    type: exit
    condition: $inputs.items.length == 0
    status: success
    output: { total: 0 }
  - id: process
    type: tool
    tool: process
""",
        right="""\
inputs:
  items: { type: array }
outputs:
  count: { type: int }
steps:
  - id: nothing_to_do
    type: exit
    condition: $inputs.items.length == 0
    status: success
    output: { count: 0 }
  - id: process
    type: tool
    tool: process
"""),
    "WFS212": Example(
        wrong="""\
inputs:
  urls: { type: array }
steps:
  - id: fetch
    type: tool
    tool: http.get
    inputs:
      url: { type: string, value: $item }
""",
        right="""\
inputs:
  urls: { type: array }
steps:
  - id: fetch
    type: tool
    tool: http.get
    each: $inputs.urls
    inputs:
      url: { type: string, value: $item }
"""),
}

NOT_STANDALONE: dict[str, str] = {}
