"""Run cel with a probe script under MicroPython (the WebAssembly port
installed in tests/micropython by `npm ci`): the probe's `check(...)` lines
print `ok ...` or `FAIL ...`. Fails, never skips, without node or the port."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from flowc.runtime import cel, nfa

# resolved: node runs the port's command line only when the path it is given
# is the module's real path (node_modules may be a symbolic link)
MICROPYTHON = (Path(__file__).resolve().parent / "micropython" / "node_modules" / "@micropython"
               / "micropython-webassembly-pyscript" / "micropython.mjs").resolve()


def assert_cel_probe_passes(tmp_path: Path, probe: str) -> None:
    assert shutil.which("node") is not None, "node is not installed"
    assert MICROPYTHON.is_file(), "run `npm ci` in tests/micropython"
    script = tmp_path / "probe.py"
    # cel imports nfa: the script first writes it into MicroPython's file system.
    prologue = (f"open('/nfa.py', 'w').write({Path(nfa.__file__).read_text(encoding='utf-8')!r})\n"
                "import sys\nsys.path.append('/')\n")
    script.write_text(prologue + Path(cel.__file__).read_text(encoding="utf-8") + probe, encoding="utf-8")
    done = subprocess.run(["node", str(MICROPYTHON), str(script)], capture_output=True, text=True,
                          timeout=120, check=False)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, done.stdout + done.stderr
    assert all(line.startswith("ok ") for line in lines), done.stdout
    assert len(lines) == probe.count("check(") - 1
