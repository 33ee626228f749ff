"""A response answered without its two ASGI messages: what the server's lean
HTTP cycle offers beside its ``send`` (``api/runtime/http_protocol.py``),
and what the /graphql entry's direct path answers through
(``api/graphql/entry.py``; docs/design.md, The server under the app).

An app handed the ``send`` of such a cycle (a bound method whose owner's
class is in ``ANSWERS_AT_ONCE``) may call the owner's ``answer`` instead of
sending ``http.response.start`` and one ``http.response.body``: the same
bytes, without the two messages, the two ``send`` coroutines and the held
head between them. Any other ``send`` (another server, a middleware's
wrapper, a test's function) takes the messages.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Protocol

__all__ = ["ANSWERS_AT_ONCE", "DirectAnswer"]


class DirectAnswer(Protocol):
    def answer(
        self, status: int, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> Awaitable[None] | None:
        """``send`` of ``http.response.start`` (``status``, ``headers``), then
        of one ``http.response.body`` of ``body``: None once done at once,
        else an awaitable doing it through ``send``, to be awaited."""


ANSWERS_AT_ONCE: set[type[DirectAnswer]] = set()
"""The classes whose instances' ``send`` has an ``answer`` beside it: the
server's cycles that offer one (the lean cycle adds itself)."""
