"""A wrong and a right example for the finding codes no dialect owns (FLC,
YAML, ANA, LIM, TRN, HST), and the helpers that show them (``flowc explain``).

Each example is the text of a whole file, written as ``file`` and checked
in ``dialect``. ``wrong`` produces the code; ``right`` is the same file with
the problem fixed and checks clean. ``tests/test_explain.py`` checks both,
except for the codes listed in ``NOT_STANDALONE`` (what they report cannot
be shown by a file's text alone). Each dialect package has its own
``code_examples.py``; compiler/codes.py lists them all.

Keep the examples short: they are printed by ``flowc explain`` and copied
into docs/codes.md.
"""

from __future__ import annotations

from flowc.compiler.code_types import Example

__all__ = ["EXAMPLES", "NOT_STANDALONE", "Example", "example_dialect", "fenced"]


# A small clean WorkflowSkill workflow most examples start from.
_GREET = """\
inputs:
  name: { type: string, default: world }
outputs:
  greeting: { type: string, value: $steps.greet.output.text }
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      name: { type: string, value: $inputs.name }
    outputs:
      text: { type: string, value: $result.text }
"""


_LONG_ID = "fetch_" + "x" * 251   # 257 characters; the limit is 256

_INPUT_AND_ANALYSES: dict[str, Example] = {
    # ------------------------------------------------------------------ FLC
    "FLC001": Example(
        wrong="""\
tasks:
  - name: greet
    run: ./greet.sh
""",
        right=_GREET, dialect=""),
    "FLC002": Example(
        wrong="""\
# An aevatar workflow, checked by a build of flowc without the aevatar front end:
#   error[FLC002]: the aevatar dialect is not supported by this version of flowc
name: greet
roles:
  - id: assistant
steps:
  - id: greet
    type: llm_call
    target_role: assistant
""",
        right="""\
# The same file, checked by a flowc that reads aevatar (every build since the
# aevatar front end landed): no finding.
name: greet
roles:
  - id: assistant
steps:
  - id: greet
    type: llm_call
    target_role: assistant
""", dialect="aevatar"),
    "FLC003": Example(
        wrong="# a file saved as Latin-1: caf\\xe9 (not UTF-8)\n",
        right="# the same file saved as UTF-8: café\n"),
    # ----------------------------------------------------------------- YAML
    "YAML001": Example(
        wrong="""\
steps:
  - id: greet
    type: tool
    tool: greet
    inputs: { name: { type: string, value: $inputs.name }
""",
        right="""\
inputs:
  name: { type: string }
steps:
  - id: greet
    type: tool
    tool: greet
    inputs: { name: { type: string, value: $inputs.name } }
"""),
    "YAML002": Example(
        wrong="""\
steps:
  - id: greet
    type: tool
    tool: greet
    tool: greet_v2
""",
        right="""\
steps:
  - id: greet
    type: tool
    tool: greet_v2
"""),
    "YAML003": Example(
        wrong="""\
inputs:
  [first, last]: { type: string }
steps:
  - id: greet
    type: tool
    tool: greet
""",
        right="""\
inputs:
  first: { type: string }
  last: { type: string }
steps:
  - id: greet
    type: tool
    tool: greet
"""),
    "YAML004": Example(
        wrong="""\
steps:
  - &fetch
    id: fetch_a
    type: tool
    tool: fetch
  - <<: *fetch
    id: fetch_b
""",
        right="""\
steps:
  - id: fetch_a
    type: tool
    tool: fetch
  - id: fetch_b
    type: tool
    tool: fetch
"""),
    "YAML005": Example(
        wrong="""\
a: &a [x, x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      words: { type: array, value: *g }
""",
        right="""\
steps:
  - id: greet
    type: tool
    tool: greet
    inputs:
      words: { type: array, value: [x, x, x] }
"""),
    "YAML006": Example(
        wrong="""\
steps:
  - id: greet
    type: tool
    tool: greet
    retry: { max: !!int three, delay: 100ms, backoff: 2 }
    inputs:
      cmd: { type: array, value: !!python/object/apply:os.system [echo hi] }
""",
        right="""\
steps:
  - id: greet
    type: tool
    tool: greet
    retry: { max: !!int 3, delay: 100ms, backoff: 2 }
    inputs:
      cmd: { type: array, value: [echo hi] }
"""),
    # ------------------------------------------------------------------ ANA
    "ANA401": Example(
        wrong="""\
steps:
  - id: fetch
    type: tool
    tool: http.get
  - id: fetch
    type: tool
    tool: http.get
""",
        right="""\
steps:
  - id: fetch_first
    type: tool
    tool: http.get
  - id: fetch_second
    type: tool
    tool: http.get
""", dialect="workflowskill"),
    "ANA402": Example(
        wrong="""\
steps:
  - id: stop
    type: exit
    status: success
  - id: notify
    type: tool
    tool: slack.post
""",
        right="""\
inputs:
  quiet: { type: boolean, default: false }
steps:
  - id: stop
    type: exit
    condition: $inputs.quiet
    status: success
  - id: notify
    type: tool
    tool: slack.post
""", dialect="workflowskill"),
    "ANA403": Example(
        wrong="""\
steps:
  - id: draft
    type: tool
    tool: llm.write
    inputs:
      notes: { type: string, value: $steps.review.output.notes }
  - id: review
    type: tool
    tool: llm.review
    inputs:
      text: { type: string, value: $steps.draft.output.text }
""",
        right="""\
steps:
  - id: draft
    type: tool
    tool: llm.write
  - id: review
    type: tool
    tool: llm.review
    inputs:
      text: { type: string, value: $steps.draft.output.text }
""", dialect="workflowskill"),
    "ANA404": Example(
        wrong="""\
# Two normal ends: the workflow has no single place where it finishes.
#   fetch -> $end
#   fetch -> end2   (a second `end`/`finish` node)
""",
        right="""\
# One normal end that every path reaches.
#   fetch -> $end
""", dialect="workflowskill"),
    "ANA405": Example(
        wrong="""\
# An edge whose target does not exist, e.g. a `next`, `depends_on`,
# `goto` or fallback naming a step nobody declared:
#   fetch -> sumarize   (no node `sumarize`)
""",
        right="""\
#   fetch -> summarize
""", dialect="workflowskill"),
    "ANA406": Example(
        wrong=f"""\
steps:
  - id: {_LONG_ID}
    type: tool
    tool: http.get
""",
        right="""\
steps:
  - id: fetch
    type: tool
    tool: http.get
""", dialect="workflowskill"),
    "ANA501": Example(
        wrong="""\
inputs:
  count: { type: string }
steps:
  - id: fetch
    type: tool
    tool: feed.latest
    inputs:
      limit: { type: int, value: $inputs.count }
""",
        right="""\
inputs:
  count: { type: int }
steps:
  - id: fetch
    type: tool
    tool: feed.latest
    inputs:
      limit: { type: int, value: $inputs.count }
""", dialect="workflowskill"),
    "ANA502": Example(
        wrong="""\
inputs:
  name: { type: string }
steps:
  - id: greet
    type: tool
    tool: greet
    each: $inputs.name
    inputs:
      name: { type: string, value: $item }
""",
        right="""\
inputs:
  names: { type: array }
steps:
  - id: greet
    type: tool
    tool: greet
    each: $inputs.names
    inputs:
      name: { type: string, value: $item }
""", dialect="workflowskill"),
    "ANA503": Example(
        wrong="""\
outputs:
  body: { type: string, value: $steps.fetch.output.content }
steps:
  - id: fetch
    type: tool
    tool: http.get
    outputs:
      body: { type: string, value: $result.body }
""",
        right="""\
outputs:
  body: { type: string, value: $steps.fetch.output.body }
steps:
  - id: fetch
    type: tool
    tool: http.get
    outputs:
      body: { type: string, value: $result.body }
""", dialect="workflowskill"),
    "ANA504": Example(
        wrong="""\
inputs:
  urls: { type: array }
outputs:
  pages: { type: array, value: $steps.fetch.output.body }
steps:
  - id: fetch
    type: tool
    tool: http.get
    each: $inputs.urls
    inputs:
      url: { type: string, value: $item }
    outputs:
      body: { type: string, value: $result.body }
""",
        right="""\
inputs:
  urls: { type: array }
outputs:
  pages: { type: array, value: $steps.fetch.output }
steps:
  - id: fetch
    type: tool
    tool: http.get
    each: $inputs.urls
    inputs:
      url: { type: string, value: $item }
    outputs:
      body: { type: string, value: $result.body }
""", dialect="workflowskill"),
}

# ------------------------------------------------------------------ LIM (limits, ir/limits.py)
_SMALL_WFS = """\
inputs:
  q: {type: string}
outputs:
  r: {type: string, value: $steps.s1.output.text}
steps:
  - id: s1
    type: tool
    tool: search
    inputs:
      query: {type: string, value: $inputs.q}
    outputs:
      text: {type: string}
"""
_FILE_LIMITS: dict[str, Example] = {
    "LIM001": Example(
        wrong="# ... this file goes on for more than 4 MiB (4,194,304 bytes)\n" + _SMALL_WFS,
        right=_SMALL_WFS),
    "LIM002": Example(
        wrong=_SMALL_WFS + "  # ... and 10,000 more steps like s1 (s2 ... s10001)\n",
        right=_SMALL_WFS),
}

# The host config of these examples has two MCP servers, `clock` and
# `world_clock`, both with a tool `get_current_time` (docs/hosts.md).
_CLOCK_STEP = """\
steps:
  - id: now
    type: tool
    tool: {tool}
    inputs:
      timezone: {{type: string, value: UTC}}
    outputs:
      time: {{type: string, value: $result.datetime}}
"""
_HOST: dict[str, Example] = {
    "HST001": Example(wrong=_CLOCK_STEP.format(tool="get_time"),
                      right=_CLOCK_STEP.format(tool="clock.get_current_time"), dialect="workflowskill"),
    "HST002": Example(wrong=_CLOCK_STEP.format(tool="get_current_time"),
                      right=_CLOCK_STEP.format(tool="clock.get_current_time"), dialect="workflowskill"),
}

# Codes a file's text alone cannot produce, with the reason. The wrong
# example still shows the situation; the test does not check it.
NOT_STANDALONE: dict[str, str] = {
    "HST001": "needs the host config (flowc check --config), not only the workflow",
    "HST002": "needs the host config (flowc check --config), not only the workflow",
    "LIM001": "about the file's size on disk (over 4 MiB), which no short example has",
    "LIM002": "needs more than 10,000 steps, too long to show (tests/test_limits_linear.py builds one)",
    "FLC002": "depends on which front ends this build of flowc has",
    "FLC003": "about reading the file (missing, unreadable, not UTF-8), not its text",
    "ANA404": "no WorkflowSkill file has two terminals or a step that cannot reach the end",
    "ANA405": "front ends report unknown targets with their own codes (WFS209) before analysis",
}

# ------------------------------------------------------------------ TRN (flowc translate)
_TRANSLATION: dict[str, Example] = {
    "TRN001": Example(
        wrong="""\
workflows:
  - name: first
    steps:
      go: { kind: manual }
      done: { kind: finish, depends_on: [go] }
  - name: second
    steps:
      go: { kind: manual }
      done: { kind: finish, depends_on: [go] }
""",
        right="""\
workflows:
  - name: first
    steps:
      go: { kind: manual }
      done: { kind: finish, depends_on: [go] }
""", dialect="instruction", translate_to="workflowskill"),
    "TRN101": Example(
        wrong="""\
name: nap
steps:
  go: { kind: manual }
  rest: { kind: sleep, depends_on: [go], duration: 5s }
  done: { kind: finish, depends_on: [rest] }
""",
        right="""\
name: nap
steps:
  go: { kind: manual }
  done: { kind: finish, depends_on: [go] }
""", dialect="instruction", translate_to="workflowskill"),
    "TRN102": Example(
        wrong="""\
inputs:
  limit: { type: string }
steps:
  - id: fetch
    type: tool
    tool: rows
    condition: $inputs.limit > 2
""",
        right="""\
inputs:
  limit: { type: int, default: 3 }
steps:
  - id: fetch
    type: tool
    tool: rows
    condition: $inputs.limit > 2
""", dialect="workflowskill", translate_to="instruction"),
    "TRN103": Example(
        wrong="""\
steps:
  - id: fetch
    type: tool
    tool: rows
    retry: { max: 3, delay: 1s, backoff: 2.0 }
""",
        right="""\
steps:
  - id: fetch
    type: tool
    tool: rows
""", dialect="workflowskill", translate_to="instruction"),
    "TRN104": Example(
        wrong="""\
name: summarise
roles:
  - id: writer
    system_prompt: You summarise.
steps:
  - id: summary
    type: llm_call
    target_role: writer
""",
        right="""\
name: summarise
steps:
  - id: summary
    type: tool_call
    parameters:
      tool: summarise
      arguments: '{"style": "short"}'
""", dialect="aevatar", translate_to="workflowskill"),
    "TRN201": Example(
        wrong="""\
name: report
steps:
  go: { kind: manual }
  fetch: { kind: tool, depends_on: [go], name: rows }
  done:
    kind: finish
    depends_on: [fetch]
    output: { text: "rows: {{ steps.fetch.output.rows }}" }
""",
        right="""\
name: report
steps:
  go: { kind: manual }
  fetch: { kind: tool, depends_on: [go], name: rows }
  done:
    kind: finish
    depends_on: [fetch]
    output: { rows: "{{ steps.fetch.output.rows }}" }
""", dialect="instruction", translate_to="workflowskill"),
    "TRN202": Example(
        wrong="""\
name: each
inputs:
  schema: { type: object, properties: { urls: { type: array, default: [] } } }
steps:
  go: { kind: manual }
  all:
    kind: foreach
    depends_on: [go]
    over: "{{ inputs.urls }}"
    batch: { parallel: 4 }
    body:
      steps:
        get: { kind: tool, name: fetch, args: { url: "{{ item }}" } }
  done: { kind: finish, depends_on: [all] }
""",
        right="""\
name: each
inputs:
  schema: { type: object, properties: { urls: { type: array, default: [] } } }
steps:
  go: { kind: manual }
  all:
    kind: foreach
    depends_on: [go]
    over: "{{ inputs.urls }}"
    body:
      steps:
        get: { kind: tool, name: fetch, args: { url: "{{ item }}" } }
  done: { kind: finish, depends_on: [all] }
""", dialect="instruction", translate_to="workflowskill"),
}


PREFIX_DIALECT = {"FLC": "workflowskill", "YAML": "workflowskill", "WFS": "workflowskill",
                  "ANA": "workflowskill", "AEV": "aevatar", "INS": "instruction", "CEL": "instruction"}


def example_dialect(code: str, example: Example) -> str | None:
    """The dialect to check an example in (None = detect from the text)."""
    if example.dialect is not None:
        return example.dialect or None
    prefix = code.rstrip("0123456789")
    return PREFIX_DIALECT.get(prefix, "workflowskill")


def fenced(text: str, file: str, lang: str | None = None) -> str:
    """``text`` as a Markdown code block (``lang``; by default yaml, or
    markdown for a SKILL.md), fenced longer than any backtick run inside."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    lang = lang or ("markdown" if file.endswith(".md") else "yaml")
    return f"{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}"


# ------------------------------------------------------------------ LIM1xx (numbers, expression and value limits)
_LIM_TOOL = """\
steps:
  - id: fetch
    type: tool
    tool: http.get
"""
_LIM_CEL = """\
name: sizes
steps:
  start: {{ kind: manual }}
  sizes: {{ kind: assign, depends_on: start, value: "CEL: {expr}" }}
  done: {{ kind: finish, depends_on: sizes, output: "{{{{ steps.sizes.output }}}}" }}
"""
_VALUE_LIMITS: dict[str, Example] = {
    "LIM101": Example(
        wrong=f"""\
inputs:
  grid: {{ type: array, default: {"[" * 65}{"]" * 65} }}
{_LIM_TOOL}""",
        right=f"""\
inputs:
  grid: {{ type: array, default: [[[]]] }}
{_LIM_TOOL}""", dialect="workflowskill"),
    "LIM102": Example(
        wrong=_LIM_CEL.format(expr="[" + ", ".join(["1"] * 1001) + "]"),
        right=_LIM_CEL.format(expr="[1, 2, 3]"), dialect="instruction"),
    "LIM103": Example(
        wrong=_LIM_CEL.format(expr="9223372036854775808 - 1"),
        right=_LIM_CEL.format(expr="9223372036854775807"), dialect="instruction"),
    "LIM104": Example(
        wrong=_LIM_TOOL + '    retry: { max: 1000000, delay: "1s", backoff: 2 }\n',
        right=_LIM_TOOL + '    retry: { max: 5, delay: "1s", backoff: 2 }\n', dialect="workflowskill"),
    "LIM105": Example(
        wrong=_LIM_TOOL + '    retry: { max: 3, delay: "3000000s", backoff: 2 }\n',
        right=_LIM_TOOL + '    retry: { max: 3, delay: "30s", backoff: 2 }\n', dialect="workflowskill"),
    "LIM106": Example(
        wrong="""\
name: poll
steps:
  start: { kind: manual }
  again:
    kind: iterate
    depends_on: start
    max_iterations: 5000000
    until: "CEL: result >= 3"
    body: { steps: { n: { kind: assign, value: 1 } } }
  done: { kind: finish, depends_on: again, output: "{{ steps.again.output }}" }
""",
        right="""\
name: poll
steps:
  start: { kind: manual }
  again:
    kind: iterate
    depends_on: start
    max_iterations: 100
    until: "CEL: result >= 3"
    body: { steps: { n: { kind: assign, value: 1 } } }
  done: { kind: finish, depends_on: again, output: "{{ steps.again.output }}" }
""", dialect="instruction"),
}

EXAMPLES: dict[str, Example] = {**_INPUT_AND_ANALYSES, **_FILE_LIMITS, **_HOST, **_TRANSLATION,
                                **_VALUE_LIMITS}
