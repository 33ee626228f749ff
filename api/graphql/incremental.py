"""@defer and @stream: a query's increments, in parts, each with GraphQL's errors.

graphql-core executes incremental delivery (``experimental_execute_incrementally``)
and Strawberry writes each increment as a part of a ``multipart/mixed``
response. Here: the content type Apollo Router answers with (Apollo Client
reads it), the check that the client asked for parts, and the increments'
errors mapped to codes as every other result's are (docs/design.md,
Incremental delivery). Compiled plans leave deferred operations to
graphql-core (``api/graphql/execution/plan.py``); cost, the read budget
(``api/graphql/execution/deferred.py``) and the response byte budget count
the increments with the rest of the operation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graphql import SubsequentIncrementalExecutionResult
from strawberry.http.streaming import MultipartTransport

from api.wire.errors import map_errors

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

__all__ = [
    "DEFER_SPEC",
    "STREAMING_ACCEPTS",
    "IncrementalTransport",
    "accepts_parts",
    "asks_for_parts",
    "map_increment_errors",
]

DEFER_SPEC = "deferSpec=20220824"


class IncrementalTransport(MultipartTransport):
    """A query's increments, one part each, under the content type Apollo
    Router answers them with."""

    @property
    def headers(self) -> Mapping[str, str]:
        return {"Content-Type": f'multipart/mixed; boundary="{self.separator}"; {DEFER_SPEC}'}


def accepts_parts(request: HTTPConnection) -> bool:
    """Whether the client reads a multipart answer (Apollo Client sends
    ``multipart/mixed;deferSpec=20220824`` with every deferred query)."""
    return "multipart/mixed" in request.headers.get("accept", "")


STREAMING_ACCEPTS = ("multipart/mixed", "text/event-stream")
"""What in an ``Accept`` header asks for an answer in parts or events."""


def asks_for_parts(request: HTTPConnection) -> bool:
    """Whether the answer may come in parts or events (multipart, SSE),
    which only Strawberry's full path writes: the prepared lane answers JSON."""
    accept = request.headers.get("accept")
    return accept is not None and any(kind in accept for kind in STREAMING_ACCEPTS)


def map_increment_errors(value: Any, request_id: str | None) -> None:
    """The errors of a subsequent increment (a deferred fragment's, a
    streamed item's, or a fragment that failed whole) as the client sees
    them, with codes; graphql-core hands them on unmapped."""
    if not isinstance(value, SubsequentIncrementalExecutionResult):
        return
    for part in [*(value.incremental or ()), *(value.completed or ())]:
        if part.errors:
            part.errors = map_errors(part.errors, request_id)
