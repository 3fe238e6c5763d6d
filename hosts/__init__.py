"""Real hosts for compiled workflows: MCP servers, HTTP, LLM APIs.

A run's host answers ``call(capability, name, args)`` (a coroutine here, so
the asyncio driver runs calls concurrently). :mod:`flowc.hosts.base` names
the one interface every provider implements; the host config
(docs/hosts.md) says which provider serves which workflow name.
"""
