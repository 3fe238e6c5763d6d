"""``flowc disasm``: list bytecode, with the source lines it came from."""

from __future__ import annotations

import sys

from flowc.cli.exits import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from flowc.cli.output import backend_error


def add_parser(sub) -> None:
    dis = sub.add_parser("disasm", help="list bytecode: constants, names, steps and code with source lines")
    dis.add_argument("path", metavar="PROGRAM", help="a bytecode file (flowc compile --target bytecode)")
    dis.add_argument("--source-root", metavar="DIR", help="where to look for the source file it names")
    dis.set_defaults(func=run)


def read_program(path: str) -> bytes | None:
    """The bytes of a bytecode file (at most MAX_SOURCE_BYTES), or None
    after saying why they cannot be read."""
    from flowc.ir.limits import MAX_SOURCE_BYTES
    from flowc.sourcefile import FileTooLarge, read_limited

    try:
        return read_limited(path, MAX_SOURCE_BYTES)
    except FileTooLarge:
        print(f"flowc: error: {path} is larger than {MAX_SOURCE_BYTES} bytes", file=sys.stderr)
    except OSError as exc:
        print(f"flowc: error: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
    return None


def run(args) -> int:
    from flowc.backends.vm import VMError, disassemble

    data = read_program(args.path)
    if data is None:
        return EXIT_USAGE
    try:
        text = disassemble(data, args.source_root)
    except VMError as exc:
        backend_error(args.path, exc)
        return EXIT_FINDINGS
    from flowc.termtext import shown_lines

    sys.stdout.write(shown_lines(text))  # the listings escape names; this fences the rest
    return EXIT_OK
