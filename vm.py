"""``flowc.vm``: the bytecode VM (see docs/bytecode.md).

``program = flowc.vm.load(data)`` verifies bytecode; ``program.run(inputs,
host)`` returns the run record. ``python -m flowc.vm PROGRAM.wfb --inputs
in.json --host script.json`` runs a file with a scripted host;
``python -m flowc.vm --bundle DIR [--dialect D]`` writes the one file a
device needs to load and run programs of every kind, or of one dialect
(docs/embedding.md).
"""

import sys

from flowc.backends.vm import load
from flowc.backends.vm.vm import MISSING, Program, VerifyError, VMError, run
from flowc.backends.vm.vm import main as _main

__all__ = ["MISSING", "Program", "VMError", "VerifyError", "load", "main", "run"]


def main(argv=None) -> int:
    """Run any flowc program (any scheduling model: sequential, kernel,
    dataflow), or write the device bundle (``--bundle DIR``)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] == "--bundle":
        return _write_bundle(args[1:])
    status = _main(args, loader=load)
    if "-h" in args or "--help" in args:
        sys.stdout.write("\nor: " + _BUNDLE_USAGE.removeprefix("usage: ")
                         + "    write flowc_vm.py, the VM as one file for a device (docs/embedding.md)\n")
    return status


_BUNDLE_USAGE = "usage: python -m flowc.vm --bundle DIR [--dialect workflowskill|aevatar|instruction]\n"


def _write_bundle(args: list[str]) -> int:
    from flowc.backends.vm.bundle import DIALECT_ENTRIES, BundleError, write_bundle

    dialect = None
    if len(args) == 3 and args[1] == "--dialect" and args[2] in DIALECT_ENTRIES:
        dialect = args[2]
    elif len(args) != 1:
        sys.stderr.write(_BUNDLE_USAGE)
        return 2
    try:
        path, bundle = write_bundle(args[0], dialect)
    except (BundleError, OSError) as exc:
        sys.stderr.write(f"flowc.vm: error: {exc}\n")
        return 1
    print(f"wrote {path}: {bundle.size} bytes from {len(bundle.modules)} modules "
          f"of {bundle.source_bytes} bytes of source")
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
