"""The JSON Schema (2020-12) of the host config (``flowc schema host``).

It describes the TOML document as parsed (tables are objects). flowc itself
validates with :func:`flowc.hosts.config.parse_config`, which says the same
in one-line messages; tests/test_hosts_config.py keeps the two in step.
"""

from __future__ import annotations

import json

__all__ = ["HOST_SCHEMA", "schema_text"]

_NAME = "^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$"
_STRINGS = {"type": "array", "items": {"type": "string"}}
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_POSITIVE = {"type": "integer", "minimum": 1}
_COUNT = {"type": "integer", "minimum": 0}
_URL = {"type": "string", "pattern": "^https?://"}

_STDIO = {
    "type": "object",
    "description": "A server started as a process, spoken to over stdin/stdout.",
    "required": ["command"],
    "properties": {
        "command": {"type": "string", "minLength": 1, "description": "the executable"},
        "args": {**_STRINGS, "description": "its arguments"},
        "env": {**_STRING_MAP, "description": "environment variables added to a safe default set; "
                                              "values may name others: \"${NAME}\""},
        "cwd": {"type": "string", "minLength": 1, "description": "its working directory"},
        "tools": {**_STRINGS, "description": "the tools it is expected to have: flowc check --config "
                                             "then does not start it"},
        "timeout_ms": {**_POSITIVE, "description": "a call's deadline (default 60000)"},
        "type": {"enum": ["stdio"]},
        "transport": {"enum": ["stdio"]},
        "disabled": {"type": "boolean", "description": "true: leave the server out"},
    },
    "additionalProperties": False,
}

_HTTP_KINDS = {"enum": ["http", "streamable-http", "streamableHttp", "streamable_http"]}
_HTTP_SERVER = {
    "type": "object",
    "description": "A server reached over streamable HTTP.",
    "required": ["url"],
    "properties": {
        "url": {"type": "string", "pattern": "^https?://"},
        "headers": {**_STRING_MAP, "description": "request headers; values may name environment "
                                                  "variables: \"Bearer ${TOKEN}\""},
        "tools": _STDIO["properties"]["tools"],
        "timeout_ms": _STDIO["properties"]["timeout_ms"],
        "type": _HTTP_KINDS,
        "transport": _HTTP_KINDS,
        "disabled": {"type": "boolean", "description": "true: leave the server out"},
    },
    "additionalProperties": False,
}

_SERVERS = {
    "type": "object",
    "propertyNames": {"pattern": _NAME, "not": {"enum": ["http", "llm"]}},
    "additionalProperties": {"oneOf": [_STDIO, _HTTP_SERVER]},
}

HOST_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://flowc.invalid/schema/host-config.json",
    "title": "flowc host config",
    "description": "Which MCP servers, LLM profiles and HTTP tools a run may use (docs/hosts.md).",
    "type": "object",
    "properties": {
        "mcp": {
            "type": "object",
            "properties": {"servers": _SERVERS},
            "additionalProperties": False,
        },
        "llm": {
            "type": "object",
            "propertyNames": {"pattern": _NAME},
            "additionalProperties": {
                "type": "object",
                "required": ["provider", "base_url", "model"],
                "properties": {
                    "provider": {"enum": ["openai", "anthropic"]},
                    "base_url": {**_URL, "description": "the API's root (https://api.openai.com/v1)"},
                    "model": {"type": "string", "minLength": 1},
                    "api_key_env": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,127}$",
                                    "description": "the environment variable holding the API key "
                                                   "(none: no key is sent)"},
                    "temperature": {"type": "number", "minimum": 0, "maximum": 2,
                                    "description": "unless the step sets one"},
                    "max_tokens": {**_POSITIVE, "description": "unless the step sets it"},
                    "timeout_ms": {**_POSITIVE, "description": "one request's deadline (default 120000)"},
                    "max_retries": {**_COUNT, "description": "retries of a 429, 5xx or lost connection "
                                                             "(default 3)"},
                },
                "additionalProperties": False,
            },
        },
        "http": {
            "type": "object",
            "description": "The built-in tools web_fetch and http_request.",
            "properties": {
                "allow": {"type": "array", "items": _URL, "description": "URL prefixes a request may go to"},
                "timeout_ms": {**_POSITIVE, "description": "a request's deadline (default 30000)"},
                "max_body_bytes": {**_POSITIVE, "description": "the largest response body (default 10000000)"},
                "max_redirects": {**_COUNT, "description": "redirects followed, each target checked "
                                                           "(default 5)"},
            },
            "additionalProperties": False,
        },
        "routes": {
            "type": "object",
            "description": "\"capability:name\" or \"name\" -> \"<server>.<tool>\", \"http.<tool>\", "
                           "\"llm.<profile>\" or a tool name",
            "additionalProperties": {"type": "string", "minLength": 1},
        },
        "journal": {
            "type": "string", "minLength": 1,
            "description": "the SQLite file durable workflows (durable: true) journal their runs to, "
                           "relative to this file (docs/durable.md)",
        },
    },
    "additionalProperties": False,
}

#: the ``mcpServers`` JSON of MCP clients (``--mcp-config``)
MCP_JSON_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["mcpServers"],
    "properties": {"mcpServers": _SERVERS},
}


def schema_text() -> str:
    return json.dumps(HOST_SCHEMA, indent=2, sort_keys=True) + "\n"
