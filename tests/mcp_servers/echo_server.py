"""A small MCP server for the host tests, on the official SDK's MCPServer.

    python echo_server.py                   # stdio
    python echo_server.py http PORT         # streamable HTTP on 127.0.0.1:PORT, path /mcp

Tools: ``echo`` (text back), ``add`` (a dict, sent as JSON text only),
``slow`` (answers after ``ms``), ``meet`` (answers once ``parties`` calls
are waiting at once: only concurrent calls get past it), ``fail`` (an
``isError`` result), ``die`` (the process exits mid-call), ``env`` (whether
an environment variable is set, and its length), ``image`` (a non-text
block). With ``ECHO_PIDFILE`` set, the server writes its pid there; with
``ECHO_CALLLOG``, ``slow`` notes each call it starts.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent

server = MCPServer("echo")
_waiting: list[asyncio.Future] = []


def _note(tool: str) -> None:
    """With ECHO_CALLLOG set, a line per call (tests wait for a call to be in flight)."""
    path = os.environ.get("ECHO_CALLLOG")
    if path:
        with open(path, "a") as fh:
            fh.write(tool + "\n")


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool()
def add(a: int, b: int) -> dict:
    """The sum, as a dict (no output schema: the SDK sends it as JSON text)."""
    return {"sum": a + b}


@server.tool()
async def slow(ms: int = 100) -> str:
    """Answer after ``ms`` milliseconds."""
    _note("slow")
    await asyncio.sleep(ms / 1000)
    return f"slept {ms} ms"


@server.tool()
async def meet(parties: int) -> str:
    """Answer once ``parties`` calls of ``meet`` wait at the same time (10 s at most)."""
    arrived = asyncio.get_running_loop().create_future()
    _waiting.append(arrived)
    if len(_waiting) >= parties:
        for waiter in _waiting[:parties]:
            if not waiter.done():
                waiter.set_result(None)
        del _waiting[:parties]
    try:
        await asyncio.wait_for(arrived, 10)
    except TimeoutError:
        raise ToolError(f"only {len(_waiting)} of {parties} calls arrived together") from None
    return "met"


@server.tool()
def fail(message: str) -> str:
    """Report an error (an isError result)."""
    raise ToolError(message)


@server.tool()
async def die(after_ms: int = 0) -> str:
    """Exit the process in the middle of the call."""
    await asyncio.sleep(after_ms / 1000)
    os._exit(3)


@server.tool()
def env(name: str) -> dict:
    """Whether ``name`` is set in the server's environment, and its length."""
    value = os.environ.get(name)
    return {"set": value is not None, "length": len(value or "")}


@server.tool()
def image() -> list:
    """One image block (1x1 pixel) and one text block."""
    return [ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"), "a picture"]


if __name__ == "__main__":
    pidfile = os.environ.get("ECHO_PIDFILE")
    if pidfile:
        with open(pidfile, "w") as fh:
            fh.write(str(os.getpid()))
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
