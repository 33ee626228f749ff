"""Brand domain names and webhook URLs.

Both are checked by the same host-name rules (RFC 1123 labels, ASCII only:
internationalised names are sent in their ``xn--`` form, so one domain has one
spelling). Whether a webhook may target a private address is deployment policy
(tests deliver to 127.0.0.1), so it is the caller's flag, not a rule here.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from domain.errors import BadUserInput

__all__ = [
    "DOMAIN_MAX_LENGTH",
    "LABEL_MAX_LENGTH",
    "WEBHOOK_SCHEMES",
    "WEBHOOK_URL_MAX_LENGTH",
    "validate_domain",
    "validate_webhook_url",
]

DOMAIN_MAX_LENGTH = 253
LABEL_MAX_LENGTH = 63
WEBHOOK_URL_MAX_LENGTH = 2048
WEBHOOK_SCHEMES = frozenset({"http", "https"})

_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")
_NUMERIC = re.compile(r"[0-9]+")
_FORBIDDEN_IN_URL = re.compile(r"[\x00-\x20\x7f-\x9f]")


def _host_problem(host: str, *, require_dot: bool) -> str | None:
    if not host.isascii():
        return "non-ASCII host (use the xn-- form)"
    if len(host) > DOMAIN_MAX_LENGTH:
        return f"longer than {DOMAIN_MAX_LENGTH} characters"
    labels = host.split(".")
    if require_dot and len(labels) < 2:
        return "needs at least two labels, e.g. example.com"
    for label in labels:
        if len(label) > LABEL_MAX_LENGTH:
            return f"label longer than {LABEL_MAX_LENGTH} characters"
        if not _LABEL.fullmatch(label):
            return f"invalid label {label!r}"
    if _NUMERIC.fullmatch(labels[-1]):
        return "top-level label is numeric"
    return None


def validate_domain(value: str, *, field: str = "domain") -> str:
    """A registrable-looking host name, lowercased (DNS is case-insensitive)."""
    domain = value.lower() if value.isascii() else value
    problem = _host_problem(domain, require_dot=True)
    if problem:
        raise BadUserInput(
            f"{field}: {value!r} is not a domain name ({problem})",
            hint="Send a bare host name such as example.com, without scheme or path.",
        )
    return domain


def validate_webhook_url(value: str, *, field: str = "url", require_https: bool = False) -> str:
    """An absolute http(s) URL with a host and no credentials, kept as sent."""

    def refuse(
        reason: str, hint: str = "Send an absolute URL such as https://example.com/hook."
    ) -> BadUserInput:
        return BadUserInput(f"{field}: {reason}", hint=hint)

    if len(value) > WEBHOOK_URL_MAX_LENGTH:
        raise refuse(f"longer than {WEBHOOK_URL_MAX_LENGTH} characters")
    if _FORBIDDEN_IN_URL.search(value):
        raise refuse("contains whitespace or control characters", "Percent-encode them.")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise refuse(f"not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in WEBHOOK_SCHEMES:
        raise refuse(f"scheme {parts.scheme or '(none)'!r} is not allowed; use http or https")
    if require_https and scheme != "https":
        raise refuse("must use https", "Serve the webhook over TLS.")
    if parts.username is not None or parts.password is not None:
        raise refuse(
            "must not contain credentials",
            "Authenticate deliveries with the webhook secret's signature instead.",
        )
    host = parts.hostname or ""
    if not host:
        raise refuse("has no host")
    if port == 0:
        raise refuse("port 0 is not allowed")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        problem = _host_problem(host, require_dot=False)
        if problem:
            raise refuse(f"host {host!r} is not valid ({problem})") from None
    return value
