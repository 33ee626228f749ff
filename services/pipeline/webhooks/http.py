"""The one outbound HTTP request the gateway makes: a webhook POST.

Small on purpose (HTTP/1.1, one request per connection, bounded response),
so the runtime needs no HTTP client library. The host is resolved once and the
connection goes to the address that was checked, so a DNS answer cannot
switch a public name to a private address between check and connect.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from domain.errors import Forbidden, ServiceUnavailable
from domain.hosts import public_address_problem

__all__ = ["RESPONSE_MAX_BYTES", "HttpResponse", "post"]

RESPONSE_MAX_BYTES = 64 * 1024
_USER_AGENT = "proofgate-webhooks/1"


@dataclass(frozen=True, slots=True)
class HttpResponse:
    status: int
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def _is_public(address: str) -> bool:
    return public_address_problem(address) is None


async def _resolve(host: str, port: int, allow_private: bool) -> str:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise ServiceUnavailable(f"{host} does not resolve")
    if not allow_private and not all(_is_public(address) for address in addresses):
        raise Forbidden(f"Webhook host {host} resolves to a private or reserved address")
    return addresses[0]


async def post(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    timeout: float,
    allow_private: bool = False,
) -> HttpResponse:
    parts = urlsplit(url)
    secure = parts.scheme.lower() == "https"
    host = parts.hostname or ""
    port = parts.port or (443 if secure else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    async with asyncio.timeout(timeout):
        address = await _resolve(host, port, allow_private)
        context = ssl.create_default_context() if secure else None
        reader, writer = await asyncio.open_connection(
            address, port, ssl=context, server_hostname=host if secure else None
        )
        try:
            host_header = host if parts.port is None else f"{host}:{parts.port}"
            lines = [
                f"POST {target} HTTP/1.1",
                f"Host: {host_header}",
                f"User-Agent: {_USER_AGENT}",
                "Content-Type: application/json",
                f"Content-Length: {len(body)}",
                "Connection: close",
                *(f"{name}: {value}" for name, value in headers.items()),
            ]
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            await writer.drain()
            return await _read_response(reader)
        finally:
            writer.close()


async def _read_response(reader: asyncio.StreamReader) -> HttpResponse:
    status_line = await reader.readline()
    fields = status_line.decode("latin-1").split(" ", 2)
    if len(fields) < 2 or not fields[0].startswith("HTTP/") or not fields[1].isdigit():
        raise ServiceUnavailable("The webhook receiver sent a malformed HTTP response")
    status = int(fields[1])
    length: int | None = None
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            length = int(value.strip())
    limit = RESPONSE_MAX_BYTES if length is None else min(length, RESPONSE_MAX_BYTES)
    body = await reader.read(limit) if limit else b""
    return HttpResponse(status, body)
