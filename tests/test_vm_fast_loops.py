"""The VM's compiled filter and map loops give exactly the expression machine's records.

A filter's test or a map's object, a block of the expression machine, runs
over the items as a tree of closures (plan_loops.compile_loop,
plan_loops._fast_loop); ``plan_loops.FAST_LOOPS = False`` makes the
machine evaluate every item. The two must agree on every record: results,
failures (an item the fast path gives up on is evaluated again by the
machine), and the point where instruction or iteration fuel runs out, for
every limit.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from flowc.backends.python import compile_workflow as python_compile
from flowc.backends.python import load_module
from flowc.backends.vm import compile_workflow, load
from flowc.backends.vm import expr_vm as X
from flowc.backends.vm import plan_loops as L
from flowc.backends.vm.expr_assemble import assemble_expression
from flowc.backends.vm.plan_assemble import bodies
from flowc.host import ScriptedHost
from flowc.ir import expr as E
from flowc.pipeline import driver
from flowc.runtime import drivers
from flowc.runtime.fuel import DEFAULT_MAX_INSTRUCTIONS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_python_fast_paths import ATOM, COMPARISON, ITEMS, TEST, VALUE, _generated
from tests.test_vm_equivalence import corpus_programs


def _bench():
    """benchmarks/bench_python_backend.py: the transform-heavy workflow and its records."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import bench_python_backend

    return bench_python_backend


def _run(prog, inputs, script, fast, max_instructions=None, max_iterations=None):
    """(the record as JSON, the instruction fuel left at the end or None)."""
    saved = L.FAST_LOOPS
    L.FAST_LOOPS = fast
    try:
        run = prog.new_run(inputs, max_instructions, max_iterations)
        record = drivers.drive_sync(run, ScriptedHost(script))
        left = prog.machine.left
    finally:
        prog.machine.end_run()
        L.FAST_LOOPS = saved
    finished = "fuel exhausted" not in ((record.get("error") or {}).get("message") or "")
    return json.dumps(record, default=repr), left if finished else None


def _compiled_loops(prog):
    """The filter and map rows' compiled loops (the rows that ran one)."""
    return [n["loop"][2] for n in prog.plan["nodes"] if "loop" in n and isinstance(n["loop"][2], L._Loop)]


def _limits(used, count=150, seed=0):
    if used <= count:
        return list(range(used + 2))
    rng = random.Random(seed)
    return sorted(set(rng.sample(range(used), count)) | {0, 1, used - 1, used, used + 1})


def _agree_under_every_limit(prog, inputs, script, count=150):
    """Fast and interpreted runs agree without limits and under instruction
    and iteration limits; returns the instructions a full run takes."""
    want, left = _run(prog, inputs, script, False)
    assert _run(prog, inputs, script, True) == (want, left)
    if left is None:    # the run did not reach FINISH
        return None
    used = DEFAULT_MAX_INSTRUCTIONS - left
    for limit in _limits(used, count):
        assert _run(prog, inputs, script, True, limit) == _run(prog, inputs, script, False, limit), limit
    for limit in range(40):
        assert _run(prog, inputs, script, True, None, limit) == _run(prog, inputs, script, False, None, limit)
    return used


def _benchmark():
    wf = driver.compile_text(_bench().WORKFLOW, "leaderboard.md").workflow
    return wf, load(compile_workflow(wf, strip=True))


def test_the_benchmark_loops_are_compiled():
    _wf, prog = _benchmark()
    script = {"records.list": {"output": {"records": _bench().make_records(300)}}, "report.post": {"output": {"ok": True}}}
    _agree_under_every_limit(prog, {}, script)
    compiled = _compiled_loops(prog)
    assert len(compiled) == 7   # five filters, two maps
    assert sum(1 for lp in compiled if lp.keep) == 5


def test_corpus_under_every_limit():
    for _name, data, inputs, script in corpus_programs():
        _agree_under_every_limit(load(data), inputs, script, count=60)


WEIRD = [None, True, False, 0, 1, -1, 2**60, -(2**60), 1.5, float("nan"), float("inf"), "", "a", "50", " 7 ",
         "0x10", "eu", "EU", [], [1], ["a"], {}, {"city": "Oslo"}, "\u00c4", "\U0001f600a"]


def _weird_records(rng, n):
    out = []
    for r in _bench().make_records(n, seed=rng.randint(0, 10**6)):
        for _ in range(rng.randint(0, 2)):
            key = rng.choice(["id", "name", "active", "score", "region", "address"])
            if rng.random() < 0.3:
                r.pop(key, None)
            else:
                r[key] = rng.choice(WEIRD)
        out.append(r if rng.random() > 0.03 else rng.choice(WEIRD))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_odd_records_and_inputs_under_every_limit(seed):
    """Records with missing fields and values of every type (the fast paths'
    fallbacks), inputs that change between runs of one program (the
    compiled loops are kept on the program), as the Python module runs them."""
    wf, prog = _benchmark()
    module = load_module(python_compile(wf))
    rng = random.Random(seed)
    for _ in range(4):
        script = {"records.list": {"output": {"records": _weird_records(rng, rng.randint(0, 30))}},
                  "report.post": {"output": {"ok": True}}}
        inputs = {}
        if rng.random() < 0.7:
            inputs = {"min_score": rng.choice([0, 50, 50.5, "50", 100]), "region": rng.choice(["eu", "us"]),
                      "limit": rng.choice([0, 1, 3, 100])}
        _agree_under_every_limit(prog, inputs, script, count=80)
        record = json.loads(_run(prog, inputs, script, True)[0])
        assert record == json.loads(json.dumps(module.run(inputs, ScriptedHost(script)), default=repr))


ITEM_LOOP = """
inputs:
  xs: {type: array}
steps:
  - id: m
    type: transform
    operation: %s
    %s
    inputs:
      items: {type: array, value: $inputs.xs}
    outputs:
      items: {type: array}
outputs:
  out: {type: array, value: $steps.m.output.items}
"""


@pytest.mark.parametrize("op", ["map", "filter"])
def test_items_that_fail_go_to_the_machine(op):
    """bytes are no JSON value: the fast path gives up on such an item and
    the machine evaluates it; the records are the generated module's."""
    body = ("expression:\n      t: \"<${item.v}>\"" if op == "map" else "where: $item.v == \"a\"")
    result = driver.compile_text(ITEM_LOOP % (op, body), "loop.yaml", "workflowskill")
    assert result.ok, result.diagnostics
    prog = load(compile_workflow(result.workflow))
    good = [{"v": 1}, {"v": "a"}, {"v": ""}, {"v": [1, 2]}, {}, {"v": None}]
    used = _agree_under_every_limit(prog, {"xs": good}, {})
    assert used and _compiled_loops(prog)
    bad = good[:2] + [{"v": b"x"}] + good[2:]
    _agree_under_every_limit(prog, {"xs": bad}, {})
    record = json.loads(_run(prog, {"xs": bad}, {}, True)[0])
    module = load_module(python_compile(result.workflow))
    assert record == json.loads(json.dumps(module.run({"xs": bad}, ScriptedHost({})), default=repr))
    for seed in range(3):
        rng = random.Random(seed)
        many = [rng.choice(good) for _ in range(200)]
        _agree_under_every_limit(prog, {"xs": many}, {}, count=100)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEST, st.lists(st.one_of(ATOM, COMPARISON), min_size=1, max_size=3), ITEMS, VALUE, VALUE,
       st.integers(0, 400), st.integers(0, 6))
def test_generated_loops_agree_under_limits(where, values, items, n, s, max_instructions, max_iterations):
    result = driver.compile_text(_generated(where, values), "probe.yaml", "workflowskill")
    if not result.ok:
        return
    prog = load(compile_workflow(result.workflow))
    script = {"src": {"output": {"items": items * 3, "n": n, "s": s}}}
    assert _run(prog, {}, script, True) == _run(prog, {}, script, False)
    assert (_run(prog, {}, script, True, max_instructions, max_iterations)
            == _run(prog, {}, script, False, max_instructions, max_iterations))


def test_a_loop_compiles_the_block_of_its_row():
    """compile_loop reads a filter's or map's block of the expression machine
    (machine.source) into the tree; an item costs the block's instructions."""
    _wf, prog = _benchmark()
    rows = [n for n in prog.plan["nodes"] if n["op"] in ("transform.filter", "transform.map")]
    loops = [(n, L.compile_loop(prog.machine, n["loop"][1], n["op"] == "transform.filter")) for n in rows]
    assert len([lp for _n, lp in loops if lp is not None]) == 7
    for node, lp in loops:
        assert lp.cost == len(prog.machine.source(node["loop"][1])[0])
        assert lp.keep == (node["op"] == "transform.filter")


@pytest.mark.parametrize("root", ["nope", "@final"])
def test_a_block_the_compiler_does_not_take_is_left_to_the_machine(root):
    """A block reading no WorkflowSkill root (an unknown one fails, the run's
    final value is no item's) is not compiled: the machine evaluates it."""
    body = bodies("sequential")
    block, _params, _slots = assemble_expression(body.tables, E.Ref(root), "wfs")
    t = body.tables
    machine = X.Machine(t.consts, t.names, t.keys, X.verify(t.blocks, len(t.consts), t.names, t.keys, 0, "wfs"))
    assert L.compile_loop(machine, block, True) is None
