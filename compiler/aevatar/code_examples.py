"""Wrong and right examples of the AEV finding codes (``flowc explain``).

Listed by compiler/codes.py; tests/test_explain.py checks that every wrong
example produces its code and every right one checks clean.
"""

from __future__ import annotations

from flowc.compiler.code_types import Example

__all__ = ["EXAMPLES", "NOT_STANDALONE"]

# A small clean workflow most examples start from.
_WRITER = """\
name: summarize
roles:
  - id: writer
    system_prompt: You are a concise writer.
"""


def _wf(steps: str, roles: str = _WRITER) -> str:
    return roles + "steps:\n" + steps


_SUMMARIZE = """\
  - id: summarize
    type: llm_call
    target_role: writer
    parameters:
      prompt_prefix: "Summarize:"
"""

_FINAL = """\
  - id: finalize
    type: assign
    parameters: { target: final_summary, value: "$input" }
"""

EXAMPLES: dict[str, Example] = {
    "AEV101": Example(wrong="# nothing here yet\n", right=_wf(_SUMMARIZE)),
    "AEV102": Example(
        wrong=_wf("  summarize:\n    type: llm_call\n    target_role: writer\n"),
        right=_wf(_SUMMARIZE)),
    "AEV103": Example(
        wrong=_wf(_SUMMARIZE.replace("    target_role: writer\n", "    target_role: writer\n    nxt: done\n")
                  + _FINAL.replace("finalize", "done")),
        right=_wf(_SUMMARIZE.replace("    target_role: writer\n", "    target_role: writer\n    next: done\n")
                  + _FINAL.replace("finalize", "done"))),
    "AEV104": Example(wrong=_wf(_SUMMARIZE).replace("name: summarize\n", ""), right=_wf(_SUMMARIZE)),
    "AEV105": Example(wrong=_WRITER + "steps: []\n", right=_wf(_SUMMARIZE)),
    "AEV106": Example(
        wrong=_wf(_SUMMARIZE.replace("  - id: summarize\n    type: llm_call\n", "  - type: llm_call\n")),
        right=_wf(_SUMMARIZE)),
    "AEV107": Example(
        wrong=_wf(_SUMMARIZE, "name: summarize\nroles:\n  - system_prompt: You are a concise writer.\n"),
        right=_wf(_SUMMARIZE)),
    "AEV108": Example(
        wrong=_wf(_SUMMARIZE + "    timeout_ms: soon\n"),
        right=_wf(_SUMMARIZE + "    timeout_ms: 60000\n")),
    "AEV109": Example(
        wrong=_wf("""\
  - id: tidy
    type: transform
    op: trim
"""),
        right=_wf("""\
  - id: tidy
    type: transform
    parameters: { op: trim }
""")),
    "AEV110": Example(
        wrong=_WRITER + "  - id: writer\n    system_prompt: You write long essays.\nsteps:\n" + _SUMMARIZE,
        right=_wf(_SUMMARIZE)),
    "AEV111": Example(
        wrong=_wf("""\
  - id: route
    type: conditional
    parameters: { condition: urgent }
    branches:
      "true": urgent
      "false": normal
      maybe: ""
  - id: urgent
    type: assign
    parameters: { target: route, value: urgent }
    next: normal
  - id: normal
    type: assign
    parameters: { target: seen, value: "$input" }
"""),
        right=_wf("""\
  - id: route
    type: conditional
    parameters: { condition: urgent }
    branches:
      "true": urgent
      "false": normal
  - id: urgent
    type: assign
    parameters: { target: route, value: urgent }
    next: normal
  - id: normal
    type: assign
    parameters: { target: seen, value: "$input" }
""")),
    "AEV112": Example(
        wrong=_wf(_SUMMARIZE.replace("    target_role: writer\n", "    target_role: writer\n    role: editor\n"),
                  _WRITER + "  - id: editor\n    system_prompt: You edit.\n"),
        right=_wf(_SUMMARIZE, _WRITER + "  - id: editor\n    system_prompt: You edit.\n")),
    "AEV113": Example(
        wrong=_wf(_SUMMARIZE + "    op: trim\n"),
        right=_wf(_SUMMARIZE)),
    "AEV120": Example(
        wrong=_wf(_SUMMARIZE.replace("prompt_prefix", "prompt_prefx")),
        right=_wf(_SUMMARIZE)),
    "AEV121": Example(
        wrong=_wf("""\
  - id: fetch
    type: tool_call
    parameters:
      arguments: '{"q": "news"}'
"""),
        right=_wf("""\
  - id: fetch
    type: tool_call
    parameters:
      tool: web_search
"""),
    ),
    "AEV122": Example(
        wrong=_wf("""\
  - id: check
    type: guard
    parameters: { check: not_empty, on_fail: retry }
"""),
        right=_wf("""\
  - id: check
    type: guard
    parameters: { check: not_empty, on_fail: fail }
""")),
    "AEV123": Example(
        wrong=_wf("""\
  - id: first
    type: transform
    parameters: { op: take, n: three }
"""),
        right=_wf("""\
  - id: first
    type: transform
    parameters: { op: take, n: "3" }
""")),
    "AEV124": Example(
        wrong=_wf("""\
  - id: first
    type: transform
    parameters: { op: take, n: 3 }
"""),
        right=_wf("""\
  - id: first
    type: transform
    parameters: { op: take, n: "3" }
""")),
    "AEV125": Example(
        wrong=_wf("""\
  - id: relay
    type: llm_call
    parameters:
      agent_type: "telegram bridge"
"""),
        right=_wf("""\
  - id: relay
    type: llm_call
    parameters:
      agent_type: TelegramBridgeGAgent
""")),
    "AEV126": Example(
        wrong=_wf("""\
  - id: route
    type: switch
    parameters: { on: "$input" }
    branches: { urgent: urgent, _default: normal }
  - id: urgent
    type: assign
    parameters: { target: route, value: urgent }
    next: normal
  - id: normal
    type: assign
    parameters: { target: seen, value: "$input" }
"""),
        right=_wf("""\
  - id: route
    type: switch
    parameters: { on: "${input}" }
    branches: { urgent: urgent, _default: normal }
  - id: urgent
    type: assign
    parameters: { target: route, value: urgent }
    next: normal
  - id: normal
    type: assign
    parameters: { target: seen, value: "$input" }
""")),
    "AEV127": Example(
        wrong=_wf("""\
  - id: search
    type: tool_call
    parameters:
      tool: web_search
      arguments: '{"q": "aevatar"}'
"""),
        right=_wf("""\
  - id: search
    type: tool_call
    parameters:
      tool: web_search
""")),
    "AEV128": Example(
        wrong=_wf("""\
  - id: per_line
    type: foreach
    parameters: { delimiter: "\\n", sub_step_type: llm_call, sub_target_role: writer }
"""),
        right=_wf("""\
  - id: per_line
    type: foreach
    parameters: { delimiter: '\\n', sub_step_type: llm_call, sub_target_role: writer }
""")),
    "AEV130": Example(
        wrong=_wf(_SUMMARIZE.replace("target_role: writer", "target_role: writter")),
        right=_wf(_SUMMARIZE)),
    "AEV131": Example(
        wrong=_wf(_SUMMARIZE.replace("target_role: writer", "target_role: gpt-4o")),
        right=_wf(_SUMMARIZE)),
    "AEV132": Example(
        wrong=_wf(_SUMMARIZE + "    next: finalise\n" + _FINAL),
        right=_wf(_SUMMARIZE + "    next: finalize\n" + _FINAL)),
    "AEV133": Example(
        wrong=_wf("""\
  - id: route
    type: conditional
    parameters: { condition: urgent }
    branches: { "true": urgnt, "false": normal }
  - id: urgent
    type: assign
    parameters: { target: route, value: urgent }
    next: normal
  - id: normal
    type: assign
    parameters: { target: seen, value: "$input" }
"""),
        right=_wf("""\
  - id: route
    type: conditional
    parameters: { condition: urgent }
    branches: { "true": urgent, "false": normal }
  - id: urgent
    type: assign
    parameters: { target: route, value: urgent }
    next: normal
  - id: normal
    type: assign
    parameters: { target: seen, value: "$input" }
""")),
    "AEV134": Example(
        wrong=_wf("""\
  - id: fetch
    type: tool_call
    parameters: { tool: web_search }
    on_error: { strategy: fallback, fallback_step: use_cache }
    next: done
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
"""),
        right=_wf("""\
  - id: fetch
    type: tool_call
    parameters: { tool: web_search }
    on_error: { strategy: fallback, fallback_step: use_cache }
    next: done
  - id: use_cache
    type: assign
    parameters: { target: source, value: cache }
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
""")),
    "AEV135": Example(
        wrong=_wf("""\
  - id: check
    type: guard
    parameters: { check: json_valid, on_fail: branch, branch_target: repair }
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
"""),
        right=_wf("""\
  - id: check
    type: guard
    parameters: { check: json_valid, on_fail: branch, branch_target: done }
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
""")),
    "AEV136": Example(
        wrong=_wf("""\
  - id: book
    type: tool_call
    parameters: { tool: book_room }
    compensation: cancel
    next: done
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
"""),
        right=_wf("""\
  - id: book
    type: tool_call
    parameters: { tool: book_room }
    next: done
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
""")),
    "AEV137": Example(
        wrong=_wf("""\
  - id: call
    type: connector_call
    target_role: caller
    parameters: { connector: billing_api, operation: list }
""", "name: billing\nroles:\n  - id: caller\n    connectors: [crm_api]\n"),
        right=_wf("""\
  - id: call
    type: connector_call
    target_role: caller
    parameters: { connector: crm_api, operation: list }
""", "name: billing\nroles:\n  - id: caller\n    connectors: [crm_api]\n")),
    "AEV138": Example(
        wrong=_wf("""\
  - id: call
    type: workflow_call
    parameters: { workflow: sub_flow }
"""),
        right=_wf("""\
  - id: call
    type: workflow_call
    parameters: { workflow: another_flow }
""")),
    "AEV139": Example(
        wrong=_wf("""\
  - id: fan
    type: parallel
    parameters: { workers: writer }
    children:
      - id: fan
        type: llm_call
        target_role: writer
"""),
        right=_wf("""\
  - id: fan
    type: parallel
    parameters: { workers: writer }
""")),
    "AEV140": Example(
        wrong=_wf("""\
  - id: gate
    type: conditional
    parameters: { condition: URGENT }
    next: done
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
"""),
        right=_wf("""\
  - id: gate
    type: conditional
    parameters: { condition: URGENT }
    branches: { "true": done, "false": done }
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
""")),
    "AEV141": Example(
        wrong=_wf("""\
  - id: route
    type: switch
    branches: { urgent: done }
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
"""),
        right=_wf("""\
  - id: route
    type: switch
    branches: { urgent: done, _default: done }
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
""")),
    "AEV142": Example(
        wrong=_wf("""\
  - id: refine
    type: while
    target_role: writer
    parameters: { max_iterations: "0" }
"""),
        right=_wf("""\
  - id: refine
    type: while
    target_role: writer
    parameters: { max_iterations: "3", condition: "${not(eq(output, 'DONE'))}" }
""")),
    "AEV143": Example(
        wrong=_wf("""\
  - id: call
    type: workflow_call
    parameters: { workflow: sub_flow, lifecycle: isolate }
"""),
        right=_wf("""\
  - id: call
    type: workflow_call
    parameters: { workflow: sub_flow, lifecycle: transient }
""")),
    "AEV144": Example(
        wrong=_wf("""\
  - id: tidy
    type: transform
    allowed_tools: [web_search]
    parameters: { op: trim }
"""),
        right=_wf("""\
  - id: tidy
    type: transform
    parameters: { op: trim }
""")),
    "AEV150": Example(
        wrong=_wf("""\
  - id: render
    type: demo_template
    parameters: { template: "Hello {{input}}" }
"""),
        right=_wf("""\
  - id: render
    type: transform
    parameters: { op: trim }
""")),
    "AEV151": Example(
        wrong=_wf(_SUMMARIZE.replace("type: llm_call", "type: llm_cal")),
        right=_wf(_SUMMARIZE)),
    "AEV152": Example(
        wrong=_wf("""\
  - id: rebuild
    type: dynamic_workflow
"""),
        right=_wf("""\
  - id: rebuild
    type: workflow_call
    parameters: { workflow: rebuilt_flow }
""")),
    "AEV153": Example(
        wrong=_wf("""\
  - id: each
    type: foreach
    parameters: { sub_step_type: llm_cal, sub_target_role: writer }
"""),
        right=_wf("""\
  - id: each
    type: foreach
    parameters: { sub_step_type: llm_call, sub_target_role: writer }
""")),
    "AEV154": Example(
        wrong=_wf("""\
  - id: lock
    type: mutex
    parameters: { key: nightly_report, action: acquire }
"""),
        right=_wf("""\
  - id: mark
    type: checkpoint
    parameters: { name: nightly_report }
""")),
    "AEV160": Example(
        wrong=_wf("""\
  - id: fan
    type: parallel
    parameters: { workers: writer }
    children:
      - id: draft
        type: llm_call
        target_role: writer
"""),
        right=_wf("""\
  - id: fan
    type: parallel
    parameters: { workers: writer }
""")),
    "AEV201": Example(
        wrong=_wf(_SUMMARIZE.replace('"Summarize:"', '"Summarize for ${capitalize(audience)}:"')),
        right=_wf(_SUMMARIZE.replace('"Summarize:"', '"Summarize for ${upper(audience)}:"'))),
    "AEV202": Example(
        wrong=_wf(_SUMMARIZE.replace('"Summarize:"', "\"${concat('Summarize for ', ')}\"")),
        right=_wf(_SUMMARIZE.replace('"Summarize:"', "\"${concat('Summarize for ', audience)}\""))),
    "AEV203": Example(
        wrong=_wf(_SUMMARIZE.replace('"Summarize:"', "\"${if(isblank(audience), 'Summarize:')}\"")),
        right=_wf(_SUMMARIZE.replace('"Summarize:"',
                                     "\"${if(isblank(audience), 'Summarize:', 'Summarize for the team:')}\""))),
    "AEV204": Example(
        wrong=_wf(_SUMMARIZE.replace('"Summarize:"', "\"Summarize ${concat('for ', 'the team)}:\"")),
        right=_wf(_SUMMARIZE.replace('"Summarize:"', "\"Summarize ${concat('for ', 'the team')}:\""))),
    "AEV205": Example(
        wrong=_wf(_SUMMARIZE.replace('"Summarize:"', '"Summarize for ${upper()}:"')),
        right=_wf(_SUMMARIZE.replace('"Summarize:"', '"Summarize for ${upper(audience)}:"'))),
    "AEV210": Example(
        wrong=_wf(_SUMMARIZE + "    next: post\n" + """\
  - id: post
    type: tool_call
    parameters: { tool: post_message, arguments: '{"text": "${steps.summarize.text}"}' }
"""),
        right=_wf(_SUMMARIZE + "    next: post\n" + """\
  - id: post
    type: tool_call
    parameters: { tool: post_message }
"""),
    ),
    "AEV211": Example(
        wrong=_wf("""\
  - id: capture
    type: assign
    parameters: { target: topic, value: "$input" }
    next: summarize
""" + _SUMMARIZE.replace('"Summarize:"', '"Summarize ${steps.capture.text}:"')),
        right=_wf("""\
  - id: capture
    type: assign
    parameters: { target: topic, value: "$input" }
    next: summarize
""" + _SUMMARIZE.replace('"Summarize:"', '"Summarize ${topic}:"'))),
    "AEV212": Example(
        wrong=_wf("""\
  - id: capture
    type: assign
    parameters: { target: topic, value: "$input" }
    next: summarize
""" + _SUMMARIZE.replace('"Summarize:"', '"Summarize ${steps.captured.output}:"')),
        right=_wf("""\
  - id: capture
    type: assign
    parameters: { target: topic, value: "$input" }
    next: summarize
""" + _SUMMARIZE.replace('"Summarize:"', '"Summarize ${steps.capture.output}:"'))),
    "AEV213": Example(
        wrong=_wf("""\
  - id: capture
    type: assign
    parameters: { target: topic, value: "$input" }
    next: summarize
""" + _SUMMARIZE.replace('"Summarize:"', '"Summarize ${steps.capture.result}:"')),
        right=_wf("""\
  - id: capture
    type: assign
    parameters: { target: topic, value: "$input" }
    next: summarize
""" + _SUMMARIZE.replace('"Summarize:"', '"Summarize ${steps.capture.output}:"'))),
    "AEV214": Example(
        wrong=_wf(_SUMMARIZE.replace('"Summarize:"', '"Summarize ${steps.capture.output}:"') + """\
    next: capture
  - id: capture
    type: assign
    parameters: { target: topic, value: "$input" }
"""),
        right=_wf("""\
  - id: capture
    type: assign
    parameters: { target: topic, value: "$input" }
    next: summarize
""" + _SUMMARIZE.replace('"Summarize:"', '"Summarize ${steps.capture.output}:"'))),
    "AEV215": Example(
        wrong=_wf("""\
  - id: capture
    type: assign
    parameters: { target: topic, value: "$input" }
    next: summarize
""" + _SUMMARIZE.replace('"Summarize:"', '"Summarize ${topics}:"')),
        right=_wf("""\
  - id: capture
    type: assign
    parameters: { target: topic, value: "$input" }
    next: summarize
""" + _SUMMARIZE.replace('"Summarize:"', '"Summarize ${topic}:"'))),
    "AEV216": Example(
        wrong=_wf("""\
  - id: capture
    type: assign
    parameters: { target: goal, value: "$input" }
    next: refine
  - id: refine
    type: while
    target_role: writer
    parameters:
      max_iterations: "3"
      condition: "${not(eq(output, goal))}"
"""),
        right=_wf("""\
  - id: capture
    type: assign
    parameters: { target: goal, value: "$input" }
    next: refine
  - id: refine
    type: while
    target_role: writer
    parameters:
      max_iterations: "3"
      condition: "${not(eq(output, 'DONE'))}"
""")),
    "AEV301": Example(
        wrong=_wf(_SUMMARIZE + "    next: summarize\n"),
        right=_wf(_SUMMARIZE)),
    "AEV302": Example(
        wrong=_wf("""\
  - id: fetch
    type: tool_call
    parameters: { tool: web_search }
    on_error: { strategy: fallback, fallback_step: use_cache }
    next: done
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
  - id: use_cache
    type: assign
    parameters: { target: source, value: cache }
"""),
        right=_wf("""\
  - id: fetch
    type: tool_call
    parameters: { tool: web_search }
    on_error: { strategy: fallback, fallback_step: use_cache }
    next: done
  - id: use_cache
    type: assign
    parameters: { target: source, value: cache }
    next: done
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
""")),
    "AEV303": Example(
        wrong=_wf("""\
  - id: route
    type: switch
    parameters: { on: "${trim(input)}" }
    branches: { urgent: handle_urgent, _default: handle_normal }
  - id: handle_urgent
    type: llm_call
    target_role: writer
    parameters: { prompt_prefix: "Draft an urgent reply:" }
  - id: handle_normal
    type: llm_call
    target_role: writer
    parameters: { prompt_prefix: "Draft a reply:" }
    next: finalize
""" + _FINAL),
        right=_wf("""\
  - id: route
    type: switch
    parameters: { on: "${trim(input)}" }
    branches: { urgent: handle_urgent, _default: handle_normal }
  - id: handle_urgent
    type: llm_call
    target_role: writer
    parameters: { prompt_prefix: "Draft an urgent reply:" }
    next: finalize
  - id: handle_normal
    type: llm_call
    target_role: writer
    parameters: { prompt_prefix: "Draft a reply:" }
    next: finalize
""" + _FINAL)),
    "AEV304": Example(
        wrong=_wf("""\
  - id: read
    type: tool_call
    parameters: { tool: read_state }
    next: route
  - id: route
    type: switch
    parameters: { on: "${steps.read.json.off_count}" }
    branches: { "0": done, _default: done }
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
"""),
        right=_wf("""\
  - id: read
    type: tool_call
    parameters: { tool: read_state }
    next: route
  - id: route
    type: switch
    parameters: { on: "${eq(steps.read.json.off_count, '0')}" }
    branches: { "true": done, _default: done }
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
""")),
    "AEV305": Example(
        wrong=_wf(_SUMMARIZE.replace('"Summarize:"', '"Calculate the total of these invoices:"')),
        right=_wf("""\
  - id: total
    type: transform
    parameters: { op: sum, precision: "2" }
    next: summarize
""" + _SUMMARIZE.replace('"Summarize:"', '"Word this total for a customer:"'))),
    "AEV306": Example(
        wrong=_wf("""\
  - id: per_source
    type: parallel
    parameters: { workers: writer, delimiter: "\\n---\\n" }
"""),
        right=_wf("""\
  - id: per_source
    type: foreach
    parameters: { delimiter: "\\n---\\n", sub_step_type: llm_call, sub_target_role: writer }
""")),
    "AEV308": Example(
        wrong=_wf(_SUMMARIZE + "    branches: { short: finalize, _default: finalize }\n" + _FINAL),
        right=_wf(_SUMMARIZE + "    next: finalize\n" + _FINAL)),
    "AEV309": Example(
        wrong=_wf("""\
  - id: gate
    type: conditional
    parameters: { condition: URGENT }
    branches: { "true": done, "false": done, "yes": done }
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
"""),
        right=_wf("""\
  - id: gate
    type: conditional
    parameters: { condition: URGENT }
    branches: { "true": done, "false": done }
  - id: done
    type: assign
    parameters: { target: result, value: "$input" }
""")),
}

NOT_STANDALONE: dict[str, str] = {
    "AEV138": "reported only when the check is given a registry of workflow names, `flowc check "
              "--workflows-from PATH` (the engine's validator behaves the same)",
}
