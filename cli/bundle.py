"""``flowc bundle``: the VM as one file, ``flowc_vm.py``, for a device (docs/embedding.md)."""

from __future__ import annotations

import sys

from flowc.cli.exits import EXIT_FAILED, EXIT_OK
from flowc.cli.options import DIALECTS


def add_parser(sub) -> None:
    bundle = sub.add_parser("bundle", help="write flowc_vm.py, the VM as one file for a device (MicroPython)")
    bundle.add_argument("directory", metavar="DIR", help="where to write flowc_vm.py (created when missing)")
    bundle.add_argument("--dialect", choices=DIALECTS,
                        help="the VM of this dialect's programs only (default: every dialect)")
    bundle.add_argument("--small", action="store_true",
                        help="leave out the optional speed-ups (the compiled filter/map loops): the same records, "
                             "a smaller file, slower loops")
    bundle.add_argument("--readable", action="store_true",
                        help="keep the modules' own names and one statement a line (larger; tracebacks name "
                             "the source's functions and variables)")
    bundle.set_defaults(func=run)


def run(args) -> int:
    from flowc.backends.vm.bundle import BundleError, write_bundle

    try:
        path, bundle = write_bundle(args.directory, args.dialect, minify=not args.readable, small=args.small)
    except (BundleError, OSError) as exc:
        print(f"flowc: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"wrote {path}: {bundle.size} bytes from {len(bundle.modules)} modules "
          f"of {bundle.source_bytes} bytes of source")
    return EXIT_OK
