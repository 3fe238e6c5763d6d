"""A journaled run in its own process, for the crash tests (tests/test_journal_crash.py).

    python journal_child.py SPEC.json start|resume

SPEC: {"db", "run_id", "workflow", "backend", "inputs", "script", "effects",
"kill": [call number, "before" | "after"] or null, "call_ms", "in_flight"}.

The host has a side effect: every call appends one line (its idempotency
key, capability and name) to the ``effects`` file and fsyncs it, then
answers from a script without lists (so an answer depends on the call
only, and a call sent again gets the answer it got the first time). With
``kill``, the process kills itself with SIGKILL at that call of this
process, before or after the side effect. The record and the repeated
calls are printed as JSON.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

from flowc import journal
from flowc.host import ScriptedHost
from flowc.pipeline import driver


class EffectHost:
    def __init__(self, spec: dict) -> None:
        self.script = ScriptedHost(spec["script"])
        self.path = spec["effects"]
        self.kill = spec.get("kill")
        self.call_ms = spec.get("call_ms", 0)
        self.n = 0

    def _maybe_die(self, phase: str) -> None:
        if self.kill is not None and self.kill == [self.n, phase]:
            os.kill(os.getpid(), signal.SIGKILL)

    def call(self, capability, name, args, idempotency_key=None):
        self.n += 1
        self._maybe_die("before")
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps([idempotency_key, capability, name]) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self._maybe_die("after")
        if self.call_ms:
            time.sleep(self.call_ms / 1000)
        return self.script.call(capability, name, args)

    def sleep(self, ms):
        time.sleep(min(ms, 20) / 1000)  # a sleep in this test stands for time passing, briefly


def program(spec: dict):
    workflow = driver.compile_file(spec["workflow"]).workflow
    if spec["backend"] == "vm":
        from flowc.backends import vm

        return vm.load(vm.compile_workflow(workflow))
    from flowc.backends.python import compile_workflow, load_module

    return load_module(compile_workflow(workflow))


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as fh:
        spec = json.load(fh)
    prog = program(spec)
    store = journal.open_journal(spec["db"])
    host = EffectHost(spec)

    def new_run():
        return prog.new_run(dict(spec["inputs"]))

    with open(spec["workflow"], "rb") as fh:
        whash = journal.workflow_hash(fh.read())
    if sys.argv[2] == "start":
        journal.begin(store, workflow=spec["workflow"], workflow_hash=whash, inputs=spec["inputs"],
                      run_id=spec["run_id"])
        outcome = journal.drive(store, spec["run_id"], new_run, host)
    else:
        outcome = journal.resume(store, spec["run_id"], new_run, host, workflow_hash=whash,
                                 in_flight=spec.get("in_flight", "again"))
    print(json.dumps({"record": outcome.record, "repeated": outcome.repeated, "notes": outcome.notes},
                     default=repr))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
