"""Short, human-readable text for expressions, for node and edge labels.

This is display only: it never decides what an expression means. Operator
symbols come from the semantics table; references are spelled the way the
workflow's dialect writes them (``$steps.x`` in WorkflowSkill).
"""

from __future__ import annotations

import json
import re

from flowc.ir import expr as E
from flowc.ir.semantics import OPERATORS

# How each dialect writes a reference root and a template placeholder.
_REF_PREFIX = {"workflowskill": "$"}
_PLACEHOLDER = {"instruction": ("{{ ", " }}")}


def expr_text(expr: E.Expr | None, dialect: str = "", limit: int = 0) -> str:
    """``expr`` as one line of text, cut to ``limit`` characters when > 0."""
    if expr is None:
        return ""
    text = _Printer(dialect).show(expr)
    return clip(text, limit) if limit else text


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 1)] + "…"


def wrap(text: str, width: int, max_lines: int = 3) -> list[str]:
    """Greedy word wrap; a word longer than ``width`` (a long reference) may
    break after a ``.``. At most ``max_lines`` lines, the last one ending in
    ``…`` when text was left out."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        for i, piece in enumerate(_pieces(word, width)):
            joined = line + piece if i else (line + " " + piece if line else piece)
            if len(joined) <= width:
                line = joined
            else:
                if line:
                    lines.append(line)
                line = piece
    if line:
        lines.append(line)
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        last = lines[-1]
        lines[-1] = (last if len(last) < width else last[: width - 1]) + "…"
    return lines


def _pieces(word: str, width: int) -> list[str]:
    """``word`` in parts that may each start a new line: after each ``.``
    of a long word (a reference path), and no part wider than ``width``."""
    if len(word) <= width // 2:
        return [word]
    out: list[str] = []
    for part in (p for p in re.split(r"(?<=\.)", word) if p):
        while len(part) > width:
            out.append(part[:width])
            part = part[width:]
        out.append(part)
    return out


class _Printer:
    def __init__(self, dialect: str) -> None:
        self.prefix = _REF_PREFIX.get(dialect, "")
        self.open, self.close = _PLACEHOLDER.get(dialect, ("${", "}"))

    def show(self, e: E.Expr) -> str:
        if isinstance(e, E.Literal):
            return _literal(e.value)
        if isinstance(e, E.Ref):
            return self.prefix + e.root + "".join(self.segment(s) for s in e.path)
        if isinstance(e, E.Unary):
            sym = _symbol(e.op)
            sep = "" if len(sym) == 1 else " "
            return f"{sym}{sep}{self.operand(e.operand)}"
        if isinstance(e, E.Binary):
            return f"{self.operand(e.left)} {_symbol(e.op)} {self.operand(e.right)}"
        if isinstance(e, E.Conditional):
            return f"{self.operand(e.test)} ? {self.operand(e.then)} : {self.operand(e.otherwise)}"
        if isinstance(e, E.Call):
            name = e.func.rsplit(".", 1)[-1]
            return f"{name}({', '.join(self.show(a) for a in e.args)})"
        if isinstance(e, E.Lambda):
            return f"{', '.join(e.params)} => {self.show(e.body)}"
        if isinstance(e, E.ListExpr):
            return "[" + ", ".join(self.show(i) for i in e.items) + "]"
        if isinstance(e, E.MapExpr):
            return "{" + ", ".join(f"{self.key(m.key)}: {self.show(m.value)}" for m in e.entries) + "}"
        if isinstance(e, E.Template):
            out = []
            for part in e.parts:
                if isinstance(part, E.Literal) and isinstance(part.value, str):
                    out.append(part.value)
                else:
                    out.append(self.open + self.show(part).removeprefix(self.prefix) + self.close)
            return '"' + "".join(out) + '"'
        return type(e).__name__

    def operand(self, e: E.Expr) -> str:
        text = self.show(e)
        return f"({text})" if isinstance(e, (E.Binary, E.Conditional)) else text

    def segment(self, seg) -> str:
        if isinstance(seg, E.Field):
            return "." + seg.name
        return "[" + self.show(seg.index) + "]"

    def key(self, k: E.Expr) -> str:
        if isinstance(k, E.Literal) and isinstance(k.value, str):
            return k.value
        return self.show(k)


def _symbol(op: str) -> str:
    spec = OPERATORS.get(op)
    return spec.symbol if spec is not None else op.rsplit(".", 1)[-1]


def _literal(value) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)
