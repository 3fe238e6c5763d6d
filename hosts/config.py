"""The host config: which MCP servers, LLM profiles and HTTP tools a run may use.

A TOML file (read with :mod:`tomllib`; its JSON Schema is ``flowc schema
host``, its manual docs/hosts.md)::

    [mcp.servers.time]
    command = "mcp-server-time"
    args = ["--local-timezone", "UTC"]

    [mcp.servers.search]
    url = "http://127.0.0.1:8000/mcp"
    headers = { Authorization = "Bearer ${SEARCH_TOKEN}" }

    [llm.default]
    provider = "openai"
    base_url = "https://api.openai.com/v1"
    model = "gpt-4o-mini"
    api_key_env = "OPENAI_API_KEY"
    timeout_ms = 60000
    max_retries = 2

    [http]
    allow = ["https://api.example.com/"]

    [routes]
    "tool:lookup" = "search.find"

The ``mcpServers`` JSON that MCP clients read (``{"mcpServers": {name:
{command, args, env, cwd} | {url, headers}}}``) is accepted too
(:func:`load_mcp_json`). Values of ``env`` and ``headers`` may name
environment variables (``${NAME}``); they are read when a server starts
(:func:`expand_env`), never stored in the config, and no message ever shows
them.

``[llm.NAME]`` and ``[http]`` become the providers' own settings classes
(:class:`flowc.hosts.settings.LlmProfile`, :class:`~flowc.hosts.settings.HttpConfig`),
a field the file leaves out taking the class's default.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from typing import Any

import attrs
from flowc.hosts.settings import LLM_PROVIDERS, HttpConfig, LlmProfile
from flowc.ir.limits import MAX_SOURCE_BYTES
from flowc.sourcefile import FileTooLarge, read_limited

__all__ = ["ConfigError", "HostConfig", "HttpConfig", "LlmProfile", "McpServer", "config_from_text", "expand_env",
           "host_config_from_texts", "load_config", "load_host_config", "load_mcp_json", "mcp_json_from_text",
           "parse_config", "read_config_texts"]

#: a call's deadline when neither the workflow nor the server's config gives one
DEFAULT_TIMEOUT_MS = 60_000
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")
#: route targets that are not MCP servers: ``http.<tool>``, ``llm.<profile>``
RESERVED_NAMES = ("http", "llm")
_TRANSPORTS = ("stdio", "http", "streamable-http", "streamableHttp", "streamable_http")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


class ConfigError(ValueError):
    """The config file is not a valid host config (one line, no secret)."""


@attrs.frozen
class McpServer:
    """One MCP server: a command over stdio, or a streamable HTTP ``url``."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()      # values unexpanded (``${NAME}`` kept)
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()  # values unexpanded
    tools: tuple[str, ...] | None = None       # the tools it is expected to have (check without starting)
    timeout_ms: int = DEFAULT_TIMEOUT_MS

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"


@attrs.frozen
class HostConfig:
    """Everything a host config file says."""

    mcp: dict[str, McpServer] = attrs.field(factory=dict)
    llm: dict[str, LlmProfile] = attrs.field(factory=dict)
    http: HttpConfig | None = None
    routes: dict[str, str] = attrs.field(factory=dict)   # "capability:name" or "name" -> target
    source: str = "host config"
    journal: str | None = None   # where durable workflows journal their runs (docs/durable.md)

    def merged(self, other: HostConfig) -> HostConfig:
        """This config with ``other``'s servers, profiles, routes (and HTTP, when
        this has none) added; a server or profile named in both is an error."""
        for kind, mine, theirs in (("MCP server", self.mcp, other.mcp), ("LLM profile", self.llm, other.llm)):
            both = sorted(set(mine) & set(theirs))
            if both:
                raise ConfigError(f"{other.source}: {kind} {both[0]!r} is also defined in {self.source}")
        return HostConfig({**self.mcp, **other.mcp}, {**self.llm, **other.llm}, self.http or other.http,
                          {**self.routes, **other.routes}, f"{self.source} and {other.source}",
                          self.journal or other.journal)


def expand_env(value: str, where: str, environ: dict[str, str] | None = None) -> str:
    """``value`` with each ``${NAME}`` replaced by the environment variable
    NAME; ConfigError (naming the variable, never a value) when it is not set."""
    environ = os.environ if environ is None else environ

    def one(m: re.Match) -> str:
        if m.group(1) not in environ:
            raise ConfigError(f"{where} names the environment variable {m.group(1)}, which is not set")
        return environ[m.group(1)]

    return _ENV_REF.sub(one, value)


# ------------------------------------------------------------------ reading
def _read(path: str, what: str) -> str:
    try:
        return read_limited(path, MAX_SOURCE_BYTES).decode("utf-8")
    except FileTooLarge:
        raise ConfigError(f"the {what} {path} is larger than {MAX_SOURCE_BYTES} bytes") from None
    except OSError as exc:
        raise ConfigError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"the {what} {path} is not UTF-8 text") from None


def load_config(path: str) -> HostConfig:
    """A host config from a TOML file; ConfigError when it is not one."""
    return config_from_text(_read(path, "host config"), path)


def config_from_text(text: str, source: str) -> HostConfig:
    """A host config from TOML text (``source`` names it in messages)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the host config {source} is not valid TOML: {exc}") from None
    return parse_config(data, source)


def load_mcp_json(path: str) -> HostConfig:
    """MCP servers from the ``{"mcpServers": {...}}`` JSON MCP clients read."""
    return mcp_json_from_text(_read(path, "MCP config"), path)


def mcp_json_from_text(text: str, path: str) -> HostConfig:
    """MCP servers from ``mcpServers`` JSON text (``path`` names it in messages)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"the MCP config {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        raise ConfigError(f"the MCP config {path} must be an object with an `mcpServers` object")
    servers = {name: _server(name, spec, f"mcpServers.{name}", path)
               for name, spec in _named(data["mcpServers"], "mcpServers", path).items()
               if not _disabled(spec, f"mcpServers.{name}", path)}
    return HostConfig(mcp=servers, source=path)


def load_host_config(config: str | None, mcp_config: str | None) -> HostConfig:
    """The config of ``--config`` and ``--mcp-config`` (either or both)."""
    return host_config_from_texts(read_config_texts(config, mcp_config))


def read_config_texts(config: str | None, mcp_config: str | None) -> tuple[tuple[str, str] | None, ...]:
    """``((path, text) | None, (path, text) | None)``: the files of ``--config``
    and ``--mcp-config`` as they are (``${NAME}`` unexpanded), to be parsed
    where the host is built (:func:`host_config_from_texts`)."""
    return ((config, _read(config, "host config")) if config else None,
            (mcp_config, _read(mcp_config, "MCP config")) if mcp_config else None)


def host_config_from_texts(texts: tuple[tuple[str, str] | None, ...]) -> HostConfig:
    """The config of :func:`read_config_texts`'s texts (either or both)."""
    config, mcp_config = texts
    out = config_from_text(config[1], config[0]) if config else HostConfig(source="no config")
    if mcp_config:
        extra = mcp_json_from_text(mcp_config[1], mcp_config[0])
        out = extra if not config else out.merged(extra)
    return out


def parse_config(data: dict, source: str = "host config") -> HostConfig:
    """A :class:`HostConfig` from a parsed TOML document."""
    _keys(data, {"mcp", "llm", "http", "routes", "journal"}, "the top level", source)
    mcp = _table(data, "mcp", source)
    _keys(mcp, {"servers"}, "[mcp]", source)
    servers = {name: _server(name, spec, f"mcp.servers.{name}", source)
               for name, spec in _named(_table(mcp, "servers", source), "mcp.servers", source).items()
               if not _disabled(spec, f"mcp.servers.{name}", source)}
    profiles = {name: _profile(spec, f"llm.{name}", source)
                for name, spec in _named(_table(data, "llm", source), "llm", source).items()}
    http = _http(data["http"], source) if "http" in data else None
    routes = _routes(_table(data, "routes", source), source)
    return HostConfig(servers, profiles, http, routes, source, _journal(data.get("journal"), source))


def _journal(value: Any, source: str) -> str | None:
    """``journal = "runs.db"``: the SQLite file durable workflows journal to,
    relative to the config file's directory."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise _fail(source, "`journal` must be the path of a file (a string)")
    if os.path.isabs(value) or source in ("host config", "no config"):
        return value
    return os.path.join(os.path.dirname(os.path.abspath(source)), value)


def _fail(source: str, message: str) -> ConfigError:
    return ConfigError(f"{source}: {message}")


def _keys(table: dict, allowed: set[str], where: str, source: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise _fail(source, f"unknown key {unknown[0]!r} in {where} (expected one of: {', '.join(sorted(allowed))})")


def _table(data: dict, key: str, source: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise _fail(source, f"`{key}` must be a table")
    return value


def _named(table: dict, where: str, source: str) -> dict:
    for name, spec in table.items():
        if not _NAME.match(name):
            raise _fail(source, f"{where}: the name {name!r} must be letters, digits, `_` or `-` "
                                "(at most 64, not starting with `-`)")
        if not isinstance(spec, dict):
            raise _fail(source, f"{where}.{name} must be a table")
    return table


def _string(spec: dict, key: str, where: str, source: str, required: bool = False) -> str | None:
    value = spec.get(key)
    if value is None:
        if required:
            raise _fail(source, f"{where} needs `{key}`")
        return None
    if not isinstance(value, str) or not value:
        raise _fail(source, f"{where}.{key} must be a non-empty string")
    return value


def _strings(spec: dict, key: str, where: str, source: str) -> tuple[str, ...] | None:
    value = spec.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(source, f"{where}.{key} must be a list of strings")
    return tuple(value)


def _string_map(spec: dict, key: str, where: str, source: str) -> tuple[tuple[str, str], ...]:
    value = spec.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        # the values may be secrets: the message names the key only
        raise _fail(source, f"{where}.{key} must map names to strings")
    return tuple(sorted(value.items()))


def _positive_int(spec: dict, key: str, where: str, source: str, default: int) -> int:
    value = spec.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise _fail(source, f"{where}.{key} must be a positive integer")
    return value


def _server(name: str, spec: Any, where: str, source: str) -> McpServer:
    if not isinstance(spec, dict):
        raise _fail(source, f"{where} must be a table")
    if name in RESERVED_NAMES:
        raise _fail(source, f"{where}: {name!r} names the built-in tools' targets (`{name}.<name>`); "
                            "call the server something else")
    # "type"/"transport" name the transport in some clients' files; the fields decide it here
    _keys(spec, {"command", "args", "env", "cwd", "url", "headers", "tools", "timeout_ms", "type", "transport",
                 "disabled"},
          where, source)
    for key in ("type", "transport"):
        kind = spec.get(key)
        if kind is not None and kind not in _TRANSPORTS:
            raise _fail(source, f"{where}.{key}: flowc speaks stdio and streamable HTTP to MCP servers "
                                f"({', '.join(map(repr, _TRANSPORTS))}), not {kind!r}")
    command = _string(spec, "command", where, source)
    url = _string(spec, "url", where, source)
    if (command is None) == (url is None):
        raise _fail(source, f"{where} needs either `command` (stdio) or `url` (streamable HTTP)")
    if url is not None:
        if not url.startswith(("http://", "https://")):
            raise _fail(source, f"{where}.url must be an http:// or https:// URL")
        for key in ("args", "env", "cwd"):
            if key in spec:
                raise _fail(source, f"{where}: `{key}` is for a stdio server (`command`), not a `url`")
    elif "headers" in spec:
        raise _fail(source, f"{where}: `headers` is for a streamable HTTP server (`url`)")
    return McpServer(
        name=name, command=command, args=_strings(spec, "args", where, source) or (),
        env=_string_map(spec, "env", where, source), cwd=_string(spec, "cwd", where, source), url=url,
        headers=_string_map(spec, "headers", where, source), tools=_strings(spec, "tools", where, source),
        timeout_ms=_positive_int(spec, "timeout_ms", where, source, DEFAULT_TIMEOUT_MS))


def _disabled(spec: dict, where: str, source: str) -> bool:
    """``disabled = true`` leaves a server out (as MCP clients do)."""
    value = spec.get("disabled", False)
    if not isinstance(value, bool):
        raise _fail(source, f"{where}.disabled must be true or false")
    return value


_PROFILE_KEYS = {"provider", "base_url", "model", "api_key_env", "temperature", "max_tokens", "timeout_ms",
                 "max_retries"}
_HTTP_KEYS = {"allow", "timeout_ms", "max_body_bytes", "max_redirects"}


def _profile(spec: dict, where: str, source: str) -> LlmProfile:
    _keys(spec, _PROFILE_KEYS, where, source)
    provider = _string(spec, "provider", where, source, required=True)
    if provider not in LLM_PROVIDERS:
        raise _fail(source, f"{where}.provider must be \"openai\" or \"anthropic\"")
    temperature = spec.get("temperature")
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))
                                    or not 0 <= temperature <= 2):
        raise _fail(source, f"{where}.temperature must be a number from 0 to 2")
    settings: dict[str, Any] = {
        "model": _string(spec, "model", where, source, required=True),
        "base_url": _url(spec, "base_url", where, source),
        "api_key_env": _env_name(spec, where, source),
        "temperature": None if temperature is None else float(temperature)}
    for key, check in (("max_tokens", _positive_int), ("timeout_ms", _positive_int),
                       ("max_retries", _count)):
        if key in spec:
            settings[key] = check(spec, key, where, source, 1)
    return LlmProfile(provider, **settings)


def _url(spec: dict, key: str, where: str, source: str) -> str:
    value = _string(spec, key, where, source, required=True)
    if not value.startswith(("http://", "https://")):
        raise _fail(source, f"{where}.{key} must be an http:// or https:// URL")
    return value


def _env_name(spec: dict, where: str, source: str) -> str | None:
    """The key's variable; none for a server that takes no key (a local one)."""
    value = _string(spec, "api_key_env", where, source)
    if value is not None and not _ENV_NAME.match(value):
        # the name of a variable, not a key: the message does not repeat it
        raise _fail(source, f"{where}.api_key_env must name an environment variable (letters, digits, `_`), "
                            "not hold the key")
    return value


def _count(spec: dict, key: str, where: str, source: str, default: int) -> int:
    value = spec.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _fail(source, f"{where}.{key} must be an integer, 0 or more")
    return value


def _http(spec: Any, source: str) -> HttpConfig:
    if not isinstance(spec, dict):
        raise _fail(source, "`http` must be a table")
    _keys(spec, _HTTP_KEYS, "[http]", source)
    for prefix in _strings(spec, "allow", "http", source) or ():
        if not prefix.startswith(("http://", "https://")):
            raise _fail(source, "http.allow: each prefix must be an http:// or https:// URL")
    settings: dict[str, Any] = {"allow": list(_strings(spec, "allow", "http", source) or ())}
    for key, check in (("timeout_ms", _positive_int), ("max_body_bytes", _positive_int),
                       ("max_redirects", _count)):
        if key in spec:
            settings[key] = check(spec, key, "http", source, 1)
    return HttpConfig(**settings)


def _routes(table: dict, source: str) -> dict[str, str]:
    for key, target in table.items():
        if not isinstance(target, str) or not target:
            raise _fail(source, f"routes.{key!r} must be a target string (\"server.tool\", \"http.web_fetch\", "
                                "\"llm.profile\")")
    return dict(table)
