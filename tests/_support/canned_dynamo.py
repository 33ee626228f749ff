"""A DynamoDB stand-in on a loopback port that answers every call with the
bytes a test sets: an error body no emulator sends on demand (a throttle, a
cancellation with reasons and items), for the aiobotocore client and the data
plane to read alike."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["Canned", "canned_dynamo"]


@dataclass
class Canned:
    url: str = ""
    status: int = 200
    body: bytes = b"{}"
    content_type: str = "application/x-amz-json-1.0"
    targets: list[str] = field(default_factory=list)

    def answer(self, status: int, body: bytes, content_type: str | None = None) -> None:
        self.status, self.body = status, body
        self.content_type = content_type or "application/x-amz-json-1.0"


def _handler(canned: Canned) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            canned.targets.append(self.headers.get("X-Amz-Target", ""))
            self.send_response(canned.status)
            self.send_header("Content-Type", canned.content_type)
            self.send_header("x-amzn-RequestId", "CANNED")
            self.send_header("x-amz-crc32", str(zlib.crc32(canned.body)))
            self.send_header("Content-Length", str(len(canned.body)))
            self.end_headers()
            self.wfile.write(canned.body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def canned_dynamo() -> Iterator[Canned]:
    canned = Canned()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(canned))
    server.daemon_threads = True
    canned.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield canned
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
