"""moto's server made to behave as DynamoDB does where the gateway can tell,
and ``python -m bench._moto --port P``: that server behind a keep-alive front.

moto's development server answers ``Connection: close``, so every call would
open a TCP connection, which DynamoDB does not make a client do; the front
keeps the gateway's connections alive and opens moto's (on its own cores'
time, not the gateway's). Its answers are moto's bytes, with moto's
``x-amz-crc32``, and can be replayed (``Front``). The test session applies
the same two patches to its moto (``tests/conftest.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import logging
import os
import socket
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol

from storage import Storage
from storage.cursor import CursorCodec

__all__ = ["Patcher", "honour_request_tokens", "main", "moto_storage", "serialize_moto"]

MOTO_TABLE_CALLS = (
    "get_item",
    "query",
    "put_item",
    "update_item",
    "delete_item",
    "transact_write_items",
)
TOKENS_KEPT = 100_000
"""DynamoDB remembers a token for ten minutes; a session sends far fewer."""
_FORWARDED = ("content-type", "x-amz-crc32", "x-amzn-requestid")


class Patcher(Protocol):
    def setattr(self, target: Any, name: str, value: Any) -> None: ...


class _Forever:
    """Patches for the life of the process (the bench's moto)."""

    def setattr(self, target: Any, name: str, value: Any) -> None:
        setattr(target, name, value)


def serialize_moto(patch: Patcher) -> None:
    """moto's server answers on several threads, but its in-memory tables have
    no lock: a query or a transaction (which deep-copies the table) racing a
    write fails with a 500. DynamoDB isolates them; one lock gives moto the same
    guarantee."""
    from moto.dynamodb.models import DynamoDBBackend

    lock = threading.RLock()
    for name in MOTO_TABLE_CALLS:
        method = getattr(DynamoDBBackend, name)

        def call(*args: Any, _method: Callable[..., Any] = method, **kwargs: Any) -> Any:
            with lock:
                return _method(*args, **kwargs)

        patch.setattr(DynamoDBBackend, name, call)


def honour_request_tokens(patch: Patcher) -> None:
    """DynamoDB applies a TransactWriteItems once per ``ClientRequestToken``
    and answers a repeat with success; moto applies every repeat. The driver
    resends a transaction with its token after a 5xx or a timeout, so without
    this a slow moto turns that safe retry into a failed condition."""
    from moto.dynamodb.responses import DynamoHandler

    real = DynamoHandler.transact_write_items
    applied: OrderedDict[str, Any] = OrderedDict()
    lock = threading.Lock()

    def transact_write_items(self: Any) -> Any:
        token = self.body.get("ClientRequestToken")
        with lock:
            if token is not None and token in applied:
                return applied[token]
            result = real(self)
            if token is not None:
                applied[token] = result
                while len(applied) > TOKENS_KEPT:
                    applied.popitem(last=False)
            return result

    patch.setattr(DynamoHandler, "transact_write_items", transact_write_items)


def _forward(port: int, head: list[str], body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            if name.lower() not in ("connection", "keep-alive"):
                headers[name] = value.strip()
        connection.request("POST", "/", body=body, headers=headers)
        response = connection.getresponse()
        kept = [(k, v) for k, v in response.getheaders() if k.lower() in _FORWARDED]
        return response.status, kept, response.read()
    finally:
        connection.close()


Answer = tuple[int, list[tuple[str, str]], bytes]
_READS = ("GetItem", "BatchGetItem", "Query")


class Front:
    """Keep-alive connections in front of moto; after ``POST /__replay``, a replay.

    moto reads by walking its table (a global index query visits every item)
    and copies the whole table for each transaction action, so under load it
    answers in tens to hundreds of milliseconds and a benchmark would measure
    little but waiting. Once the benchmark's data is in, replay mode answers a
    read it has seen from the bytes moto gave it, and a write with the bytes
    moto last gave for that operation (a write's answer is its consumed
    capacity alone); whatever it has not seen still goes to moto. The
    gateway's work per call is the same; only moto's time is left out."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.replay = False
        self.reads: dict[tuple[str, bytes], Answer] = {}
        self.writes: dict[str, Answer] = {}

    async def answer(self, head: list[str], body: bytes) -> Answer:
        target = next(
            (
                v.strip()
                for n, _, v in (h.partition(":") for h in head)
                if n.lower() == "x-amz-target"
            ),
            "",
        )
        operation = target.rsplit(".", 1)[-1]
        key = (target, body)
        if self.replay:
            known = self.reads.get(key) if operation in _READS else self.writes.get(operation)
            if known is not None:
                return known
        loop = asyncio.get_running_loop()
        answer = await loop.run_in_executor(None, _forward, self.upstream, head, body)
        if answer[0] == 200:
            if operation in _READS:
                if len(self.reads) < 100_000:
                    self.reads[key] = answer
            else:
                self.writes[operation] = answer
        return answer

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")[:-2]
                fields = (line.partition(":") for line in head[1:])
                length = next((int(v) for n, _, v in fields if n.lower() == "content-length"), 0)
                body = await reader.readexactly(length)
                if head[0].split(" ")[1] == "/__replay":
                    self.replay, self.reads = True, {}
                    status, headers, answer = 200, [], b"{}"
                else:
                    status, headers, answer = await self.answer(head, body)
                lines = [f"HTTP/1.1 {status} {http.client.responses.get(status, '')}"]
                lines += [f"{k}: {v}" for k, v in headers]
                lines += [f"Content-Length: {len(answer)}", "Connection: keep-alive", "", ""]
                writer.write("\r\n".join(lines).encode("latin-1") + answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def _serve(port: int, upstream: int) -> None:
    front = Front(upstream)
    server = await asyncio.start_server(front.serve, "127.0.0.1", port, backlog=256)
    async with server:
        await server.serve_forever()


def main() -> None:
    from moto.server import ThreadedMotoServer

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    patch = _Forever()
    serialize_moto(patch)
    honour_request_tokens(patch)
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    _, upstream = moto.get_host_and_port()
    try:
        asyncio.run(_serve(arguments.port, upstream))
    finally:
        moto.stop()


@asynccontextmanager
async def moto_storage(table_name: str) -> AsyncIterator[Storage | None]:
    """A store on a fresh table of an in-process moto server on 127.0.0.1,
    or None where moto (the dev extras) is not installed."""
    try:
        from moto.server import ThreadedMotoServer

        from storage.dynamodb import create_table, open_dynamodb
    except ImportError:
        yield None
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    endpoint = f"http://127.0.0.1:{port}"
    try:
        await create_table(table_name=table_name, region="us-east-1", endpoint_url=endpoint)
        storage = await open_dynamodb(
            table_name=table_name,
            region="us-east-1",
            endpoint_url=endpoint,
            cursor_key=CursorCodec.generate_key(),
        )
        try:
            yield storage
        finally:
            await storage.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
