"""The host built from a host config: routes each call to its provider.

``async with RouterHost(config) as host:`` starts every provider (MCP
servers at once), checks the ``[routes]`` against the tools they list, and
stops them all on the way out, also when the run is cancelled. ``await
host.call(capability, name, args)`` is what the asyncio driver calls.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from typing import Any, Self

from flowc.host import HostFailure, ToolError
from flowc.hosts.config import ConfigError, HostConfig
from flowc.hosts.mcp import McpProvider
from flowc.hosts.routes import NESTED_ARGS, PARAMETERS, PAYLOAD, TOOL_ARGS, Refusal, RouteTable, Target

__all__ = ["RouterHost", "build_providers", "tool_args"]

_BODILESS = ("GET", "HEAD")


def build_providers(config: HostConfig, *, errlog: Any = None) -> dict[str, Any]:
    """One provider per MCP server, ``http`` for [http], ``llm.<name>`` per profile.

    The HTTP and LLM providers are imported only when the config has those
    sections."""
    providers: dict[str, Any] = {name: McpProvider(server, errlog=errlog) for name, server in config.mcp.items()}
    if config.http is not None:
        providers["http"] = _optional(config, "http", "HttpProvider")(config.http)
    if config.llm:
        llm_provider = _optional(config, "llm", "LlmProvider")
        for name, profile in config.llm.items():
            providers[f"llm.{name}"] = llm_provider(name, profile)
    return providers


def _optional(config: HostConfig, section: str, name: str) -> Any:
    """The provider class of an optional section, imported only when the config has the section."""
    try:
        module = importlib.import_module(f"flowc.hosts.{section}")
    except ImportError as exc:
        raise ConfigError(f"{config.source}: [{section}] needs flowc.hosts.{section}, which this flowc lacks "
                          f"({exc})") from None
    return getattr(module, name)


class RouterHost:
    """An async host (``call``, ``sleep``) over the providers of a config."""

    def __init__(self, config: HostConfig, *, errlog: Any = None, log_calls: bool = True) -> None:
        self.config = config
        self.providers = build_providers(config, errlog=errlog)
        self.routes: RouteTable | None = None
        #: every call, in the order asked, with its outcome so far (an interrupted run's record);
        #: a host shared by the runs of a batch keeps none (it would grow with the batch)
        self.log: list[dict] = []
        self._log_calls = log_calls

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        if self.routes is not None:
            return
        started: list[Any] = []

        async def start_one(provider: Any) -> None:
            await provider.start()
            started.append(provider)

        try:
            results = await asyncio.gather(*(start_one(p) for p in self.providers.values()),
                                           return_exceptions=True)
            failures = [r for r in results if isinstance(r, BaseException)]
            if failures:
                raise failures[0]
            self.routes = RouteTable(self.config, {name: p.tools() for name, p in self.providers.items()
                                                   if isinstance(p, McpProvider)})
            self._check_routes()
        except BaseException:
            await _close_all(started)
            self.routes = None
            raise

    async def aclose(self) -> None:
        self.routes = None
        await _close_all(list(self.providers.values()))

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _check_routes(self) -> None:
        # what `flowc check --config` trusted must hold when the servers run
        for name, server in sorted(self.config.mcp.items()):
            missing = sorted(set(server.tools or ()) - set(self.providers[name].tools()))
            if missing:
                raise ConfigError(f"{self.config.source}: MCP server {name!r} lists tools it does not have: "
                                  f"{', '.join(missing)}")
        for key, target in sorted(self.config.routes.items()):
            capability, colon, name = key.partition(":")
            found = self.routes.resolve(capability if colon else "tool", name if colon else key)
            if isinstance(found, Refusal):
                raise ConfigError(f"{self.config.source}: routes.{key!r} = {target!r}: {found.message}")

    # ----------------------------------------------------------------- calls
    async def call(self, capability: str, name: str, args: dict, idempotency_key: str | None = None) -> Any:
        """Call the provider the routes name; ``idempotency_key`` (a journaled
        run's ``<run id>:<request id>``) goes to providers that take one."""
        if not self._log_calls:
            return await self._call(capability, name, args, idempotency_key)
        entry = {"capability": capability, "name": name, "args": args, "outcome": "pending"}
        self.log.append(entry)
        try:
            value = await self._call(capability, name, args, idempotency_key)
        except asyncio.CancelledError:
            entry["outcome"] = "cancelled"
            raise
        except ToolError:
            entry["outcome"] = "error"
            raise
        except Exception as exc:
            entry["outcome"] = "timeout" if getattr(exc, "timeout", False) else "failed"
            raise
        entry["outcome"] = "result"
        return value

    async def _call(self, capability: str, name: str, args: dict, idempotency_key: str | None = None) -> Any:
        if self.routes is None:
            raise HostFailure("the host is not started (use `async with`)")
        target = self.routes.resolve(capability, name)
        if isinstance(target, Refusal):
            raise HostFailure(target.message)
        provider = self.providers[target.provider]
        tool = target.tool
        if tool is None:   # a connector that is a server: the call's operation names the tool
            tool = args.get("operation")
            if not isinstance(tool, str) or not tool:
                raise ToolError(f"connector {name!r} is an MCP server: the call needs an `operation` (its tool)")
            refusal = self.routes.check_operation(target.provider, tool)
            if refusal is not None:
                raise ToolError(refusal.message)
        shaped = tool_args(target, tool, args, provider)
        if idempotency_key is not None and getattr(provider, "accepts_idempotency_key", False):
            return await provider.call(tool, shaped, idempotency_key=idempotency_key)
        return await provider.call(tool, shaped)

    async def sleep(self, ms: float) -> None:
        await asyncio.sleep(ms / 1000)


def tool_args(target: Target, tool: str, args: dict, provider: Any = None) -> dict:
    """The provider's arguments for the workflow's ``args`` (the target's shape):

    - ``tool_args``: ``args``, or the object under ``args`` when that is all the
      call holds (besides ``input``/``detach``) and the tool takes no ``args``;
    - ``nested_args``: the object under ``args`` (``{}`` without one);
    - ``payload``: the JSON object in ``payload`` (``{}`` when blank);
    - ``parameters``: when the call is ``{input, parameters}`` (aevatar's
      ``http_request``), the parameters, with a non-blank ``input`` as the
      ``body`` unless they give one or the method (GET by default) is GET
      or HEAD; else ``args``;
    - anything else: ``args`` as they are."""
    if target.shape == TOOL_ARGS:
        inner = args.get("args")
        if isinstance(inner, dict) and set(args) <= {"args", "input", "detach"} \
                and "args" not in _properties(provider, tool):
            return inner
        return args
    if target.shape == NESTED_ARGS:
        inner = args.get("args", {})
        if not isinstance(inner, dict):
            raise ToolError(f"MCP tool {tool!r}: `args` must be an object")
        return inner
    if target.shape == PAYLOAD:
        return _payload_args(args.get("payload"), tool)
    if target.shape == PARAMETERS:
        params = args.get("parameters")
        if not isinstance(params, dict) or not set(args) <= {"input", "parameters"}:
            return args
        body = args.get("input")
        method = str(params.get("method") or "GET").upper()
        # a GET or HEAD has no body: the step's input goes only where one is sent
        if isinstance(body, str) and body.strip() and "body" not in params and method not in _BODILESS:
            return {**params, "body": body}
        return dict(params)
    return args


def _properties(provider: Any, tool: str) -> dict:
    schema_of = getattr(provider, "input_schema", None)
    schema = schema_of(tool) if callable(schema_of) else None
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _payload_args(payload: Any, tool: str) -> dict:
    if isinstance(payload, dict):
        return payload
    if payload is None or (isinstance(payload, str) and not payload.strip()):
        return {}
    if isinstance(payload, str):
        try:
            value = json.loads(payload)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    raise ToolError(f"tool {tool!r}: the connector's input must be a JSON object of the tool's arguments")


async def _close_all(providers: list[Any]) -> None:
    """Stop every provider, all of them even when one fails or we are cancelled."""
    results = await asyncio.gather(*(p.aclose() for p in providers), return_exceptions=True)
    for result in results:
        if isinstance(result, asyncio.CancelledError):
            raise result
