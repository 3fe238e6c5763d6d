// Runs flowc dataflow programs (instruction workflows compiled for the VM)
// on MicroPython (the official WebAssembly port) under node.
//
//   node run_dataflow.mjs DRIVER_PY JOBS_BIN MODULE_PY...
//
// Each MODULE_PY (the VM bundle flowc_vm.py, written by flowc bundle
// DIR, and helpers such as mp_host.py) is copied into MicroPython's
// file system under its own name; DRIVER_PY is mp_dataflow.py (or another
// driver with a main(path)); JOBS_BIN is a msgpack array of
// [name, program, inputs, host script, trigger, payload] jobs. Prints one
// JSON line per job: {"name": ..., "record": ...} or {"name": ..., "error": ...}.
import fs from "node:fs";
import path from "node:path";
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";

const [driverPath, jobsPath, ...modules] = process.argv.slice(2);
if (!driverPath || !jobsPath || modules.length === 0) {
  console.error("usage: node run_dataflow.mjs DRIVER_PY JOBS_BIN MODULE_PY...");
  process.exit(2);
}
let out = "";
const mp = await loadMicroPython({
  heapsize: 256 * 1024 * 1024,
  stdout: (line) => { out += line + "\n"; },
  stderr: (line) => { process.stderr.write(line + "\n"); },
});
for (const m of modules) {
  mp.FS.writeFile("/" + path.basename(m), fs.readFileSync(m));
}
mp.FS.writeFile("/mp_dataflow.py", fs.readFileSync(driverPath));
mp.FS.writeFile("/jobs.bin", fs.readFileSync(jobsPath));
try {
  mp.runPython("import sys\nsys.path.append('/')\nimport mp_dataflow\nmp_dataflow.main('/jobs.bin')\n");
} catch (err) {
  process.stdout.write(out);
  console.error(String(err && err.message ? err.message : err));
  process.exit(1);
}
process.stdout.write(out);
