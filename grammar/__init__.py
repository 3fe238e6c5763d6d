"""Lark grammars of the dialects' expression languages.

Each dialect's grammar is ``<name>.lark`` in this package. :func:`load_parser`
builds a grammar's LALR parser once per process; :func:`grammar_text` and
:func:`parser_options` let a front end build its own variant (e.g. with an
inline transformer) from the same grammar and options.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import lark

# Options every grammar is built with.
_DEFAULTS: dict[str, Any] = {"parser": "lalr", "propagate_positions": True}

# Per-grammar option overrides. The WorkflowSkill reference lexes the whole
# text before it parses, so its grammar needs the context-free lexer.
_OVERRIDES: dict[str, dict[str, Any]] = {
    "workflowskill": {"lexer": "basic"},
    # aevatar: three entry rules (template, call, args), applied recursively.
    "aevatar": {"start": ["template", "call", "args"]},
}


def grammar_names() -> list[str]:
    """The names of the grammars this package holds."""
    return sorted(
        entry.name[: -len(".lark")]
        for entry in resources.files(__package__).iterdir()
        if entry.name.endswith(".lark")
    )


@functools.cache
def grammar_text(name: str) -> str:
    """The text of grammar ``name`` (``workflowskill`` -> workflowskill.lark)."""
    if not name.isidentifier():
        raise ValueError(f"not a grammar name: {name!r}")
    return resources.files(__package__).joinpath(name + ".lark").read_text(encoding="utf-8")


def parser_options(name: str) -> dict[str, Any]:
    """The Lark options grammar ``name`` is built with."""
    options = dict(_DEFAULTS)
    options.update(_OVERRIDES.get(name, {}))
    return options


@functools.cache
def load_parser(name: str) -> lark.Lark:
    """Grammar ``name``'s parser (parser="lalr", propagate_positions=True),
    built once per process."""
    return lark.Lark(grammar_text(name), **parser_options(name))
