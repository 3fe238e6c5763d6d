"""The job loop of the bundle test, on MicroPython and on CPython alike:
flowc_vm.py (the VM bundle) and mp_host.py (a scripted host) are the only
files it needs. Each job is [name, program, inputs, host script]; prints
one JSON line per job: {"name", "record"} or {"name", "error"}, then a
last line {"flowc_modules": [...]}, the flowc modules that were imported
(none: the bundle stands alone)."""

import json
import sys

import flowc_vm as V
import mp_host

# a bundle of one dialect may lack the CEL runtime's writer (it keeps key
# order); the test compares parsed records, so json.dumps does as well
_dumps = getattr(V, "to_json_text", None) or json.dumps


def main(path):
    with open(path, "rb") as fh:
        jobs = V.unpackb(fh.read())
    for name, data, inputs, script in jobs:
        try:
            record = V.load(data).run(inputs, mp_host.ScriptedHost(script))
            line = _dumps({"name": name, "record": record})
        except V.VMError as exc:
            line = _dumps({"name": name, "error": type(exc).__name__ + ": " + str(exc)})
        print(line)
    loaded = [m for m in sys.modules if m == "flowc" or m.startswith("flowc.")]
    print(_dumps({"flowc_modules": loaded}))
