"""MicroPython side of the aevatar VM portability test: load and run each
aevatar program (backends/vm/aevatar_vm.py with expr_vm.py, rt_aevatar.py,
rt_aevatar_run.py and vm.py beside it) against mp_host's scripted host
(flowc.host.ScriptedHost's semantics). Prints one JSON line per job, written
by the kernel's own JSON writer (json_dumps: object key order kept, which
MicroPython's json does not)."""

import aevatar_vm
import mp_host
import rt_aevatar_run

import vm


def main(path):
    with open(path, "rb") as fh:
        jobs = vm.unpackb(fh.read())
    for name, data, inputs, script, limits in jobs:
        try:
            program = aevatar_vm.load(data)
            record = program.run(inputs, mp_host.ScriptedHost(script), limits[0], limits[1])
            line = rt_aevatar_run.json_dumps({"name": name, "record": record})
        except vm.VMError as exc:
            line = rt_aevatar_run.json_dumps({"name": name, "error": type(exc).__name__ + ": " + exc.message})
        print(line)
