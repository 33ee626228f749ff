"""ingestEvent: a partner's event appended to a product's chain, once
(docs/design.md, Partner ingest).

The caller is an ingest key (role INTEGRATION), through ``Authorization:
Bearer`` or a signed ``POST /ingest/<source>``. The partner's event id makes
the call idempotent: the append's transaction also creates the id's record
(AP32) and counts the event on the integration, conditional on the record's
absence and on the integration not being revoked. A retry with the same id
and body is answered from the record and appends nothing; the same id with
another body is CONFLICT. A product of another brand answers NOT_FOUND, as
a missing one does.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from domain.chain import ProvenanceEvent
from domain.enums import EventSource
from domain.errors import BadUserInput, ConditionFailed, Conflict, Forbidden, NotFound
from domain.idempotency import request_fingerprint
from domain.ingest import Refusal, refused
from domain.validation import INGEST_EVENT_ID, validate_id
from storage import Item, WriteAction
from storage.access_patterns import INGESTED_EVENT, INTEGRATION_BY_ID, PRODUCT_BY_ID

from ..auth import Role
from ..context import CommandContext
from ..provenance.append import EXTRA_ACTIONS_START, append_event
from ..provenance.drafts import STATUS_EVENT_TYPES, EventDraft, EventFields
from ..provenance.items import event_from_item
from ..verification.lookup import product_for_code
from .items import IntegrationRef, ingested_item, integration_use, parse_integration_id

__all__ = ["IngestFields", "IngestRequest", "Receipt", "ingest_event"]

_USE, _RECORD = EXTRA_ACTIONS_START, EXTRA_ACTIONS_START + 1


class IngestFields(EventFields, Protocol):
    """``IngestEventInput`` and the body of ``POST /ingest/<source>``."""

    @property
    def event_id(self) -> str: ...
    @property
    def product_id(self) -> str | None: ...
    @property
    def code(self) -> str | None: ...


@dataclass(frozen=True)
class IngestRequest:
    event_id: str
    product_id: str | None
    code: str | None
    draft: EventDraft

    @classmethod
    def validate(cls, fields: IngestFields) -> IngestRequest:
        event_id = INGEST_EVENT_ID(fields.event_id)
        if (fields.product_id is None) == (fields.code is None):
            raise BadUserInput(
                "Name the product by exactly one of productId and code",
                hint="Send the product's id, or the verification code printed on it.",
            )
        if fields.type in STATUS_EVENT_TYPES:
            raise BadUserInput(
                f"type: {fields.type} events change the product's status",
                hint="Only the brand transfers or recalls a product; send another type.",
            )
        product_id = None if fields.product_id is None else validate_id(fields.product_id)
        return cls(event_id, product_id, fields.code, EventDraft.validate(fields))

    def fingerprint(self) -> str:
        """Of the request as sent (an omitted occurredAt stays omitted), so a
        retry matches whenever the partner sends the same thing again."""
        return request_fingerprint("ingestEvent", self)


@dataclass(frozen=True)
class Receipt:
    integration_id: str
    event_id: str
    product_id: str
    event: ProvenanceEvent
    replayed: bool
    """True when answered from the record of an earlier call."""


def _integration(context: CommandContext) -> IntegrationRef:
    principal = context.principal
    if principal.role is not Role.INTEGRATION or principal.integration_id is None:
        principal.require_authenticated()
        raise Forbidden(
            "ingestEvent takes an ingest key",
            hint="Send Authorization: Bearer <the ingestKey createIntegration returned>.",
        )
    return parse_integration_id(principal.integration_id)


async def _recorded(
    context: CommandContext, ref: IntegrationRef, request: IngestRequest, fingerprint: str
) -> Receipt | None:
    params = {**ref.params, "event_id": request.event_id}
    context.loaders.forget(INGESTED_EVENT, **params)
    record = await context.loaders.item(INGESTED_EVENT, **params)
    if record is None:
        return None
    if record["fingerprint"] != fingerprint:
        raise Conflict(
            f"eventId {request.event_id!r} was ingested with another body",
            hint="Send a new eventId for a new event; a retry must repeat the body exactly.",
        )
    event = event_from_item(record["event"])
    return Receipt(ref.id, request.event_id, record["productId"], event, replayed=True)


async def _product(context: CommandContext, brand_id: str, request: IngestRequest) -> Item:
    if request.product_id is not None:
        item = await context.loaders.item(PRODUCT_BY_ID, product_id=request.product_id)
    else:
        item = await product_for_code(context.loaders, request.code or "")
    if item is None or item["brandId"] != brand_id:
        raise NotFound("Product not found", hint="Name a product of the integration's brand.")
    return item


async def _source(context: CommandContext, ref: IntegrationRef) -> EventSource:
    integration = await context.loaders.item(INTEGRATION_BY_ID, **ref.params)
    if integration is None or integration.get("revokedAt"):
        raise _revoked()
    return EventSource(integration["source"])


def _revoked() -> Exception:
    return refused(
        Refusal.REVOKED_INTEGRATION,
        "This ingest key's integration was revoked",
        "Ask the brand for a new integration and its key.",
    )


async def ingest_event(context: CommandContext, fields: IngestFields) -> Receipt:
    ref = _integration(context)
    request = IngestRequest.validate(fields)
    fingerprint = request.fingerprint()
    replay = await _recorded(context, ref, request, fingerprint)
    if replay is not None:
        return replay
    source = await _source(context, ref)
    product = await _product(context, ref.brand_id, request)

    def record(product: Item, event: ProvenanceEvent, now: datetime) -> list[WriteAction]:
        return [
            integration_use(ref, now),
            ingested_item(
                ref,
                event_id=request.event_id,
                fingerprint=fingerprint,
                product=product,
                event=event,
                recorded_at=now,
            ),
        ]

    draft = dataclasses.replace(request.draft, source=source)
    try:
        appended = await append_event(
            context, product, draft, operation="ingestEvent", extra_actions=record
        )
    except ConditionFailed as error:
        if error.index == _USE:
            raise _revoked() from None
        if error.index == _RECORD:
            # A concurrent call with the same id committed first.
            replay = await _recorded(context, ref, request, fingerprint)
            if replay is not None:
                return replay
        raise
    return Receipt(ref.id, request.event_id, product["id"], appended.event, replayed=False)
