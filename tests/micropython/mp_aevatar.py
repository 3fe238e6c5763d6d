"""MicroPython side of the aevatar VM portability test: load and run each
aevatar program with the VM bundle (flowc_vm.py) against mp_host's scripted host
(flowc.host.ScriptedHost's semantics). Prints one JSON line per job, written
by the kernel's own JSON writer (json_dumps: object key order kept, which
MicroPython's json does not)."""

import flowc_vm as V
import mp_host


def main(path):
    with open(path, "rb") as fh:
        jobs = V.unpackb(fh.read())
    for name, data, inputs, script, limits in jobs:
        try:
            program = V.load(data)
            record = program.run(inputs, mp_host.ScriptedHost(script), limits[0], limits[1])
            line = V.json_dumps({"name": name, "record": record})
        except V.VMError as exc:
            line = V.json_dumps({"name": name, "error": type(exc).__name__ + ": " + exc.message})
        print(line)
