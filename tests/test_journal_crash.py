"""Crash tests of durable runs with real processes (docs/durable.md).

Each trial runs a corpus workflow of one of the three dialects, on either
backend, in a child process (tests/journal_child.py) whose host has a side
effect: every call appends a line (its idempotency key) to a file. The
child is killed with SIGKILL at a seeded random point: by itself at a
chosen call, before or after the side effect, or by this process at a
random moment once the run has started; sometimes the resumed run is
killed again. Then the run is resumed (in another process) to its end, and:

- the final record equals the record of one uninterrupted run without a journal;
- every answered call was executed exactly once; a call executed more
  often was in flight at a crash, and the resume reported it;
- what a resume reported as sent again is in the journal (with one crash,
  exactly what the journal holds).

The campaign's size (tests/campaigns.py): 20 trials in CI, the full
campaign of 200 with FLOWC_SLOW_TESTS=1.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import flowc
import pytest
from campaigns import campaign_size
from flowc import journal
from journal_cases import CASES, backends, compiled, reference, script_for

CHILD = Path(__file__).resolve().parent / "journal_child.py"
ENV = dict(os.environ, PYTHONPATH=str(Path(flowc.__file__).resolve().parent.parent))
SEED = 20261201


def _child(spec: dict, mode: str, tmp: Path, timed_kill: float | None = None) -> dict | None:
    """Run the child; its output, or None when it was killed."""
    path = tmp / f"spec-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(CHILD), str(path), mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=ENV, text=True)
    if timed_kill is not None:
        effects = Path(spec["effects"])
        start = time.monotonic()
        while proc.poll() is None and not (effects.exists() and effects.stat().st_size) \
                and time.monotonic() - start < 30:
            time.sleep(0.002)
        time.sleep(timed_kill)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    if proc.returncode == -signal.SIGKILL:
        return None
    assert proc.returncode == 0, err
    return json.loads(out)


def _effects(path: Path) -> Counter:
    if not path.exists():
        return Counter()
    return Counter(json.loads(line)[0] for line in path.read_text(encoding="utf-8").splitlines())


def trial(i: int, tmp: Path) -> dict:
    rng = random.Random(SEED + i)
    rel, inputs, extra = rng.choice(CASES)
    workflow = compiled(rel)
    backend = rng.choice(backends(workflow))
    ref = reference(rel, inputs, extra, backend)
    n_calls = len(ref["calls"])
    run_id = f"t{i}"
    here = tmp / run_id
    here.mkdir()
    spec = {"db": str(here / "runs.db"), "run_id": run_id, "workflow": str(compiled_path(rel)),
            "backend": backend, "inputs": inputs, "script": script_for(workflow, extra),
            "effects": str(here / "effects.txt"), "kill": None, "call_ms": 0}
    timed = None
    if n_calls and rng.random() < 0.6:
        spec["kill"] = [rng.randint(1, n_calls), rng.choice(["before", "after"])]
    else:
        spec["call_ms"] = 3
        timed = rng.uniform(0, 0.004 * max(n_calls, 1))
    kills = 0
    out = _child(spec, "start", here, timed)
    repeated: list[dict] = []
    while out is None:
        kills += 1
        again = dict(spec, kill=None, call_ms=0)
        if kills < 3 and n_calls and rng.random() < 0.3:
            again["kill"] = [rng.randint(1, n_calls), rng.choice(["before", "after"])]
        if not Path(spec["db"]).exists() or not journal.open_journal(spec["db"]).runs():
            out = _child(again, "start", here)  # killed before the run was recorded: nothing to resume
            continue
        out = _child(again, "resume", here)
        if out is not None:
            repeated += out["repeated"]
    # 1. the same record as one uninterrupted run
    assert json.dumps(out["record"], sort_keys=True) == json.dumps(ref, sort_keys=True), (rel, backend, spec)
    # 2. answered calls ran once; only calls reported as in flight ran again
    store = journal.open_journal(spec["db"])
    entries, _notes = store.entries(run_id)
    answered = {e.request_id for e in entries if e.kind == "answer"}
    calls = {e.request_id for e in entries if e.kind in ("request", "repeat") and e.body["kind"] == "call"}
    repeats = Counter(e.request_id for e in entries if e.kind == "repeat" and e.body["kind"] == "call")
    seen = _effects(Path(spec["effects"]))
    for key, count in seen.items():
        rid = int(key.split(":")[1])
        assert key.split(":")[0] == run_id and rid in calls, key
        assert count <= 1 + repeats[rid], (key, count, repeats)
    for rid in answered & calls:
        assert seen[f"{run_id}:{rid}"] >= 1
    # 3. a resume reports the calls it sent again (one killed later cannot:
    # the journal's repeat entries, which `flowc runs show` lists, still hold them)
    reported = Counter(r["request"] for r in repeated)
    assert reported & repeats == reported, (reported, repeats)
    if kills == 1:
        assert reported == repeats
    return {"kills": kills, "repeated": sum(repeats.values()), "dialect": workflow.dialect, "backend": backend}


def compiled_path(rel: str) -> Path:
    return Path(__file__).resolve().parent / "data" / rel


def campaign(trials: int, tmp: Path) -> Counter:
    """Run the trials, a few at once (each waits on fsync and child processes)."""
    from concurrent.futures import ThreadPoolExecutor

    seen: Counter = Counter()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda i: trial(i, tmp), range(trials)))
    for got in results:
        seen["kills"] += got["kills"]
        seen["repeated"] += got["repeated"]
        seen[got["dialect"]] += 1
        seen[got["backend"]] += 1
    return seen


@pytest.mark.slow
def test_crash_campaign(tmp_path):
    """20 trials in CI; the full campaign, 200, with FLOWC_SLOW_TESTS=1."""
    trials = campaign_size(200, 20)
    seen = campaign(trials, tmp_path)
    assert seen["kills"] >= trials // 2 and seen["vm"] and seen["python"], seen  # it really crashed runs
    if trials >= 200:
        assert seen["repeated"] > 0, seen
        assert seen["workflowskill"] and seen["aevatar"] and seen["instruction"], seen
