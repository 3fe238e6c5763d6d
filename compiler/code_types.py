"""The records of the finding-code tables: a code's entry and its example.

Each dialect package exports its own codes (``codes.py``: ``CODES``) and
examples (``code_examples.py``: ``EXAMPLES``, ``NOT_STANDALONE``);
:mod:`flowc.compiler.codes` lists them all.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs


@attrs.frozen
class Example:
    wrong: str
    right: str
    file: str = "workflow.yaml"      # name the example is written as
    dialect: str | None = None       # None: the dialect of the code's prefix; "" = detect
    # For translation findings (TRN): the dialect the file is translated to
    # (`flowc translate --to`); the code is reported by translating, not checking.
    translate_to: str | None = None


@attrs.frozen
class CodeInfo:
    code: str
    title: str
    explanation: str
    # A file that produces the code and the same file fixed (from the
    # examples table; a row may also give them inline).
    wrong: str = ""
    right: str = ""
    example_file: str = "workflow.yaml"


def code_table(examples: Mapping[str, Example], *rows: tuple[str, ...]) -> dict[str, CodeInfo]:
    """The entries of ``rows`` (code, title, explanation[, wrong, right,
    file]) by code, each with its example from ``examples``."""
    table = {}
    for code, title, text, *inline in rows:
        ex = examples.get(code)
        if inline:
            table[code] = CodeInfo(code, title, text, *inline)
        elif ex is not None:
            table[code] = CodeInfo(code, title, text, ex.wrong, ex.right, ex.file)
        else:
            table[code] = CodeInfo(code, title, text)
    return table


def combined(*tables: Mapping[str, CodeInfo]) -> dict[str, CodeInfo]:
    """One new table of the entries of ``tables``, in order (a code is
    defined in one table only)."""
    out: dict[str, CodeInfo] = {}
    for table in tables:
        for code, info in table.items():
            if code in out:
                raise ValueError(f"{code} is defined twice")
            out[code] = info
    return out
