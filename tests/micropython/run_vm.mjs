// Runs flowc bytecode on MicroPython (the official WebAssembly port) under node.
//
//   node run_vm.mjs VM_PY HOST_PY JOBS_BIN MODULE_PY...
//
// VM_PY is the VM bundle (flowc bundle DIR), written as
// /flowc_vm.py into MicroPython's file system; HOST_PY is mp_host.py (a scripted host for MicroPython); JOBS_BIN
// is a msgpack array of [name, bytecode, inputs, host script] jobs. Prints
// one JSON line per job: {"name": ..., "record": ...} or {"name": ..., "error": ...}.
import fs from "node:fs";
import path from "node:path";
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";

const [vmPath, hostPath, jobsPath, ...modules] = process.argv.slice(2);
if (!vmPath || !hostPath || !jobsPath) {
  console.error("usage: node run_vm.mjs VM_PY HOST_PY JOBS_BIN MODULE_PY...");
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
mp.FS.writeFile("/flowc_vm.py", fs.readFileSync(vmPath));
mp.FS.writeFile("/mp_host.py", fs.readFileSync(hostPath));
mp.FS.writeFile("/jobs.bin", fs.readFileSync(jobsPath));
try {
  mp.runPython("import sys\nsys.path.append('/')\nimport mp_host\nmp_host.main('/jobs.bin')\n");
} catch (err) {
  process.stdout.write(out);
  console.error(String(err && err.message ? err.message : err));
  process.exit(1);
}
process.stdout.write(out);
