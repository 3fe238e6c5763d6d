"""The aevatar front end: what it lowers each construct to, and its checks.

Every AEV code also has a wrong and a right example checked by
tests/test_explain.py (compiler/aevatar/code_examples.py); the tests here
pin the IR shape and the finer rules.
"""

from __future__ import annotations

import textwrap

import pytest
from flowc.compiler.aevatar import primitives as P
from flowc.compiler.aevatar.values import dotnet_json
from flowc.compiler.yamlsrc import load
from flowc.ir import expr as E
from flowc.ir.serialize import from_data, to_data
from flowc.ir.workflow import EdgeKind
from flowc.pipeline import driver


def check(text: str, strict: bool = False):
    return driver.compile_text(textwrap.dedent(text), "workflow.yaml", "aevatar", strict)


def codes(result) -> set[str]:
    return {d.code for d in result.diagnostics}


def errors(result) -> set[str]:
    return {d.code for d in result.diagnostics if d.is_error}


def params(node) -> dict:
    m = node.attr("parameters")
    return {entry.key.value: entry.value for entry in m.entries}


def text_of(expr) -> str:
    assert isinstance(expr, E.Literal)
    return expr.value


# ---------------------------------------------------------------- parameters
def test_parameters_are_strings_whatever_the_yaml_says():
    r = check("""\
        name: p
        steps:
          - id: t
            type: transform
            parameters:
              op: take
              n: 50
              count: "50"
              flag: true
              ratio: 1.50
              octal: 010
              empty:
              nested: {enabled: false, retries: 3, list: [alpha, 2, null], html: "<a & 'b'>"}
        """)
    assert not errors(r)
    p = params(r.workflow.node("t"))
    assert text_of(p["n"]) == text_of(p["count"]) == "50"
    assert text_of(p["flag"]) == "true"
    assert text_of(p["ratio"]) == "1.50"
    assert text_of(p["octal"]) == "010"
    assert text_of(p["empty"]) == ""
    assert text_of(p["nested"]) == ('{"enabled":"false","retries":"3","list":["alpha","2",null],'
                                    '"html":"\\u003Ca \\u0026 \\u0027b\\u0027\\u003E"}')
    # The unquoted number and boolean are reported (as warnings).
    warned = [d for d in r.diagnostics if d.code == "AEV124"]
    assert len(warned) >= 4 and not any(d.is_error for d in warned)


def test_dotnet_json_escapes_non_ascii():
    node, _ = load('{k: "é😀"}', "f")
    assert dotnet_json(node) == '{"k":"\\u00E9\\uD83D\\uDE00"}'


def test_root_shorthands_are_lifted_only_when_absent():
    r = check("""\
        name: p
        roles: [{id: w}]
        steps:
          - id: each
            type: foreach
            delimiter: ";"
            sub_step_type: llm_call
            sub_target_role: w
            parameters: {delimiter: ","}
        """)
    p = params(r.workflow.node("each"))
    assert text_of(p["delimiter"]) == ","
    assert text_of(p["sub_step_type"]) == "llm_call"


@pytest.mark.parametrize("raw,canonical,extra", [
    ("loop", "while", {}),
    ("http_get", "connector_call", {"method": "GET"}),
    ("http_delete", "connector_call", {"method": "DELETE"}),
    ("mcp_call", "connector_call", {"operation": "search"}),
    ("foreach_llm", "foreach", {"sub_step_type": "llm_call"}),
    ("map_reduce_llm", "map_reduce", {"map_step_type": "llm_call", "reduce_step_type": "llm_call"}),
    ("  JUDGE ", "evaluate", {}),
    ("select", "race", {}),
    ("assert", "guard", {}),
    ("sleep", "delay", {}),
    ("publish", "emit", {}),
    ("wait", "wait_signal", {}),
    ("sub_workflow", "workflow_call", {}),
    ("secret_input", "secure_input", {}),
])
def test_alias_table_and_ergonomic_defaults(raw, canonical, extra):
    assert P.canonical_type(raw) == canonical
    text = f"""\
        name: p
        roles: [{{id: w}}]
        steps:
          - id: s
            type: "{raw}"
            target_role: w
            parameters: {{tool: search, connector: c, workflow: sub, max_iterations: "2"}}
        """
    r = check(text)
    node = r.workflow.node("s")
    assert node.kind == raw
    for key, value in extra.items():
        assert text_of(params(node)[key]) == value


def test_step_type_parameters_are_canonicalised():
    r = check("""\
        name: p
        roles: [{id: w}]
        steps:
          - id: each
            type: foreach
            parameters: {sub_step_type: " JUDGE ", sub_target_role: w}
        """)
    assert text_of(params(r.workflow.node("each"))["sub_step_type"]) == "evaluate"


# ---------------------------------------------------------------- roles
def test_roles_become_actors_and_target_role_resolves():
    r = check("""\
        name: p
        roles:
          - id: writer
            name: Writer
            system_prompt: Be brief.
            model: some-model
            temperature: 0.2
            connectors: [crm]
            allowed_tools: [web_search]
          - name: editor
        steps:
          - id: a
            type: llm_call
            role: writer
            next: b
          - id: b
            type: llm_call
            target_role: editor
            next: c
          - id: c
            type: llm_call
        """)
    assert not errors(r)
    wf = r.workflow
    actors = {a.id: a for a in wf.actors}
    assert set(actors) == {"writer", "editor", "assistant"}     # editor: id falls back to name
    assert actors["writer"].name == "Writer"
    attrs = {a.name for a in actors["writer"].attrs}
    assert {"system_prompt", "model", "temperature", "connectors", "allowed_tools"} <= attrs
    assert [wf.node(i).actor for i in "abc"] == ["writer", "editor", "assistant"]


def test_unknown_role_with_did_you_mean_and_agent_type_exemption():
    r = check("""\
        name: p
        roles: [{id: writer}]
        steps:
          - id: a
            type: llm_call
            target_role: writter
            next: b
          - id: b
            type: llm_call
            target_role: bridge
            parameters: {agent_type: TelegramBridgeGAgent}
        """)
    found = [d for d in r.diagnostics if d.code == "AEV130"]
    assert len(found) == 1 and 'did you mean "writer"?' in found[0].notes


def test_workers_must_be_roles():
    r = check("""\
        name: p
        roles: [{id: a}, {id: b}]
        steps:
          - id: fan
            type: parallel
            parameters: {workers: "a, b;c"}
        """)
    found = [d.message for d in r.diagnostics if d.code == "AEV130"]
    assert len(found) == 1 and "role 'c'" in found[0]


# ---------------------------------------------------------------- types
def test_unknown_type_extension_near_miss_and_strict():
    text = """\
        name: p
        steps:
          - id: a
            type: openclaw
            parameters: {args: "x"}
            next: b
          - id: b
            type: llm_cal
        """
    r = check(text)
    assert {d.code: d.severity.value for d in r.diagnostics if d.code.startswith("AEV15")} == \
        {"AEV150": "warning", "AEV151": "error"}
    node = r.workflow.node("a")
    assert node.op == "call" and text_of(node.attr("capability")) == "extension"
    assert text_of(node.attr("name")) == "openclaw"
    assert "AEV150" in errors(check(text, strict=True))


def test_unknown_parameter_is_a_warning_with_did_you_mean():
    r = check("""\
        name: p
        steps:
          - id: a
            type: llm_call
            parameters: {prompt_prefx: "x"}
        """)
    found = [d for d in r.diagnostics if d.code == "AEV120"]
    assert found and not found[0].is_error and 'did you mean "prompt_prefix"?' in found[0].notes


def test_every_primitive_has_an_op_and_documented_params():
    from flowc.ir.ops import OPERATIONS

    for prim in P.PRIMITIVES:
        assert prim.op in OPERATIONS, prim.name
        assert prim.meaning
        assert prim.op != "call" or prim.capability, prim.name
        for p in prim.params:
            assert p.meaning, (prim.name, p.name)
            assert p.alias_of is None or prim.param(p.alias_of) is not None, (prim.name, p.name)
    for alias, target in P.ALIASES.items():
        assert target in P.BY_NAME, alias


# ---------------------------------------------------------------- control flow
def test_edges_fallthrough_next_branches_fallback_and_terminal():
    r = check("""\
        name: p
        roles: [{id: w}]
        steps:
          - id: classify
            type: llm_call
            target_role: w
          - id: route
            type: switch
            parameters: {on: "${trim(input)}", branch.urgent: urgent}
            branches: {urgent: urgent, _default: normal}
          - id: urgent
            type: tool_call
            parameters: {tool: page}
            on_error: {strategy: fallback, fallback_step: normal}
            next: done
          - id: normal
            type: llm_call
            target_role: w
            next: done
          - id: done
            type: assign
            parameters: {target: final, value: "$input"}
        """)
    assert not errors(r), r.diagnostics
    wf = r.workflow
    edges = {(e.source, e.target, e.kind, e.label) for e in wf.edges}
    assert ("classify", "route", EdgeKind.FALLTHROUGH, None) in edges
    assert ("route", "urgent", EdgeKind.BRANCH, "urgent") in edges
    assert ("route", "normal", EdgeKind.BRANCH, "_default") in edges
    assert ("urgent", "normal", EdgeKind.ERROR, "fallback") in edges
    assert ("urgent", "done", EdgeKind.SEQUENCE, None) in edges
    # A switch with _default never falls through.
    assert not any(e.source == "route" and e.kind is EdgeKind.FALLTHROUGH for e in wf.edges)
    assert wf.entry == ("classify",) and wf.terminal == "done"
    route = wf.node("route")
    assert route.op == "switch"
    assert [k.value for k in route.attr("keys").items] == ["urgent", "_default"]
    assert wf.node("urgent").on_error.action == "fallback"
    assert from_data(to_data(wf)) == wf


def test_loops_through_next_are_allowed():
    r = check("""\
        name: counter
        steps:
          - id: init
            type: assign
            parameters: {target: b, value: "3"}
          - id: jz
            type: conditional
            parameters: {condition: "${eq(variables.b, '0')}"}
            branches: {"true": halt, "false": dec}
          - id: dec
            type: assign
            next: jz
            parameters: {target: b, value: "${sub(variables.b, 1)}"}
          - id: halt
            type: assign
            parameters: {target: result, value: done}
        """)
    assert not errors(r), [(d.code, d.message) for d in r.diagnostics]
    assert "ANA403" not in codes(r)


def test_a_loop_that_never_gets_out_is_an_error():
    r = check("""\
        name: spin
        steps:
          - id: a
            type: assign
            parameters: {target: x, value: "1"}
            next: b
          - id: b
            type: assign
            parameters: {target: x, value: "2"}
            next: a
          - id: c
            type: assign
            parameters: {target: x, value: "3"}
        """)
    assert "ANA404" in errors(r)


def test_branch_falling_into_a_sibling_and_steps_after_the_terminal():
    r = check("""\
        name: p
        roles: [{id: w}]
        steps:
          - id: route
            type: conditional
            parameters: {condition: urgent}
            branches: {"true": a, "false": b}
          - id: a
            type: llm_call
            target_role: w
          - id: b
            type: llm_call
            target_role: w
        """)
    found = [d for d in r.diagnostics if d.code == "AEV303"]
    assert found and found[0].is_error and "'a'" in found[0].message and "'b'" in found[0].message


def test_last_step_with_next_has_no_terminal():
    r = check("""\
        name: p
        steps:
          - id: a
            type: assign
            parameters: {target: x, value: "1"}
            next: a
        """)
    assert "AEV301" in errors(r)
    assert r.workflow.terminal is None


# ---------------------------------------------------------------- regions
def test_composites_become_regions_with_their_sub_steps():
    r = check("""\
        name: p
        roles: [{id: a}, {id: b}, {id: ed}]
        steps:
          - id: loop
            type: while
            target_role: a
            parameters: {max_iterations: "3", condition: "not(eq(output, 'DONE'))", sub_param_prompt_prefix: "x"}
            next: each
          - id: each
            type: foreach
            parameters: {sub_step_type: tool_call, sub_param_tool: fetch}
            next: fan
          - id: fan
            type: parallel
            parameters: {workers: "a,b", vote_step_type: vote}
            next: mr
          - id: mr
            type: map_reduce
            parameters: {map_target_role: a, reduce_target_role: ed, reduce_prompt_prefix: "merge"}
            next: memo
          - id: memo
            type: cache
            parameters: {child_target_role: a}
            next: think
          - id: think
            type: reflect
            target_role: a
        """)
    assert not errors(r), [(d.code, d.message) for d in r.diagnostics]
    wf = r.workflow
    loop = wf.node("loop")
    assert loop.op == "while" and [g.name for g in loop.regions] == ["body"]
    body = loop.regions[0].nodes[0]
    assert body.id == "loop_iter" and body.actor == "a" and "prompt_prefix" in params(body)
    assert isinstance(loop.attr("condition"), E.Call)     # deferred, parsed as an expression
    each = wf.node("each").regions[0].nodes[0]
    assert text_of(each.attr("capability")) == "tool" and text_of(params(each)["tool"]) == "fetch"
    fan = wf.node("fan")
    assert [n.actor for n in fan.regions[0].nodes] == ["a", "b"]
    assert [g.name for g in fan.regions] == ["workers", "vote"]
    mr = wf.node("mr")
    assert [(g.name, g.nodes[0].actor) for g in mr.regions] == [("map", "a"), ("reduce", "ed")]
    assert [g.name for g in wf.node("memo").regions] == ["child"]
    assert [n.id for n in wf.node("think").regions[0].nodes] == ["think_draft", "think_critique"]


# ---------------------------------------------------------------- references
@pytest.mark.parametrize("ref,code", [
    ("${steps.fetch.text}", "AEV210"),
    ("${steps.capture.text}", "AEV211"),
    ("${steps.fetched.output}", "AEV212"),
    ("${steps.fetch.body}", "AEV213"),
    ("${steps.later.output}", "AEV214"),
])
def test_step_reference_rules(ref, code):
    r = check(f"""\
        name: p
        steps:
          - id: fetch
            type: tool_call
            parameters: {{tool: get}}
            next: capture
          - id: capture
            type: assign
            parameters: {{target: topic, value: "$input"}}
            next: use
          - id: use
            type: tool_call
            parameters: {{tool: post, arguments: '{{"t": "{ref}"}}'}}
            next: later
          - id: later
            type: assign
            parameters: {{target: x, value: "1"}}
        """)
    assert code in codes(r), [(d.code, d.message) for d in r.diagnostics]


def test_valid_step_references_are_clean():
    r = check("""\
        name: p
        steps:
          - id: fetch
            type: tool_call
            parameters: {tool: get}
            next: use
          - id: use
            type: tool_call
            parameters: {tool: post, arguments: '{"a": "${steps.fetch.output}", "b": "${steps.fetch.json.n}",
              "c": "${steps.fetch.annotations.guard.reason}", "d": "${fetch}"}'}
        """)
    assert not {c for c in codes(r) if c.startswith("AEV21")}, r.diagnostics


def test_switch_on_that_can_be_empty_is_reported():
    base = """\
        name: p
        steps:
          - id: read
            type: tool_call
            parameters: {{tool: get}}
            next: route
          - id: route
            type: switch
            parameters: {{on: "{on}"}}
            branches: {{"0": done, _default: done}}
          - id: done
            type: assign
            parameters: {{target: r, value: "$input"}}
        """
    assert "AEV304" in codes(check(base.format(on="${steps.read.json.off_count}")))
    assert "AEV304" not in codes(check(base.format(on="${eq(steps.read.json.off_count, '0')}")))


def test_arithmetic_in_llm_call_and_parallel_per_item_are_warnings():
    r = check("""\
        name: p
        roles: [{id: w}]
        steps:
          - id: count
            type: llm_call
            target_role: w
            parameters: {prompt_prefix: "Count how many items are overdue:"}
            next: fan
          - id: fan
            type: parallel
            parameters: {workers: w, delimiter: "\\n"}
        """)
    found = {d.code: d.severity.value for d in r.diagnostics if d.code in ("AEV305", "AEV306")}
    assert found == {"AEV305": "warning", "AEV306": "warning"}


def test_while_condition_scope():
    r = check("""\
        name: p
        roles: [{id: w}]
        steps:
          - id: loop
            type: while
            target_role: w
            parameters: {max_iterations: "3", condition: "${lt(ITERATION, goal)}"}
        """)
    found = [d for d in r.diagnostics if d.code == "AEV216"]
    assert len(found) == 1 and "'goal'" in found[0].message


def test_spans_point_into_parameter_values():
    r = check("""\
        name: p
        roles: [{id: w}]
        steps:
          - id: a
            type: llm_call
            target_role: w
            parameters: {prompt_prefix: "Hi ${capitalize(x)}"}
        """)
    d = next(d for d in r.diagnostics if d.code == "AEV201")
    assert (d.span.line, d.span.col) == (7, 39)


# ---------------------------------------------------------------- docs
def test_docs_page_tables_are_generated_from_the_tables():
    from pathlib import Path

    page = Path(driver.__file__).resolve().parents[1] / "docs" / "aevatar.md"
    text = page.read_text(encoding="utf-8")
    assert text == P.render_doc(text), "run python -m flowc.compiler.aevatar.primitives"


def test_documented_severities_match_what_the_examples_report():
    from flowc.compiler.aevatar.code_examples import EXAMPLES, NOT_STANDALONE
    from flowc.compiler.codes import CODES

    for code in (c for c in CODES if c.startswith("AEV") and c not in NOT_STANDALONE):
        ex = EXAMPLES[code]
        found = {d.severity.value for d in driver.compile_text(ex.wrong, ex.file, "aevatar").diagnostics
                 if d.code == code}
        declared = P.FINDING_SEVERITY.get(code, "error")
        assert found and found <= {"error", "warning"}
        assert declared.split()[0] in found or ("(" in declared and found <= {"error", "warning"}), code
