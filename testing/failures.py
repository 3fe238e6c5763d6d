"""The exceptions the fuzzing properties raise, shared by
:mod:`flowc.testing.properties` and :mod:`flowc.testing.translation`."""

from __future__ import annotations

import json
import traceback
from typing import Any

__all__ = ["PropertyFailure", "Unsupported"]


class PropertyFailure(AssertionError):
    """A property that does not hold for an example."""

    def __init__(self, prop: str, message: str, crash: bool = False) -> None:
        super().__init__(f"[{prop}] {message}")
        self.prop = prop
        self.message = message
        self.crash = crash  # an unhandled exception or a hang, not a wrong answer


class Unsupported(Exception):
    """The property does not apply (a backend does not run this dialect)."""

    def __init__(self, prop: str, reason: str) -> None:
        super().__init__(f"[{prop}] {reason}")
        self.prop = prop
        self.reason = reason


def _fail(prop: str, message: str):
    raise PropertyFailure(prop, message)


def _crash(prop: str, what: str, exc: BaseException):
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-8))
    raise PropertyFailure(prop, f"{what} raised {type(exc).__name__}: {exc}\n{tb}", crash=True) from exc


def _canonical(record: Any) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, default=repr)
