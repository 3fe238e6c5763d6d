"""The provider interface: what every real host component implements.

A *provider* serves some tool names (an MCP server's tools, the built-in
``web_fetch``/``http_request``, an LLM profile). The router built from the
host config maps a workflow's ``(capability, name)`` to one provider and
calls it. Failures are reported the way the drivers already read them
(runtime/drivers.answer_of_exception):

- :class:`flowc.host.ToolError`: the tool ran and reported an error
  (retriable under a step's retry policy);
- :class:`ProviderTimeout`: the call did not answer within its deadline;
- any other exception (:class:`flowc.host.HostFailure` preferred): the host
  failed (a server that died, a refused URL).

Messages must never contain a secret (an API key, an Authorization header).
"""

from __future__ import annotations

from typing import Any, Protocol

from flowc.host import HostFailure


class ProviderTimeout(HostFailure):
    """The call passed its deadline; drivers read ``timeout`` as TimedOut."""

    timeout = True


class Provider(Protocol):
    """One component that answers tool calls."""

    #: the name the config gives it (an MCP server's key, ``http``, an LLM profile)
    name: str

    async def start(self) -> None:
        """Open connections or start processes; called once before the first call."""

    def tools(self) -> list[str]:
        """The tool names this provider answers (known after ``start``)."""

    async def call(self, tool: str, args: dict, timeout_ms: int | None = None) -> Any:
        """Call ``tool`` with ``args``; the JSON-like result, or raise as above."""

    async def aclose(self) -> None:
        """Stop what ``start`` started; safe to call twice."""
