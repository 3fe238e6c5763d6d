"""Host capabilities: which node kinds a target host supports.

The catalog does not claim that every host implements every node; a host
advertises the kinds it supports in a JSON file, and ``flowc check
--host-capabilities caps.json`` reports every step whose kind the host
lacks (``INS401``). The file is either a list of kinds or an object::

    {"host": "edge-runner", "kinds": ["manual", "schedule", "tool", "memory.*", "finish"]}

Entries are kind names or shell-style patterns (``memory.*``).
"""

from __future__ import annotations

import fnmatch
import json

import attrs
from flowc.compiler.instruction.catalog import KINDS
from flowc.compiler.instruction.frontend import compile_instruction_all
from flowc.ir.diagnostics import Diagnostic, error
from flowc.ir.limits import MAX_SOURCE_BYTES
from flowc.ir.workflow import Node
from flowc.sourcefile import FileTooLarge, read_limited

__all__ = ["HostCapabilities", "check_host", "load_capabilities", "parse_capabilities"]


@attrs.frozen
class HostCapabilities:
    host: str
    patterns: tuple[str, ...]

    def supports(self, kind: str) -> bool:
        return any(fnmatch.fnmatchcase(kind, p) for p in self.patterns)


def parse_capabilities(data, source: str = "capabilities") -> HostCapabilities:
    """Capabilities from parsed JSON; ValueError when the shape is wrong or
    an entry matches no kind of the catalog."""
    host = "the host"
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"host", "kinds"})
        if unknown:
            raise ValueError(f"{source}: unknown keys {', '.join(unknown)} (expected host, kinds)")
        if "host" in data:
            if not isinstance(data["host"], str):
                raise ValueError(f"{source}: `host` must be a string")
            host = f"host {data['host']!r}"
        data = data.get("kinds")
    if not isinstance(data, list) or not all(isinstance(k, str) for k in data):
        raise ValueError(f"{source}: expected a list of kinds, or {{\"host\": ..., \"kinds\": [...]}}")
    for pattern in data:
        if not any(fnmatch.fnmatchcase(kind, pattern) for kind in KINDS):
            raise ValueError(f"{source}: {pattern!r} matches no kind of the catalog")
    return HostCapabilities(host, tuple(data))


def load_capabilities(path: str) -> HostCapabilities:
    try:
        data = json.loads(read_limited(path, MAX_SOURCE_BYTES).decode("utf-8"))
    except FileTooLarge:
        raise ValueError(f"{path} is larger than {MAX_SOURCE_BYTES} bytes") from None
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    return parse_capabilities(data, path)


def _nodes(nodes) -> list[Node]:
    out = []
    for node in nodes:
        out.append(node)
        for region in node.regions:
            out.extend(_nodes(region.nodes))
    return out


def check_host(text: str, path: str, caps: HostCapabilities) -> list[Diagnostic]:
    """One INS401 per step (bodies included) whose kind the host lacks."""
    workflows, _ = compile_instruction_all(text, path)
    out = []
    for wf in workflows:
        for node in _nodes(wf.nodes):
            if not caps.supports(node.kind):
                out.append(error("INS401", f"step {node.id!r} of workflow {wf.name!r} has kind {node.kind!r}, "
                                 f"which {caps.host} does not support", node.span))
    return sorted(out, key=Diagnostic.sort_key)
