"""Real hosts for compiled workflows: MCP servers, HTTP, LLM APIs.

A run's host answers ``call(capability, name, args)`` (a coroutine here, so
the asyncio driver runs calls concurrently). :mod:`flowc.hosts.base` names
the one interface every provider implements; the host config
(docs/hosts.md) says which provider serves which workflow name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flowc.hosts.router import RouterHost

__all__ = ["from_config"]


def from_config(path: str | None = None, *, mcp_config: str | None = None) -> RouterHost:
    """The async host a host config describes (TOML ``path``, and/or an
    ``mcpServers`` JSON file), not started: use it as ``async with
    from_config("host.toml") as host: await module.run_async(inputs, host)``.
    Raises :class:`flowc.hosts.config.ConfigError` for a file that is not a
    valid config."""
    from flowc.hosts.config import load_host_config
    from flowc.hosts.router import RouterHost

    return RouterHost(load_host_config(path, mcp_config))
