// Runs flowc programs of every dialect on MicroPython (the official
// WebAssembly port) under node, with the VM bundle (`flowc bundle
// DIR`) as the only flowc file.
//
//   node run_bundle.mjs HEAP_BYTES BUNDLE_PY DRIVER_PY JOBS_BIN [EXTRA_PY...]
//
// HEAP_BYTES is MicroPython's garbage-collected heap (loadMicroPython's
// heapsize); BUNDLE_PY is written as /flowc_vm.py, DRIVER_PY as
// /mp_driver.py (its main(path) runs the jobs), each EXTRA_PY under its own
// name. Prints the driver's lines, then {"heap": {"initial", "resident",
// "final"}}: the heap's size at the start, the bytes the loaded bundle keeps
// (after a collection) and the heap's size at the end. This port collects
// only between two top-level calls and grows its heap instead inside one,
// so "final" is what the run allocated, garbage included, not a minimum
// heap (benchmarks/bench_bundle.py measures that on the unix port). A
// MemoryError or any other exception
// exits with status 1 and the message on stderr.
import fs from "node:fs";
import path from "node:path";
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";

const [heap, bundlePath, driverPath, jobsPath, ...extra] = process.argv.slice(2);
if (!heap || !bundlePath || !driverPath || !jobsPath) {
  console.error("usage: node run_bundle.mjs HEAP_BYTES BUNDLE_PY DRIVER_PY JOBS_BIN [EXTRA_PY...]");
  process.exit(2);
}
let out = "";
const gcTotals = [];
const mp = await loadMicroPython({
  heapsize: parseInt(heap, 10),
  stdout: (line) => {
    const total = /^GC: total: (\d+),/.exec(line);
    if (total) { gcTotals.push(parseInt(total[1], 10)); return; }
    if (/^(stack: | No\. of)/.test(line)) return;
    out += line + "\n";
  },
  stderr: (line) => { process.stderr.write(line + "\n"); },
});
mp.FS.writeFile("/flowc_vm.py", fs.readFileSync(bundlePath));
mp.FS.writeFile("/mp_driver.py", fs.readFileSync(driverPath));
for (const m of extra) {
  mp.FS.writeFile("/" + path.basename(m), fs.readFileSync(m));
}
mp.FS.writeFile("/jobs.bin", fs.readFileSync(jobsPath));
// The port collects garbage only between two runPython calls (inside one it
// adds heap areas instead), so the steps are separate calls: the resident
// heap is measured after the import, at the top level, after a collection.
let resident = -1;
try {
  mp.runPython("import micropython\nmicropython.mem_info()\n");
  mp.runPython("import sys\nsys.path.append('/')\nimport mp_driver\n");
  mp.runPython("import gc\n_resident = gc.mem_alloc()\n");
  resident = mp.globals.get("_resident");
  mp.runPython("mp_driver.main('/jobs.bin')\nmicropython.mem_info()\n");
} catch (err) {
  process.stdout.write(out);
  console.error(String(err && err.message ? err.message : err));
  process.exit(1);
}
out += JSON.stringify({ heap: { initial: gcTotals[0], resident: resident, final: gcTotals[gcTotals.length - 1] } }) + "\n";
process.stdout.write(out);
