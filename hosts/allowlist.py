"""Which URLs the HTTP tools may reach: an allow-list of URL prefixes.

A prefix is a URL (``https://api.example.com/v1/``). A URL is allowed when
its scheme, host and port equal the prefix's (ports made explicit, hosts
lower-cased) and its path starts with the prefix's path at a segment
boundary, so ``https://api.example.com`` never lets
``https://api.example.com.evil.net`` or ``https://api.example.com@evil.net``
through, and ``http://h/v1`` does not allow ``http://h/v10``. A path with a
``..`` or ``.`` segment (also percent-encoded) is refused rather than
guessed at. Nothing is allowed by default.

Messages name a URL by its :func:`origin` only: a query string or a path
may carry a token.
"""

from __future__ import annotations

import httpx

_DEFAULT_PORTS = {"http": 80, "https": 443}


class UrlRefused(ValueError):
    """The URL is not one the HTTP tools may reach."""


def origin(url: str | httpx.URL) -> str:
    """``scheme://host[:port]`` of ``url``, without credentials, path or query."""
    try:
        u = httpx.URL(url) if isinstance(url, str) else url
    except (httpx.InvalidURL, TypeError, ValueError):
        return "an invalid URL"
    if not u.scheme or not u.host:
        return "a URL without a host"
    port = f":{u.port}" if u.port is not None else ""
    host = f"[{u.host}]" if ":" in u.host else u.host
    return f"{u.scheme}://{host}{port}"


def _parts(url: httpx.URL) -> tuple[str, str, int, str]:
    scheme = url.scheme.lower()
    port = url.port if url.port is not None else _DEFAULT_PORTS.get(scheme, -1)
    return scheme, url.host.lower(), port, url.path or "/"


def _has_dot_segment(path: str) -> bool:
    return any(seg in (".", "..") for seg in path.split("/"))


class AllowList:
    """The URL prefixes of the config; :meth:`check` refuses the others."""

    def __init__(self, prefixes: list[str]) -> None:
        self.rules: list[tuple[str, str, int, str]] = []
        for prefix in prefixes:
            u = httpx.URL(prefix)
            if u.scheme not in _DEFAULT_PORTS or not u.host:
                raise ValueError(f"allow-list entry {prefix!r}: an http:// or https:// URL with a host")
            self.rules.append(_parts(u))

    def check(self, url: str | httpx.URL) -> httpx.URL:
        """The parsed URL, or :class:`UrlRefused` (message: the origin only)."""
        try:
            u = httpx.URL(url) if isinstance(url, str) else url
        except (httpx.InvalidURL, TypeError, ValueError):
            raise UrlRefused("the URL is not a valid URL") from None
        if u.scheme not in _DEFAULT_PORTS or not u.host:
            raise UrlRefused(f"{origin(u)}: only http:// and https:// URLs with a host can be fetched")
        scheme, host, port, path = _parts(u)
        if _has_dot_segment(path):
            raise UrlRefused(f"{origin(u)}: a path with '.' or '..' segments is refused")
        for r_scheme, r_host, r_port, r_path in self.rules:
            if (scheme, host, port) != (r_scheme, r_host, r_port):
                continue
            if path == r_path or path.startswith(r_path if r_path.endswith("/") else r_path + "/"):
                return u
        raise UrlRefused(f"{origin(u)} is not in the HTTP allow-list (no connection was made)")
