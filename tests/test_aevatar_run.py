"""Running aevatar workflows on the Python backend with a scripted host.

The generated module holds the plan and one compiled function per step's
parameters; runtime/routing_run.py runs it like the engine's
kernel. These tests pin the routing, variables, failure policies and the
primitives, and run the authoring guide's examples A-F.
"""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest
from flowc import cli
from flowc.backends.python import compile_workflow, load_module
from flowc.compiler.aevatar import primitives as P
from flowc.host import ScriptedHost
from flowc.pipeline import driver
from flowc.runtime import routing_run as K

DATA = Path(__file__).resolve().parent / "data" / "aevatar"


def build(text: str, file: str = "workflow.yaml"):
    result = driver.compile_text(textwrap.dedent(text), file, "aevatar")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics if d.is_error]
    return load_module(compile_workflow(result.workflow))


def run(text: str, script=None, inputs=None, **kw):
    module = build(text)
    return module.run(inputs or {}, ScriptedHost(script or {}))


def ids(record):
    return [s["id"] for s in record["steps"]]


# ---------------------------------------------------------------- the guide's examples
SCRIPTS = {
    "A": ({"input": "long text"}, {"llm:writer": ["- a\n- b\n- c", "Title"]}, "Title"),
    "B": ({"input": "server down"}, {"tool:nyxid_proxy": {"output": {"items": []}},
                                     "llm:analyst": ["urgent", "standard reply"]}, "standard reply"),
    "C": ({"input": "one\n---\ntwo"}, {"llm:worker": {"echo": True}}, None),
    "D": ({"input": "", "input_file_refs": [{"file_id": "f1"}]},
          {"tool:document_extract": {"file": {"file_id": "f1"}, "text": "x"},
           "tool:code_execute": [{"output": {"output": {"stdout": "[{\"slug\": \"up\"}]"}}},
                                 {"output": {"output": {"stdout": "{\"upload_count\": 1}"}}}],
           "tool:workflow_file_submit": {"output_code": "C1"}},
          '{"run_tag":"multiple-files-upload","uploaded_files":{"upload_count":1}}'),
    "E": ({}, {"tool:code_execute": {"output": {"output": {"stdout": "{\"route\":\"approved\",\"score\":91}"}}}},
          '{"route":"approved","score":91}'),
    "F": ({"input": "s1\n---\ns2"}, {"llm:analyst": {"echo": True}, "llm:editor": "DIGEST"}, "DIGEST"),
}


@pytest.mark.parametrize("letter", sorted(SCRIPTS))
def test_seed_example_runs(letter):
    path = next((DATA / "seed_examples").glob(f"{letter}_*.yaml"))
    result = driver.compile_file(str(path))
    module = load_module(compile_workflow(result.workflow))
    inputs, script, expected = SCRIPTS[letter]
    record = module.run(inputs, ScriptedHost(script))
    assert record["status"] == "success", record["error"]
    if expected is not None:
        assert record["outputs"]["output"] == expected


def test_example_b_routes_by_the_literal_dollar_input():
    """on: "$input" is literal text, so the switch takes _default whatever the classification."""
    _inputs, script, _ = SCRIPTS["B"]
    record = run((DATA / "seed_examples" / "B_fetch_and_route.yaml").read_text(), script)
    route = next(s for s in record["steps"] if s["id"] == "route")
    assert route["branch"] == "_default" and "handle_normal" in ids(record)


def test_example_c_newline_delimiter_is_ignored_like_the_engine():
    """delimiter: "\\n" is white space, which the engine treats as unset (AEV128): one item."""
    record = run((DATA / "seed_examples" / "C_process_each_line.yaml").read_text(),
                 {"llm:worker": {"echo": True}}, {"input": "a\nb"})
    assert [i for i in ids(record) if i.startswith("per_item_item_")] == ["per_item_item_0"]


# ---------------------------------------------------------------- routing and variables
def test_counter_programs_loop_through_next():
    base = DATA / "aevatarAI__aevatar" / "workflows" / "turing-completeness"
    for name, expected in (("counter-addition.yaml", "5"), ("minsky-inc-dec-jz.yaml", "2")):
        record = run((base / name).read_text())
        assert (record["status"], record["outputs"]["output"]) == ("success", expected)


def test_fall_through_next_branches_and_variables():
    record = run("""\
        name: p
        roles: [{id: w}]
        steps:
          - id: capture
            type: assign
            parameters: {target: topic, value: "$input"}
          - id: gate
            type: conditional
            parameters: {condition: "${isblank(topic)}"}
            branches: {"true": empty, "false": work}
          - id: empty
            type: assign
            parameters: {target: r, value: "nothing"}
            next: done
          - id: work
            type: llm_call
            target_role: w
            parameters: {prompt_prefix: "About ${topic} (${steps.capture.output}):"}
          - id: done
            type: assign
            parameters: {target: final, value: "${concat(upper(input), '!')}"}
        """, {"llm:w": {"echo": True}}, {"input": "cats"})
    assert ids(record) == ["capture", "gate", "work", "done"]
    assert record["calls"][0]["args"]["prompt"] == "About cats (cats):\n\ncats"
    out = json.loads(record["outputs"]["output"][:-1].lower())
    assert out["prompt"] == "about cats (cats):\n\ncats"
    assert record["variables"]["final"] == record["outputs"]["output"]


def test_switch_matching_order():
    text = """\
        name: p
        steps:
          - id: route
            type: switch
            parameters: {branch.bug: bug}
            branches: {bug: bug, feature: feature, _default: other}
          - id: bug
            type: assign
            parameters: {target: r, value: bug}
            next: end
          - id: feature
            type: assign
            parameters: {target: r, value: feature}
            next: end
          - id: other
            type: assign
            parameters: {target: r, value: other}
          - id: end
            type: assign
            parameters: {target: x, value: "$input"}
        """
    for prompt, expected in (("  BUG ", "bug"), ("a feature request", "feature"), ("hello", "other"),
                             ("bug and feature", "bug")):
        assert run(text, inputs={"input": prompt})["outputs"]["output"] == expected


# ---------------------------------------------------------------- failures
FLAKY = """\
    name: p
    steps:
      - id: call
        type: tool_call
        parameters: {tool: flaky}
        retry: {max_attempts: 3, backoff: exponential, delay_ms: 100}
        on_error: {strategy: %s}
        next: done
      - id: recover
        type: assign
        parameters: {target: recovered, value: "$input"}
        next: done
      - id: done
        type: assign
        parameters: {target: result, value: "$input"}
    """


def test_retry_then_success():
    record = run(FLAKY % "fail", {"flaky": [{"error": "busy"}, {"error": "busy"}, {"output": "ok"}]})
    assert record["status"] == "success" and record["outputs"]["output"] == "ok"
    assert record["sleeps_ms"] == [100, 200]


def test_retry_exhausted_then_fallback_gets_the_error_text():
    text = FLAKY % "fallback, fallback_step: recover"
    record = run(text, {"flaky": {"error": "busy"}})
    assert record["status"] == "success"
    assert ids(record) == ["call", "call", "call", "recover", "done"]
    assert record["variables"]["recovered"] == "busy"


def test_skip_continues_with_default_output():
    text = FLAKY.replace("on_error: {strategy: %s}", "on_error: {strategy: skip, default_output: fallback}")
    record = run(text, {"flaky": {"error": "busy"}})
    assert (record["status"], record["outputs"]["output"]) == ("success", "fallback")


def test_failure_fails_the_run_and_timeouts_bypass_retry():
    record = run(FLAKY % "fail", {"flaky": {"error": "busy"}})
    assert record["status"] == "failed" and record["error"]["step"] == "call"
    record = run(FLAKY % "fail", {"flaky": {"throw": "TIMEOUT after 100ms"}})
    assert record["status"] == "failed" and ids(record) == ["call"] and record["sleeps_ms"] == []


def test_guard_branch_and_failure():
    text = """\
        name: p
        steps:
          - id: check
            type: guard
            parameters: {check: json_valid, on_fail: branch, branch_target: repair}
          - id: ok
            type: assign
            parameters: {target: r, value: valid}
            next: end
          - id: repair
            type: assign
            parameters: {target: r, value: repaired}
          - id: end
            type: assign
            parameters: {target: x, value: "$input"}
        """
    assert run(text, inputs={"input": '{"a": 1}'})["outputs"]["output"] == "valid"
    assert run(text, inputs={"input": "not json"})["outputs"]["output"] == "repaired"


def test_infinite_loop_is_bounded():
    module = build("""\
        name: spin
        steps:
          - id: a
            type: assign
            parameters: {target: x, value: "1"}
            next: b
          - id: b
            type: conditional
            parameters: {condition: "false"}
            branches: {"true": c, "false": a}
          - id: c
            type: assign
            parameters: {target: x, value: "2"}
        """)
    record = K.run(module.PLAN, {}, ScriptedHost({}), max_steps=50)
    assert record["status"] == "failed" and "budget" in record["error"]["message"]


# ---------------------------------------------------------------- composites
def test_while_evaluates_its_condition_after_each_iteration():
    record = run("""\
        name: p
        roles: [{id: w}]
        steps:
          - id: refine
            type: while
            target_role: w
            parameters:
              max_iterations: "5"
              condition: "${not(eq(output, 'DONE'))}"
              sub_param_prompt_prefix: "round ${iteration}:"
        """, {"llm:w": ["a", "b", "DONE", "never"]})
    assert record["outputs"]["output"] == "DONE"
    assert [c["args"]["prompt"].split(":")[0] for c in record["calls"]] == ["round 0", "round 1", "round 2"]


def test_parallel_race_and_vote():
    record = run("""\
        name: p
        roles: [{id: a}, {id: b}]
        steps:
          - id: fan
            type: parallel
            parameters: {workers: "a,b", vote_step_type: vote}
            next: pick
          - id: pick
            type: race
            parameters: {workers: "a,b"}
        """, {"llm:a": ["short", {"throw": "down"}], "llm:b": ["the longest answer", "from b"]})
    assert record["steps"][2]["output"] == "the longest answer"   # the vote over both workers
    assert record["outputs"]["output"] == "from b"                 # a failed, b won the race


def test_cache_returns_the_memoised_output():
    record = run("""\
        name: p
        roles: [{id: w}]
        steps:
          - id: first
            type: cache
            parameters: {cache_key: k, child_target_role: w}
          - id: second
            type: cache
            parameters: {cache_key: k, child_target_role: w}
        """, {"llm:w": ["computed", "again"]})
    assert record["outputs"]["output"] == "computed" and len(record["calls"]) == 1


@pytest.mark.parametrize("op,given,params,expected", [
    ("count", "a\n\nb\nc", {}, "3"),
    ("count_words", "a  b c", {}, "3"),
    ("take", "1\n2\n3", {"n": "2"}, "1\n2"),
    ("take_last", "1\n2\n3", {"n": "2"}, "2\n3"),
    ("split", "a,b", {"separator": ","}, "a\n---\nb"),
    ("join", "a\n---\nb", {"separator": "+"}, "a+b"),
    ("distinct", "a\nb\na", {}, "a\nb"),
    ("reverse_lines", "a\nb", {}, "b\na"),
    ("trim", "  x \u3000", {}, "x"),
    ("uppercase", "straße", {}, "STRAßE"),
    ("nonsense", "same", {}, "same"),
])
def test_transform_ops(op, given, params, expected):
    assert K.transform(op, given, params) == expected


# ---------------------------------------------------------------- the module
def test_generated_module_is_deterministic_safe_and_standalone(tmp_path):
    hostile = """\
        name: "x\\"\\n__import__('os')"
        roles: [{id: "r'); import os; ('"}]
        steps:
          - id: "a'); import os; ('"
            type: llm_call
            target_role: "r'); import os; ('"
            parameters: {prompt_prefix: "${concat('\\"\\"\\"', input)}"}
        """
    result = driver.compile_text(textwrap.dedent(hostile), "workflow.yaml", "aevatar")
    source = compile_workflow(result.workflow)
    assert source == compile_workflow(result.workflow)
    tree = ast.parse(source)
    imports = {n.module for n in tree.body if isinstance(n, ast.ImportFrom)}
    assert imports == {"flowc.runtime"}   # the command line's host code only under __main__
    assert {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} == {"flowc.runtime", "flowc.hosts.runner"}
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import)]
    record = load_module(source).run({"input": "hi"}, ScriptedHost({"*": {"echo": True}}))
    assert record["status"] == "success"


def test_run_command(tmp_path, capsys):
    path = tmp_path / "flow.yaml"
    path.write_text("name: t\nsteps:\n  - id: a\n    type: transform\n    parameters: {op: uppercase}\n",
                    encoding="utf-8")
    inputs = tmp_path / "in.json"
    inputs.write_text('{"input": "hello"}', encoding="utf-8")
    assert cli.main(["run", str(path), "--inputs", str(inputs), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["outputs"] == {"output": "HELLO"}


def test_runtime_alias_table_matches_the_compiler():
    assert K._ALIASES == P.ALIASES


def test_every_corpus_workflow_compiles_to_a_module():
    for path in sorted((DATA / "aevatarAI__aevatar").rglob("*.yaml")):
        result = driver.compile_file(str(path))
        if result.ok:
            load_module(compile_workflow(result.workflow))
