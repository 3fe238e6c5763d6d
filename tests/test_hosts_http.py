"""The built-in HTTP tools against a real server on 127.0.0.1 (tests/hosts_servers.py):
the allow-list (refused before connecting, redirects checked), redirects,
error statuses, the body cap, timeouts, and readable pages."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
from flowc.host import HostFailure, ToolError
from flowc.hosts.allowlist import AllowList, UrlRefused
from flowc.hosts.base import ProviderTimeout
from flowc.hosts.http import HttpProvider
from flowc.hosts.readable import readable
from flowc.hosts.settings import HttpConfig
from hosts_servers import Site


@pytest.fixture(scope="module")
def site():
    with Site() as s:
        yield s


def call(config: HttpConfig, tool: str, args: dict, timeout_ms=None):
    async def go():
        provider = HttpProvider(config)
        await provider.start()
        try:
            return await provider.call(tool, args, timeout_ms)
        finally:
            await provider.aclose()
    return asyncio.run(go())


def allowing(site, **kw) -> HttpConfig:
    return HttpConfig(allow=[site.url + "/"], **kw)


# ------------------------------------------------------------------ the allow-list
@pytest.mark.parametrize("url", [
    "https://api.example.com.evil.net/x",       # a longer host
    "https://api.example.com@evil.net/x",       # credentials before another host
    "http://api.example.com/v1/x",              # another scheme
    "https://api.example.com:8443/v1/x",        # another port
    "https://api.example.com/v10/x",            # not at a segment boundary
    "https://api.example.com/v1/%2e%2e/admin",  # an encoded dot segment
    "file:///etc/passwd",
    "not a url",
])
def test_allow_list_refuses_lookalikes(url):
    allow = AllowList(["https://api.example.com/v1", "http://127.0.0.1:8080/"])
    with pytest.raises(UrlRefused):
        allow.check(url)


def test_allow_list_accepts_prefixes_with_explicit_default_ports():
    allow = AllowList(["https://api.example.com/v1", "http://127.0.0.1:8080/"])
    for url in ("https://API.example.com:443/v1/items?q=1", "https://api.example.com/v1",
                "http://127.0.0.1:8080/anything"):
        assert allow.check(url).host.lower() in ("api.example.com", "127.0.0.1")


def test_a_denied_url_is_refused_before_any_connection():
    # a listening socket that never accepts: a connection attempt would show in its backlog
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        listener.setblocking(False)
        with pytest.raises(HostFailure) as info:
            call(HttpConfig(allow=["https://api.example.com/"]), "http_request",
                 {"url": f"http://127.0.0.1:{port}/x?token=s3cret", "headers": {"Authorization": "Bearer s3cret"}})
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    message = info.value.message
    assert f"http://127.0.0.1:{port}" in message and "allow-list" in message
    assert "s3cret" not in message and "/x" not in message


def test_default_deny():
    with pytest.raises(HostFailure, match="allow-list"):
        call(HttpConfig(allow=[]), "web_fetch", {"url": "http://127.0.0.1:9/"})


def test_a_redirect_out_of_the_allow_list_is_refused(site):
    with pytest.raises(HostFailure) as info:
        call(allowing(site), "http_request",
             {"url": f"{site.url}/away?to=http://198.51.100.7/steal?key=abc"})
    assert "http://198.51.100.7" in info.value.message and "abc" not in info.value.message


# ------------------------------------------------------------------ http_request
def test_http_request_parses_json_and_reports_headers(site):
    out = call(allowing(site), "http_request", {"url": f"{site.url}/data"})
    assert out["status"] == 200 and out["body"] == {"items": [1, 2, 3], "ok": True}
    assert out["headers"]["content-type"] == "application/json"


def test_http_request_sends_method_headers_query_and_a_json_body(site):
    out = call(allowing(site), "http_request", {
        "url": f"{site.url}/echo", "method": "post", "headers": {"X-Trace": "t1"},
        "query": {"q": "a b", "n": 2}, "json": {"a": [1, 2]}})
    echoed = out["body"]
    assert echoed["method"] == "POST" and echoed["path"] == "/echo?q=a+b&n=2"
    assert echoed["headers"]["x-trace"] == "t1" and echoed["headers"]["content-type"] == "application/json"
    assert echoed["body"] == '{"a":[1,2]}'


def test_http_request_status_is_data(site):
    for code in (404, 500):
        out = call(allowing(site), "http_request", {"url": f"{site.url}/status/{code}"})
        assert out["status"] == code and out["body"] == {"error": {"message": f"status {code}"}}


def test_http_request_reads_an_aevatar_step(site):
    out = call(allowing(site), "http_request", {"input": "payload", "parameters": {
        "url": f"{site.url}/echo", "method": "PUT", "headers": '{"X-A": "1"}'}})
    assert out["body"]["method"] == "PUT" and out["body"]["body"] == "payload"
    assert out["body"]["headers"]["x-a"] == "1"


def test_redirects_are_followed_and_303_becomes_get(site):
    out = call(allowing(site), "http_request", {"url": f"{site.url}/see-other", "method": "POST", "body": "x"})
    assert out["body"]["method"] == "GET" and out["body"]["body"] == ""
    page = call(allowing(site), "web_fetch", {"url": f"{site.url}/redirect/3"})
    assert page["title"] == "Release notes & more"


def test_too_many_redirects_fail_the_call(site):
    with pytest.raises(ToolError, match="more than 2 redirects"):
        call(allowing(site, max_redirects=2), "http_request", {"url": f"{site.url}/redirect/3"})
    with pytest.raises(ToolError, match="redirects"):
        call(allowing(site), "web_fetch", {"url": f"{site.url}/loop"})


def test_the_body_cap_stops_reading(site):
    with pytest.raises(ToolError, match="larger than 100000 bytes"):
        call(allowing(site, max_body_bytes=100_000), "http_request", {"url": f"{site.url}/big"})
    # web_fetch keeps what fits and says so
    out = call(allowing(site, max_body_bytes=100_000), "web_fetch", {"url": f"{site.url}/big"})
    assert len(out["content"]) == 100_000 and out["truncated"] is True
    out = call(allowing(site), "web_fetch", {"url": f"{site.url}/big", "max_bytes": 10})
    assert out["content"] == "x" * 10


def test_a_slow_server_times_out(site):
    started = time.monotonic()
    with pytest.raises(ProviderTimeout) as info:
        call(allowing(site, timeout_ms=300), "http_request", {"url": f"{site.url}/slow"})
    assert time.monotonic() - started < 2.5
    assert info.value.timeout and "300 ms" in info.value.message
    with pytest.raises(ProviderTimeout):  # the call's own deadline is the tighter one
        call(allowing(site), "web_fetch", {"url": f"{site.url}/slow"}, timeout_ms=200)


def test_a_closed_port_is_a_tool_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ToolError, match="network error"):
        call(HttpConfig(allow=[f"http://127.0.0.1:{port}/"]), "http_request", {"url": f"http://127.0.0.1:{port}/"})


def test_bad_arguments_are_tool_errors(site):
    for args in ({}, {"url": 5}, {"url": f"{site.url}/", "method": "TRACE"},
                 {"url": f"{site.url}/", "headers": {"X": "a\r\nInjected: 1"}},
                 {"url": f"{site.url}/", "headers": {"Bad Name": "x"}},
                 {"url": f"{site.url}/", "headers": {"X": "caf\u00e9"}}):
        with pytest.raises(ToolError):
            call(allowing(site), "http_request", args)


# ------------------------------------------------------------------ web_fetch
def test_web_fetch_returns_readable_markdown(site):
    out = call(allowing(site), "web_fetch", {"url": f"{site.url}/page"})
    assert out["url"] == f"{site.url}/page" and out["title"] == "Release notes & more"
    content = out["content"]
    assert content.startswith("# Release 2.0")
    assert f"The **new** engine is [documented]({site.url}/docs/engine)." in content
    assert "- faster\n- smaller" in content and "```\nflowc run w.md\n```" in content
    for chrome in ("Home", "About", "nobody", "color:red", "document.write"):
        assert chrome not in content


def test_web_fetch_text_and_plain_bodies(site):
    out = call(allowing(site), "web_fetch", {"url": f"{site.url}/page", "extract": "text"})
    assert out["content"] == "Release 2.0 The new engine is documented. faster smaller flowc run w.md"
    assert call(allowing(site), "web_fetch", {"url": f"{site.url}/plain"})["content"] == "just text\n"


def test_web_fetch_fails_on_an_error_status(site):
    with pytest.raises(ToolError, match=r"HTTP 404 Not Found for http://127\.0\.0\.1:\d+$"):
        call(allowing(site), "web_fetch", {"url": f"{site.url}/status/404?token=abc"})


def test_readable_is_linear_on_deep_and_unclosed_markup():
    html = ("<div>" * 50_000 + "<p>x" * 50_000 + "</span>" * 50_000 + "<a href='/y'>z" * 20_000
            + "</a>" * 20_000)
    _title, content = readable(html, "http://h/")  # answers (a quadratic walk would not, here)
    assert content.count("x") == 50_000


def test_a_config_of_another_class_takes_the_defaults_it_lacks(site):
    import attrs

    @attrs.frozen
    class Loaded:
        allow: list
        timeout_ms: int = 30000

    provider = HttpProvider(Loaded([site.url + "/"]))
    assert provider.config.max_redirects == 5 and provider.config.max_body_bytes == 10_000_000
    out = call(provider.config, "http_request", {"url": f"{site.url}/data"})
    assert out["status"] == 200


# ------------------------------------------------------------------ idempotency keys
def test_http_request_sends_a_journaled_runs_idempotency_key(site):
    config = allowing(site)
    echoed = call(config, "http_request", {"url": site.url + "/echo", "method": "POST", "body": "x"})
    assert "idempotency-key" not in echoed["body"]["headers"]

    async def go(args):
        provider = HttpProvider(config)
        await provider.start()
        try:
            return await provider.call("http_request", args, idempotency_key="run-1:7")
        finally:
            await provider.aclose()

    echoed = asyncio.run(go({"url": site.url + "/echo", "method": "POST", "body": "x"}))
    assert echoed["body"]["headers"]["idempotency-key"] == "run-1:7"
    # a key the workflow sets itself is its own
    echoed = asyncio.run(go({"url": site.url + "/echo", "headers": {"Idempotency-Key": "mine"}}))
    assert echoed["body"]["headers"]["idempotency-key"] == "mine"


def test_a_journaled_run_with_a_host_config_sends_the_key_through_the_router(site, tmp_path, capsys):
    import json

    from flowc import cli

    workflow = tmp_path / "post.yaml"
    workflow.write_text(
        "name: post\nversion: 3\nsteps:\n"
        "  start: {kind: once}\n"
        "  post:\n    kind: http\n    depends_on: start\n    method: POST\n"
        f"    url: \"{site.url}/echo\"\n"
        "  done: {kind: finish, depends_on: post, output: \"{{ steps.post.output }}\"}\n", encoding="utf-8")
    config = tmp_path / "host.toml"
    config.write_text(f'[http]\nallow = ["{site.url}/"]\n', encoding="utf-8")
    journal = tmp_path / "runs.db"
    assert cli.main(["run", str(workflow), "--config", str(config), "--journal", str(journal), "--json"]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    run_id = captured.err.split("run ", 1)[1].split()[0]
    assert record["status"] == "completed", record
    assert f'"idempotency-key": "{run_id}:1"' in json.dumps(record["outputs"]), record["outputs"]
