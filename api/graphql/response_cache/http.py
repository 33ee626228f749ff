"""Sending the response cache's answers over ASGI: a hit, a ``304``, and a
miss's answer held back until its caching headers are known
(docs/design.md, Response cache)."""

from __future__ import annotations

from starlette.types import Message, Send

from .answers import ResponseAnswers, Ticket, not_modified

__all__ = ["Held", "send_hit"]


async def _send(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def send_hit(
    send: Send,
    answers: ResponseAnswers,
    ticket: Ticket,
    media_type: str,
    *,
    get: bool,
    if_none_match: str | None,
) -> None:
    entry = ticket.hit
    assert entry is not None
    extra = answers.headers(entry.etag, ticket.principal) if get else []
    if get and not_modified(if_none_match, entry.etag):
        await _send(send, 304, extra, b"")
        return
    body = answers.body(entry, ticket.principal)
    headers = [
        (b"content-length", str(len(body)).encode()),
        (b"content-type", media_type.encode()),
        *extra,
    ]
    await _send(send, 200, headers, body)


class Held:
    """A GET's answer from the path, held until it is known whether it was
    kept: then sent with its ``ETag`` and ``Cache-Control``, or as a ``304``."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def send(self, message: Message) -> None:
        self.messages.append(message)

    async def release(
        self, send: Send, answers: ResponseAnswers, ticket: Ticket, if_none_match: str | None
    ) -> None:
        kept, messages = ticket.kept, self.messages
        if kept is None or not messages or messages[0].get("status") != 200:
            for message in messages:
                await send(message)
            return
        extra = answers.headers(kept.etag, ticket.principal)
        if not_modified(if_none_match, kept.etag):
            await _send(send, 304, extra, b"")
            return
        start = messages[0]
        await send({**start, "headers": [*start.get("headers", ()), *extra]})
        for message in messages[1:]:
            await send(message)
