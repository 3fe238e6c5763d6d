"""Hostile inputs against passes that the per-limit tests did not reach.

Every limit is a finding, never a crash or a hang, in every pass: the
translation emitters, the graph writers, the run record, the eval command.
Each case here once took minutes, ran out of memory or ended in a
traceback; the sizes are chosen so that the linear answer takes a fraction
of a second and the old quadratic one took far longer than the bound.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from flowc.backends import vm
from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.ir.limits import MAX_DURATION_MS, MAX_RETRIES
from flowc.pipeline import driver, translate
from flowc.runtime import sequence_run, wfs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_big_inputs as gen


def _timed(fn, *args):
    # CPU time of this process: other processes on a busy machine do not
    # count, so the ratios below measure the algorithm, not the load.
    started = time.process_time()
    out = fn(*args)
    return out, time.process_time() - started


def _workflow(text: str, dialect: str):
    result = driver.compile_text(text, f"big.{dialect}.yaml", dialect)
    assert result.ok, [d.code for d in result.diagnostics if d.is_error][:5]
    return result.workflow


def _emitter(target: str):
    """The target's emitter alone (translate.emit also reads the text back)."""
    from flowc.translation import aevatar, instruction, workflowskill

    return {"workflowskill": workflowskill, "aevatar": aevatar,
            "instruction": instruction}[target].emit


def _emit_scales_linearly(make, dialect: str, target: str, small: int) -> None:
    """Emitting 4x the steps takes about 4x the time, never 16x."""
    little, big = _workflow(make(small), dialect), _workflow(make(4 * small), dialect)
    _, t_little = _timed(_emitter(target), little)
    emission, t_big = _timed(_emitter(target), big)
    assert emission.text, emission.diagnostics[:3]
    assert t_big < 0.5 + 8 * t_little, (t_little, t_big)


# ------------------------------------------------------------------ checks

def _aevatar_references(n: int) -> str:
    """An aevatar chain of ``n`` steps, each reading the step before it."""
    out = ["name: big", "roles:", "  - id: writer", "steps:"]
    for i in range(n):
        out += [f"  - id: s{i}", "    type: llm_call", "    target_role: writer", "    parameters:",
                f'      prompt_prefix: "Step {i}: ${{steps.s{max(i - 1, 0)}.output}} ${{steps.s0.output}}"']
    return "\n".join(out) + "\n"


def test_aevatar_step_references_are_checked_in_linear_time():
    # Each ${steps.X...} walked every ancestor of its step: checking a
    # 10,000-step chain took 9 s, and a step with many references was
    # one walk per reference.
    _, t_little = _timed(driver.compile_text, _aevatar_references(500), "w.yaml", "aevatar")
    result, t_big = _timed(driver.compile_text, _aevatar_references(4000), "w.yaml", "aevatar")
    assert result.ok
    assert t_big < 0.5 + 8 * t_little, (t_little, t_big)


def test_reachability_agrees_with_a_walk():
    import random

    from flowc.ir import graph as G

    rng = random.Random(7)
    for _ in range(60):
        g = G.Graph()
        nodes = range(rng.randint(1, 12))
        for n in nodes:
            g.add_node(n)
        for _ in range(rng.randint(0, 20)):
            g.add_edge(rng.choice(nodes), rng.choice(nodes))
        reach = G.Reachability(g)
        for a in nodes:
            for b in nodes:
                walked = b in G.descendants(g, a) if a != b else any(
                    a in G.descendants(g, s) for s in g.successors(a)) or g.has_edge(a, a)
                assert reach.reaches(a, b) == walked, (a, b)


def _config_uses(uses: int, items: int = 100_000) -> str:
    """A config whose list var of ``items`` elements one step uses ``uses`` times."""
    big = "[" + ",".join(["1"] * items) + "]"
    args = ", ".join(f'a{i}: "{{{{config.big}}}}"' for i in range(uses))
    return (f'config_version: "2"\nvars:\n  big: {big}\nworkflows:\n  - name: w\n    steps:\n'
            f"      start: {{ kind: manual }}\n"
            f"      hi: {{ kind: tool, depends_on: start, name: t, args: {{ {args} }} }}\n"
            f"      done: {{ kind: finish, depends_on: hi }}\n")


def test_config_vars_used_as_whole_values_count_toward_the_yaml_nodes():
    # A whole-value {{config.X}} shares the var's node, but every later pass
    # walks it once per use: 40 uses of a 100,000-item list took 10 s with
    # no finding, 1,000 uses minutes.
    result, took = _timed(driver.compile_text, _config_uses(1000, 20_000), "c.yaml", "instruction")
    assert [d.code for d in result.diagnostics if d.is_error] == ["YAML005"]
    assert "1,000,000 YAML nodes" in result.diagnostics[0].message and result.diagnostics[0].span.line == 8
    assert took < 10
    assert driver.compile_text(_config_uses(8, 1000), "c.yaml", "instruction").ok


# ------------------------------------------------------------------ translation emitters

def test_translating_a_long_workflowskill_chain_to_instruction_is_linear():
    # Each step scanned every edge of the workflow for its depends_on:
    # 10,000 steps took minutes.
    _emit_scales_linearly(gen.workflowskill, "workflowskill", "instruction", 500)


def _peak_memory(fn, *args) -> int:
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_translating_a_long_aevatar_chain_to_workflowskill_is_linear():
    # Each step's join was found from whole sets of post-dominators:
    # memory quadratic in the steps (10,000 steps: MemoryError at 2 GB).
    _emit_scales_linearly(gen.aevatar, "aevatar", "workflowskill", 400)
    little, big = _workflow(gen.aevatar(400), "aevatar"), _workflow(gen.aevatar(1600), "aevatar")
    m_little = _peak_memory(_emitter("workflowskill"), little)
    m_big = _peak_memory(_emitter("workflowskill"), big)
    assert m_big < 8 * m_little, (m_little, m_big)


def _aevatar_switch(keys: int) -> str:
    """An aevatar switch on ``keys`` keys, each to its own step (within
    every aevatar limit: a switch may have 1,000 branches)."""
    out = ["name: sw", "roles:", "  - id: w", "steps:", "  - id: s", "    type: switch",
           '    parameters: {on: "${x}"}', "    branches:"]
    out += [f"      k{i}: t{i}" for i in range(keys)] + ["      _default: t0"]
    for i in range(keys):
        out += [f"  - id: t{i}", "    type: assign", f"    parameters: {{target: y, value: v{i}}}", "    next: end"]
    out += ["  - id: end", "    type: assign", "    parameters: {target: y, value: z}"]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("target, keys", [("workflowskill", 70), ("workflowskill", 999),
                                         ("instruction", 40), ("instruction", 999)])
def test_a_translation_over_the_targets_limits_is_a_finding(target, keys):
    # A switch becomes nested conditional steps (WorkflowSkill) or a nested
    # CEL choice (instruction): 999 keys ended in a RecursionError, 70 keys
    # (40 for instruction) were written as a workflow `flowc check` refuses (LIM101).
    result = translate.translate_text(_aevatar_switch(keys), "sw.yaml", target)
    assert not result.ok
    errors = [d for d in result.emission.diagnostics if d.is_error]
    assert errors and all(d.code.startswith("LIM") for d in errors), errors
    assert "limit" in errors[0].message or "too deeply" in errors[0].message
    # and within the target's limits it is written, and checks clean
    small = translate.translate_text(_aevatar_switch(8), "sw.yaml", target)
    assert small.ok and driver.compile_text(small.text, "t" + translate.output_suffix(target), target).ok


# ------------------------------------------------------------------ graph

def _warned_steps(n: int) -> str:
    """``n`` WorkflowSkill steps, each with a finding (an id no expression can name)."""
    head = "inputs:\n  q: {type: string}\noutputs:\n  r: {type: string}\nsteps:\n"
    return head + "".join(f"- id: s-{i}\n  type: tool\n  tool: t\n" for i in range(n))


def test_graph_places_thousands_of_findings_in_linear_time():
    # Each finding was matched against every box: 5,000 findings on 5,000
    # steps took 10 s, 10,000 on 10,000 about a minute.
    from flowc.diagrams import model

    def drawn(n: int):
        result = driver.compile_text(_warned_steps(n), "w.yaml", "workflowskill")
        assert len(result.diagnostics) >= n
        return _timed(model.build, result.workflow, result.diagnostics)

    _, t_little = drawn(500)
    picture, t_big = drawn(4000)
    assert t_big < 0.5 + 8 * t_little, (t_little, t_big)
    assert sum(1 for box in picture.boxes if box.findings) == 4000


# ------------------------------------------------------------------ runs

def _both(workflow, inputs, script, **budgets) -> list[dict]:
    """The run record of each backend, after a round trip through strict JSON
    (no NaN or Infinity: what `flowc run --json` prints must parse)."""
    py = load_module(compile_workflow(workflow)).run(inputs, ScriptedHost(script), **budgets)
    on_vm = vm.load(vm.compile_workflow(workflow)).run(inputs, ScriptedHost(script), **budgets)
    return [json.loads(json.dumps(r, allow_nan=False)) for r in (py, on_vm)]


RETRY_AT_THE_LIMITS = f"""\
inputs: {{}}
outputs:
  r: {{type: object, value: $steps.flaky.output.data}}
steps:
  - id: flaky
    type: tool
    tool: flaky_api
    retry:
      max: {MAX_RETRIES}
      delay: "{MAX_DURATION_MS // 1000}s"
      backoff: 1000000
    outputs:
      data: {{type: object}}
"""


@pytest.mark.parametrize("delay", [f"{MAX_DURATION_MS // 1000}s", "0ms"])
def test_retry_sleeps_at_the_limits_stay_finite(delay):
    # delay x backoff^(k-1) overflowed: sleeps of 1e300 ms, then Infinity in
    # the record (invalid JSON), then the run failed after 52 attempts with
    # "(34, 'Numerical result out of range')". Each sleep is now at most
    # MAX_DURATION_MS, and every retry the policy asks for is made.
    text = RETRY_AT_THE_LIMITS.replace(f"{MAX_DURATION_MS // 1000}s", delay)
    workflow = _workflow(text, "workflowskill")
    py, on_vm = _both(workflow, {}, {"flaky_api": {"error": "down"}})
    assert py == on_vm
    assert py["error"] == {"message": 'Tool "flaky_api": down', "step": "flaky"}
    assert len(py["calls"]) == MAX_RETRIES + 1 and len(py["sleeps_ms"]) == MAX_RETRIES
    if delay == "0ms":
        assert set(py["sleeps_ms"]) == {0}
    else:
        assert py["sleeps_ms"][0] == (MAX_DURATION_MS // 1000) * 1000
        assert set(py["sleeps_ms"][1:]) == {MAX_DURATION_MS}


def test_the_standalone_vm_caps_sleeps_as_ir_limits_says():
    assert wfs.MAX_SLEEP_MS == sequence_run.MAX_SLEEP_MS == MAX_DURATION_MS


# ------------------------------------------------------------------ memory

def _cel_bomb(levels: int = 25) -> str:
    """A CEL expression within every limit whose value is 8 * 4**24 bytes:
    memory is not bounded by fuel, by design (README, Security)."""
    text = f"size(v{levels - 1})"
    for i in reversed(range(levels)):
        value = "'xxxxxxxx'" if i == 0 else f"[v{i - 1}, v{i - 1}, v{i - 1}, v{i - 1}].join('')"
        text = f"cel.bind(v{i}, {value}, {text})"
    return text


def _flowc_in_2gb(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """flowc under a 2 GB address-space limit, as `ulimit -v` would run it."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    env = dict(os.environ, PYTHONPATH=str(ROOT.parent))
    return subprocess.run([sys.executable, "-m", "flowc", *argv], capture_output=True, text=True, timeout=120,
                          env=env, input=stdin, preexec_fn=limit, check=False)


@pytest.mark.parametrize("backend", ["python", "vm"])
def test_eval_out_of_memory_is_an_error_not_a_traceback(backend):
    proc = _flowc_in_2gb("eval", "--lang", "cel", "--backend", backend, _cel_bomb())
    assert "Traceback" not in proc.stderr and proc.returncode == 1, proc.stderr[-500:]
    assert "out of memory" in proc.stdout + proc.stderr
    lines = json.dumps({"expr": _cel_bomb()}) + "\n" + json.dumps({"expr": "1 + 1"}) + "\n"
    proc = _flowc_in_2gb("eval", "--lang", "cel", "--backend", backend, "--batch", stdin=lines)
    assert "Traceback" not in proc.stderr, proc.stderr[-500:]
    first, second = [json.loads(line) for line in proc.stdout.splitlines()]
    assert "out of memory" in json.dumps(first) and second == 2, proc.stdout


@pytest.mark.parametrize("backend", ["python", "vm"])
def test_a_run_out_of_memory_fails_with_a_message(tmp_path, backend):
    workflow = tmp_path / "bomb.yaml"
    workflow.write_text("name: bomb\nsteps:\n  start: { kind: manual }\n"
                        f"  a: {{ kind: assign, depends_on: start, value: \"CEL: {_cel_bomb()}\" }}\n"
                        "  done: { kind: finish, depends_on: a, output: \"{{ steps.a.output }}\" }\n")
    proc = _flowc_in_2gb("run", str(workflow), "--backend", backend, "--json")
    assert "Traceback" not in proc.stderr and proc.returncode == 1, proc.stderr[-500:]
    record = json.loads(proc.stdout)
    assert record["status"] == "failed" and record["error"] == {"message": "out of memory", "step": "a"}


def test_out_of_memory_in_any_command_is_one_line(monkeypatch, capsys, tmp_path):
    from flowc import cli

    def exhausted(*_args, **_kwargs):
        raise MemoryError
    monkeypatch.setattr(driver, "compile_text", exhausted)
    (tmp_path / "w.yaml").write_text(gen.workflowskill(1))
    assert cli.main(["check", str(tmp_path / "w.yaml")]) == 1
    assert capsys.readouterr().err.strip().endswith("flowc: error: out of memory")


def test_translating_a_long_workflowskill_chain_to_aevatar_is_linear():
    # Each step looked for itself among the steps already listed, and the
    # listed steps were copied at each one: quadratic, 7.7 s of 10,000
    # steps' emission (1.7 s now). At this size the linear part still
    # dominates: this guards the scaling, it did not fail before.
    _emit_scales_linearly(gen.workflowskill, "workflowskill", "aevatar", 500)


# ------------------------------------------------------------------ eval

def _flowc(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT.parent))
    return subprocess.run([sys.executable, "-m", "flowc", *argv], capture_output=True, text=True, timeout=60,
                          env=env, input=stdin, check=False)


@pytest.mark.parametrize("lang", ["cel", "workflowskill", "aevatar"])
def test_eval_refuses_json_nested_past_the_value_depth(lang):
    # A --vars or batch line nested 500 deep ended in a RecursionError traceback.
    deep = "[" * 500 + "]" * 500
    proc = _flowc("eval", "--lang", lang, "--vars", '{"x": ' + deep + "}", "1")
    assert "Traceback" not in proc.stderr and proc.returncode == 2, proc.stderr[-300:]
    assert json.loads(proc.stdout) == {"error": "--vars nests more than 64 levels deep"}
    lines = "[" * 100_000 + "\n" + json.dumps({"expr": "1", "vars": {"x": json.loads(deep)}}) + "\n"
    proc = _flowc("eval", "--lang", lang, "--batch", stdin=lines)
    assert "Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr[-300:]
    assert [json.loads(line) for line in proc.stdout.splitlines()] == \
        [{"error": "invalid batch line: the line nests more than 64 levels deep"}] * 2


def test_evaluate_text_with_deep_values_is_an_error():
    from flowc.pipeline.evaluate import evaluate_text

    value: object = 1
    for _ in range(5000):
        value = [value]
    assert evaluate_text("cel", "x", {"x": value}) == ("error", "the values nest too deeply")
    assert evaluate_text("workflowskill", "$inputs.x", {"inputs": {"x": value}}) == \
        ("error", "the values nest too deeply")


# ------------------------------------------------------------------ fuel

@pytest.mark.parametrize("backend", ["python", "vm"])
def test_list_membership_pays_for_the_elements_it_scans(backend):
    # `a in xs` scans xs; inside a comprehension over xs the work is
    # quadratic while the fuel counted only the comprehension's elements:
    # 20,000 items took 15 s, 100,000 minutes, with no budget exhausted.
    from flowc.pipeline.evaluate import evaluate_text

    xs = list(range(20_000))
    (kind, message), took = _timed(evaluate_text, "cel", "xs.filter(a, a in xs).size()", {"xs": xs},
                                   "expression", backend)
    assert (kind, message) == ("error", "fuel exhausted: more than 10000000 iterations")
    assert took < 5
    assert evaluate_text("cel", "xs.filter(a, a in [1, 2]).size()", {"xs": xs}, "expression", backend) == \
        ("json", "2")


def test_list_membership_in_a_run_is_paid_on_both_backends():
    text = ("name: scan\nsteps:\n  start: { kind: manual }\n"
            "  a: { kind: assign, depends_on: start, value: \"CEL: inputs.xs.filter(a, a in inputs.xs).size()\" }\n"
            "  done: { kind: finish, depends_on: a, output: \"{{ steps.a.output }}\" }\n")
    workflow = _workflow(text, "instruction")
    py, on_vm = _both(workflow, {"xs": list(range(5_000))}, {}, max_iterations=1_000_000)
    assert py == on_vm and py["status"] == "failed"
    assert py["error"] == {"message": "fuel exhausted: more than 1000000 iterations", "step": "a"}
