"""Run something in a served process once its application has started.

The hook runs on the lifespan's ``startup.complete``, so it sees everything
start-up built, and only where a server drives the lifespan through the
wrapped app: tests that run the app in-process do not wrap it.
"""

from __future__ import annotations

from collections.abc import Awaitable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["AfterStartup"]


class AfterStartup:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        """Returns the inner app's awaitable for what it does not handle rather
        than awaiting it: a WebSocket lives for hours, and a frame per
        middleware per connection is memory an idle subscription keeps
        (docs/design.md, Alert fan-out)."""
        if scope["type"] != "lifespan":
            return self.app(scope, receive, send)
        return self._lifespan(scope, receive, send)

    async def _lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def started(message: Message) -> None:
            if message["type"] == "lifespan.startup.complete":
                self.started()
            elif message["type"] in _SHUT_DOWN:
                self.stop()
            await send(message)

        await self.app(scope, receive, started)

    def started(self) -> None:
        """Runs on the event loop once start-up has completed, before the
        server is told so."""
        raise NotImplementedError

    def stop(self) -> None:
        """Runs once shut-down has completed (or failed): whatever ``started``
        left running on the loop ends with the lifespan, not with the loop,
        which may outlive it (a test's, or an embedding server's)."""


_SHUT_DOWN = frozenset({"lifespan.shutdown.complete", "lifespan.shutdown.failed"})
