"""MCP servers as providers, for real: the reference time server
(mcp-server-time) and tests/mcp_servers/echo_server.py over stdio, and the
echo server over streamable HTTP on 127.0.0.1. Errors, deadlines,
concurrent calls, a server that dies mid-call, secrets in the environment,
and workflows of each dialect run by the asyncio driver through the router.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from flowc.backends.python import compile_workflow, load_module
from flowc.host import HostFailure, ToolError
from flowc.hosts import from_config
from flowc.hosts.base import ProviderTimeout
from flowc.hosts.config import ConfigError, HostConfig, McpServer
from flowc.hosts.mcp import McpProvider
from flowc.hosts.router import RouterHost
from flowc.pipeline.driver import compile_text

ECHO = str(Path(__file__).resolve().parent / "mcp_servers" / "echo_server.py")


def echo_stdio(name: str = "echo", **fields) -> McpServer:
    return McpServer(name, command=sys.executable, args=(ECHO,), **fields)


def time_stdio(name: str = "time") -> McpServer:
    return McpServer(name, command=sys.executable, args=("-m", "mcp_server_time", "--local-timezone", "UTC"))


def host_of(*servers: McpServer) -> RouterHost:
    return RouterHost(HostConfig(mcp={s.name: s for s in servers}))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_echo():
    """The echo server over streamable HTTP on 127.0.0.1; its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, ECHO, "http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the HTTP echo server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


def run(coro):
    return asyncio.run(coro)


# ------------------------------------------------------------------ the time server
def test_the_time_server_answers_with_its_structured_result():
    async def go():
        async with McpProvider(time_stdio()) as time_server:
            assert time_server.tools() == ["convert_time", "get_current_time"]
            now = await time_server.call("get_current_time", {"timezone": "Asia/Tokyo"})
            with pytest.raises(ToolError) as bad_zone:
                await time_server.call("get_current_time", {"timezone": "Mars/Olympus"})
            with pytest.raises(ToolError) as unknown:     # a JSON-RPC error from this server
                await time_server.call("get_time", {})
            return now, str(bad_zone.value), str(unknown.value)

    now, bad_zone, unknown = run(go())
    assert now["timezone"] == "Asia/Tokyo" and now["datetime"].endswith("+09:00")
    assert set(now) == {"timezone", "datetime", "day_of_week", "is_dst"}
    assert "Mars/Olympus" in bad_zone
    assert "get_time" in unknown


# ------------------------------------------------------------------ results and errors
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_results_and_tool_errors(transport, request):
    server = echo_stdio() if transport == "stdio" else \
        McpServer("echo", url=request.getfixturevalue("http_echo"))

    async def go():
        async with McpProvider(server) as echo:
            out = {"tools": echo.tools(),
                   "echo": await echo.call("echo", {"text": "hi"}),
                   "add": await echo.call("add", {"a": 1, "b": 2}),
                   "image": await echo.call("image", {})}
            for tool, args in (("fail", {"message": "no such city"}), ("echo", {"wrong": 1}), ("nope", {})):
                with pytest.raises(ToolError) as info:
                    await echo.call(tool, args)
                out["error " + tool] = str(info.value)
            return out

    out = run(go())
    assert out["tools"] == ["add", "die", "echo", "env", "fail", "image", "meet", "slow"]
    assert out["echo"] == {"result": "hi"}           # structuredContent, as the server sent it
    assert out["add"] == {"sum": 3}                  # JSON text, parsed
    assert out["image"] == [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                            {"type": "text", "text": "a picture"}]
    assert out["error fail"].endswith("no such city")
    assert "text" in out["error echo"] and "Field required" in out["error echo"]   # bad arguments
    assert "nope" in out["error nope"]


def test_a_call_past_its_deadline_times_out_and_the_server_keeps_serving():
    async def go():
        async with McpProvider(echo_stdio(timeout_ms=300)) as echo:
            with pytest.raises(ProviderTimeout) as info:
                await echo.call("slow", {"ms": 5000})
            shorter = None
            try:
                await echo.call("slow", {"ms": 5000}, timeout_ms=100)
            except ProviderTimeout as exc:
                shorter = str(exc)
            return info.value, shorter, await echo.call("echo", {"text": "still here"})

    exc, shorter, after = run(go())
    assert exc.timeout is True and "300 ms" in str(exc) and "'slow'" in str(exc) and "'echo'" in str(exc)
    assert "100 ms" in shorter
    assert after == {"result": "still here"}


# ------------------------------------------------------------------ concurrency
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_calls_run_at_once(transport, request):
    """`meet` answers only when all the calls wait together: sequential calls would fail."""
    server = echo_stdio() if transport == "stdio" else McpServer("echo", url=request.getfixturevalue("http_echo"))

    async def go():
        async with host_of(server) as host:
            return await asyncio.gather(*(host.call("tool", "meet", {"parties": 8}) for _ in range(8)))

    assert run(go()) == [{"result": "met"}] * 8


# ------------------------------------------------------------------ a server that dies
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_server_that_dies_fails_the_calls_in_flight_and_later_ones(transport, request):
    server = echo_stdio() if transport == "stdio" else McpServer("echo", url=request.getfixturevalue("http_echo"))

    async def go():
        async with McpProvider(server) as echo:
            results = await asyncio.gather(echo.call("slow", {"ms": 20000}), echo.call("die", {"after_ms": 200}),
                                           return_exceptions=True)
            with pytest.raises(HostFailure) as later:
                await echo.call("echo", {"text": "anyone?"})
            return results, str(later.value)

    results, later = run(go())
    for result in results:
        assert isinstance(result, HostFailure) and not isinstance(result, ToolError)
        assert "MCP server 'echo'" in str(result)
    assert "closed the connection" in str(results[0])
    assert later.startswith("MCP server 'echo' is not running")


def test_a_server_that_does_not_start_is_a_host_failure(tmp_path):
    async def go(server):
        with pytest.raises(HostFailure) as info:
            async with McpProvider(server):
                pass
        return str(info.value)

    missing = run(go(McpServer("ghost", command=str(tmp_path / "no-such-server"))))
    assert missing.startswith("MCP server 'ghost' did not start:")
    crashing = run(go(McpServer("crash", command=sys.executable, args=("-c", "raise SystemExit(4)"))))
    assert crashing.startswith("MCP server 'crash' did not start:")


# ------------------------------------------------------------------ secrets
def test_env_values_reach_the_server_and_nothing_else(monkeypatch):
    secret = "sk-test-" + "7" * 24
    monkeypatch.setenv("ECHO_TEST_TOKEN", secret)
    server = echo_stdio(env=(("API_TOKEN", "${ECHO_TEST_TOKEN}"), ("PLAIN", "x")))

    async def go():
        async with host_of(server) as host:
            seen = await host.call("tool", "env", {"name": "API_TOKEN"})
            with pytest.raises(ToolError) as failed:
                await host.call("tool", "fail", {"message": "nothing secret"})
            return seen, host.log, str(failed.value)

    seen, log, failed = run(go())
    assert seen == {"set": True, "length": len(secret)}
    assert secret not in repr(log) and secret not in failed and secret not in repr(server)

    monkeypatch.delenv("ECHO_TEST_TOKEN")

    async def missing():
        with pytest.raises(ConfigError) as info:
            async with host_of(server):
                pass
        return str(info.value)

    assert "ECHO_TEST_TOKEN" in run(missing())


# ------------------------------------------------------------------ the router
def test_the_router_finds_tools_by_name_and_refuses_what_is_not_granted():
    async def go():
        async with host_of(echo_stdio("one"), echo_stdio("two")) as host:
            first = await host.call("tool", "one.echo", {"text": "a"})
            second = await host.call("mcp", "two/echo", {"server": "two", "tool": "echo", "args": {"text": "b"}})
            payload = await host.call("connector", "one", {"operation": "add", "payload": '{"a": 2, "b": 3}'})
            refused = []
            for capability, name in (("tool", "echo"), ("tool", "nope"), ("memory", "get")):
                with pytest.raises(HostFailure) as info:
                    await host.call(capability, name, {})
                refused.append(str(info.value))
            return first, second, payload, refused, [e["outcome"] for e in host.log]

    first, second, payload, refused, outcomes = run(go())
    assert (first, second, payload) == ({"result": "a"}, {"result": "b"}, {"sum": 5})
    assert "several MCP servers (one, two)" in refused[0]
    assert "no MCP server of the host config has a tool 'nope'" in refused[1]
    assert "grants no provider for memory 'get'" in refused[2]
    assert outcomes == ["result", "result", "result", "failed", "failed", "failed"]


def test_routes_and_tools_lists_are_checked_when_the_servers_start(tmp_path):
    config = tmp_path / "host.toml"
    config.write_text(f'[mcp.servers.echo]\ncommand = {sys.executable!r}\nargs = [{ECHO!r}]\n'
                      '[routes]\nshout = "echo.shout"\n')

    async def go():
        with pytest.raises(ConfigError) as info:
            async with from_config(str(config)):
                pass
        return str(info.value)

    assert "routes.'shout' = 'echo.shout': MCP server 'echo' has no tool 'shout'" in run(go())

    config.write_text(f'[mcp.servers.echo]\ncommand = {sys.executable!r}\nargs = [{ECHO!r}]\n'
                      'tools = ["echo", "shout"]\n')
    assert "MCP server 'echo' lists tools it does not have: shout" in run(go())


# ------------------------------------------------------------------ workflows through the asyncio driver
PARALLEL_D3 = """\
name: meet
steps:
  start: { kind: manual }
  a: { kind: mcp.tool, depends_on: start, server: echo, tool: meet, args: { parties: 3 } }
  b: { kind: mcp.tool, depends_on: start, server: echo, tool: meet, args: { parties: 3 } }
  c: { kind: tool, depends_on: start, name: meet, args: { parties: 3 } }
  slow:
    kind: tool
    depends_on: start
    name: slow
    args: { ms: 5000 }
    timeout: 300ms
    on_error: continue
  done:
    kind: finish
    depends_on: [a, b, c, slow]
    output: { a: "{{ steps.a.output.result }}", c: "{{ steps.c.output.result }}", slow: "{{ steps.slow.error }}" }
"""

WFS = """\
steps:
  - id: greet
    type: tool
    tool: echo
    inputs:
      text: { type: string, value: "hello" }
    outputs:
      text: { type: string, value: $result.result }
  - id: broken
    type: tool
    tool: fail
    on_error: ignore
    inputs:
      message: { type: string, value: "down" }
outputs:
  text: { type: string, value: $steps.greet.output.text }
"""


def _module(text: str, path: str):
    result = compile_text(text, path)
    assert result.ok, result.diagnostics
    return load_module(compile_workflow(result.workflow))


def test_dialect3_steps_meet_concurrently_and_a_step_deadline_holds():
    module = _module(PARALLEL_D3, "meet.yaml")

    async def go():
        async with host_of(echo_stdio()) as host:
            return await module.run_async({}, host)

    record = run(go())
    assert record["status"] == "completed", record
    assert record["outputs"]["a"] == "met" and record["outputs"]["c"] == "met"
    assert record["outputs"]["slow"] == "timeout"   # the step's 300 ms deadline ended the 5 s call


def test_a_workflowskill_run_maps_tool_errors_to_step_failures():
    module = _module(WFS, "greet.yaml")

    async def go():
        async with host_of(echo_stdio()) as host:
            return await module.run_async({}, host)

    record = run(go())
    assert record["status"] == "success" and record["outputs"] == {"text": "hello"}
    assert [(s["id"], s["status"]) for s in record["steps"]] == [("greet", "success"), ("broken", "failed")]
