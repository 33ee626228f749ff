"""A webhook receiver on 127.0.0.1 that answers as a test scripts it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Receiver", "Request"]


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    def __init__(self, answer: Callable[[Request, int], int]) -> None:
        """``answer(request, attempt)`` gives the status for the ``attempt``-th
        request (from 1) carrying the same delivery id."""
        self._answer = answer
        self.requests: list[Request] = []
        self.answered: list[int] = []
        self._server: asyncio.Server | None = None
        self.port = 0
        self.url = ""

    async def __aenter__(self) -> Receiver:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/hooks/alerts?via=test"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def stop(self) -> None:
        """Down: the port refuses connections until ``start``."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def start(self) -> None:
        """Back up on the same port (the URL the webhook names)."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _, path, _ = (await reader.readline()).decode().split(" ", 2)
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        request = Request(path, headers, body)
        self.requests.append(request)
        same = sum(
            1
            for r in self.requests
            if r.headers.get("x-proofgate-delivery") == headers.get("x-proofgate-delivery")
        )
        status = self._answer(request, same)
        self.answered.append(status)
        head = f"HTTP/1.1 {status} Scripted\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"
        writer.write(head.encode() + b"ok")
        await writer.drain()
        writer.close()

    def delivered(self) -> list[Request]:
        return [
            r for r, status in zip(self.requests, self.answered, strict=True) if 200 <= status < 300
        ]
