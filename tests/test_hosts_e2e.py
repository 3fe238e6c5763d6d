"""Compiled workflows of each dialect run with the asyncio driver against a
host built from the real providers (HTTP tools, OpenAI- and
Anthropic-speaking servers on 127.0.0.1), traced; and a planted API key
that never reaches a record, a trace, an error message, stderr or a log."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from flowc.backends.python import compile_workflow, load_module
from flowc.host import HostFailure
from flowc.hosts.http import HttpProvider
from flowc.hosts.llm import LlmProvider
from flowc.hosts.settings import HttpConfig, LlmProfile
from flowc.hosts.trace import Tracer
from flowc.pipeline import driver
from hosts_servers import AnthropicServer, OpenAIServer, Site

KEY = "sk-planted-7e3f1c9a2b8d4e6f0a1b2c3d4e5f6a7b"
BEARER = "Bearer user-given-c0ffee-0123456789"


class Router:
    """The smallest router: ``capability:name`` (or ``capability:*``) ->
    (provider, tool name; None: the workflow's name)."""

    def __init__(self, routes: dict) -> None:
        self.routes = routes

    async def call(self, capability, name, args):
        route = self.routes.get(f"{capability}:{name}") or self.routes.get(f"{capability}:*")
        if route is None:
            raise HostFailure(f"no provider for {capability}:{name}")
        provider, tool = route
        return await provider.call(tool or name, args)

    def sleep(self, ms):
        return asyncio.sleep(ms / 1000)


@pytest.fixture
def world(monkeypatch):
    monkeypatch.setenv("FLOWC_TEST_LLM_KEY", KEY)
    with Site() as site, OpenAIServer(key=KEY) as openai, AnthropicServer(key=KEY) as anthropic:
        yield site, openai, anthropic


def providers(site, openai, anthropic):
    http = HttpProvider(HttpConfig(allow=[site.url + "/"], timeout_ms=2000))
    gpt = LlmProvider("gpt", LlmProfile("openai", openai.url + "/v1", "gpt-test", "FLOWC_TEST_LLM_KEY", max_retries=1),
                      backoff_base_s=0.01)
    claude = LlmProvider("claude", LlmProfile("anthropic", anthropic.url, "claude-test", "FLOWC_TEST_LLM_KEY",
                                              max_retries=1), backoff_base_s=0.01)
    return http, gpt, claude


def run_traced(workflow_text, path, dialect, inputs, routes_of, sink):
    result = driver.compile_text(textwrap.dedent(workflow_text), path, dialect)
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    module = load_module(compile_workflow(result.workflow))

    async def go():
        http, gpt, claude = routes_of
        for p in routes_of:
            await p.start()
        try:
            host = Router({"tool:web_fetch": (http, None), "tool:http_request": (http, None),
                           "tool:llm": (gpt, None), "http:*": (http, "http_request"),
                           "search:fetch": (http, "web_fetch"), "llm:agent": (claude, None), "llm:*": (gpt, None)})
            return await module.run_async(inputs, Tracer(sink, values=True).wrap(host))
        finally:
            for p in routes_of:
                await p.aclose()
    return asyncio.run(go())


WORKFLOWSKILL = """\
    ---
    name: page-digest
    description: Fetch a page and summarize it.
    ---

    ```workflow
    inputs:
      url:
        type: string
    outputs:
      summary:
        type: object
        value: $steps.summarize.output
      title:
        type: string
        value: $steps.fetch.output.title
    steps:
      - id: fetch
        type: tool
        tool: web_fetch
        inputs:
          url: { type: string, value: $inputs.url }
      - id: summarize
        type: tool
        tool: llm
        retry: { max: 1, delay: "10ms", backoff: 1 }
        inputs:
          prompt: { type: string, value: "Summarize:\\n\\n${steps.fetch.output.content}" }
          schema: { type: object, value: { echo: string } }
    ```
"""


def test_workflowskill_web_fetch_then_llm(world, tmp_path):
    site, openai, anthropic = world
    with (tmp_path / "t.jsonl").open("w") as sink:
        record = run_traced(WORKFLOWSKILL, "digest.md", "workflowskill", {"url": f"{site.url}/page"},
                            providers(site, openai, anthropic), sink)
    assert record["status"] == "success", record["error"]
    assert record["outputs"]["title"] == "Release notes & more"
    summary = record["outputs"]["summary"]["echo"]
    assert summary.startswith("Summarize:\n\n# Release 2.0\n\nThe **new** engine")
    sent = json.loads(openai.requests[-1]["body"])
    assert sent["response_format"] == {"type": "json_object"}
    trace = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [e["step"] for e in trace if e["event"] == "call_end"] == ["fetch", "summarize"]


AEVATAR = """\
    name: fetch_and_summarize
    roles:
      - id: writer
        system_prompt: You summarize API answers in one sentence.
        model: gpt-role
        temperature: 0.3
    steps:
      - id: get
        type: http_request
        parameters:
          url: "{url}"
          method: GET
      - id: summarize
        type: llm_call
        target_role: writer
        parameters:
          prompt_prefix: "Summarize:"
"""


def test_aevatar_http_request_then_llm_call(world, tmp_path):
    site, openai, anthropic = world
    with (tmp_path / "t.jsonl").open("w") as sink:
        record = run_traced(AEVATAR.replace("{url}", f"{site.url}/data"), "a.yaml", "aevatar", {"input": "go"},
                            providers(site, openai, anthropic), sink)
    assert record["status"] == "success", record
    got = json.loads(record["steps"][0]["output"])
    assert got["status"] == 200 and got["body"] == {"items": [1, 2, 3], "ok": True}
    sent = json.loads(openai.requests[-1]["body"])
    assert sent["model"] == "gpt-role" and sent["temperature"] == 0.3
    assert sent["messages"][0] == {"role": "system", "content": "You summarize API answers in one sentence."}
    assert record["outputs"]["output"] == "echo: Summarize:\n\n" + record["steps"][0]["output"]


INSTRUCTION = """\
    name: triage
    version: 3
    steps:
      start: {kind: once}
      get:
        kind: http
        depends_on: start
        url: "{url}"
        headers: {Authorization: "BEARER"}
      label:
        kind: agent
        depends_on: get
        instruction: "Label {{steps.get.output.body.items}}"
        system: "You label lists."
        output_schema:
          type: object
          properties: {label: {enum: [short, long]}, count: {type: integer}}
          required: [label, count]
      done:
        kind: finish
        depends_on: label
        output: "{{steps.label.output}}"
"""


def test_instruction_http_then_agent_with_output_schema(world, tmp_path):
    site, openai, anthropic = world
    text = INSTRUCTION.replace("{url}", f"{site.url}/data").replace("BEARER", BEARER)
    with (tmp_path / "t.jsonl").open("w") as sink:
        record = run_traced(text, "t.yaml", "instruction", {}, providers(site, openai, anthropic), sink)
    assert record["status"] == "completed", record
    assert record["outputs"] == {"label": "short", "count": 7}
    sent = json.loads(anthropic.requests[-1]["body"])
    assert sent["tool_choice"] == {"type": "tool", "name": "answer"} and sent["system"] == "You label lists."
    assert site.requests[-1]["headers"]["authorization"] == BEARER  # the header reached the server
    assert BEARER not in (tmp_path / "t.jsonl").read_text()           # and not the trace


# ------------------------------------------------------------------ secrets
FAILING = """\
    name: failing
    version: 3
    steps:
      start: {kind: once}
      denied:
        kind: http
        depends_on: start
        url: "http://203.0.113.9/private?api_key=query-secret-123"
        headers: {Authorization: "BEARER"}
        on_error: continue
      fetched:
        kind: http
        depends_on: start
        url: "SITE/data"
        headers: {Authorization: "BEARER"}
      missing:
        kind: search.fetch
        depends_on: start
        url: "SITE/status/404?token=query-secret-123"
        on_error: continue
      ask:
        kind: agent
        depends_on: [denied, fetched, missing]
        instruction: "hello"
        on_error: continue
      ask2:
        kind: think
        depends_on: ask
        prompt: "again"
        on_error: continue
      done: {kind: finish, depends_on: ask2}
"""


def test_a_planted_key_never_leaves_the_environment(world, tmp_path, monkeypatch, capsys, caplog):
    site, openai, anthropic = world
    caplog.set_level(logging.DEBUG)
    outputs = []
    text = FAILING.replace("BEARER", BEARER).replace("SITE", site.url)
    # 1. a key the APIs refuse (the OpenAI server quotes the key it got in its 401)
    monkeypatch.setenv("FLOWC_TEST_LLM_KEY", KEY + "-wrong")
    with (tmp_path / "fail.jsonl").open("w") as sink:
        failed = run_traced(text, "f.yaml", "instruction", {}, providers(site, openai, anthropic), sink)
    errors = {s["id"]: s.get("error") for s in failed["steps"]}
    assert "allow-list" in json.dumps(errors["denied"]) and "HTTP 404" in json.dumps(errors["missing"])
    assert {s["id"]: s["status"] for s in failed["steps"]}["fetched"] == "done"
    assert "HTTP 401" in json.dumps(errors["ask"]) and "HTTP 401" in json.dumps(errors["ask2"])
    outputs += [json.dumps(failed), (tmp_path / "fail.jsonl").read_text()]
    # 2. the right key: Anthropic answers after one 429, OpenAI's 429s outlast the retries
    monkeypatch.setenv("FLOWC_TEST_LLM_KEY", KEY)
    anthropic.replies.append({"status": 429, "headers": {"retry-after": "0"}})
    openai.replies.extend([{"status": 429, "headers": {"retry-after-ms": "1"}}] * 2)
    with (tmp_path / "ok.jsonl").open("w") as sink:
        ok = run_traced(text, "f.yaml", "instruction", {}, providers(site, openai, anthropic), sink)
    statuses = {s["id"]: (s["status"], s.get("error")) for s in ok["steps"]}
    assert statuses["ask"] == ("done", None) and "HTTP 429" in statuses["ask2"][1]
    errors.update({k: v[1] for k, v in statuses.items()})
    outputs += [json.dumps(ok), (tmp_path / "ok.jsonl").read_text()]
    captured = capsys.readouterr()
    outputs += [captured.out, captured.err, caplog.text]
    # the servers did get the key (so it was there to leak)
    assert any(r["headers"].get("x-api-key") == KEY for r in anthropic.requests)
    assert any(r["headers"].get("authorization") == f"Bearer {KEY}" for r in openai.requests)
    for out in outputs:
        assert KEY not in out
    # what the workflow gave (a header, a query secret): in its record's arguments, nowhere else
    for out in [json.dumps(errors), *outputs[1::2][:2], *outputs[4:]]:
        assert BEARER not in out and "query-secret-123" not in out
    # 3. the same as a process, `flowc run --config --trace --trace-values`, the key refused
    proc, record, events, trace = flowc_run(tmp_path, text, "cli.yaml", host_toml(site, openai, anthropic),
                                            KEY + "-wrong")
    assert proc.returncode == 0, proc.stderr
    errors = {s["id"]: s.get("error") for s in record["steps"]}
    assert "HTTP 401" in json.dumps(errors["ask"]) and "HTTP 401" in json.dumps(errors["ask2"])
    assert openai.requests[-1]["headers"]["authorization"] == f"Bearer {KEY}-wrong"   # quoted in its 401
    assert events[-1]["event"] == "run_end" and any(e["event"] == "call_end" for e in events)
    for out in (proc.stdout, proc.stderr, trace):
        assert KEY not in out
    assert BEARER not in trace and "query-secret-123" not in trace and BEARER not in proc.stderr


# ------------------------------------------------------------------ flowc run --config, as a process
ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def host_toml(site, openai, anthropic) -> str:
    """A host config for the local servers: routes that name profiles (the
    provider must still be asked with the workflow's own name)."""
    return textwrap.dedent(f"""\
        [llm.gpt]
        provider = "openai"
        base_url = "{openai.url}/v1"
        model = "gpt-test"
        api_key_env = "FLOWC_TEST_LLM_KEY"
        timeout_ms = 10000
        max_retries = 1

        [llm.claude]
        provider = "anthropic"
        base_url = "{anthropic.url}"
        model = "claude-test"
        api_key_env = "FLOWC_TEST_LLM_KEY"
        max_tokens = 300
        max_retries = 0

        [http]
        allow = ["{site.url}/"]
        timeout_ms = 10000
        max_redirects = 1

        [routes]
        llm = "llm.gpt"
        "llm:writer" = "llm.gpt"
        "llm:agent" = "llm.claude"
        "llm:think" = "llm.gpt"
        """)


def flowc_run(tmp_path, workflow: str, name: str, config: str, key: str, *extra: str):
    """``flowc run NAME --config host.toml --trace t.jsonl --trace-values --json``
    as a process: (process, record or None, trace events, trace text)."""
    path, host, trace = tmp_path / name, tmp_path / "host.toml", tmp_path / f"{name}.jsonl"
    path.write_text(textwrap.dedent(workflow))
    host.write_text(config)
    proc = subprocess.run([sys.executable, "-m", "flowc", "run", str(path), "--config", str(host), "--trace",
                           str(trace), "--trace-values", "--json", *extra], capture_output=True, text=True,
                          env={**ENV, "FLOWC_TEST_LLM_KEY": key}, timeout=120, check=False)
    text = trace.read_text() if trace.exists() else ""
    events = [json.loads(line) for line in text.splitlines()]
    record = json.loads(proc.stdout) if proc.stdout.strip() else None
    return proc, record, events, text


def assert_well_formed(events: list, steps: list, calls: list) -> None:
    """One run's trace: run_start first and run_end last, each step and call
    started and ended once, in the order they ran."""
    assert events[0]["event"] == "run_start" and events[-1]["event"] == "run_end"
    assert len({e["run"] for e in events}) == 1
    assert all(isinstance(e["t_ms"], (int, float)) for e in events)
    for kind in ("step", "call"):
        started = [e for e in events if e["event"] == f"{kind}_start"]
        ended = [e for e in events if e["event"] == f"{kind}_end"]
        assert len(started) == len(ended)
    assert [e["step"] for e in events if e["event"] == "step_end"] == steps
    assert [(e["step"], e["capability"], e["name"], e["status"]) for e in events
            if e["event"] == "call_end"] == calls


WORKFLOWSKILL_PLAIN_LLM = """\
    ---
    name: page-digest
    description: Fetch a page and summarize it.
    ---

    ```workflow
    inputs:
      url:
        type: string
    outputs:
      summary:
        type: object
        value: $steps.summarize.output
    steps:
      - id: fetch
        type: tool
        tool: web_fetch
        inputs:
          url: { type: string, value: $inputs.url }
      - id: summarize
        type: tool
        tool: llm
        inputs:
          prompt: { type: string, value: "Summarize:\\n\\n${steps.fetch.output.content}" }
    ```
"""

AEVATAR_GET = """\
    name: fetch_and_summarize
    roles:
      - id: writer
        system_prompt: You summarize API answers in one sentence.
    steps:
      - id: get
        type: http_request
        parameters:
          url: "SITE/echo"
          method: GET
      - id: summarize
        type: llm_call
        target_role: writer
        parameters:
          prompt_prefix: "Summarize:"
"""


@pytest.mark.parametrize("backend", ["python", "vm"])
def test_cli_workflowskill_llm_step_routed_to_a_profile_answers_json(world, tmp_path, backend):
    site, openai, anthropic = world
    proc, record, events, text = flowc_run(tmp_path, WORKFLOWSKILL_PLAIN_LLM, "digest.md",
                                           host_toml(site, openai, anthropic), KEY, "--inputs",
                                           _inputs(tmp_path, {"url": f"{site.url}/page"}), "--backend", backend)
    assert proc.returncode == 0, proc.stderr
    assert record["status"] == "success", record["error"]
    # `llm = "llm.gpt"`: the provider was asked for `llm`, so the answer is JSON, not text
    assert json.loads(openai.requests[-1]["body"])["response_format"] == {"type": "json_object"}
    assert record["outputs"]["summary"]["echo"].startswith("Summarize:\n\n# Release 2.0")
    assert_well_formed(events, ["fetch", "summarize"],
                       [("fetch", "tool", "web_fetch", "ok"), ("summarize", "tool", "llm", "ok")])
    for out in (proc.stdout, proc.stderr, text):
        assert KEY not in out


def test_cli_aevatar_get_sends_no_body_and_asks_the_role(world, tmp_path):
    site, openai, anthropic = world
    proc, record, events, text = flowc_run(tmp_path, AEVATAR_GET.replace("SITE", site.url), "a.yaml",
                                           host_toml(site, openai, anthropic), KEY, "--inputs",
                                           _inputs(tmp_path, {"input": "the step input"}))
    assert proc.returncode == 0, proc.stderr
    assert record["status"] == "success", record["error"]
    got = [r for r in site.requests if r["path"] == "/echo"]
    assert [(r["method"], r["body"]) for r in got] == [("GET", "")]   # the step's input is no GET body
    assert "content-length" not in got[0]["headers"]
    sent = json.loads(openai.requests[-1]["body"])
    assert sent["model"] == "gpt-test"
    assert sent["messages"][0] == {"role": "system", "content": "You summarize API answers in one sentence."}
    assert record["outputs"]["output"].startswith("echo: Summarize:\n\n")
    assert_well_formed(events, ["get", "summarize"],
                       [("get", "http", "http_request", "ok"), ("summarize", "llm", "writer", "ok")])
    for out in (proc.stdout, proc.stderr, text):
        assert KEY not in out


def test_cli_instruction_http_then_agent_on_anthropic(world, tmp_path):
    site, openai, anthropic = world
    workflow = INSTRUCTION.replace("{url}", f"{site.url}/data").replace("BEARER", BEARER)
    proc, record, events, text = flowc_run(tmp_path, workflow, "t.yaml", host_toml(site, openai, anthropic), KEY)
    assert proc.returncode == 0, proc.stderr
    assert record["status"] == "completed", record
    assert record["outputs"] == {"label": "short", "count": 7}
    sent = json.loads(anthropic.requests[-1]["body"])
    assert sent["model"] == "claude-test" and sent["max_tokens"] == 300      # the profile's settings
    assert sent["tool_choice"] == {"type": "tool", "name": "answer"}
    assert site.requests[-1]["headers"]["authorization"] == BEARER
    assert_well_formed(events, ["start", "get", "label", "done"],
                       [("get", "http", "request", "ok"), ("label", "llm", "agent", "ok")])
    for out in (proc.stdout, proc.stderr, text):
        assert KEY not in out
    assert BEARER not in text and BEARER not in proc.stderr   # the record's arguments hold it, the trace not


def _inputs(tmp_path, inputs: dict) -> str:
    path = tmp_path / "inputs.json"
    path.write_text(json.dumps(inputs))
    return str(path)
