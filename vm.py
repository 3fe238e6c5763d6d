"""``python -m flowc.vm``: the embeddable VM's own command.

    python -m flowc.vm --bundle DIR [--dialect D] [--small] [--readable]
    python -m flowc.vm PROGRAM [--inputs FILE] [--host FILE] [--max-... N]

The first writes ``DIR/flowc_vm.py``, the one file a device needs to load,
verify and run bytecode (``flowc bundle DIR``); the second runs a bytecode
file (``flowc exec PROGRAM``). Both are the ``flowc`` commands, under the
VM's name.
"""

from __future__ import annotations

import sys

from flowc.cli import main as flowc_main


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--bundle" in args:
        at = args.index("--bundle")
        return flowc_main(["bundle", *args[at + 1:at + 2], *args[:at], *args[at + 2:]])
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip().split("\n\n")[1])
        return 0
    return flowc_main(["exec", *args])


if __name__ == "__main__":
    raise SystemExit(main())
