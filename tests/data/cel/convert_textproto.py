"""Convert cel-spec's simple conformance files (tests/simple/testdata/*.textproto)
into the JSON form of this directory.

Not run by the test suite: the converted files are committed (see
tests/data/README.md for their origin). To refresh them, check out
github.com/google/cel-spec and run

    python3 tests/data/cel/convert_textproto.py CEL_SPEC/tests/simple/testdata tests/data/cel FILE...

with the file stems to convert (``macros2 fields ...``). A case keeps its
name, expression, expected value or error, bindings, container and the
flags ``disable_check`` / ``disable_macros`` / ``has_type_env``. Values are
tagged by CEL type (``{"int": 1}``, ``{"bytes": "<hex>"}``, ``{"map":
[[k, v], ...]}``); Timestamp and Duration objects become ``{"timestamp":
[seconds, nanos]}`` / ``{"duration": [seconds, nanos]}``.

Left out, and counted in the script's output: cases that only check types
(``check_only``, or a ``typed_result`` without a result: nothing to
evaluate); cases whose binding or expected value is a protobuf message or
enum (this format cannot carry one); and the cases of a section whose every
case needs protobuf messages or enums (flowc.testing.cel_conformance.
exclusion). A file left with no section is not written.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

from flowc.testing.cel_conformance import exclusion

_TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<ext>\[[^\]]*\])
  | (?P<punct>[{}:<>,;])
  | (?P<word>[-+]?[A-Za-z0-9_.+-]+)
""", re.VERBOSE)

_ESCAPES = {"n": 10, "r": 13, "t": 9, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63}


def _unquote(text: str) -> bytes:
    """A textproto string literal as bytes (C escapes; octal and hex are bytes)."""
    body, out, i = text[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = body[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            out.append(int(m.group(), 8))
            i += 1 + len(m.group())
        elif e in "xX":
            m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2:])
            out.append(int(m.group(), 16))
            i += 2 + len(m.group())
        elif e in "uU":
            n = 4 if e == "u" else 8
            out += chr(int(body[i + 2:i + 2 + n], 16)).encode("utf-8")
            i += 2 + n
        else:
            raise ValueError(f"unknown escape \\{e} in {text}")
    return bytes(out)


def _tokens(text: str) -> list[tuple[str, str]]:
    toks, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"cannot read textproto at {text[pos:pos + 40]!r}")
        pos = m.end()
        if m.lastgroup != "ws":
            toks.append((m.lastgroup, m.group()))
    return toks


class _Reader:
    """Textproto as nested dicts: every field maps to the list of its values."""

    def __init__(self, text: str):
        self.toks, self.i = _tokens(text), 0

    def message(self, end: str | None) -> dict:
        fields: dict[str, list] = {}
        while self.i < len(self.toks):
            kind, tok = self.toks[self.i]
            if end and tok == end:
                self.i += 1
                return fields
            if tok in (",", ";"):
                self.i += 1
                continue
            name = tok
            self.i += 1
            if self.toks[self.i][1] == ":":
                self.i += 1
            kind, tok = self.toks[self.i]
            if tok in ("{", "<"):
                self.i += 1
                value = self.message("}" if tok == "{" else ">")
            elif tok == "[":
                raise ValueError("list syntax is not used by the conformance files")
            else:
                self.i += 1
                if kind == "str":
                    value = _unquote(tok)
                    while self.i < len(self.toks) and self.toks[self.i][0] == "str":
                        value += _unquote(self.toks[self.i][1])
                        self.i += 1
                else:
                    value = tok
            fields.setdefault(name, []).append(value)
        if end:
            raise ValueError("unterminated message")
        return fields


def _one(msg: dict, name: str, default=None):
    values = msg.get(name)
    return values[-1] if values else default


def _text(v) -> str:
    return v.decode("utf-8") if isinstance(v, bytes) else v


def _number(word: str) -> float:
    low = word.lower()
    if low in ("inf", "infinity", "+inf"):
        return float("inf")
    if low in ("-inf", "-infinity"):
        return float("-inf")
    if low == "nan":
        return float("nan")
    return float(word)


def convert_value(v: dict) -> dict:
    """A cel.expr.Value as a tagged JSON value."""
    (kind, values), = v.items()
    x = values[-1]
    if kind == "int64_value":
        return {"int": int(x)}
    if kind == "uint64_value":
        return {"uint": int(x)}
    if kind == "double_value":
        d = _number(x)
        return {"double": d if math.isfinite(d) else str(d)}
    if kind == "string_value":
        return {"string": _text(x)}
    if kind == "bytes_value":
        return {"bytes": x.hex()}
    if kind == "bool_value":
        return {"bool": x == "true"}
    if kind == "null_value":
        return {"null": None}
    if kind == "type_value":
        return {"type": _text(x)}
    if kind == "list_value":
        return {"list": [convert_value(e) for e in x.get("values", [])]}
    if kind == "map_value":
        return {"map": [[convert_value(_one(e, "key")), convert_value(_one(e, "value"))]
                        for e in x.get("entries", [])]}
    if kind == "enum_value":
        return {"enum": {"type": _text(_one(x, "type", "")), "value": int(_one(x, "value", "0"))}}
    if kind == "object_value":
        (type_url, bodies), = x.items()
        body = bodies[-1]
        type_name = type_url.strip("[]").rsplit("/", 1)[-1]
        if type_name in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
            tag = "timestamp" if type_name.endswith("Timestamp") else "duration"
            return {tag: [int(_one(body, "seconds", "0")), int(_one(body, "nanos", "0"))]}
        return {"object": type_name}
    raise ValueError(f"unknown value kind {kind}")


def convert_test(t: dict) -> dict | None:
    """One SimpleTest as a case, or None when it has nothing to evaluate."""
    case: dict = {"name": _text(_one(t, "name")), "expr": _text(_one(t, "expr"))}
    typed = _one(t, "typed_result")
    if "value" in t:
        case["value"] = convert_value(_one(t, "value"))
    elif typed is not None and "result" in typed:
        case["value"] = convert_value(_one(typed, "result"))
    elif "eval_error" in t:
        case["error"] = [_text(_one(e, "message", "")) for e in _one(t, "eval_error").get("errors", [])]
    elif _one(t, "check_only") == "true" or typed is not None:
        return None
    else:
        case["value"] = {"bool": True}  # SimpleTest's default expectation
    for flag in ("disable_check", "disable_macros"):
        if _one(t, flag) == "true":
            case[flag] = True
    if _one(t, "container"):
        case["container"] = _text(_one(t, "container"))
    if "bindings" in t:
        case["bindings"] = {_text(_one(b, "key")): convert_value(_one(_one(b, "value"), "value"))
                            for b in t["bindings"]}
    if "type_env" in t:
        case["has_type_env"] = True
    return case


def _holds_message(case: dict) -> bool:
    """Whether a binding or the expected value is a protobuf message or enum,
    which this format cannot carry."""
    text = json.dumps([case.get("value"), case.get("bindings")])
    return '"object":' in text or '"enum":' in text


def convert_file(text: str) -> tuple[dict, dict[str, int]]:
    """The converted file, and how many cases were left out for each reason."""
    top = _Reader(text).message(None)
    left_out = {"type-check only": 0, "a message value": 0, "in a section excluded whole": 0}
    sections = []
    for s in top.get("section", []):
        tests = []
        for t in s.get("test", []):
            case = convert_test(t)
            if case is None:
                left_out["type-check only"] += 1
            elif _holds_message(case):
                left_out["a message value"] += 1
            else:
                tests.append(case)
        # A section whose every case needs protobuf messages or enums is
        # not converted (it would be excluded whole).
        if any(exclusion(case) is None for case in tests):
            sections.append({"name": _text(_one(s, "name")), "tests": tests})
        else:
            left_out["in a section excluded whole"] += len(tests)
    return {"name": _text(_one(top, "name")), "sections": sections}, left_out


def main(argv: list[str]) -> None:
    src, dst, stems = Path(argv[0]), Path(argv[1]), argv[2:]
    for stem in stems:
        data, left_out = convert_file((src / f"{stem}.textproto").read_text(encoding="utf-8"))
        n = sum(len(s["tests"]) for s in data["sections"])
        why = ", ".join(f"{count} {reason}" for reason, count in left_out.items() if count)
        if not n:
            print(f"{stem}: nothing to convert (left out: {why or 'no cases'})")
            continue
        (dst / f"{stem}.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n",
                                          encoding="utf-8")
        print(f"{stem}: {n} cases" + (f"; left out: {why}" if why else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
