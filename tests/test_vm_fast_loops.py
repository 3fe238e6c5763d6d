"""The VM's compiled filter and map loops give exactly the interpreter's records.

A loop ``NEXT; EXPR b; KEEP|APPEND; JUMP`` runs block b of the expression
machine as a tree of closures (vm.compile_loop, vm._fast_loop);
``vm.FAST_LOOPS = False`` makes the
interpreter run every instruction. The two must agree on every record:
results, failures (an iteration the fast path gives up on is run again by
the interpreter), and the point where instruction or iteration fuel runs
out, for every limit.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from flowc.backends.python import compile_workflow as python_compile
from flowc.backends.python import load_module
from flowc.backends.vm import compile_workflow
from flowc.backends.vm import expr_vm as X
from flowc.backends.vm import sequential as V
from flowc.host import ScriptedHost
from flowc.pipeline import driver
from flowc.runtime import drivers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_python_fast_paths import ATOM, COMPARISON, ITEMS, TEST, VALUE, _generated
from tests.test_vm_equivalence import corpus_programs
from tests.test_vm_verify import _assemble_custom, _op


def _bench():
    """benchmarks/bench_python_backend.py: the transform-heavy workflow and its records."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import bench_python_backend

    return bench_python_backend


def _run(prog, inputs, script, fast, max_instructions=None, max_iterations=None):
    """(the record as JSON, the instruction fuel left at FINISH or None)."""
    saved = V.FAST_LOOPS
    V.FAST_LOOPS = fast
    try:
        run = prog.new_run(inputs, max_instructions, max_iterations)
        record = drivers.drive_sync(run, ScriptedHost(script))
    finally:
        V.FAST_LOOPS = saved
    # the loop writes the instructions left back to the run's fuel at FINISH
    # only: a run out of fuel never gets there
    finished = "fuel exhausted" not in ((record.get("error") or {}).get("message") or "")
    return json.dumps(record, default=repr), run.fuel.instructions_left if finished else None


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
    used = V.DEFAULT_MAX_INSTRUCTIONS - left
    for limit in _limits(used, count):
        assert _run(prog, inputs, script, True, limit) == _run(prog, inputs, script, False, limit), limit
    for limit in range(40):
        assert _run(prog, inputs, script, True, None, limit) == _run(prog, inputs, script, False, None, limit)
    return used


def _benchmark():
    wf = driver.compile_text(_bench().WORKFLOW, "leaderboard.md").workflow
    return wf, V.load(compile_workflow(wf, strip=True))


def test_the_benchmark_loops_are_compiled():
    _wf, prog = _benchmark()
    script = {"records.list": {"output": {"records": _bench().make_records(300)}}, "report.post": {"output": {"ok": True}}}
    _agree_under_every_limit(prog, {}, script)
    compiled = [lp for lp in prog.loops.values() if lp is not None]
    assert len(compiled) == 7   # five filters, two maps
    assert sum(1 for lp in compiled if lp.keep) == 5


def test_corpus_under_every_limit():
    for _name, data, inputs, script in corpus_programs():
        _agree_under_every_limit(V.load(data), inputs, script, count=60)


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


def _item_loop(op):
    """Main only: map (APPEND) or filter (KEEP) $inputs.xs by `${item.v}${result}`,
    the expression inside a region whose handler stores the message in
    $result and goes on with the next item."""
    load, field, template = (op + V.ACCESS_STEP * rule for op, rule in (
        (X.LOAD, X.ACCESS.index("wfs")), (X.FIELD, X.ACCESS.index("wfs")), (X.TEMPLATE, X.STRINGIFY.index("wfs"))))
    # names: xs 0, v 1, inputs 2, item 3, result 4
    head = _op("EXPR", ("raw", bytes([load, field, X.RETURN]), [2], [0])) + _op("ITER")
    loop = len(head)
    # a form holds LOAD's name (a root), the block FIELD's
    body = _op("EXPR", ("raw", bytes([load, field, load, template, X.RETURN]), [3, 4, 2], [1]))
    nxt_len = len(_op("NEXT", 0, 0))
    start = loop + nxt_len
    end = start + len(body)
    handler = end + len(_op(op)) + len(_op("JUMP", loop))
    done = handler + len(_op("SET_RESULT")) + len(_op("JUMP", loop))
    code = (head + _op("NEXT", done, 0) + body + _op(op) + _op("JUMP", loop) + _op("SET_RESULT")
            + _op("JUMP", loop) + _op("COLLECT") + _op("FINISH"))
    assert len(code) == done + 2 and done < 128
    return V.load(_assemble_custom(code, names=("xs", "v", "inputs", "item", "result"),
                                   regions=[(start, end, handler, 1)]))


@pytest.mark.parametrize("op", ["APPEND", "KEEP"])
def test_items_that_fail_go_to_the_interpreter(op):
    """bytes are no JSON value: their template fails; the handler changes
    $result, which the expression reads (the compiled loop is built again)."""
    prog = _item_loop(op)
    xs = [{"v": 1}, {"v": b"x"}, {"v": "a"}, {"v": ""}, {"v": b"y"}, {"v": [1, 2]}, {}, {"v": None}]
    used = _agree_under_every_limit(prog, {"xs": xs}, {})
    assert used and [lp for lp in prog.loops.values() if lp is not None]
    record = json.loads(_run(prog, {"xs": xs}, {}, True)[0])
    assert record["status"] == "success"
    msg = "not a JSON value: bytes"
    if op == "APPEND":
        assert record["outputs"] == ["1", "a" + msg, msg, "[1,2]" + msg, msg, msg]
    else:
        assert record["outputs"] == [x for x in xs if not isinstance(x.get("v"), bytes)]
    for seed in range(3):
        rng = random.Random(seed)
        many = [rng.choice(xs) for _ in range(200)]
        _agree_under_every_limit(prog, {"xs": many}, {}, count=100)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEST, st.lists(st.one_of(ATOM, COMPARISON), min_size=1, max_size=3), ITEMS, VALUE, VALUE,
       st.integers(0, 400), st.integers(0, 6))
def test_generated_loops_agree_under_limits(where, values, items, n, s, max_instructions, max_iterations):
    result = driver.compile_text(_generated(where, values), "probe.yaml", "workflowskill")
    if not result.ok:
        return
    prog = V.load(compile_workflow(result.workflow))
    script = {"src": {"output": {"items": items * 3, "n": n, "s": s}}}
    assert _run(prog, {}, script, True) == _run(prog, {}, script, False)
    assert (_run(prog, {}, script, True, max_instructions, max_iterations)
            == _run(prog, {}, script, False, max_instructions, max_iterations))


def test_a_loop_compiles_the_block_its_expr_runs():
    """compile_loop reads the EXPR's block of the expression machine
    (machine.source) into the tree; an iteration costs NEXT, the block's
    instructions but its RETURN, KEEP or APPEND, and JUMP."""
    _wf, prog = _benchmark()
    code = prog.decoded()
    loops = [(at, V.compile_loop(prog, at)) for at, ins in enumerate(code) if ins[0] == V.NEXT]
    assert len([lp for _at, lp in loops if lp is not None]) == 7
    for at, lp in loops:
        decoded = prog.machine.source(code[code[at][4]][1])[0]
        assert lp.cost == 1 + (len(decoded) - 1) + 2
        assert lp.keep == (code[code[code[at][4]][4]][0] == V.KEEP)


@pytest.mark.parametrize("root", ["nope", "@final"])
def test_a_block_the_compiler_does_not_take_runs_on_the_interpreter(root):
    """A loop body reading no WorkflowSkill root (an unknown one fails, the
    run's final value is no item's) is left to the interpreter: the same records."""
    load = X.LOAD + V.ACCESS_STEP * X.ACCESS.index("wfs")
    field = X.FIELD + V.ACCESS_STEP * X.ACCESS.index("wfs")
    # names: xs 0, inputs 1, the root 2
    code = (_op("EXPR", ("raw", bytes([load, field, X.RETURN]), [1], [0])) + _op("ITER") + _op("NEXT", 6, 0)
            + _op("EXPR", ("raw", bytes([load, X.RETURN]), [2])) + _op("KEEP") + _op("JUMP", 2) + _op("COLLECT")
            + _op("FINISH"))
    prog = V.load(_assemble_custom(code, names=("xs", "inputs", root)))
    prog.decoded()
    assert V.compile_loop(prog, 2) is None
    inputs = {"xs": [1, 2, 3]}
    _agree_under_every_limit(prog, inputs, {})
    record = json.loads(_run(prog, inputs, {}, True)[0])
    if root == "nope":
        assert record["error"]["message"] == "Unknown reference: $nope"
    else:
        assert record["outputs"] == []     # no final value yet: null is false
