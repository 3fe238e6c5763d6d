"""The settings the built-in providers read: the ``[http]`` tools and an LLM profile.

The host config loader builds these from its file; tests and library users
build them directly. Secrets never live here: an LLM profile names the
environment variable that holds its API key (``api_key_env``), and the key
is read from the environment when a call is made.
"""

from __future__ import annotations

import attrs

LLM_PROVIDERS = ("openai", "anthropic")


def _positive(instance, attribute, value) -> None:
    if value <= 0:
        raise ValueError(f"{attribute.name} must be positive, not {value}")


def _not_negative(instance, attribute, value) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must not be negative, not {value}")


@attrs.frozen
class HttpConfig:
    """The built-in ``web_fetch`` / ``http_request`` tools.

    ``allow`` lists URL prefixes (``https://api.example.com/``); a URL that
    matches none is refused before any connection is opened (default deny).
    """

    allow: list[str] = attrs.field(converter=list)
    timeout_ms: int = attrs.field(default=30000, validator=_positive)
    max_body_bytes: int = attrs.field(default=10_000_000, validator=_positive)
    max_redirects: int = attrs.field(default=5, validator=_not_negative)


@attrs.frozen
class LlmProfile:
    """One LLM endpoint: an OpenAI-compatible chat completions API or
    Anthropic's messages API."""

    provider: str = attrs.field(validator=attrs.validators.in_(LLM_PROVIDERS))
    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_ms: int = attrs.field(default=120000, validator=_positive)
    max_retries: int = attrs.field(default=3, validator=_not_negative)


def _fields_of(cls: type, obj: object) -> dict:
    return {f.name: getattr(obj, f.name) for f in attrs.fields(cls) if hasattr(obj, f.name)}


def http_config(obj: object) -> HttpConfig:
    """``obj`` as an :class:`HttpConfig`: any object with its fields (the
    ones it lacks take their defaults), so a config loader's own class works."""
    return obj if isinstance(obj, HttpConfig) else HttpConfig(**_fields_of(HttpConfig, obj))


def llm_profile(obj: object) -> LlmProfile:
    """``obj`` as an :class:`LlmProfile` (as :func:`http_config` does)."""
    return obj if isinstance(obj, LlmProfile) else LlmProfile(**_fields_of(LlmProfile, obj))
