"""Reading a file named by the user, safely: regular files only, bounded.

A path on the command line (or found walking a directory) may name a FIFO,
a socket or a device such as /dev/zero. Opening a FIFO for reading blocks
until a writer comes; reading /dev/zero never ends. So a file is read only
when it is a regular file: ``os.stat`` says so before it is opened, and the
open is non-blocking (``O_NONBLOCK``) with ``fstat`` asking again, so a
path swapped for a FIFO in between cannot block either. At most ``limit +
1`` bytes are read, so an oversized file costs no more than the limit.
"""

from __future__ import annotations

import os
import stat

__all__ = ["FileTooLarge", "NotRegularFile", "read_limited"]

_CHUNK = 1 << 20


class NotRegularFile(OSError):
    """The path names a FIFO, a socket, a device or a directory."""

    def __init__(self, path: str, what: str) -> None:
        super().__init__(f"{path} is {what}, not a regular file")
        self.strerror = f"it is {what}, not a regular file"
        self.what = what


class FileTooLarge(Exception):
    """The file holds more than the limit's bytes."""

    def __init__(self, path: str, limit: int) -> None:
        super().__init__(f"{path} is larger than {limit} bytes")
        self.limit = limit


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def read_limited(path: str, limit: int) -> bytes:
    """The bytes of the regular file ``path``. Raises :class:`NotRegularFile`
    (without opening it) for anything else, :class:`FileTooLarge` when it
    holds more than ``limit`` bytes, and ``OSError`` when it can't be read."""
    what = _kind(os.stat(path).st_mode)
    if what is not None:
        raise NotRegularFile(path, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | \
        getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        what = _kind(os.fstat(fd).st_mode)
        if what is not None:  # replaced between stat and open
            raise NotRegularFile(path, what)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise FileTooLarge(path, limit)
        return b"".join(chunks)
    finally:
        os.close(fd)
