"""``{{config.NAME}}``: a config's ``vars:`` folded into its workflows at load.

agentd substitutes these tokens when it loads a workflow, before the
document is typed, so a var can sit anywhere a string can (an ``over:``, a
URL, a ``when``). The rules mirror agentd's ``substitute_config_vars``:

- A token is found by the literal text ``{{config.`` (no space after the
  braces) up to the next ``}}``; the name inside is trimmed and is a dotted
  path into ``vars`` that goes through mappings only.
- A string that *is* exactly one token takes the var's value with its type:
  ``over: "{{config.team}}"`` becomes the list itself.
- A token inside a longer string is replaced by the value's text: strings
  raw, anything else as compact JSON (``null`` included).
- A token whose name is not in ``vars`` is an error (agentd refuses to
  start), and its text stays as it was.
- ``{{ config.team }}`` (a space after the braces) is not a token: agentd
  leaves it to the run-time templates, where ``config`` is no name; the
  front end reports it where it is templated (INS503).

Only mapping values are rewritten, never keys. Documents that are not a
config (a standalone workflow, an instruction.md) get their vars from the
host's config: there the tokens are left for the host.
"""

from __future__ import annotations

import json

from flowc.compiler.yamlsrc import YMap, YNode, YScalar, YSeq
from flowc.ir.diagnostics import Diagnostic, error
from flowc.ir.limits import MAX_SOURCE_BYTES, MAX_YAML_NODES

__all__ = ["TOKEN", "substitute"]

TOKEN = "{{config."


class _Budget:
    """Characters written by substitution, and YAML nodes placed by it, so a
    var used many times cannot grow the document without bound (the check
    stays linear): a shared value costs nothing here, but every pass after
    this one walks it once per use."""

    def __init__(self) -> None:
        self.used = 0
        self.nodes = 0
        self.reported = False


def substitute(node: YNode, variables: YMap | None, diags: list[Diagnostic]) -> YNode:
    """``node`` with every ``{{config.NAME}}`` token replaced from
    ``variables``; unresolved names are reported into ``diags``."""
    return _walk(node, variables, diags, _Budget(), {})


def _walk(node: YNode, variables: YMap | None, diags, budget: _Budget, cache: dict) -> YNode:
    if isinstance(node, YMap):
        items = [(k, _walk(v, variables, diags, budget, cache)) for k, v in node.items]
        if all(new is old for (_k, new), (_k2, old) in zip(items, node.items)):
            return node
        return YMap(items, node.span)
    if isinstance(node, YSeq):
        items = [_walk(i, variables, diags, budget, cache) for i in node.items]
        if all(new is old for new, old in zip(items, node.items)):
            return node
        return YSeq(items, node.span)
    if isinstance(node, YScalar) and isinstance(node.value, str) and TOKEN in node.value:
        return _scalar(node, variables, diags, budget, cache)
    return node


def _token_at(text: str, start_from: int) -> tuple[int, int, str] | None:
    start = text.find(TOKEN, start_from)
    if start < 0:
        return None
    close = text.find("}}", start)
    if close < 0:
        return None
    return start, close + 2, text[start + len(TOKEN):close].strip()


def _lookup(variables: YMap | None, name: str) -> YNode | None:
    if variables is None:
        return None
    parts = name.split(".")
    current: YNode | None = variables.get(parts[0])
    for part in parts[1:]:
        if not isinstance(current, YMap):
            return None
        current = current.get(part)
    return current


def _undefined(name: str, node: YScalar, diags) -> None:
    diags.append(error("INS504", f"config.{name} is not defined in vars", node.span,
                       "agentd refuses to start with an unresolved {{config.*}} reference; define it "
                       "under the config's `vars:`"))


def _scalar(node: YScalar, variables, diags, budget: _Budget, cache: dict) -> YNode:
    text = node.value
    first = _token_at(text, 0)
    if first is None:
        return node
    start, end, name = first
    if start == 0 and end == len(text):
        # The whole string is one token: the var's value, with its type. The
        # node is re-wrapped at the reference so findings point here.
        value = _lookup(variables, name)
        if value is None:
            _undefined(name, node, diags)
            return node
        size = cache.get((name,))
        if size is None:
            size = cache[(name,)] = _size(value)
        budget.nodes += size
        if budget.nodes > MAX_YAML_NODES:
            if not budget.reported:
                budget.reported = True
                diags.append(error("YAML005", "substituting config vars makes the workflow hold more than "
                                   f"{MAX_YAML_NODES:,} YAML nodes", node.span))
            return node
        return _at(value, node)
    out: list[str] = []
    pos = 0
    found = first
    while found is not None:
        start, end, name = found
        out.append(text[pos:start])
        value = _lookup(variables, name)
        if value is None:
            _undefined(name, node, diags)
            out.append(text[start:end])
        else:
            piece = cache.get(name)
            if piece is None:
                piece = cache[name] = _text(value)
            budget.used += len(piece)
            if budget.used > MAX_SOURCE_BYTES:
                if not budget.reported:
                    budget.reported = True
                    diags.append(error("LIM001", "substituting config vars makes the workflow larger "
                                       f"than {MAX_SOURCE_BYTES} characters", node.span))
                return node
            out.append(piece)
        pos = end
        found = _token_at(text, pos)
    out.append(text[pos:])
    joined = "".join(out)
    return YScalar(joined, node.quoted, joined, node.span)


def _size(value: YNode) -> int:
    """The YAML nodes of ``value`` (iterative: a deep value cannot overflow the stack)."""
    count = 0
    stack = [value]
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node, YMap):
            stack.extend(v for _k, v in node.items)
        elif isinstance(node, YSeq):
            stack.extend(node.items)
    return count


def _text(value: YNode) -> str:
    plain = value.plain()
    if isinstance(plain, str):
        return plain
    return json.dumps(plain, separators=(",", ":"), ensure_ascii=False)


def _at(value: YNode, ref: YScalar) -> YNode:
    """``value`` placed at ``ref``: the same content (shared, not copied, so
    a var used many times costs nothing per use) with the reference's span."""
    if isinstance(value, YScalar):
        return YScalar(value.value, value.quoted, value.text, ref.span)
    if isinstance(value, YSeq):
        return YSeq(value.items, ref.span)
    if isinstance(value, YMap):
        wrapped = YMap.__new__(YMap)
        wrapped.items = value.items
        wrapped._index = value._index
        wrapped.span = ref.span
        return wrapped
    return value
