"""Sending the response cache's answers over ASGI: a hit, a ``304``, and a
miss's answer held back until its caching headers are known
(docs/design.md, Response cache)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.types import Message, Send

from api.graphql.negotiation import APPLICATION_JSON, json_media_type, lists_a_stream
from api.http.guard import BODY_SCOPE_KEY
from api.observability.request_log import record_operation
from services.auth import Principal

from .answers import ResponseAnswers, Ticket, not_modified

__all__ = ["Held", "answer_cached", "send_hit", "ticket_of"]


def ticket_of(
    answers: ResponseAnswers, request: Request, principal: Principal, trace_header: str
) -> Ticket | None:
    """The ticket of a request the cache may take: a GET or POST asking for
    one JSON answer (no trace, no stream, not the explorer's page)."""
    headers = request.headers
    accept = headers.get("accept") or ""
    if headers.get(trace_header) == "1" or lists_a_stream(accept) or "text/html" in accept:
        return None
    method = request.scope["method"]
    if method == "GET":
        return answers.ticket_of_query(request.query_params, principal)
    if method == "POST":
        body = request.scope.get(BODY_SCOPE_KEY)
        return answers.ticket_of_body(body if isinstance(body, bytes) else None, principal)
    return None


async def answer_cached(
    answers: ResponseAnswers,
    ticket: Ticket,
    request: Request,
    send: Send,
    answer: Callable[[Send], Awaitable[None]],
) -> None:
    """A hit, or ``answer`` (the path that executes) recorded and kept; a
    GET's answer held for its headers."""
    get = request.scope["method"] == "GET"
    if_none_match = request.headers.get("if-none-match") if get else None
    if ticket.hit is not None:
        record_operation(ticket.key.operation, "query", ticket.principal)
        media_type = json_media_type(request.headers.get("accept")) or APPLICATION_JSON
        await send_hit(send, answers, ticket, media_type, get=get, if_none_match=if_none_match)
        return
    held = Held() if get else None
    with answers.recording(ticket):
        await answer(send if held is None else held.send)
        answers.keep(ticket)
    if held is not None:
        await held.release(send, answers, ticket, if_none_match)


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
