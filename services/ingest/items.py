"""How partner integrations and what they ingest are stored (docs/design.md,
Partner ingest).

- ``BRAND#<brand>`` / ``INTEGRATION#<id>``: an integration (AP30 lists a
  brand's, AP31 reads one) with its key's hash, event count and last event
  time; ``revokedAt`` once revoked.
- ``APIKEY#<sha256 of the ingest key>`` / ``META`` (AP20): the key, role
  INTEGRATION, so ``Authorization: Bearer`` finds it like any API key.
- ``INGEST#<brand>#<integration>`` / ``EVENT#<partner event id>`` (AP32):
  what one partner event became (the product, the appended event, the request
  fingerprint), created in the append's own transaction: the same id can only
  ever append once, and a retry is answered from it.

An integration's public id, ``int_<brand>_<id>``, names its brand, so a signed
request finds it with one GetItem and a foreign id is refused before any read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from domain.chain import ProvenanceEvent
from domain.datetimes import format_datetime
from domain.enums import EventSource, IntegrationType
from storage import All, AttributeAbsent, Item, ItemAbsent, ItemExists, Put, Update
from storage.access_patterns import API_KEY_BY_HASH, INGESTED_EVENT, INTEGRATION_BY_ID

from ..auth import Role
from ..brand_scoped import BrandScopedRef
from ..provenance.items import event_item

__all__ = [
    "INTEGRATION_ID_PREFIX",
    "IntegrationRef",
    "ingest_key_item",
    "ingested_item",
    "integration_item",
    "integration_use",
    "parse_integration_id",
]

INTEGRATION_ID_PREFIX = "int_"


@dataclass(frozen=True, slots=True)
class IntegrationRef(BrandScopedRef):
    prefix: ClassVar[str] = INTEGRATION_ID_PREFIX
    param: ClassVar[str] = "integration_id"
    type_name: ClassVar[str] = "Integration"


def parse_integration_id(text: str) -> IntegrationRef:
    return IntegrationRef.parse(text)


def integration_item(
    ref: IntegrationRef,
    *,
    name: str,
    integration_type: IntegrationType,
    key_hash: str,
    created_at: datetime,
) -> Put:
    key = INTEGRATION_BY_ID.key(**ref.params)
    item: Item = {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "Integration",
        "id": ref.id,
        "brandId": ref.brand_id,
        "name": name,
        "type": integration_type.value,
        "source": EventSource.of(integration_type).value,
        "keyHash": key_hash,
        "eventCount": 0,
        "createdAt": format_datetime(created_at),
    }
    return Put(item, ItemAbsent())


def ingest_key_item(ref: IntegrationRef, *, key_hash: str, name: str, created_at: datetime) -> Put:
    key = API_KEY_BY_HASH.key(key_hash=key_hash)
    item: Item = {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "ApiKey",
        "id": key_hash,
        "brandId": ref.brand_id,
        "role": Role.INTEGRATION.value,
        "integrationId": ref.id,
        "name": name,
        "createdAt": format_datetime(created_at),
    }
    return Put(item, ItemAbsent())


def integration_use(ref: IntegrationRef, at: datetime) -> Update:
    """Counts one appended event; fails (so the append does) once the
    integration is revoked, however recently the caller's key was checked."""
    return Update(
        INTEGRATION_BY_ID.key(**ref.params),
        set={"lastEventAt": format_datetime(at)},
        add={"eventCount": 1},
        condition=All(ItemExists(), AttributeAbsent("revokedAt")),
    )


def ingested_item(
    ref: IntegrationRef,
    *,
    event_id: str,
    fingerprint: str,
    product: Item,
    event: ProvenanceEvent,
    recorded_at: datetime,
) -> Put:
    key = INGESTED_EVENT.key(**ref.params, event_id=event_id)
    stored = event_item(
        event, product_id=product["id"], brand_id=product["brandId"], recorded_at=recorded_at
    )
    item: Item = {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "IngestedEvent",
        "integrationId": ref.id,
        "eventId": event_id,
        "fingerprint": fingerprint,
        "productId": product["id"],
        "event": {name: value for name, value in stored.items() if name not in ("PK", "SK")},
        "recordedAt": format_datetime(recorded_at),
    }
    return Put(item, ItemAbsent())
