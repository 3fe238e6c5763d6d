"""What the host providers cost: traced runs, readable pages, local round trips.

    python benchmarks/bench_hosts.py [--runs N]

- **trace overhead**: the triage example (7 steps, 5 host calls, 2
  sleeps) run N times with a scripted host, plain and with a
  ``Tracer`` writing every event to a file (``flowc run --trace``).
  Reported: ms per run of each and their ratio (one measurement each).
- **readable pages**: ``web_fetch``'s HTML-to-Markdown conversion of a
  generated 1 MB article page. Reported: MB/s.
- **round trips**: ``web_fetch`` of a page and an LLM call through the
  providers to servers on 127.0.0.1 (the test servers), N calls each.
  Reported: ms per call (the providers, httpx and the local server).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.hosts.http import HttpProvider
from flowc.hosts.llm import LlmProvider
from flowc.hosts.readable import readable
from flowc.hosts.settings import HttpConfig, LlmProfile
from flowc.hosts.trace import Tracer
from flowc.pipeline import driver

ROOT = Path(__file__).resolve().parent.parent
TRIAGE = ROOT / "examples" / "triage"
sys.path.insert(0, str(ROOT / "tests"))


def trace_overhead(runs: int) -> tuple[float, float]:
    module = load_module(compile_workflow(driver.compile_file(str(TRIAGE / "SKILL.md")).workflow))
    inputs = json.loads((TRIAGE / "inputs.json").read_text(encoding="utf-8"))
    script = json.loads((TRIAGE / "host.json").read_text(encoding="utf-8"))
    started = time.perf_counter()
    for _ in range(runs):
        module.run(inputs, ScriptedHost(script))
    plain = (time.perf_counter() - started) * 1000 / runs
    with tempfile.TemporaryDirectory() as tmp, open(os.path.join(tmp, "t.jsonl"), "w") as sink:
        tracer = Tracer(sink)
        started = time.perf_counter()
        for _ in range(runs):
            module.run(inputs, tracer.wrap(ScriptedHost(script)))
        traced = (time.perf_counter() - started) * 1000 / runs
    return plain, traced


def article(size: int) -> str:
    para = ("<p>The <b>engine</b> runs <a href='/docs/step'>steps</a> and <em>calls</em> "
            "<code>hosts</code> with care.</p>\n")
    body = "<h2>Section</h2><ul><li>one</li><li>two</li></ul>" + para * 8
    parts = ["<html><head><title>Bench</title><script>x()</script></head><body><nav>menu</nav><main>"]
    while sum(map(len, parts)) < size:
        parts.append(body)
    parts.append("</main></body></html>")
    return "".join(parts)


def readable_rate() -> float:
    page = article(1_000_000)
    started = time.perf_counter()
    readable(page, "https://example.com/")
    return len(page) / (time.perf_counter() - started) / 1e6


async def round_trips(runs: int) -> tuple[float, float]:
    from hosts_servers import OpenAIServer, Site

    with Site() as site, OpenAIServer() as api:
        http = HttpProvider(HttpConfig(allow=[site.url + "/"]))
        llm = LlmProvider("bench", LlmProfile("openai", api.url + "/v1", "m"))
        await http.start()
        await llm.start()
        try:
            started = time.perf_counter()
            for _ in range(runs):
                await http.call("web_fetch", {"url": f"{site.url}/page"})
            fetch = (time.perf_counter() - started) * 1000 / runs
            started = time.perf_counter()
            for _ in range(runs):
                await llm.call("agent", {"instruction": "hi"})
            ask = (time.perf_counter() - started) * 1000 / runs
        finally:
            await http.aclose()
            await llm.aclose()
    return fetch, ask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    plain, traced = trace_overhead(args.runs)
    print(f"triage run, scripted host: plain {plain:.3f} ms, traced {traced:.3f} ms "
          f"(ratio {traced / plain:.2f})")
    print(f"readable(): 1 MB article page at {readable_rate():.1f} MB/s")
    fetch, ask = asyncio.run(round_trips(args.runs // 3 or 1))
    print(f"round trips on 127.0.0.1: web_fetch {fetch:.2f} ms, LLM call {ask:.2f} ms")


if __name__ == "__main__":
    main()
