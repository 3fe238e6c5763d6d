"""An MCP server as a provider, on the official ``mcp`` SDK (stdio or streamable HTTP).

The SDK's client is an anyio context that must be entered and left in one
task, while a run calls tools from many. So each server gets one task of
its own (:meth:`McpProvider._serve`): it starts the server, lists its
tools, then holds the connection open until :meth:`aclose`. Calls go
through the connected client from any task.

A tool's result becomes the host's answer (docs/hosts.md):

- ``isError`` -> :class:`flowc.host.ToolError` with the result's text;
- ``structuredContent`` when present, as it is;
- else the content: one text block is its text (parsed when the whole text
  is a JSON object or array), several text blocks a list of those, any
  other block (image, audio, resource) a list of the blocks as JSON;
  no content is ``None``.

A server that stops (or a connection that drops) fails the calls in flight
and every later call with a :class:`flowc.host.HostFailure` naming the
server; a call past its deadline raises :class:`ProviderTimeout`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from typing import Any, Self

from flowc.host import HostFailure, ToolError
from flowc.hosts.base import ProviderTimeout
from flowc.hosts.config import ConfigError, McpServer, expand_env

__all__ = ["McpProvider", "value_of_result"]

#: how long a server may take to start and list its tools
START_TIMEOUT_S = 60.0


class McpProvider:
    """One configured MCP server (see :class:`flowc.hosts.base.Provider`)."""

    def __init__(self, server: McpServer, *, errlog: Any = None) -> None:
        self.name = server.name
        self.server = server
        self._errlog = errlog
        self._client: Any = None
        self._tools: dict[str, Any] = {}
        self._task: asyncio.Task | None = None
        self._stop: asyncio.Event | None = None
        self._ready: asyncio.Future | None = None
        self._stopped_because: str | None = None
        self._lost = False   # the connection dropped: every later call fails at once

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        if self._task is not None:
            return
        transport = self._transport()   # ConfigError (a missing variable) before anything starts
        self._stop = asyncio.Event()
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        self._ready = ready
        self._task = asyncio.ensure_future(self._serve(transport, ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT_S)
        except TimeoutError:
            await self.aclose()
            raise HostFailure(f"MCP server {self.name!r} did not start within {START_TIMEOUT_S:.0f} s") from None
        except BaseException:
            await self.aclose()
            raise

    def tools(self) -> list[str]:
        return sorted(self._tools)

    def input_schema(self, tool: str) -> dict | None:
        """The tool's JSON Schema for its arguments (as the server lists it)."""
        info = self._tools.get(tool)
        schema = getattr(info, "input_schema", None)
        return schema if isinstance(schema, dict) else None

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        if self._stop is not None:
            self._stop.set()
        if self._client is None:
            # still starting (a handshake that may never come): only cancelling stops it
            task.cancel()
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            # cancelled while waiting: stop the server all the same (the SDK's
            # shutdown of a stdio server is shielded and bounded)
            task.cancel()
            await asyncio.wait({task}, timeout=10.0)
            raise
        finally:
            ready = self._ready
            if ready is not None and ready.done() and not ready.cancelled():
                ready.exception()   # a start nobody waits for any more: its failure is known

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _transport(self) -> Any:
        try:
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client
            from mcp.client.streamable_http import streamable_http_client
        except ImportError:
            raise ConfigError(f"MCP server {self.name!r}: talking to MCP servers needs the `mcp` package: "
                              "pip install 'flowc[hosts]'") from None

        s = self.server
        where = f"MCP server {s.name!r}"
        if s.command is not None:
            env = {key: expand_env(value, f"{where}: env {key}") for key, value in s.env}
            params = StdioServerParameters(command=s.command, args=list(s.args), env=env or None, cwd=s.cwd)
            return stdio_client(params, errlog=self._errlog or _stderr())
        headers = {key: expand_env(value, f"{where}: header {key}") for key, value in s.headers}
        if not headers:
            return streamable_http_client(s.url)
        import httpx2

        # the SDK's own defaults: 30 s to connect and write, 300 s to read a stream
        client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
        return _closing(streamable_http_client(s.url, http_client=client), client)

    async def _serve(self, transport: Any, ready: asyncio.Future) -> None:
        from mcp import Client

        try:
            async with Client(transport, cache=None) as client:
                tools = await _list_tools(client)
                self._tools = {t.name: t for t in tools}
                self._client = client
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:  # reported to start() or to later calls
            reason = _reason(exc)
            self._stopped_because = reason
            if not ready.done():
                ready.set_exception(HostFailure(f"MCP server {self.name!r} did not start: {reason}"))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._client = None
            if self._stopped_because is None:
                self._stopped_because = "it was stopped"

    # ----------------------------------------------------------------- calls
    async def call(self, tool: str, args: dict, timeout_ms: int | None = None) -> Any:
        client = self._client
        if client is None or self._lost:
            why = self._stopped_because or "it was not started"
            raise HostFailure(f"MCP server {self.name!r} is not running ({why})")
        ms = timeout_ms or self.server.timeout_ms
        try:
            result = await asyncio.wait_for(client.call_tool(tool, args), ms / 1000)
        except TimeoutError:
            raise ProviderTimeout(f"MCP tool {tool!r} of server {self.name!r} did not answer within {ms} ms") \
                from None
        except Exception as exc:  # noqa: BLE001 - every failure becomes a ToolError or a HostFailure
            raise self._failure(tool, exc) from None
        return value_of_result(result, tool)

    def _failure(self, tool: str, exc: Exception) -> Exception:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        if isinstance(exc, MCPError) and exc.code != CONNECTION_CLOSED:
            # the server answered the call with a protocol error (an unknown tool, bad arguments)
            return ToolError(f"MCP tool {tool!r}: {exc.message}")
        if isinstance(exc, MCPError) or self._client is None:
            self._lost = True
            self._stopped_because = f"it closed the connection during a call of {tool!r}"
            return HostFailure(f"MCP server {self.name!r} closed the connection during the call of {tool!r} "
                               "(the server stopped)")
        return HostFailure(f"MCP server {self.name!r}, tool {tool!r}: {_reason(exc)}")


# ------------------------------------------------------------------ results
def value_of_result(result: Any, tool: str = "tool") -> Any:
    """The host's answer for a ``CallToolResult`` (the mapping in the module doc)."""
    blocks = list(result.content or [])
    if result.is_error:
        text = "\n".join(b.text for b in blocks if getattr(b, "type", None) == "text")
        raise ToolError(text or f"MCP tool {tool!r} reported an error")
    if result.structured_content is not None:
        return result.structured_content
    if not blocks:
        return None
    if all(getattr(b, "type", None) == "text" for b in blocks):
        values = [_text_value(b.text) for b in blocks]
        return values[0] if len(values) == 1 else values
    return [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in blocks]


def _text_value(text: str) -> Any:
    """A text block's value: the JSON object or array it holds, else the text."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    return text


def _stderr() -> Any:
    """Where a stdio server's standard error goes: flowc's own, as a real file
    (a replaced ``sys.stderr`` without a descriptor falls back to the process's)."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            stream.fileno()
        except (AttributeError, OSError, ValueError):
            continue
        return stream
    return subprocess.DEVNULL


async def _list_tools(client: Any) -> list:
    tools, cursor = [], None
    for _page in range(1000):   # a server whose pages never end cannot hang the start
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _reason(exc: BaseException) -> str:
    """One line for a failure, the innermost of an exception group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, asyncio.CancelledError):
        return "it was stopped"
    if isinstance(exc, ConfigError):
        return str(exc)
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextlib.asynccontextmanager
async def _closing(transport: Any, client: Any):
    """``transport`` entered, then the HTTP ``client`` it used closed."""
    try:
        async with transport as streams:
            yield streams
    finally:
        await client.aclose()
