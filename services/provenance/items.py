"""How provenance events are stored: ``PRODUCT#<id>`` / ``EVENT#<n>`` (AP09).

The sequence is zero-padded in the key, so the partition reads in chain
order. The product item records the head (``chainSequence``, ``chainHead``,
``chainHeadAt``); an append is conditional on it, so the chain cannot fork.
Every attribute the chain hashes is stored as it was hashed, so
``event_from_item`` rebuilds exactly the event whose hash was taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from domain.chain import ChainHead, ProvenanceEvent
from domain.datetimes import format_datetime, parse_datetime
from domain.enums import EventSource, ProvenanceEventType
from storage import Item, Key, KeyTemplate
from storage.access_patterns import PROVENANCE_CHAIN

__all__ = ["EVENT_SORT", "chain_head", "event_from_item", "event_item", "event_key", "head_update"]

EVENT_SORT = KeyTemplate("EVENT#{sequence:int}")


def event_key(product_id: str, sequence: int) -> Key:
    return Key(
        PROVENANCE_CHAIN.partition({"product_id": product_id}),
        EVENT_SORT.format({"sequence": sequence}),
    )


def event_item(
    event: ProvenanceEvent,
    *,
    product_id: str,
    brand_id: str,
    recorded_at: datetime,
    private: Mapping[str, Any] | None = None,
) -> Item:
    """``private``: attributes beside the event that the chain does not hash."""
    key = event_key(product_id, event.sequence)
    return {
        **(private or {}),
        "PK": key.pk,
        "SK": key.sk,
        "entity": "ProvenanceEvent",
        "productId": product_id,
        "brandId": brand_id,
        "sequence": event.sequence,
        "type": event.type.value,
        "actor": event.actor,
        "location": event.location,
        "latitude": event.latitude,
        "longitude": event.longitude,
        "occurredAt": format_datetime(event.occurred_at),
        "data": dict(event.data or {}),
        "hash": event.hash,
        "previousHash": event.previous_hash,
        "recordedAt": format_datetime(recorded_at),
        **({"source": event.source.value} if event.source is not None else {}),
    }


_TYPES = {member.value: member for member in ProvenanceEventType}
"""Each type by its stored name: a dict lookup, where the enum's call costs
~4k instructions more, once per event of every verification's chain."""


def _type(name: str) -> ProvenanceEventType:
    try:
        return _TYPES[name]
    except (KeyError, TypeError):  # TypeError: a stored value that is no str
        return ProvenanceEventType(name)  # raises as it always did


def event_from_item(item: Item) -> ProvenanceEvent:
    """Raises (KeyError, ValueError, BadUserInput) on an item that is not a
    well-formed event; chain verification counts that as a break. The hash
    is not trusted here: ``verify_chain`` recomputes it from these fields."""
    source = item.get("source")
    return ProvenanceEvent.stored(
        int(item["sequence"]),
        _type(item["type"]),
        parse_datetime(item["occurredAt"]),
        item["previousHash"],
        item["hash"],
        item.get("actor"),
        item.get("location"),
        item.get("latitude"),
        item.get("longitude"),
        item.get("data") or {},
        EventSource(source) if source else None,
    )


def chain_head(product: Item) -> ChainHead:
    head_at = product.get("chainHeadAt")
    return ChainHead(
        int(product.get("chainSequence", 0)),
        product["chainHead"],
        parse_datetime(head_at) if head_at else None,
    )


def head_update(event: ProvenanceEvent) -> dict[str, object]:
    """The product attributes an append sets."""
    return {
        "chainSequence": event.sequence,
        "chainHead": event.hash,
        "chainHeadAt": format_datetime(event.occurred_at),
    }
