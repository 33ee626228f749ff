"""What a /graphql answer is sent as, from the request's ``Accept`` (GraphQL over HTTP).

A query or a mutation is answered as one JSON document whenever the client
accepts one of the two JSON media types, whatever else it lists: urql sends
``application/graphql-response+json, application/graphql+json,
application/json, text/event-stream, multipart/mixed`` with every query and
reads a JSON answer. An event stream or parts are for what needs them: a
subscription, an operation with ``@defer`` or ``@stream``, or a client that
accepts nothing else. Under ``application/graphql-response+json`` a request
error (a document that does not parse or validate, variables that do not
coerce, a refusal before execution) is a 4xx without ``data``; under
``application/json`` every well-formed request is a 200, as before
(docs/design.md, Browser clients).

Strawberry picks its stream transport from the ``Accept`` header alone, so the
view hands it the negotiated header (``negotiated_accept``): the JSON media
type for an operation that does not stream. Every path answers through
``json_answer``: Strawberry's, the prepared lane's and the entry's direct one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from graphql import DirectiveNode, DocumentNode, GraphQLError, OperationType, get_operation_ast
from graphql.language import Visitor, visit

__all__ = [
    "APPLICATION_JSON",
    "GRAPHQL_RESPONSE_JSON",
    "json_answer",
    "json_media_type",
    "lists_a_stream",
    "negotiated_accept",
    "streams",
]

GRAPHQL_RESPONSE_JSON = "application/graphql-response+json"
APPLICATION_JSON = "application/json"
_WILDCARDS = frozenset({"*/*", "application/*"})
_STREAM_TYPES = frozenset({"text/event-stream", "multipart/mixed"})
_INCREMENTAL = frozenset({"defer", "stream"})
_SERVER_CODES = {"INTERNAL_SERVER_ERROR": 500, "SERVICE_UNAVAILABLE": 503}
_KEPT_ACCEPT_CHARS = 256
_KEPT_ACCEPTS = 64
"""The answers for at most 64 ``Accept`` headers of at most 256 characters
are kept: 16 KiB, whatever clients send."""


def _ranges(accept: str) -> list[tuple[str, float]]:
    """The media ranges of an ``Accept`` header with their weights, in order;
    a weight that does not parse counts as 1, as most servers read it."""
    ranges = []
    for part in accept.split(","):
        kind, *params = part.split(";")
        weight = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value.strip())
                except ValueError:
                    weight = 1.0
        ranges.append((kind.strip().lower(), weight))
    return ranges


def json_media_type(accept: str | None) -> str | None:
    """The media type a single JSON answer is sent as: the client's preferred
    of the two (by weight, then order); ``application/json`` without an
    ``Accept``, for a wildcard, or when nothing listed is known (the spec lets
    a server disregard such a header); None when the client lists only
    streams, which it is then answered as. A client sends the same header
    every time: the answers for a few short ones are kept."""
    if not accept:
        return APPLICATION_JSON
    if len(accept) <= _KEPT_ACCEPT_CHARS:
        return _kept(accept)
    return _json_media_type(accept)


def _json_media_type(accept: str) -> str | None:
    best: tuple[float, str] | None = None
    only_streams = True
    for kind, weight in _ranges(accept):
        if weight <= 0:
            continue
        if kind not in _STREAM_TYPES:
            only_streams = False
        media = GRAPHQL_RESPONSE_JSON if kind == GRAPHQL_RESPONSE_JSON else None
        if kind == APPLICATION_JSON or kind in _WILDCARDS:
            media = APPLICATION_JSON
        if media is not None and (best is None or weight > best[0]):
            best = (weight, media)
    if best is not None:
        return best[1]
    return None if only_streams else APPLICATION_JSON


_kept = functools.lru_cache(maxsize=_KEPT_ACCEPTS)(_json_media_type)


def lists_a_stream(accept: str | None) -> bool:
    """Whether the client lists a streamed answer (an event stream, parts)."""
    return accept is not None and any(kind in accept for kind in _STREAM_TYPES)


def negotiated_accept(
    accept: str | None,
    body: Callable[[], object],
    parse: Callable[[str], DocumentNode],
    document: Callable[[str], str | None],
) -> str | None:
    """The ``Accept`` Strawberry is handed for a request listing a stream:
    the JSON media type, when the client accepts one and the operation does
    not stream (``streams``, on the request's ``body()``); None: as sent."""
    if not lists_a_stream(accept):
        return None
    media = json_media_type(accept)
    if media is None or streams(body(), parse, document):
        return None
    return media


def streams(
    body: object, parse: Callable[[str], DocumentNode], document: Callable[[str], str | None]
) -> bool:
    """Whether a request's operation is one answered as a stream: a
    subscription, or an operation with ``@defer`` or ``@stream``. ``body``:
    the request's JSON body or query parameters; ``document``: the text a
    ``documentId`` names. An operation whose text is not in the request
    (an APQ hash) is taken as streaming, as the client asked; a batch, a
    document that does not parse or names no operation, as not."""
    if not isinstance(body, Mapping):
        return False
    query = body.get("query")
    if query is None and isinstance(body.get("documentId"), str):
        query = document(body["documentId"])
    if query is None:
        return isinstance(body.get("extensions"), (Mapping, str))
    name = body.get("operationName")
    try:
        parsed = parse(query) if isinstance(query, str) else None
    except GraphQLError:
        return False
    operation = None
    if parsed is not None and (name is None or isinstance(name, str)):
        operation = get_operation_ast(parsed, name)
    if operation is None:
        return False
    return operation.operation is OperationType.SUBSCRIPTION or _incremental(parsed)


class _FindsIncremental(Visitor):
    found = False

    def enter_directive(self, node: DirectiveNode, *_: object) -> object:
        if node.name.value in _INCREMENTAL:
            self.found = True
            return Visitor.BREAK
        return None


def _incremental(document: DocumentNode | None) -> bool:
    """Any ``@defer`` or ``@stream`` in the document (in a fragment the
    operation spreads or not: a fragment it does not use fails validation)."""
    finder = _FindsIncremental()
    if document is not None:
        visit(document, finder)
    return finder.found


def json_answer(
    response: Mapping[str, Any], media_type: str, status: int | None = None
) -> tuple[int, Mapping[str, Any]]:
    """The status and body of a single JSON answer. Under
    ``application/graphql-response+json`` a request error (no ``data``, and no
    error raised while a field ran, which would carry a ``path``) is a 4xx
    (5xx for a server fault) without ``data``; ``status``: one already set
    (429 for a rate limit), kept. Under ``application/json``, or for a field
    error, 200."""
    errors = response.get("errors")
    request_error = (
        media_type == GRAPHQL_RESPONSE_JSON
        and response.get("data") is None
        and bool(errors)
        and not any(isinstance(e, Mapping) and "path" in e for e in errors or ())
    )
    if not request_error:
        return status or 200, response
    if status is None:
        codes = [(e.get("extensions") or {}).get("code") for e in errors or ()]
        status = max((_SERVER_CODES.get(str(code), 400) for code in codes), default=400)
    return status, {key: value for key, value in response.items() if key != "data"}
