"""``POST /ingest/<source>``: partner ingest for systems that can only send
webhooks (docs/design.md, Partner ingest).

The body is one JSON object, the fields of ``IngestEventInput``
(``eventId``, ``productId`` or ``code``, ``type``, ``actor``, ``location``,
``latitude``, ``longitude``, ``occurredAt``, ``data``), signed with the
integration's ingest key like our outgoing webhooks. The answer is the
receipt ``ingestEvent`` returns, its event spelled as hashed (coordinates as
decimal strings); a replayed ``eventId`` answers the same body with
``Idempotent-Replayed: true``. Refusals are GraphQL-shaped errors with the
status their code implies, so one client handles both entry points alike.
The call takes a token from its key's rate-limit bucket, the one
``ingestEvent`` takes from.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from api.http.authentication import Authenticator, client_address
from api.http.guard import JSON_CONTENT_TYPES
from api.observability.observation import new_request_id
from api.observability.request_log import REQUEST_ID_SCOPE_KEY
from api.wire.errors import error_response
from api.wire.request_json import MalformedJSON, decode_request_json
from domain.chain import ProvenanceEvent
from domain.datetimes import parse_datetime
from domain.enums import EventSource, ProvenanceEventType
from domain.errors import BadUserInput, ErrorCode, ProofgateError, Unauthenticated
from domain.ingest import INTEGRATION_HEADER, SIGNATURE_HEADER
from domain.validation import parse_enum
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.context import Services
from services.ingest import Receipt, SignedRequest, authenticate_signed, ingest_event

if TYPE_CHECKING:
    from api.limits.ratelimit import RateCheck

__all__ = ["INGEST_BODY_MAX_BYTES", "REPLAYED_HEADER", "ingest_endpoint", "receipt_json"]

logger = logging.getLogger("proofgate.ingest")

INGEST_BODY_MAX_BYTES = 64 * 1024
"""An event's data is at most 16 KB as canonical JSON; the rest is a few fields."""
REPLAYED_HEADER = "Idempotent-Replayed"
_STATUS = {
    ErrorCode.UNAUTHENTICATED: 401,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.BAD_USER_INPUT: 400,
    ErrorCode.CONFLICT: 409,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.SERVICE_UNAVAILABLE: 503,
}
_FIELDS = frozenset(
    {
        "eventId",
        "productId",
        "code",
        "type",
        "actor",
        "location",
        "latitude",
        "longitude",
        "occurredAt",
        "data",
    }
)
_SOURCES = {source.path: source for source in EventSource}


@dataclass(frozen=True)
class _Body:
    """The body's fields, shaped as ``IngestFields``."""

    event_id: str
    product_id: str | None
    code: str | None
    type: ProvenanceEventType
    actor: str | None
    location: str | None
    latitude: float | None
    longitude: float | None
    occurred_at: datetime | None
    data: object | None


def _text(body: dict[str, Any], name: str, *, required: bool = False) -> Any:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise BadUserInput(f"{name}: expected a string")
    return value


def _number(body: dict[str, Any], name: str) -> float | None:
    value = body.get(name)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise BadUserInput(f"{name}: expected a number of decimal degrees")
    return value


def _parse(raw: bytes) -> _Body:
    try:
        body = decode_request_json(raw)
    except MalformedJSON as malformed:
        raise malformed.error from None
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise BadUserInput(
            f"Unknown field {unknown[0]!r}", hint=f"Send only {', '.join(sorted(_FIELDS))}."
        )
    occurred_at = _text(body, "occurredAt")
    return _Body(
        event_id=_text(body, "eventId", required=True),
        product_id=_text(body, "productId"),
        code=_text(body, "code"),
        type=parse_enum(ProvenanceEventType, _text(body, "type", required=True), field="type"),
        actor=_text(body, "actor"),
        location=_text(body, "location"),
        latitude=_number(body, "latitude"),
        longitude=_number(body, "longitude"),
        occurred_at=None if occurred_at is None else parse_datetime(occurred_at),
        data=body.get("data"),
    )


def _event_json(event: ProvenanceEvent) -> dict[str, Any]:
    content: dict[str, Any] = dict(event.content())
    content["source"] = None if event.source is None else event.source.value
    return {**content, "hash": event.hash}


def receipt_json(receipt: Receipt) -> dict[str, Any]:
    return {
        "integrationId": receipt.integration_id,
        "eventId": receipt.event_id,
        "productId": receipt.product_id,
        "event": _event_json(receipt.event),
    }


class _Refused(Exception):
    """A request refused as sent, with its own HTTP status (413, 415)."""

    def __init__(self, error: BadUserInput, status: int) -> None:
        super().__init__(error.message)
        self.error = error
        self.status = status


async def _body(request: Request) -> bytes:
    content_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if content_type not in JSON_CONTENT_TYPES:
        error = BadUserInput("Send the event as Content-Type: application/json")
        raise _Refused(error, 415)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > INGEST_BODY_MAX_BYTES:
            error = BadUserInput(
                f"The body is over {INGEST_BODY_MAX_BYTES} bytes",
                hint="An event's data is at most 16 KB; send one event per request.",
            )
            raise _Refused(error, 413)
        chunks.append(chunk)
    return b"".join(chunks)


async def _receive(request: Request, services: Services, source: EventSource) -> Receipt:
    body = await _body(request)
    signed = SignedRequest(
        integration=request.headers.get(INTEGRATION_HEADER),
        signature=request.headers.get(SIGNATURE_HEADER),
        body=body,
        source=source,
    )
    authenticator: Authenticator = request.app.state.graphql.authenticator
    client = client_address(request)
    await authenticator.check(client)
    try:
        principal = await authenticate_signed(
            services.storage, services.hash_salt, signed, now=services.clock()
        )
    except Unauthenticated:
        await authenticator.failed(client)
        raise
    rate_check: RateCheck | None = request.app.state.graphql.schema.rate_check
    if rate_check is not None:
        await rate_check(principal, request.client.host if request.client else None, 1)
    context = RequestContext(
        services=services,
        principal=principal,
        loaders=Loaders(services.storage, principal.tenant),
        request_id=request.scope.get(REQUEST_ID_SCOPE_KEY) or new_request_id(),
        request=request,
    )
    return await ingest_event(context, _parse(body))


def _refusal(error: ProofgateError) -> Response:
    status = _STATUS.get(error.code)
    if status is None:
        logger.error("ingest: %s", error.message, exc_info=error)
        masked = ProofgateError("Internal server error")
        return error_response(masked, 500)
    response = error_response(error, status)
    wait = error.extensions.get("retryAfter")
    if error.code is ErrorCode.RATE_LIMITED and wait is not None:
        response.headers["Retry-After"] = str(math.ceil(wait))
    return response


async def ingest_endpoint(request: Request) -> Response:
    source = _SOURCES.get(request.path_params["source"])
    if source is None:
        paths = ", ".join(f"/ingest/{path}" for path in _SOURCES)
        return PlainTextResponse(f"Not Found: post to one of {paths}", status_code=404)
    services: Services = request.app.state.graphql.services
    try:
        receipt = await _receive(request, services, source)
    except _Refused as refused:
        return error_response(refused.error, refused.status)
    except ProofgateError as error:
        return _refusal(error)
    except Exception:
        # A bug: masked like GraphQL's internal errors, the traceback logged.
        logger.exception("ingest: unhandled error")
        return error_response(ProofgateError("Internal server error"), 500)
    headers = {REPLAYED_HEADER: "true"} if receipt.replayed else {}
    return JSONResponse(receipt_json(receipt), headers=headers)
