"""Wrong and right examples of the INS and CEL finding codes (`flowc explain`).

Listed by compiler/codes.py; tests/test_explain.py checks that every wrong
example produces its code and every right one checks clean.
"""

from __future__ import annotations

from flowc.compiler.code_types import Example

__all__ = ["EXAMPLES", "NOT_STANDALONE"]

EXAMPLES: dict[str, Example] = {}

EXAMPLES['CEL201'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, when: "inputs.who ==", args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, when: "inputs.who != ''", args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['CEL202'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, when: "inputs.who.lenght() > 0", args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, when: "inputs.who.size() > 0", args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['CEL203'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, when: "start.output != null", args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, when: "steps.start.output != null", args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS101'] = Example(
    wrong="""\
config_version: "2"
workflows: []
""",
    right="""\
config_version: "2"
workflows:
  - name: hello
    steps:
      start: { kind: manual }
      greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
      done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    file='config.yaml',
)

EXAMPLES['INS102'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: { start: 1 }, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS103'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS104'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, argz: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS105'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, on_error: retry, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, on_error: continue, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS106'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tools, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS107'] = Example(
    wrong="""\
name: hello world
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS108'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, timeout: 10 minutes, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, timeout: 10m, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS109'] = Example(
    wrong="""\
# Hello

:::workflow{name=hello}
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
:::
""",
    right="""\
# Hello

:::!workflow{name=hello}
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
:::
""",
    file='instruction.md',
)

EXAMPLES['INS110'] = Example(
    wrong="""\
version: 2
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
version: 3
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS111'] = Example(
    wrong="""\
# Two

:::!workflow{name=hello}
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
:::

:::!workflow{name=hello}
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
:::
""",
    right="""\
# Two

:::!workflow{name=hello}
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
:::

:::!workflow{name=hello_again}
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
:::
""",
    file='instruction.md',
)

EXAMPLES['INS201'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: human, depends_on: start, question: Proceed?, reply_uri: "https://example.com/r" }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: human, depends_on: start, question: Proceed?, to: "@human/ops" }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS202'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: think, depends_on: start, prompt: Greet them, check: "size(result) > 0" }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: think, depends_on: start, prompt: Greet them, output_schema: { type: string } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS203'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: schedule, cron: "0 7 * * *", every: 1h }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: schedule, cron: "0 7 * * *" }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS204'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: correlate, stream: orders, on: [created, paid] }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: correlate, stream: orders, on: [created, paid], window: 10m }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS301'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: gret, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS302'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual, depends_on: greet }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS303'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: [start, greet], name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS304'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  sub:
    kind: subgraph
    depends_on: greet
    body:
      steps:
        inner: { kind: noop }
        stop: { kind: finish, depends_on: inner }
  done: { kind: finish, depends_on: sub, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  sub:
    kind: subgraph
    depends_on: greet
    body:
      steps:
        inner: { kind: noop }
  done: { kind: finish, depends_on: sub, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS305'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  deep: { kind: subgraph, depends_on: greet, body: { steps: { top: { kind: subgraph, body: { steps: { s3: { kind: subgraph, body: { steps: { s2: { kind: subgraph, body: { steps: { s1: { kind: subgraph, body: { steps: { s0: { kind: noop } } } } } } } } } } } } } } } }
  done: { kind: finish, depends_on: deep, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  deep: { kind: subgraph, depends_on: greet, body: { steps: { top: { kind: subgraph, body: { steps: { s2: { kind: subgraph, body: { steps: { s1: { kind: subgraph, body: { steps: { s0: { kind: noop } } } } } } } } } } } } }
  done: { kind: finish, depends_on: deep, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS306'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  again:
    kind: iterate
    depends_on: greet
    max_iterations: 20000
    until: "CEL: result >= 3"
    body: { steps: { n: { kind: assign, value: 1 } } }
  done: { kind: finish, depends_on: again, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  again:
    kind: iterate
    depends_on: greet
    max_iterations: 100
    until: "CEL: result >= 3"
    body: { steps: { n: { kind: assign, value: 1 } } }
  done: { kind: finish, depends_on: again, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS307'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  sub:
    kind: subgraph
    depends_on: greet
    body:
      steps:
        a: { kind: noop, depends_on: b }
        b: { kind: noop, depends_on: a }
  done: { kind: finish, depends_on: sub, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  sub:
    kind: subgraph
    depends_on: greet
    body:
      steps:
        a: { kind: noop }
        b: { kind: noop, depends_on: a }
  done: { kind: finish, depends_on: sub, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS308'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: noop }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS309'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.gret.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS310'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  log: { kind: emit, depends_on: start, note: "{{ steps.greet.output }}" }
  done: { kind: finish, depends_on: [greet, log], output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  log: { kind: emit, depends_on: greet, note: "{{ steps.greet.output }}" }
  done: { kind: finish, depends_on: [greet, log], output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS311'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  each:
    kind: foreach
    depends_on: greet
    over: "{{ inputs.people }}"
    body: { steps: { ask: { kind: human, question: "Greet {{ item }}?" } } }
  done: { kind: finish, depends_on: each, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  ask: { kind: human, depends_on: greet, question: "Greet everyone?" }
  done: { kind: finish, depends_on: ask, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS501'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS502'] = Example(
    wrong="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ input.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
)

EXAMPLES['INS503'] = Example(
    wrong="""\
config_version: "2"
vars:
  team: [ada, grace]
workflows:
  - name: hello
    steps:
      start: { kind: manual }
      greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ config.team }}" } }
      done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right="""\
config_version: "2"
vars:
  team: [ada, grace]
workflows:
  - name: hello
    steps:
      start: { kind: manual }
      greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{config.team}}" } }
      done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    file='config.yaml',
)

EXAMPLES['INS504'] = Example(
    wrong="""\
config_version: "2"
vars:
  team: [ada, grace]
workflows:
  - name: hello
    steps:
      start: { kind: manual }
      greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{config.teams}}" } }
      done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
""",
    right=EXAMPLES['INS503'].right,
    file='config.yaml',
)

# The host of this example advertises {"kinds": ["manual", "tool", "finish"]}.
EXAMPLES["INS401"] = Example(
    wrong=EXAMPLES["INS103"].right.replace("kind: tool, depends_on: start, name: greet, args: "
                                           '{ who: "{{ inputs.who }}" }',
                                           'kind: memory.push, depends_on: start, key: greeted, '
                                           'value: "{{ inputs.who }}"'),
    right=EXAMPLES["INS103"].right,
)

# `flowc run` of this file without --journal warns; with --journal FILE it is journaled.
EXAMPLES["INS402"] = Example(
    wrong=EXAMPLES["INS103"].right.replace("name: hello\n", "name: hello\ndurable: true\n", 1),
    right=EXAMPLES["INS103"].right,
)

# Codes no file text alone can produce.
NOT_STANDALONE: dict[str, str] = {
    "INS402": "a warning of `flowc run` and `flowc check --config`: whether a run has a journal is "
              "the command's or the host config's, not the workflow's (the right example is the same "
              "workflow run with --journal FILE, or without `durable: true`)",
    "INS401": "needs the host's capability file (flowc check --host-capabilities), not only "
              "the workflow",
}
