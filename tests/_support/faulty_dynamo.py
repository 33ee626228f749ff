"""A proxy in front of moto's server that fails writes *after* they applied.

Real DynamoDB answers a 5xx now and then, and AWS says the write may or may
not have applied. This proxy makes the worst case happen on purpose: it
forwards every Nth write of the chosen operations to moto, lets it apply, and
then answers HTTP 500 ``InternalServerError`` instead of moto's answer.

DynamoDB answers a transaction whose ``ClientRequestToken`` it applied in the
last ten minutes with success and applies nothing (the session's moto server
is taught the same in ``tests/conftest.py``), so a gateway that retries with
the same token applies it once, and one that sends a fresh token applies it
twice or fails its conditions -- which is what the tests look for.
"""

from __future__ import annotations

import http.client
import json
import threading
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


@dataclass
class FaultyDynamo:
    upstream: str
    fail_every: int
    operations: Collection[str]
    url: str = ""
    forwarded: list[str] = field(default_factory=list)
    tokens: list[str | None] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    _watched: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def exchange(self, target: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        operation = target.rsplit(".", 1)[-1]
        status, answer = self._forward(body, headers)
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
            if self._watched % self.fail_every == 0:
                self.failed.append(operation)
                return 500, _INTERNAL_ERROR
        return status, answer

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
            status, answer = proxy.exchange(self.headers.get("X-Amz-Target", ""), body, headers)
            self.send_response(status)
            self.send_header("Content-Type", "application/x-amz-json-1.0")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def faulty_dynamo(
    upstream: str, *, fail_every: int, operations: Collection[str] = ("TransactWriteItems",)
) -> Iterator[FaultyDynamo]:
    """A running proxy on a free loopback port; ``url`` is its endpoint."""
    proxy = FaultyDynamo(upstream, fail_every, frozenset(operations))
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
