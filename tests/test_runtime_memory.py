"""A device loads and runs program after program on a small heap: nothing
of a finished run may stay reachable from the runtime (a module-wide memo of
plan indexes once kept every plan run, up to 256 of them)."""

from __future__ import annotations

import gc
import tracemalloc

from flowc.backends.vm import load
from flowc.host import ScriptedHost
from flowc.runtime import edges as E

from tests.test_bundle import sample_jobs


def _run_every_job_afresh(jobs: list[list]) -> None:
    for _name, data, inputs, script in jobs:
        load(data).run(inputs, ScriptedHost(script))


def _heap_after(rounds: int, jobs: list[list]) -> int:
    for _ in range(rounds):
        _run_every_job_afresh(jobs)
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_runs_of_fresh_programs_leave_nothing_behind():
    jobs = sample_jobs()   # every dialect: sequential, routing and dataflow programs
    _run_every_job_afresh(jobs)   # first-use caches (compiled patterns, interned names) fill here
    tracemalloc.start()
    try:
        first = _heap_after(1, jobs)
        later = _heap_after(5, jobs)
    finally:
        tracemalloc.stop()
    # five more rounds of a dozen fresh plans: a kept index per plan would
    # hold tens of kilobytes; allow only allocator noise
    assert later - first < 8_000, f"{later - first} bytes more after five more rounds"


def test_a_runs_memo_indexes_each_graph_once():
    graph = {"nodes": [{"id": "a"}, {"id": "b"}], "edges": [["a", "b", "sequence", None]]}
    memo: dict = {}
    first = E.edges_of(graph, memo)
    assert E.edges_of(graph, memo) is first   # a body run once per item is indexed once
    twin = {"nodes": list(graph["nodes"]), "edges": list(graph["edges"])}
    assert E.edges_of(twin, memo) is not first and E.edges_of(twin, memo).successor == {"a": "b"}
    assert E.edges_of(graph, {}) is not first  # another run indexes it again
    assert not [name for name, value in vars(E).items() if isinstance(value, dict) and not name.startswith("__")]
