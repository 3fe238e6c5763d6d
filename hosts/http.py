"""The built-in HTTP tools: ``web_fetch`` and ``http_request`` (httpx, async).

``web_fetch {url, extract?}`` answers ``{"content", "title"?, "url"}``: an
HTML page as readable Markdown (``extract: "text"``: plain text), any other
body as its text, as WorkflowSkill's ``web_fetch`` tool does. An HTTP error
status is a tool error.

``http_request {url, method?, headers?, query?, body?, json?}`` answers
``{"status", "headers", "body"}``: every status is data (a 404 is an answer,
not a failure); the body is parsed when the response is JSON, else text.
An aevatar ``http_request`` step's ``{input, parameters}`` is read the same
way, from its parameters (the body defaults to the step's input).

Both refuse, before any connection is opened, a URL outside the config's
allow-list, and check each redirect's target the same way (a
:class:`flowc.host.HostFailure` naming the URL's origin only). A body is
read as a stream and stops at ``max_body_bytes``; a call past its deadline
raises :class:`ProviderTimeout`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

import httpx
from flowc.host import HostFailure, ToolError, loads_json
from flowc.hosts.allowlist import AllowList, UrlRefused, origin
from flowc.hosts.base import ProviderTimeout
from flowc.hosts.readable import readable
from flowc.hosts.settings import HttpConfig, http_config

TOOLS = ("web_fetch", "http_request")
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Headers a redirect to another origin must not carry along.
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset=["']?([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE)
USER_AGENT = "flowc-web-fetch/0.1"


class _NoQueryInLogs(logging.Filter):
    """httpx logs each request's full URL at INFO; a query string may carry a
    token, so its log records name the URL without it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(arg.copy_with(query=None) if isinstance(arg, httpx.URL) and arg.query else arg
                                for arg in record.args)
        return True


logging.getLogger("httpx").addFilter(_NoQueryInLogs())


class _Response:
    """What one exchange gave: the last response of its redirect chain."""

    def __init__(self, url: httpx.URL, status: int, reason: str, headers: httpx.Headers,
                 body: bytes, truncated: bool) -> None:
        self.url = url
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.truncated = truncated

    def text(self) -> str:
        return self.body.decode(_charset(self.headers, self.body), errors="replace")

    def is_json(self) -> bool:
        kind = self.headers.get("content-type", "").split(";")[0].strip().lower()
        return kind == "application/json" or kind.endswith("+json")


def _charset(headers: httpx.Headers, body: bytes) -> str:
    for part in headers.get("content-type", "").split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset":
            return _known_codec(value.strip().strip('"'))
    found = _CHARSET.search(body[:4096])
    return _known_codec(found.group(1).decode("ascii")) if found else "utf-8"


def _known_codec(name: str) -> str:
    try:
        "".encode(name)
        return name
    except LookupError:
        return "utf-8"


class HttpProvider:
    """The ``web_fetch`` and ``http_request`` tools under one allow-list."""

    def __init__(self, config: HttpConfig, *, name: str = "http",
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.name = name
        self.config = http_config(config)
        self.allow = AllowList(self.config.allow)
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    async def start(self) -> None:
        if self._client is None:
            # redirects are followed here, each target checked against the allow-list;
            # proxies from the environment are not used (trust_env=False): the
            # allow-list names the hosts connections go to.
            self._client = httpx.AsyncClient(follow_redirects=False, trust_env=False,
                                             transport=self._transport,
                                             headers={"user-agent": USER_AGENT})

    def tools(self) -> list[str]:
        return list(TOOLS)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    # A journaled run's key reaches the server as the Idempotency-Key header
    # (the IETF draft's name), so a server that deduplicates by it sees a call
    # repeated after a crash as the same request.
    accepts_idempotency_key = True

    async def call(self, tool: str, args: dict, timeout_ms: int | None = None,
                   idempotency_key: str | None = None) -> Any:
        if tool == "web_fetch":
            return await self.web_fetch(args, timeout_ms)
        if tool == "http_request":
            return await self.http_request(args, timeout_ms, idempotency_key)
        raise HostFailure(f"the HTTP tools have no tool {tool!r} (they are {', '.join(TOOLS)})")

    # ------------------------------------------------------------ the tools
    async def web_fetch(self, args: dict, timeout_ms: int | None = None) -> dict:
        url = args.get("url")
        if not isinstance(url, str) or not url:
            raise ToolError('web_fetch: "url" is required and must be a string')
        extract = args.get("extract", "markdown")
        if extract not in ("markdown", "text"):
            raise ToolError('web_fetch: "extract" is "markdown" or "text"')
        limit = self.config.max_body_bytes
        if isinstance(args.get("max_bytes"), int) and args["max_bytes"] > 0:
            limit = min(limit, args["max_bytes"])
        resp = await self._exchange("web_fetch", "GET", url, {}, None, timeout_ms, limit, truncate=True)
        if resp.status >= 400:
            raise ToolError(f"web_fetch: HTTP {resp.status} {resp.reason} for {origin(resp.url)}")
        text = resp.text()
        out: dict[str, Any] = {"content": text, "url": url}
        if "html" in resp.headers.get("content-type", "").lower():
            # the conversion is CPU work (about 1 s a MB): in a thread, so other
            # calls of the run go on meanwhile
            title, content = await asyncio.to_thread(readable, text, str(resp.url), extract)
            out["content"] = content
            if title:
                out["title"] = title
        if resp.truncated:
            out["truncated"] = True
        return out

    async def http_request(self, args: dict, timeout_ms: int | None = None,
                           idempotency_key: str | None = None) -> dict:
        args = _request_args(args)
        url = args.get("url")
        if not isinstance(url, str) or not url:
            raise ToolError('http_request: "url" is required and must be a string')
        method = str(args.get("method") or "GET").upper()
        if method not in METHODS:
            raise ToolError(f"http_request: method must be one of {', '.join(sorted(METHODS))}")
        headers = _headers(args.get("headers"))
        if idempotency_key and not any(k.lower() == "idempotency-key" for k in headers):
            headers["Idempotency-Key"] = idempotency_key
        query = args.get("query")
        if query is not None:
            if not isinstance(query, dict):
                raise ToolError('http_request: "query" must be an object')
            try:
                url = str(httpx.URL(url).copy_merge_params({k: _scalar(v) for k, v in query.items()}))
            except (httpx.InvalidURL, TypeError, ValueError):
                raise HostFailure("http_request: refused: the URL is not a valid URL") from None
        content = _body(args, headers)
        resp = await self._exchange("http_request", method, url, headers, content, timeout_ms,
                                    self.config.max_body_bytes, truncate=False)
        body: Any = resp.text()
        if resp.is_json() and body.strip():
            try:
                body = loads_json(body, "the response")
            except ValueError:
                pass  # not JSON after all: the text is the body
        return {"status": resp.status, "headers": _header_dict(resp.headers), "body": body}

    # ------------------------------------------------------------ the exchange
    async def _exchange(self, tool: str, method: str, url: str, headers: dict[str, str],
                        content: bytes | None, timeout_ms: int | None, limit: int,
                        truncate: bool) -> _Response:
        deadline_ms = self.config.timeout_ms if timeout_ms is None else min(timeout_ms, self.config.timeout_ms)
        target = self._checked(tool, url)
        try:
            async with asyncio.timeout(deadline_ms / 1000):
                return await self._follow(tool, method, target, headers, content, deadline_ms, limit, truncate)
        except (TimeoutError, httpx.TimeoutException):
            raise ProviderTimeout(f"{tool}: {origin(target)} gave no answer within {deadline_ms} ms") from None
        except httpx.RequestError as exc:  # a refused connection, a reset, a body that does not decode
            raise ToolError(f"{tool}: network error from {origin(target)}: {type(exc).__name__}") from None

    def _checked(self, tool: str, url: str | httpx.URL) -> httpx.URL:
        try:
            return self.allow.check(url)
        except UrlRefused as exc:
            raise HostFailure(f"{tool}: refused: {exc}") from None

    async def _follow(self, tool, method, url, headers, content, deadline_ms, limit, truncate) -> _Response:
        if self._client is None:
            await self.start()
        hops = 0
        while True:
            request = self._client.build_request(method, url, headers=headers, content=content,
                                                 timeout=deadline_ms / 1000)
            resp = await self._client.send(request, stream=True)
            try:
                location = resp.headers.get("location")
                if resp.status_code in _REDIRECTS and location:
                    hops += 1
                    if hops > self.config.max_redirects:
                        raise ToolError(f"{tool}: more than {self.config.max_redirects} redirects "
                                        f"from {origin(url)}")
                    try:
                        next_url = self._checked(tool, url.join(location))
                    except httpx.InvalidURL:
                        raise ToolError(f"{tool}: {origin(url)} redirected to an invalid URL") from None
                    method, content, headers = _redirected(resp.status_code, method, content, headers,
                                                           url, next_url)
                    url = next_url
                    continue
                body, cut = await read_capped(resp, limit)
                if cut and not truncate:
                    raise ToolError(f"{tool}: the response from {origin(url)} is larger than {limit} bytes")
                return _Response(url, resp.status_code, resp.reason_phrase, resp.headers, body, cut)
            finally:
                await resp.aclose()


async def read_capped(resp: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the (decoded) body; True when there was more."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        if size + len(chunk) > limit:
            chunks.append(chunk[:limit - size])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def _redirected(status, method, content, headers, old: httpx.URL, new: httpx.URL):
    """Method, body and headers for the next hop (as browsers and httpx do)."""
    if status == 303 and method != "HEAD" or status in (301, 302) and method == "POST":
        method, content = "GET", None
        headers = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "content-length")}
    if origin(old) != origin(new):
        headers = {k: v for k, v in headers.items() if k.lower() not in _CREDENTIAL_HEADERS}
    return method, content, headers


def _request_args(args: dict) -> dict:
    """An aevatar step's ``{input, parameters}`` read as a request (a GET or
    HEAD sends no body); its ``headers`` parameter may be a JSON object's text."""
    params = args.get("parameters")
    if "url" in args or not isinstance(params, dict):
        out = dict(args)
    else:
        out = dict(params)
        method = str(out.get("method") or "GET").upper()
        if "body" not in out and args.get("input") and method not in ("GET", "HEAD"):
            out["body"] = args["input"]
    if isinstance(out.get("headers"), str) and out["headers"].strip():
        try:
            out["headers"] = loads_json(out["headers"], "headers")
        except ValueError:
            raise ToolError('http_request: the "headers" parameter must be a JSON object') from None
    return out


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _headers(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ToolError('http_request: "headers" must be an object of strings')
    out = {}
    for key, v in value.items():
        if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}", key):
            raise ToolError("http_request: a header name is not a valid token")
        text = _scalar(v)
        if not text.isascii() or not text.isprintable():
            raise ToolError(f"http_request: header {key!r} must be printable ASCII (no line breaks)")
        out[key] = text
    return out


def _body(args: dict, headers: dict[str, str]) -> bytes | None:
    """The request body: ``json`` (any JSON value), or ``body`` (a string as
    is, any other JSON value as JSON); a JSON body gets its content type."""
    if "json" in args:
        value, as_json = args["json"], True
    elif args.get("body") is not None:
        value = args["body"]
        as_json = not isinstance(value, str)
    else:
        return None
    if not as_json:
        return value.encode("utf-8")
    if not any(k.lower() == "content-type" for k in headers):
        headers["content-type"] = "application/json"
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _header_dict(headers: httpx.Headers) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in headers.multi_items():
        key = key.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out
