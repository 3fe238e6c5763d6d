"""The asyncio driver against the sync one on independent host calls.

    python benchmarks/bench_async.py [--calls N] [--ms MS]

A dialect-3 workflow of N independent tool calls (each depends only on the
trigger; the finish joins them) runs with a host whose every call takes MS
milliseconds: once with the sync driver (``run(inputs, host)``, the host
sleeps with ``time.sleep``) and once with the asyncio driver (``await
run_async(inputs, host)``, the host awaits ``asyncio.sleep``). Reported:
the wall time of each and their ratio (one run each). Target: N=10,
MS=100: asyncio <= 150 ms (sequential: about N * MS).
"""

from __future__ import annotations

import argparse
import asyncio
import time

from flowc.backends.python import compile_workflow, load_module
from flowc.pipeline import driver


def fan_out(n: int) -> str:
    calls = "".join(f"  c{i}: {{ kind: tool, depends_on: start, name: work, args: {{ i: {i} }} }}\n"
                    for i in range(n))
    ids = ", ".join(f"c{i}" for i in range(n))
    return (f"name: fan\nsteps:\n  start: {{ kind: manual }}\n{calls}"
            f"  done: {{ kind: finish, depends_on: [{ids}] }}\n")


class SyncHost:
    def __init__(self, ms: float) -> None:
        self.ms = ms

    def call(self, capability: str, name: str, args: dict) -> dict:
        time.sleep(self.ms / 1000)
        return args

    def sleep(self, ms: float) -> None:
        time.sleep(ms / 1000)


class AsyncHost(SyncHost):
    async def call(self, capability: str, name: str, args: dict) -> dict:  # type: ignore[override]
        await asyncio.sleep(self.ms / 1000)
        return args

    async def sleep(self, ms: float) -> None:  # type: ignore[override]
        await asyncio.sleep(ms / 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--ms", type=float, default=100.0)
    args = parser.parse_args()
    result = driver.compile_text(fan_out(args.calls), "fan.yaml", "instruction")
    assert result.ok, [d.message for d in result.diagnostics]
    module = load_module(compile_workflow(result.workflow))
    start = time.perf_counter()
    sync = module.run({}, SyncHost(args.ms))
    sync_s = time.perf_counter() - start
    start = time.perf_counter()
    concurrent = asyncio.run(module.run_async({}, AsyncHost(args.ms)))
    async_s = time.perf_counter() - start
    assert sync["status"] == concurrent["status"] == "completed"
    assert len(sync["calls"]) == len(concurrent["calls"]) == args.calls
    print(f"{args.calls} independent calls of {args.ms:g} ms")
    print(f"  sync driver     {sync_s * 1000:8.1f} ms")
    print(f"  asyncio driver  {async_s * 1000:8.1f} ms")
    print(f"  ratio sync/asyncio: {sync_s / async_s:.1f}x")


if __name__ == "__main__":
    main()
