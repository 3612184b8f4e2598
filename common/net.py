"""Which addresses only this machine can reach: both services refuse any other bind without a token."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach."""
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_refusal(host: str, token: str) -> str | None:
    """Why listening on `host` without a service token is refused, or None when it is allowed.

    Any machine that can reach a non-loopback address could read the documents, so such a bind
    needs `DOCENT_API_TOKEN` (Documentation/operations.md).
    """
    if token or is_loopback(host):
        return None
    return (f"refusing to listen on {host!r} without DOCENT_API_TOKEN: any machine that can reach this "
            "address could read your documents; set DOCENT_API_TOKEN (the same value for the gateway and "
            "the RAG API) or bind 127.0.0.1")
