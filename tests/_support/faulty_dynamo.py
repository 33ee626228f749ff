"""A proxy in front of moto's server that breaks answers *after* moto acted.

Real DynamoDB answers a 5xx now and then, and AWS says the write may or may
not have applied. This proxy makes the worst case happen on purpose: it
forwards every Nth call of the chosen operations to moto, lets it apply, and
then, by ``fault``:

- ``"500"``: answers HTTP 500 ``InternalServerError`` instead of moto's answer;
- ``"reset"``: answers nothing and resets the connection (an RST, which
  aiohttp reports as a ``ClientOSError``, not as a clean disconnect);
- ``"corrupt"``: answers moto's bytes with one digit of a number changed,
  under the ``x-amz-crc32`` of the bytes moto sent, as a flipped bit on the
  way would.

DynamoDB answers a transaction whose ``ClientRequestToken`` it applied in the
last ten minutes with success and applies nothing (the session's moto server
is taught the same in ``tests/conftest.py``), so a gateway that retries with
the same token applies it once, and one that sends a fresh token applies it
twice or fails its conditions -- which is what the tests look for.
"""

from __future__ import annotations

import http.client
import json
import socket
import struct
import threading
import zlib
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

__all__ = ["FaultyDynamo", "faulty_dynamo"]

_INTERNAL_ERROR = json.dumps(
    {
        "__type": "com.amazonaws.dynamodb.v20120810#InternalServerError",
        "message": "Injected after the write applied",
    }
).encode()


RESET = -1
"""The status ``exchange`` returns for an answer the handler must not send."""


def _corrupt(answer: bytes) -> bytes:
    """One digit changed, still valid JSON: the first number attribute's, or
    (an answer without items) the first digit anywhere, e.g. the capacity's."""
    marker = answer.find(b'"N": "')
    if marker >= 0:
        start = marker + len(b'"N": "')
    else:
        start = next((i for i, byte in enumerate(answer) if 0x30 <= byte <= 0x39), -1)
        if start < 0:
            raise AssertionError(f"no digit to corrupt in {answer!r}")
    digit = answer[start] - ord("0")
    return answer[:start] + str((digit + 1) % 10).encode() + answer[start + 1 :]


@dataclass
class FaultyDynamo:
    upstream: str
    fail_every: int
    operations: Collection[str]
    fault: str = "500"
    limit: int | None = None
    """At most this many faults; later calls go through."""
    url: str = ""
    forwarded: list[str] = field(default_factory=list)
    tokens: list[str | None] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    _watched: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def exchange(self, target: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, str]:
        """Status, answer, and the ``x-amz-crc32`` of the answer moto gave."""
        status, answer = self._forward(body, headers)
        checksum = str(zlib.crc32(answer))
        return *self._fault(target.rsplit(".", 1)[-1], body, status, answer), checksum

    def _fault(self, operation: str, body: bytes, status: int, answer: bytes) -> tuple[int, bytes]:
        with self._lock:
            self.forwarded.append(operation)
            if operation not in self.operations or status != 200:
                return status, answer
            token = json.loads(body or b"{}").get("ClientRequestToken")
            retry = token is not None and token in self.tokens
            self.tokens.append(token)
            if retry:  # fail each write once; its retry goes through
                return status, answer
            self._watched += 1
            exhausted = self.limit is not None and len(self.failed) >= self.limit
            if self._watched % self.fail_every or exhausted:
                return status, answer
            self.failed.append(operation)
        if self.fault == "reset":
            return RESET, b""
        if self.fault == "corrupt":
            return status, _corrupt(answer)
        return 500, _INTERNAL_ERROR

    def _forward(self, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        upstream = urlsplit(self.upstream)
        connection = http.client.HTTPConnection(upstream.hostname or "", upstream.port, timeout=30)
        try:
            connection.request("POST", "/", body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()


def _handler(proxy: FaultyDynamo) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
            status, answer, checksum = proxy.exchange(
                self.headers.get("X-Amz-Target", ""), body, headers
            )
            if status == RESET:
                # Linger 0: close() sends an RST instead of a FIN.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True
                self.connection.close()
                return
            self.send_response(status)
            self.send_header("Content-Type", "application/x-amz-json-1.0")
            self.send_header("x-amz-crc32", checksum)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def faulty_dynamo(
    upstream: str,
    *,
    fail_every: int,
    operations: Collection[str] = ("TransactWriteItems",),
    fault: str = "500",
    limit: int | None = None,
) -> Iterator[FaultyDynamo]:
    """A running proxy on a free loopback port; ``url`` is its endpoint."""
    proxy = FaultyDynamo(upstream, fail_every, frozenset(operations), fault, limit)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(proxy))
    server.daemon_threads = True
    proxy.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
