"""The routing table: which provider answers a workflow's ``(capability, name)``.

Pure logic, no I/O: the router (run time) and ``flowc check --config``
(check time) resolve names the same way. A resolution is a :class:`Target`
(a provider, the tool it is asked for, and how the workflow's arguments
become the tool's) or a :class:`Refusal` (a finding's code and message).

Names resolve in this order (docs/hosts.md):

1. ``[routes]``: ``"capability:name"``, else the bare ``"name"``, to a
   target ``"<server>.<tool>"``, ``"http.<tool>"``, ``"llm.<profile>"`` or a
   bare tool name (resolved as in 2);
2. by capability:

   - ``tool``: ``<server>.<tool>``; a tool name one MCP server has (two
     servers with it: ambiguous); ``web_fetch`` / ``http_request`` when the
     config has ``[http]``; ``llm`` (WorkflowSkill's model tool): the
     profile ``llm``, else ``default``, when the config has ``[llm]``;
   - ``mcp`` (``<server>/<tool>``): that server's tool, with ``args.args``;
   - ``connector``: a server (its tool is the call's ``operation``), or a tool
     name as for ``tool``; the tool's arguments are the JSON object of the
     call's ``payload``;
   - ``http``: the built-in ``http_request``;
   - ``llm``: the LLM profile of that name, else the profile ``default``.
"""

from __future__ import annotations

import attrs
from flowc.hosts.config import HostConfig

__all__ = ["HTTP_TOOLS", "Refusal", "RouteTable", "Target"]

#: the built-in tools of flowc.hosts.http
HTTP_TOOLS = ("web_fetch", "http_request")
#: WorkflowSkill's model tool: answered by an LLM profile when no MCP server has it
LLM_TOOL = "llm"

# How a workflow's arguments become the provider's (see :func:`flowc.hosts.router.tool_args`).
AS_IS = "as_is"              # the arguments are the tool's (WorkflowSkill, aevatar tool_call, http, llm)
TOOL_ARGS = "tool_args"      # as_is, or the object under `args` (dialect 3 `tool`: {"args": {...}})
NESTED_ARGS = "nested_args"  # the object under `args` (dialect 3 `mcp.tool`: {server, tool, args})
PAYLOAD = "payload"          # the JSON object in `payload` (aevatar connector_call)
PARAMETERS = "parameters"    # `parameters` (+ `input` as the body) when that is the call (aevatar http_request)


@attrs.frozen
class Target:
    """A provider (an MCP server's name, ``http`` or ``llm.<profile>``) and its tool."""

    provider: str
    tool: str | None          # None: the call's `operation` names it (a connector that is a server)
    shape: str = AS_IS


@attrs.frozen
class Refusal:
    """Why a name resolves to nothing: a finding's code and message."""

    code: str
    message: str


class RouteTable:
    """Resolves names against a config and the tools each MCP server has."""

    def __init__(self, config: HostConfig, server_tools: dict[str, list[str]]) -> None:
        self.config = config
        self.server_tools = {name: set(tools) for name, tools in server_tools.items()}
        self._owners: dict[str, list[str]] = {}
        for server in sorted(self.server_tools):
            for tool in self.server_tools[server]:
                self._owners.setdefault(tool, []).append(server)

    def resolve(self, capability: str, name: str) -> Target | Refusal:
        routed = self.config.routes.get(f"{capability}:{name}", self.config.routes.get(name))
        if routed is not None:
            return self._route(routed, capability, name)
        if capability == "tool":
            return self._tool(name, TOOL_ARGS)
        if capability == "mcp":
            return self._mcp(name)
        if capability == "connector":
            if name in self.server_tools:
                return Target(name, None, PAYLOAD)
            return self._tool(name, PAYLOAD)
        if capability == "http":
            return self._http("http_request", f"http:{name}", PARAMETERS)
        if capability == "llm":
            return self._llm(name, name)
        return Refusal("HST001", f"the host config grants no provider for {capability} {name!r} "
                                 "(MCP servers answer tool, mcp and connector calls; [http] http; [llm] llm)")

    def check_operation(self, server: str, operation: str) -> Refusal | None:
        """A connector call to ``server`` names ``operation``: is it one of its tools?"""
        if operation in self.server_tools.get(server, ()):
            return None
        return Refusal("HST001", f"MCP server {server!r} has no tool {operation!r}{self._has(server)}")

    # ------------------------------------------------------------------ parts
    def _route(self, routed: str, capability: str, name: str) -> Target | Refusal:
        shape = {"mcp": NESTED_ARGS, "connector": PAYLOAD, "tool": TOOL_ARGS,
                 "http": PARAMETERS}.get(capability, AS_IS)
        head, dot, tail = routed.partition(".")
        if dot and head == "http":
            return self._http(tail, routed, shape)
        if dot and head == "llm":
            return self._llm(tail, name, strict=True)
        if dot and head in self.server_tools:
            return self._server_tool(head, tail, shape)
        if not dot:
            return self._tool(routed, shape)
        return Refusal("HST001", f"[routes] sends {capability}:{name} to {routed!r}, which names no MCP server "
                                 "(nor http.<tool> or llm.<profile>)")

    def _tool(self, name: str, shape: str) -> Target | Refusal:
        head, dot, tail = name.partition(".")
        if dot and head in self.server_tools:
            return self._server_tool(head, tail, shape)
        owners = self._owners.get(name, [])
        if len(owners) == 1:
            return Target(owners[0], name, shape)
        if len(owners) > 1:
            spelled = " or ".join(f"{s}.{name}" for s in owners)
            return Refusal("HST002", f"the tool {name!r} is on several MCP servers ({', '.join(owners)}); "
                                     f"name one: {spelled}, or route it in [routes]")
        if name in HTTP_TOOLS and self.config.http is not None:
            return Target("http", name, shape)
        if name == LLM_TOOL and self.config.llm:
            return self._llm(LLM_TOOL, LLM_TOOL)
        hint = " (the built-in HTTP tools need an [http] section)" if name in HTTP_TOOLS else ""
        return Refusal("HST001", f"no MCP server of the host config has a tool {name!r}{hint}")

    def _server_tool(self, server: str, tool: str, shape: str) -> Target | Refusal:
        if tool in self.server_tools[server]:
            return Target(server, tool, shape)
        return Refusal("HST001", f"MCP server {server!r} has no tool {tool!r}{self._has(server)}")

    def _mcp(self, name: str) -> Target | Refusal:
        server, slash, tool = name.partition("/")
        if not slash or not tool:
            return Refusal("HST001", f"the host config serves MCP tools only (mcp.tool), not mcp {name!r}")
        if server not in self.server_tools:
            return Refusal("HST001", f"the host config has no MCP server {server!r}")
        return self._server_tool(server, tool, NESTED_ARGS)

    def _http(self, tool: str, what: str, shape: str = AS_IS) -> Target | Refusal:
        if self.config.http is None:
            return Refusal("HST001", f"{what} needs the built-in HTTP tools: add an [http] section with `allow`")
        if tool not in HTTP_TOOLS:
            return Refusal("HST001", f"{what}: the built-in HTTP tools are {', '.join(HTTP_TOOLS)}")
        return Target("http", tool, shape)

    def _llm(self, profile: str, called: str, strict: bool = False) -> Target | Refusal:
        """The profile's provider, asked with the workflow's own name ``called``
        (the provider reads the request by it and the arguments' shape, so a
        route naming a profile must not rename the call)."""
        if profile in self.config.llm:
            return Target(f"llm.{profile}", called, AS_IS)
        if not strict and "default" in self.config.llm:
            return Target("llm.default", called, AS_IS)
        return Refusal("HST001", f"the host config has no LLM profile {profile!r}"
                                 + ("" if strict else " and no [llm.default]"))

    def _has(self, server: str) -> str:
        tools = sorted(self.server_tools.get(server, ()))
        if not tools:
            return ""
        shown = ", ".join(tools[:8]) + (", ..." if len(tools) > 8 else "")
        return f" (it has: {shown})"
