"""The registry of workflow names a ``workflow_call`` is checked against.

The engine refuses a call to a workflow it does not know (引用未注册工作流,
AEV138) only when its validator is given the set of registered names, and
that set ignores case (``StringComparer.OrdinalIgnoreCase``). Its file
loader registers every ``.yaml``/``.yml`` file of a workflow directory under
the file's name without the extension; a workflow registered another way
(a seed source, the API) is registered under its ``name``. flowc knows a
workflow by both, so a call is reported only when no registration could
make it resolve.
"""

from __future__ import annotations

import os

from flowc.compiler import yamlsrc
from flowc.compiler.aevatar import dotnet
from flowc.compiler.aevatar.values import scalar_text
from flowc.compiler.yamlsrc import YMap, YScalar

__all__ = ["declared_name", "key", "names_of"]


def key(name: str) -> str:
    """The name as the registry compares it: trimmed (the engine trims the
    called name) and case-folded as OrdinalIgnoreCase does."""
    return dotnet.upper_invariant(dotnet.trim(name))


def declared_name(text: str, path: str) -> str | None:
    """The workflow's top-level ``name`` (trimmed), or None when it has none."""
    root, _ = yamlsrc.load(text.replace("\r\n", "\n"), path)
    if not isinstance(root, YMap):
        return None
    node = root.get("name")
    if not isinstance(node, YScalar):
        return None
    name = dotnet.trim(scalar_text(node) or "")
    return name or None


def names_of(text: str, path: str) -> set[str]:
    """The names an aevatar workflow file is registered under: its ``name``
    and its file name without the extension."""
    out = {os.path.splitext(os.path.basename(path))[0]}
    name = declared_name(text, path)
    if name is not None:
        out.add(name)
    return {n for n in out if n}
