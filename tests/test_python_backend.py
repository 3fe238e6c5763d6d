"""The Python module backend: generated code, run semantics, the scripted
host, ``flowc compile`` and ``flowc run``."""

from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
import textwrap

import pytest
from conftest import clean_files
from flowc import cli
from flowc.backends.python import BackendError, compile_workflow, load_module
from flowc.cli import programs
from flowc.host import HostFailure, ScriptedHost, ScriptError, ToolError
from flowc.pipeline import driver

TRIAGE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "triage")


def compile_yaml(text: str, name: str = "wf.yaml"):
    result = driver.compile_text(textwrap.dedent(text), name)
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics if d.is_error]
    return result.workflow


def run_yaml(text: str, inputs: dict | None = None, script: dict | None = None) -> dict:
    module = load_module(compile_workflow(compile_yaml(text)))
    return module.run(inputs or {}, ScriptedHost(script or {}))


def statuses(record: dict) -> list[tuple]:
    return [(s["id"], s["status"], *([s["reason"]] if "reason" in s else [])) for s in record["steps"]]


# ------------------------------------------------------------ generated code

@pytest.fixture(scope="module")
def corpus_sources() -> dict[str, str]:
    out = {}
    for path in clean_files():
        result = driver.compile_file(str(path))
        assert result.ok, path
        out[path.name] = compile_workflow(result.workflow)
    return out


def test_generated_modules_compile(corpus_sources, tmp_path):
    for name, source in corpus_sources.items():
        target = tmp_path / (name.replace("-", "_").replace(".md", ".py"))
        target.write_text(source, encoding="utf-8")
        py_compile.compile(str(target), doraise=True)


def test_generated_modules_pass_ruff(corpus_sources, tmp_path):
    for name, source in corpus_sources.items():
        (tmp_path / (name.replace("-", "_").replace(".md", ".py"))).write_text(source, encoding="utf-8")
    proc = subprocess.run(["ruff", "check", "--no-cache", "--isolated", str(tmp_path)],
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_output_is_deterministic(corpus_sources):
    for path in clean_files():
        again = compile_workflow(driver.compile_file(str(path)).workflow)
        assert again == corpus_sources[path.name]


def test_output_does_not_depend_on_the_hash_seed(corpus_sources):
    path = next(p for p in clean_files() if p.name == "graduation-content-moderation.md")
    code = ("import sys; from flowc.pipeline import driver; from flowc.backends.python import compile_workflow; "
            "sys.stdout.write(compile_workflow(driver.compile_file(sys.argv[1]).workflow))")
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                             env=env, check=True).stdout
        assert out == corpus_sources[path.name]


def test_each_step_is_a_function_preceded_by_a_comment_with_its_line(corpus_sources):
    source = corpus_sources["graduation-content-moderation.md"]
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("def _step_"):
            comments = [c for c in lines[max(0, i - 2):i] if c.startswith("# step ")]
            assert comments and "source line " in comments[0], line
    # a conditional names the arm it chose; the scheduler runs it by the plan's branch edges
    assert "def _arm_" not in source
    assert "return ctx.branch('route_by_severity', 'then' if test else 'else')" in source
    assert "['route_by_severity', 'auto_remove', 'branch', 'then']," in source
    assert "for item in ctx.each(over):" in source
    # no interpreter loop: no table of steps dispatched by name
    assert "getattr(" not in source and "eval(" not in source


def test_the_runtime_and_generated_modules_import_nothing_heavy(tmp_path):
    path = os.path.join(TRIAGE_DIR, "SKILL.md")
    source = compile_workflow(driver.compile_file(path).workflow)
    module_path = tmp_path / "triage.py"
    module_path.write_text(source, encoding="utf-8")
    code = textwrap.dedent(f"""
        import json, runpy, sys
        mod = runpy.run_path({str(module_path)!r})
        from flowc.host import ScriptedHost
        script = json.load(open({os.path.join(TRIAGE_DIR, "host.json")!r}))
        record = mod["run"]({{"min_score": 7}}, ScriptedHost(script))
        assert record["status"] == "success", record
        heavy = [m for m in ("lark", "yaml", "attrs", "networkx", "cattrs", "msgpack", "hypothesis",
                             "flowc.ir", "flowc.compiler", "flowc.backends")
                 if m in sys.modules]
        print(json.dumps(heavy))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


EXAMPLES = os.path.dirname(TRIAGE_DIR)


@pytest.mark.parametrize("example", ["triage/SKILL.md", "mcp/clocks.aevatar.yaml", "instruction/pipeline.yaml"])
def test_a_generated_module_imports_the_runtime_only(example):
    """Every dialect's module imports flowc.runtime at the top; flowc's host
    code (the command line) only in its ``__main__`` block."""
    import ast

    source = compile_workflow(driver.compile_file(os.path.join(EXAMPLES, example)).workflow)
    tree = ast.parse(source)
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert top and all(isinstance(n, ast.ImportFrom) and n.module == "flowc.runtime" for n in top), \
        [ast.unparse(n) for n in top]
    main = tree.body[-1]
    assert isinstance(main, ast.If) and ast.unparse(main.test) == "__name__ == '__main__'"
    assert [ast.unparse(n) for n in main.body if isinstance(n, ast.ImportFrom)] == \
        ["from flowc.hosts.runner import module_main"]


def test_load_module_does_not_register_the_module(corpus_sources):
    load_module(corpus_sources["echo.md"])  # the runtime the module imports is imported once, and stays
    before = set(sys.modules)
    module = load_module(corpus_sources["echo.md"])
    assert set(sys.modules) == before
    assert module.run({}, ScriptedHost())["status"] == "success"


def test_unsupported_semantics_are_refused():
    """The backend chooses by the profile's scheduling model: a step the
    chosen scheduler does not run is refused naming the model, and a
    semantics key without a profile is refused as such."""
    workflow = compile_yaml("""
        steps:
          - id: a
            type: exit
            status: success
    """)
    import attrs

    with pytest.raises(BackendError, match="operation 'exit' is not run by kernel scheduling"):
        compile_workflow(attrs.evolve(workflow, semantics="aevatar"))
    with pytest.raises(BackendError, match="names no DialectProfile"):
        compile_workflow(attrs.evolve(workflow, semantics="nonesuch"))


# ---------------------------------------------------------------- semantics

def test_retry_sleeps_with_backoff_and_retries_only_tool_errors():
    text = """
        steps:
          - id: call
            type: tool
            tool: flaky
            retry: {max: 3, delay: "100ms", backoff: 1.5}
    """
    record = run_yaml(text, script={"flaky": [{"error": "e1"}, {"error": "e2"}, {"output": 1}]})
    assert record["status"] == "success"
    assert record["sleeps_ms"] == [100, 150]
    assert len(record["calls"]) == 3
    record = run_yaml(text, script={"flaky": {"throw": "boom"}})
    assert record["status"] == "failed"
    assert record["error"] == {"message": "boom", "step": "call"}
    assert record["sleeps_ms"] == [] and len(record["calls"]) == 1
    record = run_yaml(text, script={"flaky": {"error": "down"}})
    assert record["error"] == {"message": 'Tool "flaky": down', "step": "call"}
    assert record["sleeps_ms"] == [100, 150, 225]


def test_a_host_whose_sleep_fails_fails_the_step():
    class Host(ScriptedHost):
        def sleep(self, ms):
            raise OSError("no sleeping here")

    module = load_module(compile_workflow(compile_yaml("""
        steps:
          - id: call
            type: tool
            tool: t
            retry: {max: 1, delay: "1s", backoff: 1.0}
    """)))
    record = module.run({}, Host({"t": {"error": "busy"}}))
    assert record["error"] == {"message": "no sleeping here", "step": "call"}
    assert record["sleeps_ms"] == [1000]


def test_a_missing_tool_fails_as_not_registered():
    record = run_yaml("""
        steps:
          - id: call
            type: tool
            tool: nowhere
    """)
    assert record["error"] == {"message": 'Tool "nowhere": Tool "nowhere" not registered', "step": "call"}
    assert record["calls"] == [{"capability": "tool", "name": "nowhere", "args": {}}]


def test_each_delay_sleeps_between_iterations_and_failures_keep_going():
    record = run_yaml("""
        inputs:
          xs: {type: array}
        outputs:
          out: {type: array, value: $steps.loop.output}
        steps:
          - id: loop
            type: tool
            tool: t
            each: $inputs.xs
            delay: "2s"
            inputs:
              x: {type: int, value: $item}
              i: {type: int, value: $index}
          - id: after
            type: tool
            tool: t
    """, {"xs": [1, 2, 3]}, {"t": [{"output": "a"}, {"error": "bad"}, {"output": "c"}]})
    assert record["sleeps_ms"] == [2000, 2000]
    assert [c["args"] for c in record["calls"]] == [{"x": 1, "i": 0}, {"x": 2, "i": 1}, {"x": 3, "i": 2}]
    assert statuses(record) == [("loop", "failed"), ("after", "skipped", "Workflow halted")]
    assert record["outputs"] == {"out": ["a", None, "c"]}
    assert record["error"] == {"message": 'Tool "t": bad', "step": "loop"}


def test_each_over_a_non_array_fails_the_step():
    text = """
        steps:
          - id: get
            type: tool
            tool: get
          - id: loop
            type: tool
            tool: t
            each: $steps.get.output
            on_error: ignore
            inputs:
              x: {type: object, value: $item}
    """
    record = run_yaml(text, script={"get": None, "t": 1})
    assert statuses(record) == [("get", "success"), ("loop", "failed")]
    assert record["status"] == "success" and len(record["calls"]) == 1
    record = run_yaml(text.replace("on_error: ignore", "on_error: fail"), script={"get": "text", "t": 1})
    assert record["error"] == {"message": "each expression must resolve to an array, got string",
                               "step": "loop"}


def test_guard_skip_and_conditional_output_is_the_last_listed_step():
    text = """
        inputs:
          go: {type: boolean}
        outputs:
          result: {type: object}
        steps:
          - id: check
            type: conditional
            condition: $inputs.go
            then: [a, b]
            else: [b]
          - id: a
            type: tool
            tool: ta
          - id: b
            type: tool
            tool: tb
            condition: $inputs.go == false
    """
    record = run_yaml(text, {"go": True}, {"ta": {"output": {"result": "A"}}, "tb": {"output": {"result": "B"}}})
    assert statuses(record) == [("check", "success"), ("a", "success"),
                                ("b", "skipped", "Guard condition evaluated to false")]
    # the conditional's output is b's (null: skipped), not a's
    assert record["outputs"] == {"result": None}
    record = run_yaml(text, {"go": False}, {"ta": {"output": {"result": "A"}}, "tb": {"output": {"result": "B"}}})
    assert statuses(record) == [("check", "success"), ("b", "success"), ("a", "skipped", "Branch not selected")]
    assert record["outputs"] == {"result": "B"}


def test_a_step_listed_twice_runs_twice():
    record = run_yaml("""
        steps:
          - id: check
            type: conditional
            condition: "true"
            then: [a, a]
          - id: a
            type: tool
            tool: t
    """, script={"t": 1})
    assert statuses(record) == [("check", "success"), ("a", "success"), ("a", "success")]
    assert len(record["calls"]) == 2


def test_exit_with_status_failed_fails_the_run_without_an_error():
    record = run_yaml("""
        outputs:
          a: {type: string}
          b: {type: string}
        steps:
          - id: stop
            type: exit
            status: failed
            output: '"gone"'
          - id: never
            type: tool
            tool: t
    """)
    assert record["status"] == "failed" and record["error"] is None
    # a non-object exit output goes to the first output only
    assert record["outputs"] == {"a": "gone"}
    assert statuses(record) == [("stop", "success"), ("never", "skipped", "Workflow halted")]


def test_outputs_that_resolve_to_nothing_are_left_out():
    record = run_yaml("""
        outputs:
          here: {type: string, value: $steps.t.output.name}
          gone: {type: string, value: $steps.t.output.nope}
          keyed: {type: string}
        steps:
          - id: t
            type: tool
            tool: t
    """, script={"t": {"name": "x", "keyed": "k"}})
    assert record["outputs"] == {"here": "x", "keyed": "k"}


def test_arguments_that_resolve_to_nothing_are_left_out():
    record = run_yaml("""
        inputs:
          q: {type: string}
        steps:
          - id: t
            type: tool
            tool: t
            inputs:
              q: {type: string, value: $inputs.q}
              r: {type: string, value: $inputs.missing}
              s: {type: string}
              u: {type: string, value: "${inputs.missing}!"}
    """, {"q": "x"}, {"t": {"echo": True}})
    assert record["calls"][0]["args"] == {"q": "x", "u": "!"}


def test_transforms_filter_map_sort():
    record = run_yaml("""
        inputs:
          rows: {type: array}
        outputs:
          out: {type: array, value: $steps.shape.output.items}
        steps:
          - id: keep
            type: transform
            operation: filter
            where: $item.n > 1 || $index == 0
            inputs:
              items: {type: array, value: $inputs.rows}
            outputs:
              items: {type: array}
          - id: order
            type: transform
            operation: sort
            field: meta.rank
            direction: desc
            inputs:
              items: {type: array, value: $steps.keep.output.items}
            outputs:
              items: {type: array}
          - id: shape
            type: transform
            operation: map
            expression:
              name: $item.name
              rank: $item.meta.rank
              at: $index
              fixed: literal
              nested:
                missing: $item.nope
            inputs:
              items: {type: array, value: $steps.order.output.items}
            outputs:
              items: {type: array}
    """, {"rows": [
        {"name": "first", "n": 0, "meta": {"rank": 1}},
        {"name": "low", "n": 0, "meta": {"rank": 9}},
        {"name": "b", "n": 2, "meta": {"rank": 5}},
        {"name": "null", "n": 3, "meta": {"rank": None}},
        {"name": "c", "n": 4, "meta": {"rank": 5}},
        {"name": "d", "n": 5, "meta": {"rank": 7}},
    ]})
    assert record["outputs"]["out"] == [
        {"name": "d", "rank": 7, "at": 0, "fixed": "literal", "nested": {}},
        {"name": "b", "rank": 5, "at": 1, "fixed": "literal", "nested": {}},
        {"name": "c", "rank": 5, "at": 2, "fixed": "literal", "nested": {}},
        {"name": "first", "rank": 1, "at": 3, "fixed": "literal", "nested": {}},
        {"name": "null", "rank": None, "at": 4, "fixed": "literal", "nested": {}},
    ]


def test_sort_follows_javascript_comparisons():
    from flowc.runtime import sequence_run as rt

    rows = [{"k": v} for v in ["b", "B", "a", "\U0001F600", "\uffff", None, 10, 9]]
    asc = [r["k"] for r in rt.wfs_sort(rows[:5], ("k",))]
    # UTF-16 code units: the astral character (a surrogate pair) sorts before U+FFFF
    assert asc == ["B", "a", "b", "\U0001F600", "\uffff"]
    assert [r["k"] for r in rt.wfs_sort(rows[5:], ("k",))] == [9, 10, None]
    assert [r["k"] for r in rt.wfs_sort(rows[5:], ("k",), descending=True)] == [10, 9, None]
    mixed = [{"k": v} for v in ["10", 9, True, "x"]]
    # "10" > 9 numerically, true is 1; "x" is NaN and compares with nothing
    assert [r["k"] for r in rt.wfs_sort(mixed[:3], ("k",))] == [True, 9, "10"]


def test_sort_mixed_keys_with_ascii_and_non_ascii_strings():
    """Regression: keys of mixed types (strings, arrays, objects: all compare as
    strings in JavaScript) where ASCII strings meet non-ASCII ones compare by
    UTF-16 code units, without a TypeError, and the VM agrees."""
    from flowc.backends.vm import plan_steps as vm
    from flowc.runtime import sequence_run as rt

    keys = ["\u00e9", "a", ["b"], {"o": 1}, "\U0001F600", "\uff5e", ["\u00e9"], "B", None, ["\U0001F600", "x"]]
    rows = [{"k": k, "at": i} for i, k in enumerate(keys)]
    # String(k): "é" "a" "b" "[object Object]" "😀" "～" "é" "B" (null) "😀,x"
    asc = [7, 3, 1, 2, 0, 6, 4, 9, 5, 8]
    desc = [5, 9, 4, 0, 6, 2, 1, 3, 7, 8]  # equal keys keep their order; null last both ways
    for descending, want in ((False, asc), (True, desc)):
        assert [r["at"] for r in rt.wfs_sort(rows, ("k",), descending)] == want
        assert [r["at"] for r in vm.wfs_sort(rows, ("k",), descending)] == want
    # a number among them compares with none (Number of these strings is NaN): an
    # unspecified order, but no error either, and the same in both backends
    rows.insert(4, {"k": 3, "at": 10})
    for descending in (False, True):
        assert rt.wfs_sort(rows, ("k",), descending) == vm.wfs_sort(rows, ("k",), descending)


def test_loop_invariants_are_hoisted_and_still_right():
    text = """
        inputs:
          k: {type: int}
          rows: {type: array}
        outputs:
          out: {type: array, value: $steps.keep.output.items}
        steps:
          - id: keep
            type: transform
            operation: filter
            where: $item.n > $inputs.k && $inputs.rows.length > 1
            inputs:
              items: {type: array, value: $inputs.rows}
            outputs:
              items: {type: array}
    """
    source = compile_workflow(compile_yaml(text))
    assert "_c0 = _rt.wfs_get_field(inputs, 'k')  # the same for every item" in source
    module = load_module(source)
    rows = [{"n": 1}, {"n": 5}, {"n": "7"}, {"x": 9}]
    assert module.run({"k": 2, "rows": rows}, ScriptedHost())["outputs"]["out"] == [{"n": 5}, {"n": "7"}]
    assert module.run({"k": 2, "rows": []}, ScriptedHost())["outputs"]["out"] == []
    assert module.run({"rows": rows[:1]}, ScriptedHost())["outputs"]["out"] == []


def test_transform_input_rules():
    text = """
        inputs:
          v: {type: string}
        outputs:
          out: {type: array}
        steps:
          - id: wrap
            type: transform
            operation: map
            expression:
              value: $item
            inputs:
              data: {type: string, value: $inputs.v}
            outputs:
              out: {type: array}
    """
    assert run_yaml(text, {"v": "hello"})["outputs"] == {"out": [{"value": "hello"}]}
    assert run_yaml(text, {})["outputs"] == {"out": []}


def test_inputs_defaults_fill_absent_keys_only_and_are_not_shared():
    text = """
        inputs:
          opts: {type: object, default: {a: 1}}
        outputs:
          out: {type: object, value: $inputs.opts}
        steps:
          - id: t
            type: tool
            tool: t
            inputs:
              o: {type: object, value: $inputs.opts}
    """
    module = load_module(compile_workflow(compile_yaml(text)))
    first = module.run({}, ScriptedHost({"t": 1}))
    first["outputs"]["out"]["a"] = 99  # the caller owns the record
    assert module.run({}, ScriptedHost({"t": 1}))["outputs"] == {"out": {"a": 1}}
    assert module.run({"opts": None}, ScriptedHost({"t": 1}))["outputs"] == {"out": None}


def test_records_are_identical_across_runs_and_hosts_are_not_mutated():
    text = """
        steps:
          - id: t
            type: tool
            tool: t
    """
    module = load_module(compile_workflow(compile_yaml(text)))
    script = {"t": {"output": {"deep": [1, {"x": 2}]}}}
    a = module.run({}, ScriptedHost(script))
    b = module.run({}, ScriptedHost(script))
    assert a == b
    assert script == {"t": {"output": {"deep": [1, {"x": 2}]}}}


def test_step_outputs_are_checked_against_their_declared_types():
    text = """
        outputs:
          n: {type: int, value: $steps.t.output.n}
        steps:
          - id: t
            type: tool
            tool: t
            retry: {max: 2, delay: "1s", backoff: 1.0}
            outputs:
              n: {type: int}
              s: {type: string}
    """
    ok = run_yaml(text, script={"t": {"n": 2.0, "s": None, "extra": [1]}})
    assert ok["status"] == "success" and ok["outputs"] == {"n": 2.0}
    bad = run_yaml(text, script={"t": {"n": 2.5, "s": "x"}})
    assert bad["status"] == "failed"
    assert bad["error"] == {"message": 'Step "t" output "n": expected int, got float', "step": "t"}
    assert len(bad["calls"]) == 1 and bad["sleeps_ms"] == []  # not retried
    mapped = run_yaml("""
        inputs:
          xs: {type: array}
        steps:
          - id: t
            type: tool
            tool: t
            on_error: ignore
            each: $inputs.xs
            outputs:
              flag: {type: boolean, value: $result.ok}
    """, {"xs": [1, 2]}, {"t": [{"ok": True}, {"ok": "yes"}]})
    assert statuses(mapped) == [("t", "failed")]
    assert mapped["status"] == "success" and len(mapped["calls"]) == 2


def test_a_transform_result_array_is_not_checked_against_its_declared_type():
    record = run_yaml("""
        inputs:
          v: {type: string}
        outputs:
          mapped: {type: string}
        steps:
          - id: echo
            type: transform
            operation: map
            expression:
              value: $item
            inputs:
              data: {type: string, value: $inputs.v}
            outputs:
              mapped: {type: string}
    """, {"v": "x"})
    assert record["status"] == "success" and record["outputs"] == {"mapped": [{"value": "x"}]}


def test_workflow_inputs_are_checked_against_their_declared_types():
    text = """
        inputs:
          n: {type: int}
          f: {type: float, default: 1}
          xs: {type: array}
        steps:
          - id: t
            type: tool
            tool: t
    """
    assert run_yaml(text, {"n": 3, "f": 2, "xs": None, "undeclared": "ok"}, {"t": 1})["status"] == "success"
    assert run_yaml(text, {}, {"t": 1})["status"] == "success"  # absent inputs are not required
    bad = run_yaml(text, {"n": "3"}, {"t": 1})
    assert bad["status"] == "failed" and bad["calls"] == []
    assert bad["error"] == {"message": 'workflow input "n": expected int, got string', "step": None}
    assert statuses(bad) == [("t", "skipped", "Workflow halted")]


# ------------------------------------------------------------ scripted host

def test_scripted_host_forms():
    host = ScriptedHost({
        "plain": {"a": 1},
        "out": {"output": [1, 2]},
        "seq": [{"output": 1}, {"error": "e"}, 3],
        "llm:model": "text",
        "tool:has:colon": "colon",
        "m": {"match": [{"args": {"q": {"deep": 1}}, "result": "deep"}, {"args": {"q": 1}, "result": "one"}],
              "default": {"throw": "nope"}},
        "e": {"echo": True},
        "empty_error": {"output": 5, "error": ""},
    })
    assert host.call("tool", "plain", {}) == {"a": 1}
    assert host.call("tool", "out", {}) == [1, 2]
    assert host.call("tool", "seq", {}) == 1
    with pytest.raises(ToolError, match="^e$"):
        host.call("tool", "seq", {})
    assert host.call("tool", "seq", {}) == 3
    assert host.call("tool", "seq", {}) == 3
    assert host.call("llm", "model", {}) == "text"
    assert host.call("tool", "has:colon", {}) == "colon"
    with pytest.raises(ToolError, match='Llm "plain" not registered'):
        host.call("llm", "plain", {})
    assert host.call("tool", "m", {"q": {"deep": 1, "more": 2}}) == "deep"
    assert host.call("tool", "m", {"q": 1.0, "z": 0}) == "one"
    with pytest.raises(HostFailure, match="nope"):
        host.call("tool", "m", {"q": True})
    echoed = host.call("tool", "e", {"x": [1]})
    assert echoed == {"x": [1]}
    assert host.call("tool", "empty_error", {}) == 5
    host.sleep(10)
    assert host.sleeps == [10]
    assert host.calls[0] == {"capability": "tool", "name": "plain", "args": {}}
    assert ScriptedHost({"*": 7}).call("mcp", "anything", {}) == 7


@pytest.mark.parametrize("script", [[], {"t": []}, {"t": {"throw": 5}}, {"t": {"echo": False}},
                                    {"t": {"match": [{"args": 1, "result": 2}]}},
                                    {"t": {"error": 5}}, {"t": {"match": {}}}])
def test_malformed_scripts_are_refused(script):
    with pytest.raises(ScriptError):
        ScriptedHost(script)


# ---------------------------------------------------------------------- CLI

def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def triage(*names: str) -> list[str]:
    return [os.path.join(TRIAGE_DIR, n) for n in names]


def test_flowc_run_json_prints_one_sorted_object(capsys):
    skill, inputs, host = triage("SKILL.md", "inputs.json", "host.json")
    code, out, _err = run_cli(capsys, "run", skill, "--inputs", inputs, "--host", host, "--json")
    assert code == 0
    assert out.count("\n") == 1
    record = json.loads(out)
    assert list(record) == sorted(record)
    assert record["status"] == "success"
    assert record["outputs"]["important_count"] == 2
    assert record["sleeps_ms"] == [100, 100]


def test_flowc_run_text_and_failure_exit_code(capsys, tmp_path):
    skill, inputs = triage("SKILL.md", "inputs.json")
    script = tmp_path / "host.json"
    script.write_text(json.dumps({"mail.search": {"throw": "mail server down"}}))
    code, out, _err = run_cli(capsys, "run", skill, "--inputs", inputs, "--host", str(script))
    assert code == 1
    assert "status: failed" in out and "mail server down" in out


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must hold a JSON object"),
])
def test_flowc_run_bad_inputs_exit_2(capsys, tmp_path, content, message):
    bad = tmp_path / "in.json"
    bad.write_text(content)
    code, out, err = run_cli(capsys, "run", triage("SKILL.md")[0], "--inputs", str(bad))
    assert code == 2 and message in err and "Traceback" not in err and out == ""


def test_flowc_run_bad_host_script_exit_2(capsys, tmp_path):
    bad = tmp_path / "host.json"
    bad.write_text('{"t": {"throw": 1}}')
    code, _out, err = run_cli(capsys, "run", triage("SKILL.md")[0], "--host", str(bad))
    assert code == 2 and "throw" in err
    code, _out, err = run_cli(capsys, "run", triage("SKILL.md")[0], "--host", str(tmp_path / "none.json"))
    assert code == 2 and "cannot read" in err


def test_flowc_run_compile_errors_exit_1(capsys, tmp_path):
    wf = tmp_path / "bad.yaml"
    wf.write_text("steps:\n  - id: a\n    type: tool\n")
    code, out, err = run_cli(capsys, "run", str(wf), "--json")
    assert code == 1 and out == "" and "WFS104" in err


def test_flowc_run_vm_backend_when_missing(capsys, monkeypatch):
    monkeypatch.setattr(programs, "vm_backend", lambda: None)
    code, _out, err = run_cli(capsys, "run", triage("SKILL.md")[0], "--backend", "vm")
    assert code == 2 and "not available" in err


def test_flowc_run_vm_backend_gives_the_same_record(capsys):
    assert programs.vm_backend() is not None
    skill, inputs, host = triage("SKILL.md", "inputs.json", "host.json")
    records = []
    for backend in ("python", "vm"):
        code, out, _err = run_cli(capsys, "run", skill, "--inputs", inputs, "--host", host, "--json",
                                  "--backend", backend)
        assert code == 0
        records.append(json.loads(out))
    assert records[0] == records[1]


def test_flowc_compile_writes_a_runnable_module(capsys, tmp_path):
    skill, inputs, host = triage("SKILL.md", "inputs.json", "host.json")
    target = tmp_path / "triage.py"
    code, _out, _err = run_cli(capsys, "compile", skill, "--target", "python", "-o", str(target))
    assert code == 0
    first = target.read_bytes()
    code, out, _err = run_cli(capsys, "compile", skill)
    assert out.encode("utf-8") == first
    proc = subprocess.run([sys.executable, str(target), "--inputs", inputs, "--host", host],
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    direct = json.loads(proc.stdout)
    code, out, _err = run_cli(capsys, "run", skill, "--inputs", inputs, "--host", host, "--json")
    assert json.loads(out) == direct
    proc = subprocess.run([sys.executable, str(target), "--inputs", str(tmp_path / "nope.json")],
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 2 and "cannot read" in proc.stderr


def test_flowc_compile_refuses_a_broken_workflow(capsys, tmp_path):
    wf = tmp_path / "bad.yaml"
    wf.write_text("steps:\n  - id: a\n    type: tool\n")
    code, out, err = run_cli(capsys, "compile", str(wf))
    assert code == 1 and out == "" and "WFS104" in err
