"""``flowc.vm``: the bytecode VM (see docs/bytecode.md).

``program = flowc.vm.load(data)`` verifies bytecode; ``program.run(inputs,
host)`` returns the run record. ``python -m flowc.vm PROGRAM.wfb --inputs
in.json --host script.json`` runs a file with a scripted host.
"""

from flowc.backends.vm import load
from flowc.backends.vm.vm import MISSING, Program, VerifyError, VMError, run
from flowc.backends.vm.vm import main as _main

__all__ = ["MISSING", "Program", "VMError", "VerifyError", "load", "main", "run"]


def main(argv=None) -> int:
    """Run any flowc program (any scheduling model: sequential, kernel, dataflow)."""
    return _main(argv, loader=load)

if __name__ == "__main__":
    raise SystemExit(main())
