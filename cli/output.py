"""Writing a command's result and its errors: to a file or standard output,
workflow text always through :mod:`flowc.termtext`."""

from __future__ import annotations

import sys

from flowc.cli.exits import EXIT_USAGE


def backend_error(path: str, exc: Exception) -> None:
    """A backend's refusal on stderr; its message may quote workflow text."""
    from flowc.termtext import shown

    print(shown(f"{path}: error: {exc}"), file=sys.stderr)


def usage_error(message: str) -> int:
    """``flowc: error: MESSAGE`` on stderr (it may quote a file): exit 2."""
    from flowc.termtext import shown

    print(shown(f"flowc: error: {message}"), file=sys.stderr)
    return EXIT_USAGE


def fail(message: str, status: int = EXIT_USAGE) -> int:
    """``flowc: MESSAGE`` on stderr, every line shown safely; returns ``status``."""
    from flowc.termtext import shown_lines

    # Graphviz's own messages may quote the picture's text
    print(f"flowc: {shown_lines(message)}", file=sys.stderr)
    return status


def write(out_path: str | None, data: str | bytes) -> None:
    """``data`` into ``out_path``, or to standard output (none, or ``-``)."""
    if out_path and out_path != "-":
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(out_path, mode, **({} if isinstance(data, bytes) else {"encoding": "utf-8"})) as fh:
            fh.write(data)
    elif isinstance(data, bytes):
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        sys.stdout.write(data)
