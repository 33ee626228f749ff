"""SigV4 for the one request shape the data plane sends, the day's key kept.

botocore's ``SigV4Auth`` builds an ``AWSRequest`` with email-message headers
for every call and derives the signing key (four HMACs) again each time:
under verifyProduct on DynamoDB that was 17% of the gateway's CPU (py-spy),
about 60 us of a small GetItem's 300 (docs/design.md, DynamoDB data plane).
This signs ``POST`` of a JSON body to the endpoint's path with the same
algorithm and keeps the derived key for the day; a differential test holds it
to ``SigV4Auth`` for generated bodies, targets, credentials, times and
endpoints (``tests/storage/dynamodb/test_dynamodb_signing.py``).
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlsplit

from ._botocore import signed_path

__all__ = ["Signer"]

_ALGORITHM = "AWS4-HMAC-SHA256"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _host(url: str) -> str:
    """The ``host`` botocore signs: lower-cased, bracketed IPv6, and the port
    only when it is not the scheme's default."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None and parts.port != _DEFAULT_PORTS.get(parts.scheme):
        host = f"{host}:{parts.port}"
    return host


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


class Signer:
    def __init__(self, url: str, region: str, service: str) -> None:
        self._host = _host(url)
        self._path = quote(signed_path(urlsplit(url).path), safe="/~")
        self._region = region
        self._service = service
        self._key: tuple[str, str, bytes] | None = None
        """(secret, day, key): one, replaced when either changes."""

    def headers(
        self, credentials: Any, content_type: str, target: str, body: bytes, now: datetime
    ) -> dict[str, str]:
        """The request's signed headers; ``credentials`` are frozen (access
        key, secret key, token), ``now`` is UTC."""
        timestamp = now.strftime("%Y%m%dT%H%M%SZ")
        day = timestamp[:8]
        headers = {"Content-Type": content_type, "X-Amz-Date": timestamp, "X-Amz-Target": target}
        if credentials.token:
            headers["X-Amz-Security-Token"] = credentials.token
        canonical = sorted(
            [(k.lower(), " ".join(v.split())) for k, v in headers.items()] + [("host", self._host)]
        )
        signed = ";".join(name for name, _ in canonical)
        request = "\n".join(
            [
                "POST",
                self._path,
                "",
                *(f"{name}:{value}" for name, value in canonical),
                "",
                signed,
                hashlib.sha256(body).hexdigest(),
            ]
        )
        scope = f"{day}/{self._region}/{self._service}/aws4_request"
        digest = hashlib.sha256(request.encode("utf-8")).hexdigest()
        string_to_sign = f"{_ALGORITHM}\n{timestamp}\n{scope}\n{digest}"
        signature = hmac.new(
            self._signing_key(credentials.secret_key, day),
            string_to_sign.encode("utf-8"),
            hashlib.sha256,
        ).hexdigest()
        headers["Authorization"] = (
            f"{_ALGORITHM} Credential={credentials.access_key}/{scope}, "
            f"SignedHeaders={signed}, Signature={signature}"
        )
        return headers

    def _signing_key(self, secret: str, day: str) -> bytes:
        if self._key is not None and self._key[:2] == (secret, day):
            return self._key[2]
        key = _hmac(f"AWS4{secret}".encode(), day)
        for part in (self._region, self._service, "aws4_request"):
            key = _hmac(key, part)
        self._key = (secret, day, key)
        return key
