"""What the host adds to MCP tool calls, and concurrent MCP calls under the asyncio driver.

    python benchmarks/bench_mcp.py [--calls N] [--concurrent K] [--ms MS]

Both parts use tests/mcp_servers/echo_server.py over stdio, started once.

1. Overhead per call: N sequential ``echo`` calls through the router host
   (``await host.call("tool", "echo", ...)``: routing, argument shaping,
   the call log, the result mapping) against the same N calls made directly
   with the SDK (``client.call_tool``) on a second connection to an
   identical server. Reported: microseconds per call each, their ratio and
   the difference (one run each).
2. Concurrency: a dialect-3 workflow of K independent ``slow`` calls of MS
   milliseconds each (each depends only on the trigger), run by the
   asyncio driver against the router host; wall time against one such call
   alone. Target: K=20, MS=100: at most 1.5x one call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from flowc.backends.python import compile_workflow, load_module
from flowc.hosts.config import HostConfig, McpServer
from flowc.hosts.router import RouterHost
from flowc.pipeline import driver

ECHO = str(Path(__file__).resolve().parent.parent / "tests" / "mcp_servers" / "echo_server.py")


def _server(name: str) -> McpServer:
    return McpServer(name, command=sys.executable, args=(ECHO,))


def fan_out(k: int, ms: int) -> str:
    calls = "".join(f"  c{i}: {{ kind: tool, depends_on: start, name: slow, args: {{ ms: {ms} }} }}\n"
                    for i in range(k))
    ids = ", ".join(f"c{i}" for i in range(k))
    return (f"name: fan\nsteps:\n  start: {{ kind: manual }}\n{calls}"
            f"  done: {{ kind: finish, depends_on: [{ids}] }}\n")


async def overhead(n: int) -> tuple[float, float]:
    """(router us per call, direct SDK us per call)."""
    from mcp import Client, StdioServerParameters

    async with RouterHost(HostConfig(mcp={"echo": _server("echo")})) as host, \
            Client(StdioServerParameters(command=sys.executable, args=[ECHO]), cache=None) as client:
        for _ in range(20):   # warm both connections
            await host.call("tool", "echo", {"text": "warm"})
            await client.call_tool("echo", {"text": "warm"})
        host.log.clear()
        routed, direct = [], []
        for i in range(n):   # interleaved, so both see the same machine load
            t0 = time.perf_counter()
            await host.call("tool", "echo", {"text": f"m{i}"})
            t1 = time.perf_counter()
            await client.call_tool("echo", {"text": f"m{i}"})
            t2 = time.perf_counter()
            routed.append(t1 - t0)
            direct.append(t2 - t1)
    return statistics.median(routed) * 1e6, statistics.median(direct) * 1e6


async def concurrency(k: int, ms: int) -> tuple[float, float, dict]:
    """(wall ms of K concurrent calls in a workflow, wall ms of one call, the record)."""
    result = driver.compile_text(fan_out(k, ms), "fan.yaml", "instruction")
    assert result.ok, [d.message for d in result.diagnostics]
    module = load_module(compile_workflow(result.workflow))
    async with RouterHost(HostConfig(mcp={"echo": _server("echo")})) as host:
        await host.call("tool", "slow", {"ms": 1})   # warm
        t0 = time.perf_counter()
        await host.call("tool", "slow", {"ms": ms})
        one = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        record = await module.run_async({}, host)
        many = (time.perf_counter() - t0) * 1000
    return many, one, record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="sequential calls for the overhead (500)")
    parser.add_argument("--concurrent", type=int, default=20, help="concurrent calls (20)")
    parser.add_argument("--ms", type=int, default=100, help="each concurrent call's duration in ms (100)")
    args = parser.parse_args()

    routed, direct = asyncio.run(overhead(args.calls))
    print(f"MCP echo over stdio, {args.calls} sequential calls (median per call):")
    print(f"  through the host {routed:8.1f} us")
    print(f"  SDK directly     {direct:8.1f} us")
    print(f"  ratio {routed / direct:.2f}x, host overhead {routed - direct:+.1f} us per call")

    many, one, record = asyncio.run(concurrency(args.concurrent, args.ms))
    assert record["status"] == "completed", record
    print(f"{args.concurrent} concurrent calls of {args.ms} ms (dialect 3, asyncio driver):")
    print(f"  one call {one:7.1f} ms, {args.concurrent} calls {many:7.1f} ms wall: {many / one:.2f}x one call "
          "(target <= 1.5x)")


if __name__ == "__main__":
    main()
