"""``flowc check --config``: every host call of a workflow must be granted by the config.

Walks the IR's ``call`` nodes (bodies included), reads their ``capability``
and ``name`` attributes and resolves them as a run would
(:mod:`flowc.hosts.routes`). A name nothing answers is ``HST001``, a bare
tool name two MCP servers share ``HST002``, each at the step's span.

Resolving needs each MCP server's tools: a server whose config lists them
(``tools = [...]``) is not started; any other is started, asked for its
tools and stopped (docs/hosts.md).
"""

from __future__ import annotations

import asyncio

from flowc.hosts.config import HostConfig, load_host_config
from flowc.hosts.mcp import McpProvider
from flowc.hosts.routes import Refusal, RouteTable
from flowc.ir import expr as E
from flowc.ir.diagnostics import Diagnostic, error
from flowc.ir.workflow import Node, Workflow

__all__ = ["check_calls", "route_table", "server_tools"]


def route_table(config_path: str | None, mcp_config: str | None) -> RouteTable:
    """The routing table of the config files (starting servers that do not list their tools)."""
    config = load_host_config(config_path, mcp_config)
    return RouteTable(config, asyncio.run(server_tools(config)))


async def server_tools(config: HostConfig) -> dict[str, list[str]]:
    """Each MCP server's tools: its ``tools`` list, else what the started server lists."""
    out = {name: list(server.tools) for name, server in config.mcp.items() if server.tools is not None}
    started = [McpProvider(server) for name, server in sorted(config.mcp.items()) if server.tools is None]

    async def list_one(provider: McpProvider) -> None:
        async with provider:
            out[provider.name] = provider.tools()

    results = await asyncio.gather(*(list_one(p) for p in started), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return out


def check_calls(workflow: Workflow, table: RouteTable) -> list[Diagnostic]:
    """One finding per host call of ``workflow`` that ``table`` does not grant."""
    out = []
    for node in _calls(workflow.nodes):
        capability, name = _literal(node.attr("capability")), _literal(node.attr("name"))
        if not isinstance(capability, str) or not isinstance(name, str):
            continue   # a name computed at run time: the run decides
        found = table.resolve(capability, name)
        if not isinstance(found, Refusal) and found.tool is None:
            operation = _parameter(node, ("operation", "action"))
            found = table.check_operation(found.provider, operation) if isinstance(operation, str) else found
        if isinstance(found, Refusal):
            out.append(error(found.code, f"step {node.id!r} ({capability} {name!r}): {found.message}", node.span))
    return sorted(out, key=Diagnostic.sort_key)


def _calls(nodes) -> list[Node]:
    out, stack = [], list(reversed(nodes))
    while stack:
        node = stack.pop()
        if node.op == "call":
            out.append(node)
        for region in reversed(node.regions):
            stack.extend(reversed(region.nodes))
    return out


def _literal(value) -> object:
    return value.value if isinstance(value, E.Literal) else None


def _parameter(node: Node, keys: tuple[str, ...]) -> object:
    """A literal entry of the node's ``parameters`` map (aevatar), or None."""
    params = node.attr("parameters")
    if not isinstance(params, E.MapExpr):
        return None
    for key in keys:
        for entry in params.entries:
            if _literal(entry.key) == key:
                return _literal(entry.value)
    return None
