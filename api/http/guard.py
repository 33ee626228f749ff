"""What a POST to /graphql must look like before anything reads it.

CSRF: a browser sends a cross-site POST without asking first only when it is
a "simple" request: a form content type (text/plain, form encodings) and no
custom header. So a POST must either say it is JSON (``application/json``, or
``application/graphql-response+json``) or carry one of ``PREFLIGHT_HEADERS``;
either makes a cross-site browser ask first, and CORS then decides. The body
is read as JSON in both cases. GET runs queries only (Strawberry refuses
mutations over GET), so it needs neither.

Size: a body over ``max_bytes`` is refused with 413 after reading at most
``max_bytes`` + 1 bytes, whether or not it declared its length.

Both refusals are GraphQL-shaped, with BAD_USER_INPUT: the request is wrong
as sent, whatever the operation in it (QUERY_TOO_COMPLEX is about the
operation's shape: depth, aliases, tokens, cost).
"""

from __future__ import annotations

from collections.abc import Awaitable

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.wire.errors import error_response
from domain.errors import BadUserInput
from domain.validation import ascii_digits

__all__ = [
    "BODY_SCOPE_KEY",
    "JSON_CONTENT_TYPES",
    "PREFLIGHT_HEADERS",
    "HTTPGuard",
    "media_type_of",
    "refuse",
    "replay_body",
]

JSON_CONTENT_TYPES = frozenset({"application/json", "application/graphql-response+json"})
PREFLIGHT_HEADERS = ("x-proofgate-csrf", "apollo-require-preflight")
_JSON = b"application/json"
BODY_SCOPE_KEY = "proofgate.body"
"""The body as read here, for the prepared lane (``api/graphql/prepared.py``); the
app still receives it as usual."""


class HTTPGuard:
    def __init__(self, app: ASGIApp, *, max_bytes: int, path: str = "/graphql") -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.path = path

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        """Returns the inner app's awaitable for what it does not handle rather
        than awaiting it: a WebSocket lives for hours, and a frame per
        middleware per connection is memory an idle subscription keeps
        (docs/design.md, Alert fan-out)."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            return self.app(scope, receive, send)
        return self._guard(scope, receive, send)

    async def _guard(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        media_type = media_type_of(headers.get("content-type", ""))
        preflighted = any(h in headers for h in PREFLIGHT_HEADERS)
        await self.guard(
            scope, receive, send, media_type, preflighted, headers.get("content-length")
        )

    async def guard(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        media_type: str,
        preflighted: bool,
        declared: str | None,
    ) -> None:
        """The checks and the read, from the headers they need: ``GraphQLEntry``
        (``api/graphql/entry.py``) reads them in its one pass over the headers."""
        refusal = self.refusal(media_type, preflighted, declared or "")
        if refusal is not None:
            await refuse(scope, receive, send, *refusal)
            return
        body = await self.read(receive)
        if body is None:
            await refuse(scope, receive, send, self.too_large(), 413)
            return
        if media_type != "application/json":
            scope = {**scope, "headers": _with_json_content_type(scope["headers"])}
        scope[BODY_SCOPE_KEY] = body
        await self.app(scope, replay_body(body, receive), send)

    def refusal(
        self, media_type: str, preflighted: bool, declared: str
    ) -> tuple[BadUserInput, int] | None:
        if media_type not in JSON_CONTENT_TYPES and not preflighted:
            error = BadUserInput(
                f"POST needs Content-Type: application/json, got {media_type or 'none'}",
                hint="Send JSON with Content-Type: application/json, "
                "or add the header X-Proofgate-CSRF: 1.",
            )
            return error, 415
        if ascii_digits(declared) and int(declared) > self.max_bytes:
            return self.too_large(), 413
        return None

    def too_large(self) -> BadUserInput:
        return BadUserInput(
            f"The request body is larger than {self.max_bytes} bytes",
            hint="Send fewer or smaller inputs per request.",
            maxBytes=self.max_bytes,
        )

    async def read(self, receive: Receive) -> bytes | None:
        """The whole body, or None as soon as it is over the limit."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks)
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def media_type_of(content_type: str) -> str:
    return content_type.partition(";")[0].strip().lower()


def _with_json_content_type(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    return [(k, v) for k, v in headers if k.lower() != b"content-type"] + [(b"content-type", _JSON)]


def replay_body(body: bytes, receive: Receive) -> Receive:
    """``receive`` for an app that reads the body again: ``body`` first, then
    whatever the server sends (a disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def refuse(
    scope: Scope, receive: Receive, send: Send, error: BadUserInput, status: int
) -> None:
    await error_response(error, status)(scope, receive, send)
