"""Plain data -> YAML text that every dialect's front end reads back as the same data.

PyYAML writes YAML 1.1; flowc reads YAML 1.2 (core schema). The two disagree
on a few plain scalars: ``0o17`` and ``1e3`` are strings to PyYAML and
numbers to flowc. :func:`dump` quotes every string that YAML 1.2 would read
as something else, and indents lists under their key, as people write them.
"""

from __future__ import annotations

import yaml
from flowc.compiler.yamlsrc import _core_scalar

__all__ = ["dump"]


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False):
        return super().increase_indent(flow, False)

    def ignore_aliases(self, data) -> bool:
        return True


# Line breaks other than "\n" that YAML folds or normalises unless they are
# escaped; in a double-quoted scalar PyYAML writes them as \N, \L, \P, \r.
_SPECIAL_BREAKS = frozenset("\x85\u2028\u2029\r")


def _represent_str(dumper: _Dumper, data: str):
    style = None
    if not isinstance(_core_scalar(data), str):
        style = "'"
    if _SPECIAL_BREAKS.intersection(data):
        style = '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def dump(data) -> str:
    """Block-style YAML for ``data``, keys in insertion order."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False,
                     width=100)
