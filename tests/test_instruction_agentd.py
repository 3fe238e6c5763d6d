"""Dialect 3 as agentd writes it in its own example configurations: trigger
fields over the trigger payload, template paths split on `.` only, a
config's `vars:` folded in with their type, a config without workflows,
`--workflow` picking one workflow whatever the others, and (WorkflowSkill)
a step of an unknown type that is still declared."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from flowc import cli
from flowc.backends.python import compile_workflow, load_module
from flowc.backends.vm import compile_workflow as compile_bytecode
from flowc.backends.vm import load as load_program
from flowc.compiler.instruction.frontend import compile_instruction_all
from flowc.host import ScriptedHost
from flowc.ir import expr as E
from flowc.ir.diagnostics import Severity
from flowc.pipeline import driver

DATA = Path(__file__).resolve().parent / "data" / "instruction"
FINDINGS = Path(__file__).resolve().parent / "data" / "instruction-findings"
AGENTD_EXAMPLES = sorted(p.name for p in DATA.iterdir() if int(p.name[:2]) >= 8)


def check(text: str, file: str = "w.yaml", workflow: str | None = None):
    return driver.compile_text(textwrap.dedent(text), file, "instruction", workflow=workflow)


def found(text: str, file: str = "w.yaml") -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in check(text, file).diagnostics]


def run_both(workflow, host: dict | None = None, payload=None) -> list[dict]:
    """The run record on the Python backend and on the VM."""
    records = []
    for load in (lambda wf: load_module(compile_workflow(wf)), lambda wf: load_program(compile_bytecode(wf))):
        runner = load(workflow)
        kwargs = {"payload": payload} if payload is not None else {}
        records.append(runner.run({}, ScriptedHost(host or {}), **kwargs))
    return records


# ------------------------------------------------------------------ trigger fields

WEBHOOK_SIGNAL = """\
name: resolved
steps:
  hook:
    kind: webhook
    path: /alerts/resolved
    signal: "resolved/{{ body.alert_id }}"
    filter: "body.state == 'resolved' && method == 'POST'"
  fin: { kind: finish, depends_on: [hook], status: completed }
"""


def test_a_webhook_signal_is_a_template_over_the_payload():
    result = check(WEBHOOK_SIGNAL)
    assert result.diagnostics == () and result.ok
    hook = result.workflow.node("hook")
    signal = hook.attr("signal")
    assert isinstance(signal, E.Template)
    refs = [p for p in signal.parts if isinstance(p, E.Ref)]
    assert [(r.root, [s.name for s in r.path]) for r in refs] == [("body", ["alert_id"])]
    # the filter is CEL over the same keys (no `CEL:` prefix needed)
    assert not isinstance(hook.attr("filter"), E.Literal)


def test_a_trigger_field_does_not_see_the_steps():
    diags = dict(found(WEBHOOK_SIGNAL.replace("{{ body.alert_id }}", "{{ steps.fin.output }}")))
    assert "unknown name 'steps' (known here: body, headers, method, path, raw_body)" in diags["INS502"]
    # ... nor in its CEL filter
    diags = found(WEBHOOK_SIGNAL.replace("body.state ==", "inputs.state =="))
    assert [c for c, _ in diags] == ["CEL203"]


def test_a_trigger_inputs_mapping_still_sees_payload_and_env():
    text = WEBHOOK_SIGNAL.replace("    signal:", '    inputs: { id: "{{ payload.body.alert_id }}" }\n    signal:')
    assert found(text) == []
    assert [c for c, _ in found(text.replace("payload.body", "body"))] == ["INS502"]


def test_a_webhook_signal_workflow_compiles_and_runs_on_both_backends():
    wf = check(WEBHOOK_SIGNAL).workflow
    for record in run_both(wf, payload={"body": {"alert_id": "a1", "state": "resolved"}, "method": "POST"}):
        assert record["status"] == "completed"


# ------------------------------------------------------------------ template paths

MEMORY_QUEUE = """\
name: slot
steps:
  wake: { kind: manual }
  pick: { kind: tool, depends_on: wake, name: pick, args: { queue: "{{ memory.content/queue | [] }}", n: "{{ memory.a b.c | 0 }}" } }
  fin: { kind: finish, depends_on: pick, output: "{{ steps.pick.output }}" }
"""


def test_a_dotted_path_splits_on_dots_only():
    result = check(MEMORY_QUEUE)
    assert result.diagnostics == ()
    queue = result.workflow.node("pick").attr("args").entries[0].value.parts[0]
    assert isinstance(queue, E.Call) and queue.func == "tmpl.default"
    ref = queue.args[0]
    assert (ref.root, [s.name for s in ref.path]) == ("memory", ["content/queue"])
    n = result.workflow.node("pick").attr("args").entries[1].value.parts[0].args[0]
    assert [s.name for s in n.path] == ["a b", "c"]


def test_an_empty_path_segment_is_still_invalid():
    assert [c for c, _ in found(MEMORY_QUEUE.replace("content/queue", "content..queue"))] == ["INS501"]


def test_a_slash_key_reads_its_default_on_both_backends():
    wf = check(MEMORY_QUEUE).workflow
    for record in run_both(wf, {"tool:pick": {"output": "ok"}}):
        assert record["status"] == "completed"
        assert record["calls"][0]["args"]["args"] == {"queue": [], "n": 0}


# ------------------------------------------------------------------ config vars

CONFIG = """\
config_version: "2"
vars:
  team: [ada, grace]
  region: eu
  limits: { size: 2, tags: [a, b] }
workflows:
  - name: greet
    steps:
      start: { kind: manual }
      each:
        kind: foreach
        depends_on: start
        over: "{{config.team}}"
        body:
          steps:
            hi: { kind: tool, name: greet, args: { who: "{{ item }}", where: "eu={{config.region}} {{config.limits.tags}}", size: "{{config.limits.size }}" } }
      done: { kind: finish, depends_on: each, output: "{{ steps.each.output }}" }
"""


def test_a_config_var_keeps_its_type():
    result = check(CONFIG, "config.yaml")
    assert result.diagnostics == () and result.ok
    each = result.workflow.node("each")
    assert isinstance(each.iteration.over, E.Literal) and each.iteration.over.value == ["ada", "grace"]
    # the finding spans point at the reference
    assert each.iteration.over.span.line == 13


def test_config_vars_embed_as_text_and_reach_through_mappings():
    for record in run_both(check(CONFIG, "config.yaml").workflow, {"tool:greet": {"output": "hi"}}):
        assert record["status"] == "completed"
        args = [c["args"]["args"] for c in record["calls"]]
        assert args == [{"who": "ada", "where": 'eu=eu ["a","b"]', "size": 2},
                        {"who": "grace", "where": 'eu=eu ["a","b"]', "size": 2}]


def test_an_undefined_config_var_is_an_error():
    diags = found(CONFIG.replace("{{config.team}}", "{{config.teams}}"), "config.yaml")
    # (the text stays as written, so `over` is also a string: ANA502)
    assert ("INS504", "config.teams is not defined in vars") in diags
    # dotted names go through mappings only
    assert [c for c, _ in found(CONFIG.replace("{{config.limits.size }}", "{{config.team.0}}"),
                                "config.yaml")] == ["INS504"]


def test_a_spaced_config_reference_is_not_substituted():
    result = check(CONFIG.replace("{{config.team}}", "{{ config.team }}"), "config.yaml")
    assert [(d.code, d.severity) for d in result.diagnostics] == [("INS503", Severity.ERROR)]
    assert "not substituted" in result.diagnostics[0].message
    assert result.diagnostics[0].span.line == 13
    with_default = check(CONFIG.replace("{{config.team}}", "{{ config.team | [] }}"), "config.yaml")
    assert [(d.code, d.severity) for d in with_default.diagnostics] == [("INS503", Severity.WARNING)]


def test_a_standalone_workflow_leaves_config_references_to_the_host():
    text = """\
    name: greet
    steps:
      start: { kind: manual }
      hi: { kind: tool, depends_on: start, name: greet, args: { where: "{{config.region}}" } }
      done: { kind: finish, depends_on: hi }
    """
    result = check(text)
    assert result.diagnostics == ()
    assert result.workflow.node("hi").attr("args").value == {"where": "{{config.region}}"}


def test_a_config_without_workflows_says_so():
    text = """\
    config_version: "1"
    services:
      docs: { endpoint: "https://docs.example/mcp" }
    """
    assert found(text, "services.yaml") == [("INS101", "this config has no workflows: it has no `workflows:` list")]


# ------------------------------------------------------------------ --workflow NAME

TWO = """\
config_version: "2"
workflows:
  - name: broken
    steps:
      start: { kind: manual }
      bad: { kind: tool, depends_on: nowhere, name: x }
      done: { kind: finish, depends_on: bad }
  - name: fine
    steps:
      start: { kind: manual }
      done: { kind: finish, depends_on: start, output: 1 }
"""


def test_workflow_name_compiles_one_whatever_the_others(tmp_path, capsys):
    assert [d.code for d in check(TWO, "two.yaml").diagnostics] == ["INS301"]
    picked = check(TWO, "two.yaml", workflow="fine")
    assert picked.ok and picked.workflow.name == "fine" and picked.diagnostics == ()
    # the broken one still reports its own errors when it is the one asked for
    assert [d.code for d in check(TWO, "two.yaml", workflow="broken").diagnostics] == ["INS301"]
    path = tmp_path / "two.yaml"
    path.write_text(TWO, encoding="utf-8")
    assert cli.main(["run", str(path), "--workflow", "fine", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["outputs"] == 1
    assert cli.main(["compile", str(path), "--workflow", "fine", "-o", str(tmp_path / "fine.py")]) == 0
    assert cli.main(["run", str(path), "--workflow", "broken"]) == 1
    assert cli.main(["run", str(path)]) == 1
    assert cli.main(["run", str(path), "--workflow", "nope"]) == 2
    assert "has no workflow named 'nope' (it has: broken, fine)" in capsys.readouterr().err


# ------------------------------------------------------------------ the corpus

def test_the_agentd_examples_are_all_here():
    assert AGENTD_EXAMPLES == ["08-agentd-hiring-actions.yaml"]


@pytest.mark.parametrize("name", AGENTD_EXAMPLES)
def test_every_agentd_example_workflow_compiles_on_both_backends(name):
    path = DATA / name
    text = path.read_text(encoding="utf-8")
    workflows, _ = compile_instruction_all(text, str(path))
    assert workflows
    for wf in workflows:
        result = driver.compile_text(text, str(path), "instruction", workflow=wf.name)
        assert result.ok, (wf.name, result.diagnostics)
        assert compile_workflow(result.workflow) and compile_bytecode(result.workflow)


def test_agentd_examples_flowc_reports():
    """agentd's coding-agent config has no workflows."""
    coding = driver.compile_file(str(FINDINGS / "01-agentd-coding-agent.yaml"), "instruction")
    assert [d.code for d in coding.diagnostics] == ["INS101"]
    assert sorted(p.name for p in FINDINGS.iterdir()) == ["01-agentd-coding-agent.yaml"]


# ------------------------------------------------------------------ WorkflowSkill

def test_a_workflowskill_step_of_unknown_type_is_still_declared():
    text = textwrap.dedent("""\
    ---
    name: t
    description: d
    ---
    ```workflow
    inputs:
      q: { type: string }
    outputs:
      r: { type: string, value: $steps.fetch.output.x }
    steps:
      - id: fetch
        type: tol
        tool: web.search
      - id: use
        type: tool
        tool: echo
        inputs:
          v: { type: string, value: $steps.fetch.output.x }
      - id: gate
        type: conditional
        condition: $inputs.q == "x"
        then: [later]
      - id: later
        type: tols
        tool: echo
    ```
    """)
    diags = driver.compile_text(text, "t.md", "workflowskill").diagnostics
    assert sorted(d.code for d in diags) == ["WFS106", "WFS106"]
    # a step that really is missing is still reported
    missing = text.replace("$steps.fetch.output.x }\nsteps", "$steps.fetched.output.x }\nsteps")
    assert "WFS204" in [d.code for d in driver.compile_text(missing, "t.md", "workflowskill").diagnostics]


def test_a_config_var_may_use_another_once():
    text = """\
    config_version: "2"
    vars:
      region: eu
      base: "https://api.{{config.region}}.example"
    workflows:
      - name: w
        steps:
          start: { kind: manual }
          hi: { kind: http, depends_on: start, url: "{{config.base}}/x" }
          done: { kind: finish, depends_on: hi }
    """
    result = check(text, "config.yaml")
    assert result.diagnostics == ()
    assert result.workflow.node("hi").attr("url").value == "https://api.eu.example/x"
    broken = check(text.replace("{{config.region}}", "{{config.zone}}"), "config.yaml")
    assert [(d.code, d.span.line) for d in broken.diagnostics] == [("INS504", 4)]


def test_config_vars_cannot_grow_a_workflow_without_bound():
    big = "x" * 1_000_000
    uses = ", ".join(f'a{i}: "<{{{{config.big}}}}>"' for i in range(5))
    text = (f'config_version: "2"\nvars:\n  big: "{big}"\nworkflows:\n  - name: w\n    steps:\n'
            f"      start: {{ kind: manual }}\n"
            f"      hi: {{ kind: tool, depends_on: start, name: t, args: {{ {uses} }} }}\n"
            f"      done: {{ kind: finish, depends_on: hi }}\n")
    diags = driver.compile_text(text, "big.yaml", "instruction").diagnostics
    assert [d.code for d in diags] == ["LIM001"]
