"""The load generator: ``python -m bench._load`` reads a JSON plan on stdin and
prints one JSON result.

A separate process, so generating load never takes the server's core, and raw
HTTP/1.1 over keep-alive asyncio streams rather than an HTTP client library,
so the client's own parsing adds microseconds, not a millisecond, to each
latency. Requests are pre-encoded; each connection sends one, reads the whole
response (``Content-Length``), then sends the next: a closed loop with a fixed
number of clients, as a fleet of frontends would be.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["LoadPlan", "LoadResult", "encode_post"]

_HEADER_END = b"\r\n\r\n"
_CONTENT_LENGTH = b"content-length:"


@dataclass(frozen=True)
class LoadPlan:
    port: int
    requests: list[str]
    """Pre-encoded HTTP/1.1 requests (latin-1 text), sent round-robin."""
    connections: int = 16
    count: int = 2000
    """Measured requests, stopped early by ``seconds``."""
    seconds: float = 5.0
    warmup: int = 200


@dataclass
class LoadResult:
    requests: int = 0
    elapsed: float = 0.0
    errors: int = 0
    first_error: str | None = None
    latencies: list[float] = field(default_factory=list)


def encode_post(path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> str:
    payload = json.dumps(body, separators=(",", ":"))
    lines = [
        f"POST {path} HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        f"Content-Length: {len(payload.encode())}",
        *(f"{name}: {value}" for name, value in (headers or {}).items()),
    ]
    return "\r\n".join(lines) + "\r\n\r\n" + payload


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> tuple[bool, bytes]:
    writer.write(request)
    head = await reader.readuntil(_HEADER_END)
    length = 0
    for line in head.lower().split(b"\r\n"):
        if line.startswith(_CONTENT_LENGTH):
            length = int(line[len(_CONTENT_LENGTH) :])
    body = await reader.readexactly(length)
    ok = head.startswith(b"HTTP/1.1 200") and b'"errors"' not in body
    return ok, body


async def _run(plan: LoadPlan) -> LoadResult:
    requests = [r.encode("latin-1") for r in plan.requests]
    result = LoadResult()
    issued = 0
    total = plan.warmup + plan.count
    start = deadline = float("inf")

    async def client() -> None:
        nonlocal issued, start, deadline
        reader, writer = await asyncio.open_connection("127.0.0.1", plan.port)
        try:
            while issued < total and time.perf_counter() < deadline:
                index = issued
                issued += 1
                if index == plan.warmup:
                    # The window opens with the first request after the warm-up,
                    # so it holds only steady-state traffic.
                    start = time.perf_counter()
                    deadline = start + plan.seconds
                t0 = time.perf_counter()
                ok, body = await _exchange(reader, writer, requests[index % len(requests)])
                if index < plan.warmup:
                    continue
                result.latencies.append(time.perf_counter() - t0)
                if not ok:
                    result.errors += 1
                    result.first_error = result.first_error or body[:500].decode(errors="replace")
        finally:
            writer.close()

    await asyncio.gather(*(client() for _ in range(plan.connections)))
    result.elapsed = time.perf_counter() - start
    result.requests = len(result.latencies)
    return result


def main() -> None:
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    plan = LoadPlan(**json.load(sys.stdin))
    result = asyncio.run(_run(plan))
    json.dump(asdict(result), sys.stdout)


if __name__ == "__main__":
    main()
