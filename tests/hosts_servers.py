"""Real HTTP servers on 127.0.0.1 for the host provider tests.

- :class:`Site`: pages, JSON, redirects, error statuses, a huge body, a slow
  answer and an echo of the request (the HTTP tools' tests);
- :class:`OpenAIServer`: ``POST /v1/chat/completions`` as OpenAI's API
  answers it (completion objects, ``response_format``, error bodies, 429
  with ``retry-after-ms``);
- :class:`AnthropicServer`: ``POST /v1/messages`` as Anthropic's API answers
  it (message objects, ``tool_use`` blocks for a forced tool, ``error``
  bodies, 429 with ``retry-after``, 529 overloaded).

Each runs ``http.server`` in a thread; ``with Server() as s:`` starts it,
``s.url`` is its base URL, ``s.requests`` what it received. The model
servers answer from ``s.replies`` (a queue of planned answers) and
otherwise echo the user message, so a test sees what the provider sent.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address):
        pass  # a client that stopped reading (a body cap, a timeout) is expected here


class Running:
    """A server in a thread; a context manager."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.replies: list[dict] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms delayed-ACK stall)

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                owner.handle(self, "GET")

            def do_POST(self):
                owner.handle(self, "POST")

            def do_PUT(self):
                owner.handle(self, "PUT")

            def do_DELETE(self):
                owner.handle(self, "DELETE")

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    # ------------------------------------------------------------ helpers
    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        length = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(length) if length else b""
        request = {"method": method, "path": h.path, "headers": {k.lower(): v for k, v in h.headers.items()},
                   "body": raw.decode("utf-8", "replace")}
        with self.lock:
            self.requests.append(request)
        self.answer(h, request)

    def answer(self, h, request) -> None:
        raise NotImplementedError

    @staticmethod
    def send(h, status: int, body, headers: dict | None = None, content_type="application/json") -> None:
        data = body if isinstance(body, bytes) else (
            body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8"))
        h.send_response(status)
        h.send_header("content-type", content_type)
        h.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            h.send_header(key, value)
        h.end_headers()
        h.wfile.write(data)

    def planned(self) -> dict | None:
        with self.lock:
            return self.replies.pop(0) if self.replies else None


# ------------------------------------------------------------------ a web site
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Release notes &amp; more</title>
<style>body{color:red}</style><script>document.write("no")</script></head>
<body><nav><a href="/">Home</a><a href="/about">About</a></nav>
<main><h1>Release 2.0</h1><p>The <strong>new</strong> engine is <a href="/docs/engine">documented</a>.</p>
<ul><li>faster</li><li>smaller</li></ul><pre>flowc run w.md</pre></main>
<footer>(c) nobody</footer></body></html>"""


class Site(Running):
    """Routes: /page (HTML), /plain, /data (JSON), /status/<n>, /redirect/<n>
    (n hops then /page), /loop, /away?to=URL, /big (``big_bytes`` bytes,
    streamed), /slow (answers after ``slow_s`` seconds), /echo."""

    big_bytes = 3_000_000
    slow_s = 3.0

    def answer(self, h, request) -> None:
        path = request["path"].split("?")[0]
        query = request["path"].partition("?")[2]
        if path == "/page":
            self.send(h, 200, PAGE, content_type="text/html; charset=utf-8")
        elif path == "/plain":
            self.send(h, 200, "just text\n", content_type="text/plain")
        elif path == "/data":
            self.send(h, 200, {"items": [1, 2, 3], "ok": True})
        elif path.startswith("/status/"):
            code = int(path.rsplit("/", 1)[1])
            self.send(h, code, {"error": {"message": f"status {code}"}})
        elif path.startswith("/redirect/"):
            n = int(path.rsplit("/", 1)[1])
            self.send(h, 302, "", {"location": f"/redirect/{n - 1}" if n > 1 else "/page"})
        elif path == "/loop":
            self.send(h, 302, "", {"location": "/loop"})
        elif path == "/away":
            self.send(h, 307, "", {"location": query.partition("=")[2]})
        elif path == "/see-other":
            self.send(h, 303, "", {"location": "/echo"})
        elif path == "/big":
            self.stream_big(h)
        elif path == "/slow":
            time.sleep(self.slow_s)
            self.send(h, 200, "late")
        elif path == "/echo":
            self.send(h, 200, request)
        else:
            self.send(h, 404, "not found", content_type="text/plain")

    def stream_big(self, h) -> None:
        h.send_response(200)
        h.send_header("content-type", "text/plain")
        h.send_header("content-length", str(self.big_bytes))
        h.end_headers()
        chunk = b"x" * 65536
        sent = 0
        try:
            while sent < self.big_bytes:
                part = chunk[:self.big_bytes - sent]
                h.wfile.write(part)
                sent += len(part)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading at its cap
        with self.lock:
            self.big_sent = sent


# ------------------------------------------------------------------ model APIs
def _example(schema):
    """A value satisfying a simple JSON Schema (what a model would answer)."""
    if not isinstance(schema, dict):
        return "text"
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: _example(v) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [_example(schema.get("items"))]
    if kind in ("integer", "number"):
        return 7
    if kind == "boolean":
        return True
    return "text"


class OpenAIServer(Running):
    """An OpenAI-compatible chat completions API. ``key``: the API key it
    accepts (a wrong one gets a 401 whose message quotes the key it got).
    A planned reply: ``{"status", "body"?, "headers"?}`` or ``{"content"}``."""

    def __init__(self, key: str | None = None) -> None:
        super().__init__()
        self.key = key

    def answer(self, h, request) -> None:
        if request["path"] != "/v1/chat/completions":
            return self.send(h, 404, {"error": {"message": "Unknown request URL", "type": "invalid_request_error"}})
        got = request["headers"].get("authorization", "")
        if self.key is not None and got != f"Bearer {self.key}":
            return self.send(h, 401, {"error": {
                "message": f"Incorrect API key provided: {got.removeprefix('Bearer ')}.",
                "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}})
        body = json.loads(request["body"])
        plan = self.planned()
        if plan is not None and "status" in plan:
            return self.send(h, plan["status"], plan.get("body", {"error": {
                "message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}),
                plan.get("headers"))
        content = plan["content"] if plan is not None else self.reply(body)
        self.send(h, 200, {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 1767225600,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": None},
                         "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
            "system_fingerprint": "fp_local"})

    @staticmethod
    def reply(body: dict) -> str:
        user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return json.dumps(_example(fmt["json_schema"]["schema"]))
        if fmt.get("type") == "json_object":
            return "```json\n" + json.dumps({"echo": user}) + "\n```"
        return "echo: " + user


class AnthropicServer(Running):
    """Anthropic's messages API. ``key``: the accepted ``x-api-key``.
    A planned reply: ``{"status", "body"?, "headers"?}`` or ``{"text"}``."""

    def __init__(self, key: str | None = None) -> None:
        super().__init__()
        self.key = key

    def answer(self, h, request) -> None:
        if request["path"] != "/v1/messages":
            return self.send(h, 404, {"type": "error", "error": {"type": "not_found_error", "message": "Not found"}})
        headers = request["headers"]
        if "anthropic-version" not in headers:
            return self.send(h, 400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "anthropic-version: header is required"}})
        if self.key is not None and headers.get("x-api-key") != self.key:
            return self.send(h, 401, {"type": "error", "error": {
                "type": "authentication_error", "message": "invalid x-api-key"}})
        body = json.loads(request["body"])
        if "max_tokens" not in body:
            return self.send(h, 400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "max_tokens: Field required"}})
        plan = self.planned()
        if plan is not None and "status" in plan:
            return self.send(h, plan["status"], plan.get("body", {"type": "error", "error": {
                "type": "rate_limit_error", "message": "Number of request tokens has exceeded your rate limit"}}),
                plan.get("headers"))
        user = body["messages"][-1]["content"]
        if body.get("tool_choice", {}).get("type") == "tool":
            tool = body["tools"][0]
            content = [{"type": "tool_use", "id": "toolu_01", "name": tool["name"],
                        "input": _example(tool["input_schema"])}]
            stop = "tool_use"
        else:
            content = [{"type": "text", "text": plan["text"] if plan is not None else "echo: " + user}]
            stop = "end_turn"
        self.send(h, 200, {"id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant",
                           "model": body["model"], "content": content, "stop_reason": stop,
                           "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 5}})
