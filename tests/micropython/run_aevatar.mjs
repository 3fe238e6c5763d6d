// Evaluates compiled aevatar expressions on MicroPython (the official WebAssembly
// port) under node, with runtime/aevatar_text.py copied in unmodified.
//
//   node run_aevatar.mjs RT_AEVATAR_PY JOBS_JSON
//
// JOBS_JSON is a list of {"id", "src", "vars"}: src is the Python expression
// flowc compiled (over _rta and V). Prints one JSON line per job:
// {"id": ..., "value": ...} or {"id": ..., "error": ...}.
import fs from "node:fs";
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
const [rtPath, jobsPath] = process.argv.slice(2);
let out = "";
const mp = await loadMicroPython({ heapsize: 64 * 1024 * 1024, stdout: (l) => { out += l + "\n"; }, stderr: (l) => process.stderr.write(l + "\n") });
mp.FS.writeFile("/aevatar_text.py", fs.readFileSync(rtPath));
mp.FS.writeFile("/jobs.json", fs.readFileSync(jobsPath));
try {
  mp.runPython(`
import sys, json
sys.path.append('/')
import aevatar_text as _rta
jobs = json.load(open('/jobs.json'))
for job in jobs:
    V = job['vars']
    g = {'_rta': _rta, 'V': V}
    try:
        r = eval(job['src'], g)
        print(json.dumps({'id': job['id'], 'value': r}))
    except Exception as e:
        print(json.dumps({'id': job['id'], 'error': str(e)}))
`);
} catch (err) { process.stdout.write(out); console.error(String(err)); process.exit(1); }
process.stdout.write(out);
