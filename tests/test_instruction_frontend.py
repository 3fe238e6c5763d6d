"""The instruction-catalog front end (agentd dialect 3): carriers, the
catalog, strict fields, cross-field rules, expressions, graph checks and
the IR it builds."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest
from flowc import cli
from flowc.compiler.instruction import catalog as CAT
from flowc.compiler.instruction.capabilities import check_host, parse_capabilities
from flowc.compiler.instruction.carriers import locate
from flowc.compiler.instruction.frontend import compile_instruction_all
from flowc.ir import expr as E
from flowc.ir.workflow import EdgeKind
from flowc.pipeline import driver

DATA = Path(__file__).resolve().parent / "data" / "instruction"
SEED_KINDS = ["a2a", "a2a.delegate", "a2a.send", "a2a.wait", "agent", "artifact.create", "artifact.delete", "artifact.get", "assert", "assign", "batch", "checkpoint", "chunk", "classify", "correlate", "decide", "dedupe", "emit", "event", "extract", "fail", "filter", "finish", "foreach", "http", "human", "iterate", "join", "judge", "knowledge.get", "knowledge.search", "loop", "manual", "map", "mcp.resource", "mcp.tool", "memory.delete", "memory.get", "memory.list", "memory.pop", "memory.push", "memory.set", "memory.shift", "message", "noop", "once", "parallel", "parse", "race", "reduce", "route", "schedule", "search.fetch", "search.query", "signal", "sleep", "sort", "stream", "subagent", "subgraph", "subscribe", "summarize", "switch", "template", "think", "tool", "transform", "validate", "wait", "webhook", "workflow", "workflow.cancel", "workflow.signal", "workflow.wait"]
TRIGGERS = ["a2a", "correlate", "event", "loop", "manual", "once", "schedule", "signal", "stream", "subscribe", "webhook"]

BASE = """\
name: hello
steps:
  start: { kind: manual }
  greet: { kind: tool, depends_on: start, name: greet, args: { who: "{{ inputs.who }}" } }
  done: { kind: finish, depends_on: greet, output: "{{ steps.greet.output }}" }
"""


def check(text: str, file: str = "w.yaml"):
    return driver.compile_text(textwrap.dedent(text), file, "instruction")


def codes(text: str, file: str = "w.yaml") -> list[str]:
    return [d.code for d in check(text, file).diagnostics]


def with_step(step: str, depends: str = "greet") -> str:
    """BASE with one more step (indented two spaces) that `done` also waits for."""
    text = BASE.replace("  done:", step.rstrip("\n") + "\n  done:")
    sid = step.strip().split(":")[0]
    return text.replace(f"done: {{ kind: finish, depends_on: {depends}",
                        f"done: {{ kind: finish, depends_on: [{depends}, {sid}]")


# ------------------------------------------------------------------ corpus

def test_every_corpus_file_checks_clean():
    files = sorted(DATA.iterdir())
    assert len(files) == 6
    for path in files:
        result = driver.compile_file(str(path))
        assert result.dialect == "instruction", path.name
        found = [(d.code, d.message) for d in result.diagnostics]
        if path.name.startswith("07-"):
            # Two documents concatenated: both workflows are named `drain`.
            assert [c for c, _ in found] == ["INS111"], found
        else:
            assert found == [], (path.name, found)


def test_the_cli_checks_the_corpus_clean(capsys):
    assert cli.main(["check", str(DATA)]) == 0
    assert "0 errors" in capsys.readouterr().err


def test_every_document_of_the_corpus_is_found():
    names = {}
    for path in sorted(DATA.iterdir()):
        workflows, _ = compile_instruction_all(path.read_text(encoding="utf-8"), str(path))
        names[path.name[:2]] = [w.name for w in workflows]
    assert names == {
        "01": ["job-posted", "application-received", "decision-changed"],
        "02": ["pipe"], "03": ["pipe"],
        "06": ["deploy", "rollback", "nightly-health"],
        "07": ["drain", "drain"],
        "08": ["scaffold-job", "file-candidate", "prepare-interview", "record-decision"],
    }


# ------------------------------------------------------------------ carriers

def test_container_form_name_attribute_and_spans_into_the_markdown():
    path = DATA / "07-agentd-corpus-container-and-section-forms.instruction.md"
    text = path.read_text(encoding="utf-8")
    found, diags = locate(text, str(path))
    assert diags == []
    container, section = found
    assert (container.carrier, container.name) == ("container", "drain")
    assert (section.carrier, section.name, section.description) == (
        "section", "drain", "Drains the queue on demand; reads only.")
    lines = text.split("\n")
    take = container.body.get("steps").get("take")
    assert "take:" in lines[take.span.line - 1]
    wake_key = section.body.get("steps").key_node("wake")
    assert lines[wake_key.span.line - 1].strip().startswith("wake:")


def test_container_attributes_override_the_body():
    text = ":::!workflow{name=renamed armed=false}\nname: original\nsteps:\n" \
           "  s: { kind: manual }\n  f: { kind: finish, depends_on: s }\n:::\n"
    workflows, diags = compile_instruction_all(text, "doc.instruction.md")
    assert diags == []
    assert workflows[0].name == "renamed" and workflows[0].metadata["armed"] is False


def test_section_prose_is_the_description():
    path = DATA / "06-instruction-md-deploy-runbook.workflows.md"
    workflows, _ = compile_instruction_all(path.read_text(encoding="utf-8"), str(path))
    assert workflows[0].description.startswith("Deploys a release to an environment in two waves")
    assert workflows[0].inputs[1].name == "environment"


@pytest.mark.parametrize("text, message", [
    ("::!workflow{name=x}\n", "requires a body"),
    (":::workflow{name=x}\nsteps: {}\n:::\n", "is not a workflow container"),
    ("## !workflow x\n\nProse only.\n", "no fenced yaml block"),
    ("## !workflow x\n\n```yaml\nsteps: {}\n```\n\n```yaml\nsteps: {}\n```\n", "2 fenced yaml blocks"),
    (":::!workflow{name=x}\nsteps:\n  s: { kind: manual }\n", "not closed"),
    ("# Nothing here\n", "no workflow found"),
])
def test_embedding_problems(text, message):
    _, diags = locate(text, "doc.instruction.md")
    assert any(message in d.message for d in diags), [d.message for d in diags]


def test_section_ends_at_a_heading_of_the_same_level():
    text = "## !workflow a\n\nFirst.\n\n## Other\n\n```yaml\nsteps: {}\n```\n"
    found, diags = locate(text, "doc.md")
    assert found == [] and "no fenced yaml block" in diags[0].message


def test_code_fences_and_comments_hide_directives():
    text = "```md\n:::!workflow{name=x}\n```\n<!--\n## !workflow y\n-->\n" + \
           ":::!workflow{name=z}\nsteps:\n  s: { kind: manual }\n  f: { kind: finish, depends_on: s }\n:::\n"
    found, diags = locate(text, "doc.md")
    assert [c.name for c in found] == ["z"] and diags == []


def test_config_document_entries():
    text = "config_version: '2'\nagent: { name: a }\nworkflows:\n  - " + BASE.replace("\n", "\n    ")
    workflows, diags = compile_instruction_all(text, "agentd.yaml")
    assert [w.name for w in workflows] == ["hello"] and diags == []
    assert codes("config_version: '2'\nworkflows: []\n") == ["INS101"]


def test_json_documents_are_read():
    doc = {"name": "j", "steps": {"s": {"kind": "once"}, "f": {"kind": "finish", "depends_on": "s"}}}
    assert codes(json.dumps(doc), "w.json") == []


def test_detection_picks_the_instruction_dialect():
    assert driver.detect_dialect(BASE, "w.yaml") == "instruction"
    par = BASE + "  p:\n    kind: parallel\n    depends_on: start\n    branches:\n      a: { steps: {} }\n"
    assert driver.detect_dialect(par, "w.yaml") == "instruction"
    assert driver.detect_dialect((DATA / "07-agentd-corpus-container-and-section-forms.instruction.md")
                                 .read_text(encoding="utf-8"), "x.md") == "instruction"


# ------------------------------------------------------------------ the catalog

def test_the_catalog_has_every_seed_kind_with_its_role():
    assert sorted(CAT.KINDS) == sorted(SEED_KINDS)
    assert sorted(CAT.TRIGGER_KINDS) == sorted(TRIGGERS)
    decide = CAT.KINDS["decide"]
    assert decide.required == ("state", "questions") and decide.provenance == "seed"
    assert CAT.KINDS["correlate"].required_by_rule == ("window",)
    assert "kind" not in CAT.KINDS["search.query"].fields
    assert CAT.KINDS["subscribe"].provenance_of("coalesce") == "reference"
    assert CAT.KINDS["mcp.tool"].provenance_of("detach") == "seed"
    assert CAT.COMMON_FIELDS == ("kind", "depends_on", "when", "retry", "timeout", "on_error", "idempotent",
                                 "on_replay", "output_schema", "cache", "budget", "skills", "otel",
                                 "description")


def test_the_json_schema_is_valid_and_accepts_the_corpus():
    schema = CAT.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for path in sorted(DATA.iterdir()):
        found, _ = locate(path.read_text(encoding="utf-8"), str(path))
        for carried in found:
            assert list(validator.iter_errors(carried.body.plain())) == [], path.name
    bad = {"name": "x", "steps": {"s": {"kind": "tool", "nmae": "t"}}}
    assert list(validator.iter_errors(bad))


def test_flowc_schema_instruction(capsys):
    assert cli.main(["schema", "instruction"]) == 0
    assert json.loads(capsys.readouterr().out) == CAT.json_schema()


def test_the_docs_table_is_the_catalog():
    page = (Path(cli.__file__).resolve().parents[1] / "docs" / "instruction.md").read_text(encoding="utf-8")
    assert CAT.markdown_table() in page


# ------------------------------------------------------------------ strict fields

def test_unknown_field_with_did_you_mean():
    result = check(BASE.replace("args: {", "argz: {"))
    (d,) = result.diagnostics
    assert d.code == "INS104" and "unknown field 'argz' for kind 'tool'" in d.message
    assert 'did you mean "args"?' in d.notes


def test_unknown_kind_and_top_level_key():
    result = check(BASE.replace("kind: tool,", "kind: tools,").replace("name: hello", "name: hello\nstpes: {}"))
    found = {(d.code, n) for d in result.diagnostics for n in d.notes}
    assert ("INS106", 'did you mean "tool"?') in found
    assert ("INS104", 'did you mean "steps"?') in found


def test_missing_required_field_and_common_fields_are_allowed_everywhere():
    assert "INS103" in codes(BASE.replace("name: greet, ", ""))
    step = ("  extra: { kind: noop, depends_on: greet, when: 'true', retry: { max: 3, backoff: 2s }, "
            "timeout: { ms: 500 }, on_error: continue, idempotent: true, on_replay: skip, output_schema: {}, "
            "cache: { key: k, ttl: 1h }, budget: 10, skills: [a], otel: { a: 1 }, description: d }\n")
    assert codes(with_step(step)) == []


def test_dialect_one_and_two_keys():
    assert codes("start: x\n" + BASE) == ["INS110"]
    assert codes("version: 2\n" + BASE) == ["INS110"]
    assert codes("version: 3\n" + BASE) == []


@pytest.mark.parametrize("step, code", [
    ("  x: { kind: human, depends_on: greet, question: q?, reply_uri: 'https://r' }\n", "INS201"),
    ("  x: { kind: think, depends_on: greet, prompt: p, check: 'true' }\n", "INS202"),
    ("  x: { kind: think, depends_on: greet, prompt: p, retries: 2 }\n", "INS202"),
    ("  x: { kind: mcp.tool, depends_on: greet, server: s, tool: t, detach: true, cache: { key: k } }\n",
     "INS203"),
    ("  x: { kind: subagent, depends_on: greet, instruction: i, template: t }\n", "INS203"),
    ("  x: { kind: subagent, depends_on: greet }\n", "INS204"),
    ("  x: { kind: a2a.delegate, depends_on: greet, peer: p }\n", "INS204"),
    ("  x: { kind: emit, depends_on: greet, stream: s }\n", "INS204"),
    ("  x: { kind: finish, depends_on: greet, status: done }\n", "INS105"),
    ("  x: { kind: sleep, depends_on: greet, duration: soon }\n", "INS108"),
    ("  x: { kind: noop, depends_on: greet, on_error: retry }\n", "INS105"),
    ("  x: { kind: noop, depends_on: greet, on_replay: again }\n", "INS105"),
    ("  x: { kind: batch, depends_on: greet, over: [1], parallel: 9, body: { steps: { a: { kind: noop } } } }\n",
     "INS306"),
    (("  x: { kind: iterate, depends_on: greet, max_iterations: 10001, until: 'true', "
      "body: { steps: { a: { kind: noop } } } }\n"), "INS306"),
])
def test_cross_field_rules_and_values(step, code):
    assert code in codes(with_step(step)), codes(with_step(step))


def test_schedule_chooses_one_and_correlate_needs_a_window():
    assert codes(BASE.replace("{ kind: manual }", "{ kind: schedule, cron: '0 7 * * *', at: x }")) == ["INS203"]
    assert codes(BASE.replace("{ kind: manual }", "{ kind: schedule }")) == ["INS204"]
    assert codes(BASE.replace("{ kind: manual }", "{ kind: schedule, every: 15m }")) == []
    assert codes(BASE.replace("{ kind: manual }", "{ kind: correlate, stream: s, on: [a] }")) == ["INS204"]
    assert codes(BASE.replace("{ kind: manual }", "{ kind: correlate, stream: s, on: [a], window: 5m }")) == []


def test_think_compatibility_fields_are_warnings_only():
    result = check(with_step("  x: { kind: think, depends_on: greet, prompt: p, check: 'true' }\n"))
    assert result.ok and [d.severity.value for d in result.diagnostics] == ["warning"]


# ------------------------------------------------------------------ expressions

def test_when_is_cel_with_or_without_prefix_and_prunes():
    wf = check(with_step("  a: { kind: noop, depends_on: greet, when: \"CEL: inputs.env == 'prod'\" }\n")).workflow
    node = wf.node("a")
    assert node.guard.truthiness == "cel_bool" and node.guard.on_false == "prune"
    assert E.strip_spans(node.guard.expr) == E.Binary(
        "cel.eq", E.Ref("inputs", (E.Field("env"),)), E.Literal("prod", "string"))


def test_cel_spans_point_into_the_yaml_after_the_prefix():
    text = BASE.replace("name: greet, args", "name: greet, when: \"CEL: inputs.n > 2\", args")
    wf = check(text).workflow
    span = wf.node("greet").guard.expr.span
    line = text.split("\n")[span.line - 1]
    assert line[span.col - 1:span.end_col - 1] == "inputs.n > 2"


def test_cel_and_template_findings():
    assert codes(BASE.replace("name: greet, args", "name: greet, when: 'inputs.x ==', args")) == ["CEL201"]
    assert codes(BASE.replace("name: greet, args", "name: greet, when: 'inputs.x.lenght() > 0', args")) == \
        ["CEL202"]
    found = check(BASE.replace("name: greet, args", "name: greet, when: 'start.output != null', args"))
    (d,) = found.diagnostics
    assert d.code == "CEL203" and "steps.start.output" in d.notes[0]
    assert codes(BASE.replace("{{ inputs.who }}", "{{ inputs.who")) == ["INS501"]
    assert codes(BASE.replace("{{ inputs.who }}", "{{ input.who }}")) == ["INS502"]
    assert codes(BASE.replace("steps.greet.output", "steps.gret.output")) == ["INS309"]


def test_templates_typed_whole_defaults_and_cel_values():
    text = with_step("  a: { kind: assign, depends_on: greet, value: { n: '{{ inputs.n | 3 }}', "
                     "s: 'x={{ inputs.n }}', c: 'CEL: inputs.n + 1', secret: '{{secret:KEY}}' } }\n")
    value = E.strip_spans(check(text).workflow.node("a").attr("value"))
    entries = {e.key.value: e.value for e in value.entries}
    assert entries["n"] == E.Template((E.Call("tmpl.default", (E.Ref("inputs", (E.Field("n"),)),
                                                                E.Literal(3, "auto"))),), "json", True)
    assert entries["s"] == E.Template((E.Literal("x=", "string"), E.Ref("inputs", (E.Field("n"),))), "json")
    assert entries["c"].op == "cel.add"
    assert entries["secret"] == E.Literal("{{secret:KEY}}", "string")


def test_template_text_is_always_a_string():
    wf = check(with_step("  t: { kind: template, depends_on: greet, text: '{{ steps.greet.output }}' }\n")).workflow
    assert wf.node("t").attr("text").typed_whole is False


def test_element_expressions_bind_item_index_acc_and_as():
    text = with_step("  r: { kind: reduce, depends_on: greet, over: [1, 2], expr: 'total + x * index', "
                     "as: x, acc: total, initial: 0 }\n")
    expr = check(text).workflow.node("r").attr("expr")
    assert isinstance(expr, E.Lambda) and expr.params == ("total", "x", "index")
    assert codes(with_step("  m: { kind: map, depends_on: greet, over: [1], expr: 'item + acc' }\n")) == ["CEL203"]


def test_reads_of_steps_that_are_not_upstream_warn():
    result = check(with_step("  log: { kind: emit, depends_on: start, note: '{{ steps.greet.output }}' }\n",
                             depends="greet"))
    assert [d.code for d in result.diagnostics] == ["INS310"] and result.ok


# ------------------------------------------------------------------ graph checks

def test_no_trigger_and_no_finish():
    # The missing trigger is one error; the unreachable steps it implies are not repeated.
    assert sorted(codes(BASE.replace("{ kind: manual }", "{ kind: noop }"))) == ["INS308"]
    no_finish = "name: x\nsteps:\n  s: { kind: manual }\n  t: { kind: noop, depends_on: s }\n"
    assert codes(no_finish) == ["ANA404"]


def test_several_finish_nodes_are_fine():
    text = BASE + "  other: { kind: finish, depends_on: start, status: failed }\n"
    result = check(text)
    assert result.ok and result.diagnostics == ()
    assert result.workflow.terminal is None


def test_unreachable_root_is_an_error():
    result = check(BASE + "  orphan: { kind: noop }\n  f2: { kind: finish, depends_on: orphan }\n")
    assert [(d.code, d.severity.value) for d in result.diagnostics] == [("ANA402", "error")] * 2


def test_cycles_targets_and_self_dependencies():
    cyc = BASE.replace("depends_on: start, name", "depends_on: [start, done], name")
    assert "ANA403" in codes(cyc)
    bad_target = check(BASE.replace("depends_on: greet, output", "depends_on: gret, output")).diagnostics
    assert sorted(d.code for d in bad_target if d.is_error) == ["INS301"]
    assert "INS303" in codes(BASE.replace("depends_on: start, name", "depends_on: [start, greet], name"))
    assert codes(BASE.replace("start: { kind: manual }", "start: { kind: manual, depends_on: greet }")) == \
        ["INS302"]
    assert "INS301" in codes(BASE.replace("name: greet, args", "name: greet, on_error: 'goto:nowhere', args"))


def test_switch_routes_and_goto_are_edges():
    text = with_step(textwrap.dedent("""\
          sw:
            kind: switch
            depends_on: greet
            on: "{{ steps.greet.output }}"
            cases: { a: left, b: right }
            default: right
          left: { kind: noop, depends_on: sw, on_error: "goto:right" }
          right: { kind: noop, depends_on: sw }
        """).replace("\n", "\n  ").rstrip(" ").replace("sw:", "  sw:", 1), depends="greet")
    text = text.replace("depends_on: [greet, sw]", "depends_on: [left, right]")
    result = check(text)
    assert result.ok, result.diagnostics
    edges = {(e.source, e.target, e.kind, e.label) for e in result.workflow.edges}
    assert ("sw", "left", EdgeKind.BRANCH, "a") in edges
    assert ("sw", "right", EdgeKind.BRANCH, "$default") in edges
    assert ("left", "right", EdgeKind.ERROR, "goto") in edges


def test_switch_case_targets_must_exist():
    text = with_step("  sw: { kind: switch, depends_on: greet, on: x, cases: { a: nowhere } }\n")
    assert "INS301" in codes(text)


def test_body_rules():
    def body(steps: str) -> str:
        return with_step(f"  sub: {{ kind: subgraph, depends_on: greet, body: {{ steps: {steps} }} }}\n")

    assert codes(body("{ a: { kind: noop } }")) == []
    assert codes(body("{ a: { kind: noop, depends_on: greet } }")) == ["INS304"]
    assert codes(body("{ a: { kind: manual } }")) == ["INS304"]
    assert codes(body("{ a: { kind: finish } }")) == ["INS304"]
    assert codes(body("{ a: { kind: noop, depends_on: b }, b: { kind: noop, depends_on: a } }")) == ["INS307"]
    fan = with_step("  each: { kind: foreach, depends_on: greet, over: [1], body: { steps: { h: { kind: human, "
                    "question: q } } } }\n")
    assert codes(fan) == ["INS311"]


def test_nesting_at_most_four():
    def nest(levels: int) -> str:
        inner = "{ kind: noop }"
        for i in range(levels):
            inner = f"{{ kind: subgraph, body: {{ steps: {{ s{i}: {inner} }} }} }}"
        return with_step(f"  deep: {{ kind: subgraph, depends_on: greet, body: {{ steps: {{ top: {inner} }} }} }}\n")

    assert codes(nest(3)) == []
    assert codes(nest(4)) == ["INS305"]


def test_caps_on_steps_and_ids():
    many = "name: big\nsteps:\n  s: { kind: manual }\n" + "".join(
        f"  n{i}: {{ kind: noop, depends_on: s }}\n" for i in range(511)) + \
        "  f: { kind: finish, depends_on: [" + ", ".join(f"n{i}" for i in range(511)) + "] }\n"
    assert codes(many) == ["INS306"]
    long_id = "a" * 65
    assert codes(BASE.replace("greet: {", f"{long_id}: {{").replace("depends_on: greet", f"depends_on: {long_id}")) \
        .count("INS107") == 1


# ------------------------------------------------------------------ IR

def test_the_ir_of_the_control_flow_pipeline():
    wf = driver.compile_file(str(DATA / "03-agentd-e2e-control-flow.yaml")).workflow
    assert (wf.dialect, wf.semantics, wf.entry, wf.terminal) == ("instruction", "instruction", ("start",), None)
    assert [n.id for n in wf.nodes] == sorted(n.id for n in wf.nodes)
    ops = {n.id: n.op for n in wf.nodes}
    assert ops["start"] == "trigger" and ops["done"] == "finish" and ops["route"] == "switch"
    assert ops["par"] == "parallel" and ops["race"] == "race" and ops["sub"] == "subgraph"
    par = wf.node("par")
    assert [r.name for r in par.regions] == ["a", "b", "c"]
    assert par.attr("on_error").value == "continue" and par.on_error.action == "fail"
    assert [e.source for e in par.regions[2].edges] == ["z1"]
    assert wf.node("flaky").on_error.action == "continue"
    assert wf.node("goto_src").on_error.target == "recover"
    assert wf.node("done").attr("status").value == "completed"


def test_the_ir_of_the_data_pipeline():
    wf = driver.compile_file(str(DATA / "02-agentd-e2e-data-pipeline.yaml")).workflow
    each = wf.node("each")
    assert each.op == "foreach" and each.iteration.max_parallel == 2
    assert isinstance(each.iteration.over, E.Template) and each.iteration.over.typed_whole
    assert wf.node("sum").attr("expr").params == ("acc", "item", "index")
    assert wf.node("big").attr("truthiness").value == "cel_bool"
    assert wf.node("count").attr("max_iterations").value == 10
    assert wf.node("sorted").attr("direction").value == "desc"
    calls = [n for n in wf.nodes if n.op == "call"]
    assert calls == []


def test_call_nodes_name_capability_and_name():
    path = DATA / "01-agentd-hiring-intake.yaml"
    workflows, _ = compile_instruction_all(path.read_text(encoding="utf-8"), str(path))
    jd = workflows[0].node("jd")
    assert (jd.op, jd.attr("capability").value, jd.attr("name").value) == ("call", "mcp", "drive_docs/read_job_description")
    brief = workflows[0].node("brief")
    assert (brief.attr("capability").value, brief.attr("name").value) == ("llm", "extract")
    remember = workflows[0].node("remember")
    assert (remember.attr("capability").value, remember.attr("name").value) == ("memory", "set")
    scaffold = workflows[0].node("scaffold")
    assert scaffold.attr("timeout_ms").value == 300_000


# ------------------------------------------------------------------ host capabilities

def test_host_capabilities_report_missing_kinds(tmp_path, capsys):
    caps = parse_capabilities({"host": "edge", "kinds": ["manual", "tool", "finish"]})
    assert check_host(BASE, "w.yaml", caps) == []
    diags = check_host(BASE.replace("kind: tool", "kind: memory.push").replace("name: greet, args: "
                                                                                 "{ who: \"{{ inputs.who }}\" }",
                                                                                 "key: k, value: v"),
                       "w.yaml", caps)
    assert [(d.code, d.message) for d in diags] == [
        ("INS401", "step 'greet' of workflow 'hello' has kind 'memory.push', which host 'edge' does not support")]
    assert parse_capabilities(["memory.*", "manual"]).supports("memory.pop")
    with pytest.raises(ValueError):
        parse_capabilities(["no.such.kind"])
    caps_file = tmp_path / "caps.json"
    caps_file.write_text(json.dumps({"kinds": ["once", "assign", "foreach", "template", "filter", "sort",
                                               "reduce", "iterate", "chunk", "parse", "dedupe"]}))
    assert cli.main(["check", "--host-capabilities", str(caps_file), str(DATA / "02-agentd-e2e-data-pipeline.yaml")]) == 1
    out = capsys.readouterr().out
    assert out.count("INS401") == 1 and "'finish'" in out
    assert cli.main(["check", "--host-capabilities", str(tmp_path / "missing.json"), str(DATA)]) == 2



def test_switch_case_labels_are_the_keys_as_written():
    text = with_step("  sw: { kind: switch, depends_on: greet, on: x, cases: { true: a, 1: b, 'x': c } }\n"
                     "  a: { kind: noop, depends_on: sw }\n  b: { kind: noop, depends_on: sw }\n"
                     "  c: { kind: noop, depends_on: sw }\n")
    wf = check(text).workflow
    assert [e.label for e in wf.edges if e.kind is EdgeKind.BRANCH] == ["true", "1", "x"]


def test_the_ir_round_trips_through_json():
    from flowc.ir.serialize import from_data, to_data

    for path in sorted(DATA.iterdir()):
        workflows, _ = compile_instruction_all(path.read_text(encoding="utf-8"), str(path))
        for wf in workflows:
            assert from_data(json.loads(json.dumps(to_data(wf)))) == wf, path.name
