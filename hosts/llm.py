"""LLM APIs as a provider: OpenAI-compatible chat completions and Anthropic messages.

``LlmProvider(name, profile)`` answers a workflow's model calls (the
arguments read by :mod:`flowc.hosts.llm_args`) with one HTTP request:

- ``openai``: ``POST {base_url}/chat/completions`` (``Authorization:
  Bearer``), a system and a user message; an ``output_schema`` is sent as
  ``response_format: {type: json_schema}``, a JSON-only answer as
  ``{type: json_object}``;
- ``anthropic``: ``POST {base_url}/v1/messages`` (``x-api-key``,
  ``anthropic-version``); an ``output_schema`` is a tool the model must
  call, whose input is the answer.

The API key is read from ``os.environ[profile.api_key_env]`` at each call
and goes into a header only: errors carry the HTTP status and the API's
own message with the key scrubbed out. A 429 (honouring ``retry-after-ms``
/ ``Retry-After``) or a 5xx is retried with exponential backoff up to
``max_retries`` times; each attempt is bounded by ``timeout_ms``
(:class:`ProviderTimeout` past it).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import time
from typing import Any

import httpx
from flowc.host import HostFailure, ToolError, loads_json
from flowc.hosts.base import ProviderTimeout
from flowc.hosts.http import read_capped
from flowc.hosts.llm_args import LLM_TOOL_NAMES, Prompt, PromptError, prompt_of
from flowc.hosts.settings import LlmProfile, llm_profile

ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_DEFAULT_MAX_TOKENS = 4096
ANSWER_TOOL = "answer"
MAX_BACKOFF_S = 60.0
_RETRIED = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
MAX_RESPONSE_BYTES = 16 * 1024 * 1024  # an API's answer larger than this is refused, not held


class LlmProvider:
    """One LLM profile of the host config."""

    def __init__(self, name: str, profile: LlmProfile, *, transport: httpx.AsyncBaseTransport | None = None,
                 backoff_base_s: float = 0.5) -> None:
        self.name = name
        self.profile = llm_profile(profile)
        self.backoff_base_s = backoff_base_s
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    async def start(self) -> None:
        if self._client is None:
            self._client = httpx.AsyncClient(transport=self._transport, trust_env=False,
                                             timeout=self.profile.timeout_ms / 1000)

    def tools(self) -> list[str]:
        """The dialects' model-step names; :meth:`call` reads any name by its arguments."""
        return list(LLM_TOOL_NAMES)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def call(self, tool: str, args: dict, timeout_ms: int | None = None) -> Any:
        try:
            prompt = prompt_of(tool, args)
        except PromptError as exc:
            raise ToolError(f"{self.name}: {exc}") from None
        key = self._api_key()
        try:
            if timeout_ms is None:
                return await self._ask(prompt, key)
            async with asyncio.timeout(timeout_ms / 1000):
                return await self._ask(prompt, key)
        except TimeoutError:
            raise ProviderTimeout(f"{self.name}: no answer within {timeout_ms} ms") from None

    # ------------------------------------------------------------ one request
    def _api_key(self) -> str | None:
        env = self.profile.api_key_env
        if env is None:
            return None
        key = os.environ.get(env)
        if not key:
            raise HostFailure(f"{self.name}: the environment variable {env} (the API key) is not set")
        if not (key.isascii() and key.isprintable()):  # a header could not carry it (and its error would show it)
            raise HostFailure(f"{self.name}: the environment variable {env} does not hold a printable ASCII key")
        return key

    async def _ask(self, prompt: Prompt, key: str | None) -> Any:
        if self._client is None:
            await self.start()
        if self.profile.provider == "anthropic":
            url, headers, body = _anthropic_request(self.profile, prompt, key)
        else:
            url, headers, body = _openai_request(self.profile, prompt, key)
        data = await self._post(url, headers, body, key)
        if self.profile.provider == "anthropic":
            return _anthropic_answer(self.name, data, prompt)
        return _openai_answer(self.name, data, prompt)

    async def _post(self, url: str, headers: dict, body: dict, key: str | None) -> Any:
        attempt = 0
        while True:
            try:
                resp, text = await self._send(url, body, headers)
            except httpx.TimeoutException:
                raise ProviderTimeout(f"{self.name}: {self.profile.provider} gave no answer within "
                                      f"{self.profile.timeout_ms} ms") from None
            except httpx.RequestError as exc:
                if attempt < self.profile.max_retries:
                    attempt += 1
                    await asyncio.sleep(self._backoff(attempt, None))
                    continue
                raise ToolError(f"{self.name}: cannot reach {self.profile.provider}: "
                                f"{type(exc).__name__}") from None
            if resp.status_code < 300:
                return _json_body(self.name, resp.status_code, text, key)
            if resp.status_code in _RETRIED and attempt < self.profile.max_retries:
                attempt += 1
                await asyncio.sleep(self._backoff(attempt, resp))
                continue
            raise ToolError(f"{self.name}: {self.profile.provider} HTTP {resp.status_code}: "
                            f"{_error_message(resp, text, key)}")

    async def _send(self, url: str, body: dict, headers: dict) -> tuple[httpx.Response, str]:
        """One POST; the response and its text (at most MAX_RESPONSE_BYTES)."""
        async with self._client.stream("POST", url, json=body, headers=headers) as resp:
            data, cut = await read_capped(resp, MAX_RESPONSE_BYTES)
        if cut:
            raise ToolError(f"{self.name}: the API's answer is larger than {MAX_RESPONSE_BYTES} bytes")
        return resp, data.decode(resp.encoding or "utf-8", errors="replace")

    def _backoff(self, attempt: int, resp: httpx.Response | None) -> float:
        """Seconds to wait before retry ``attempt``: what the API asked for,
        else exponential with jitter; at most MAX_BACKOFF_S."""
        asked = _retry_after(resp) if resp is not None else None
        if asked is None:
            asked = self.backoff_base_s * 2 ** (attempt - 1) * (0.5 + random.random() / 2)
        return max(0.0, min(asked, MAX_BACKOFF_S))


# ---------------------------------------------------------------- OpenAI
def _openai_request(profile: LlmProfile, prompt: Prompt, key: str | None):
    messages = []
    if prompt.system:
        messages.append({"role": "system", "content": prompt.system})
    messages.append({"role": "user", "content": prompt.user})
    body: dict[str, Any] = {"model": prompt.model or profile.model, "messages": messages}
    _settings(body, profile, prompt)
    if prompt.schema is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": ANSWER_TOOL, "schema": _object_schema(prompt.schema)}}
    elif prompt.json_answer:
        body["response_format"] = {"type": "json_object"}
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return profile.base_url.rstrip("/") + "/chat/completions", headers, body


def _openai_answer(name: str, data: Any, prompt: Prompt) -> Any:
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise ToolError(f"{name}: the answer has no choices[0].message") from None
    if message.get("refusal"):
        raise ToolError(f"{name}: the model refused: {_short(message['refusal'])}")
    text = message.get("content")
    if not isinstance(text, str):
        raise ToolError(f"{name}: the answer has no text")
    if prompt.schema is not None:
        return _unwrap(prompt.schema, _parse_json(name, text))
    return _parse_json(name, text) if prompt.json_answer else text


# ---------------------------------------------------------------- Anthropic
def _anthropic_request(profile: LlmProfile, prompt: Prompt, key: str | None):
    body: dict[str, Any] = {"model": prompt.model or profile.model,
                            "messages": [{"role": "user", "content": prompt.user}]}
    if prompt.system:
        body["system"] = prompt.system
    _settings(body, profile, prompt)
    body.setdefault("max_tokens", ANTHROPIC_DEFAULT_MAX_TOKENS)
    if prompt.schema is not None:
        body["tools"] = [{"name": ANSWER_TOOL, "description": "Give the answer, in the required shape.",
                          "input_schema": _object_schema(prompt.schema)}]
        body["tool_choice"] = {"type": "tool", "name": ANSWER_TOOL}
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    if key:
        headers["x-api-key"] = key
    return profile.base_url.rstrip("/") + "/v1/messages", headers, body


def _anthropic_answer(name: str, data: Any, prompt: Prompt) -> Any:
    blocks = data.get("content") if isinstance(data, dict) else None
    if not isinstance(blocks, list):
        raise ToolError(f"{name}: the answer has no content")
    if prompt.schema is not None:
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == ANSWER_TOOL:
                return _unwrap(prompt.schema, block.get("input"))
        raise ToolError(f"{name}: the model did not give the structured answer")
    text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
    return _parse_json(name, text) if prompt.json_answer else text


# ---------------------------------------------------------------- shared
def _settings(body: dict, profile: LlmProfile, prompt: Prompt) -> None:
    temperature = prompt.temperature if prompt.temperature is not None else profile.temperature
    max_tokens = prompt.max_tokens if prompt.max_tokens is not None else profile.max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_tokens"] = max_tokens


def _object_schema(schema: Any) -> dict:
    """Both APIs take an object schema at the top: any other is wrapped in ``{value}``."""
    if isinstance(schema, dict) and schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {"value": schema}, "required": ["value"]}


def _unwrap(schema: Any, value: Any) -> Any:
    if isinstance(schema, dict) and schema.get("type") == "object":
        return value
    return value.get("value") if isinstance(value, dict) else value


def _parse_json(name: str, text: str) -> Any:
    """The model's JSON answer (a Markdown code fence around it is tolerated)."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        if stripped.rstrip().endswith("```"):
            stripped = stripped.rstrip()[:-3]
    try:
        return loads_json(stripped.strip(), "the answer")
    except ValueError:
        raise ToolError(f"{name}: the model's answer is not JSON: {_short(stripped)}") from None


def _json_body(name: str, status: int, text: str, key: str | None) -> Any:
    try:
        return loads_json(text, "the response")
    except ValueError:
        raise ToolError(f"{name}: the API answered {status} with a body that is not JSON: "
                        f"{_scrub(_short(text), key)}") from None


def _error_message(resp: httpx.Response, text: str, key: str | None) -> str:
    """The API's own message (``{"error": {"message"}}`` in both APIs), key scrubbed."""
    message = None
    try:
        data = json.loads(text)
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict):
            message = error.get("message")
        elif isinstance(error, str):
            message = error
    except (ValueError, RecursionError):
        pass
    if not isinstance(message, str) or not message.strip():
        message = resp.reason_phrase or text
    return _scrub(_short(message), key)


def _scrub(text: str, key: str | None) -> str:
    if key and len(key) >= 4:
        text = text.replace(key, "[redacted]")
    return text


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _retry_after(resp: httpx.Response) -> float | None:
    """Seconds the API asked to wait: ``retry-after-ms``, else ``Retry-After``
    (seconds or an HTTP date); None when it did not say."""
    ms = resp.headers.get("retry-after-ms")
    if ms is not None:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    after = resp.headers.get("retry-after")
    if after is None:
        return None
    try:
        return float(after)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(after)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - time.time()
