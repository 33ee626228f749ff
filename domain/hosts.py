"""Brand domain names and webhook URLs.

Both are checked by the same host-name rules (RFC 1123 labels, ASCII only:
internationalised names are sent in their ``xn--`` form, so one domain has one
spelling). Whether a webhook may target a private address is deployment policy
(tests deliver to 127.0.0.1), so it is the caller's flag, not a rule here;
which addresses count as public is: ``public_address_problem``.
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
    "public_address_problem",
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


# Prefixes that carry another address inside (NAT64, RFC 6052 and 8215; 6to4,
# RFC 3056; IPv4-compatible, RFC 4291): a gateway on the path unwraps them, so
# they reach whatever the embedded IPv4 address names, private ones included.
# A webhook that means a public IPv4 host can name it directly.
_TRANSLATED = tuple(
    ipaddress.ip_network(prefix)
    for prefix in ("64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "::/96")
)


def public_address_problem(address: str) -> str | None:
    """Why ``address`` (an IP literal, maybe with a ``%zone``) is not a public
    unicast address a webhook may reach, or None when it is."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_multicast:
        return "a multicast address"
    if isinstance(ip, ipaddress.IPv6Address) and (
        ip.teredo is not None or any(ip in prefix for prefix in _TRANSLATED)
    ):
        return "an address that embeds another (NAT64, 6to4, Teredo)"
    if not ip.is_global:
        return "a private or reserved address"
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
