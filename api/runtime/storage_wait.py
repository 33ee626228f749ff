"""``serve`` through a storage outage at start: bound, alive, not ready.

A task started while DynamoDB timed out, throttled or answered 5xx used to
exit 1, and its scheduler started another into the same outage. Now the
check tells an outage (``ServiceUnavailable``) from a misconfiguration
(``ConfigurationError``, ``storage/dynamodb/_reach.py``); on an outage a
small server on the gateway's own listening socket answers ``/health`` 200
and ``/ready`` 503 (everything else 503 with ``Retry-After``) while the check
is tried again with backoff, one log line per attempt. Once storage answers,
that server stops and the gateway starts on the same socket, whose backlog
holds the connections made meanwhile. A misconfiguration found on the way
stops ``serve`` with one line, as at the first check (docs/design.md,
Degraded start).
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from api import __version__
from domain.errors import ServiceUnavailable

__all__ = [
    "MAX_DELAY_SECONDS",
    "PROBE_SECONDS",
    "start_when_storage_answers",
    "waiting_app",
]

logger = logging.getLogger("proofgate.api")

PROBE_SECONDS = 2.0
"""One check's bound, as ``/ready``'s: a store that hangs is an outage, and
a check stuck on a connection that will never answer must not hold back
the one after the store recovers."""
FIRST_DELAY_SECONDS = 0.25
MAX_DELAY_SECONDS = 1.0
"""Short, so the gateway is ready within about a probe and a delay of the
store answering; one GetItem a second per task is nothing to DynamoDB."""
_RETRY_AFTER = "1"
# 1013: try again later (RFC 6455, IANA registry).
_TRY_AGAIN_LATER = 1013


def waiting_app(backend: str) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """What the socket answers while storage does not: alive, not ready."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": _TRY_AGAIN_LATER})
            return
        if scope["type"] != "http":
            return
        if scope["path"] == "/health":
            response = JSONResponse({"status": "ok", "version": __version__})
        elif scope["path"] == "/ready":
            response = JSONResponse({"status": "unavailable", "storage": backend}, 503)
        else:
            body = {
                "errors": [
                    {
                        "message": "The gateway is starting: its store does not answer yet",
                        "extensions": {"code": ServiceUnavailable.code.value},
                    }
                ]
            }
            response = JSONResponse(body, 503, headers={"Retry-After": _RETRY_AFTER})
        await response(scope, receive, send)

    return app


async def _attempt(check: Callable[[], Awaitable[None]], bound: float | None, store: str) -> None:
    """One check; running out of ``bound`` is an outage like any other."""
    try:
        async with asyncio.timeout(bound):
            await check()
    except TimeoutError:
        raise ServiceUnavailable(f"{store} did not answer within {bound:g} s") from None


async def start_when_storage_answers(
    check: Callable[[], Awaitable[None]],
    listener: socket.socket,
    config: Callable[[Any], uvicorn.Config],
    *,
    backend: str,
    store: str,
    bound: float | None = PROBE_SECONDS,
    prepare: Callable[[], object] = lambda: None,
) -> bool:
    """True once ``check`` passes; False when ``serve`` was told to stop
    first. ``config`` makes the waiting server's uvicorn configuration for
    an app; ``store`` names the store in log lines; ``prepare`` runs once on
    a thread while waiting (building the app, so that is not done after the
    store answers). A ``ConfigurationError`` from either propagates."""
    try:
        await _attempt(check, bound, store)
        return True
    except ServiceUnavailable as outage:
        first = outage
    server = uvicorn.Server(config(waiting_app(backend)))
    # A copy of the socket: uvicorn closes the sockets it served when it stops,
    # and the gateway serves this one next, with whatever its backlog holds.
    serving = asyncio.create_task(server.serve(sockets=[listener.dup()]))
    try:
        await asyncio.to_thread(prepare)
        return await _retry(lambda: _attempt(check, bound, store), first, serving)
    finally:
        server.should_exit = True
        await serving


async def _retry(
    attempt: Callable[[], Awaitable[None]],
    outage: ServiceUnavailable,
    serving: asyncio.Task[None],
) -> bool:
    delay = FIRST_DELAY_SECONDS
    while True:
        wait = delay * random.uniform(0.5, 1.0)
        logger.warning(
            "Storage unavailable at start: %s; serving /health, not ready; next check in %.1f s",
            outage.message,
            wait,
        )
        await asyncio.wait({serving}, timeout=wait)
        if serving.done():
            return False
        delay = min(delay * 2, MAX_DELAY_SECONDS)
        try:
            await attempt()
        except ServiceUnavailable as again:
            outage = again
            continue
        logger.info("Storage answers; starting the gateway")
        return True
