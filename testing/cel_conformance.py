"""Running the cel-spec conformance cases (tests/data/cel/*.json) through
flowc's compiled CEL.

Each case is ``{"name", "expr", "value" | "error", "bindings"?, ...}``;
values are tagged by type (``{"int": 1}``, ``{"uint": 1}``, ``{"bytes":
"<hex>"}``, ``{"list": [...]}``, ``{"map": [[k, v], ...]}`` ...).

Which cases are out of scope is decided by :func:`exclusion`, a predicate
over the case data alone: cases that need protobuf messages (a
``container`` is set, or the expression constructs or names a message:
``TestAllTypes``, ``NestedTestAllTypes``, ``google.protobuf.*``), or
protobuf enums (``GlobalEnum``, ``NestedEnum``). Cases with a type
environment (``has_type_env``) are *run*, with their bindings: flowc's CEL
is unchecked, so a declaration only matters through the bound value. Every
other case is run; a case passes when a value is expected and the result
has the same CEL type and value, or an error is expected and evaluation
(or parsing) fails. Error messages are not compared.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from flowc.compiler.instruction.cel import CelSyntaxError, parse_cel
from flowc.ir.span import Span
from flowc.runtime import cel as C

__all__ = ["EXCLUSION_RULES", "CaseResult", "FileReport", "decode_value", "exclusion", "load_cases",
           "run_file", "same_value"]

# (reason, predicate over the case) in the order they are tried.
_MESSAGE = re.compile(r"\b(TestAllTypes|NestedTestAllTypes|google\.protobuf\.[A-Za-z0-9_]+)\b")
_ENUM = re.compile(r"\b(GlobalEnum|NestedEnum)\b")
EXCLUSION_RULES: tuple[tuple[str, Callable[[dict], bool]], ...] = (
    ("protobuf message (container set)", lambda case: bool(case.get("container"))),
    ("protobuf message in the expression", lambda case: bool(_MESSAGE.search(case["expr"]))),
    ("protobuf enum", lambda case: bool(_ENUM.search(case["expr"]))),
)

Evaluator = Callable[[Any, dict], Any]


def exclusion(case: dict) -> str | None:
    """Why a case is out of scope, or None when it is run."""
    for reason, applies in EXCLUSION_RULES:
        if applies(case):
            return reason
    return None


def decode_value(tagged: dict) -> Any:
    """A tagged conformance value as a CEL run-time value."""
    if not isinstance(tagged, dict) or len(tagged) != 1:
        raise ValueError(f"not a tagged value: {tagged!r}")
    (kind, v), = tagged.items()
    if kind in ("int", "string", "bool"):
        return v
    if kind == "null":
        return None
    if kind == "uint":
        return C.UInt(v)
    if kind == "double":
        return float(v)
    if kind == "bytes":
        return bytes.fromhex(v)
    if kind == "list":
        return [decode_value(x) for x in v]
    if kind == "map":
        return C.make_map([(decode_value(k), decode_value(x)) for k, x in v])
    if kind == "type":
        return C.TYPES.get(v, C.CelType(v))
    if kind == "duration":
        return C.Duration(v[0] * 1_000_000_000 + v[1])
    if kind == "timestamp":
        return C.Timestamp(v[0] * 1_000_000_000 + v[1])
    raise ValueError(f"unknown value kind {kind!r}")


def same_value(got: Any, want: Any) -> bool:
    """Same CEL type and value, recursively (NaN matches NaN, -0.0 only -0.0)."""
    if C.type_name(got) != C.type_name(want):
        return False
    if isinstance(want, float):
        if math.isnan(want):
            return math.isnan(got)
        return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)
    if isinstance(want, (list, tuple)):
        return len(got) == len(want) and all(same_value(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(want, dict):
        if len(got) != len(want):
            return False
        for k, w in want.items():
            match = [gk for gk in got if C.type_name(gk) == C.type_name(k) and C.eq(gk, k)]
            if len(match) != 1 or not same_value(got[match[0]], w):
                return False
        return True
    return C.eq(got, want)


@attrs.frozen
class CaseResult:
    file: str
    section: str
    name: str
    expr: str
    excluded: str | None
    passed: bool
    detail: str = ""

    @property
    def key(self) -> str:
        return f"{self.section}/{self.name}"


@attrs.frozen
class FileReport:
    file: str
    results: tuple[CaseResult, ...]

    @property
    def run(self) -> list[CaseResult]:
        return [r for r in self.results if r.excluded is None]

    @property
    def excluded(self) -> list[CaseResult]:
        return [r for r in self.results if r.excluded is not None]

    @property
    def passed(self) -> list[CaseResult]:
        return [r for r in self.run if r.passed]

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.run if not r.passed]

    @property
    def rate(self) -> float:
        return len(self.passed) / len(self.run) if self.run else 1.0


def load_cases(path: Path) -> list[tuple[str, dict]]:
    """(section name, case) for every case of a conformance file."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return [(section["name"], case) for section in data["sections"] for case in section["tests"]]


def _run_case(file: str, section: str, case: dict, evaluate: Evaluator) -> CaseResult:
    reason = exclusion(case)
    if reason is not None:
        return CaseResult(file, section, case["name"], case["expr"], reason, False)
    env = {name: decode_value(v) for name, v in case.get("bindings", {}).items()}
    try:
        expr = parse_cel(case["expr"], Span(f"{file}:{case['name']}", 1, 1, 1, 1 + len(case["expr"])))
        outcome = ("value", evaluate(expr, env))
    except CelSyntaxError as e:
        outcome = ("error", "syntax: " + e.message)
    except C.CelError as e:
        outcome = ("error", e.message)
    except Exception as e:  # noqa: BLE001 - a crash is a failed case, reported with its type
        outcome = ("crash", f"{type(e).__name__}: {e}")
    if "value" in case:
        want = decode_value(case["value"])
        ok = outcome[0] == "value" and same_value(outcome[1], want)
        detail = "" if ok else f"want {C.to_text(want)}, got {outcome[0]} {_show(outcome[1])}"
    else:
        ok = outcome[0] == "error"
        detail = "" if ok else f"want an error, got {outcome[0]} {_show(outcome[1])}"
    return CaseResult(file, section, case["name"], case["expr"], None, ok, detail)


def _show(v: Any) -> str:
    return v if isinstance(v, str) else C.to_text(v)


def run_file(path: Path, evaluate: Evaluator) -> FileReport:
    """Every case of one conformance file through ``evaluate(expr_ir, env)``."""
    name = Path(path).name
    return FileReport(name, tuple(_run_case(name, section, case, evaluate)
                                  for section, case in load_cases(path)))
