"""Stored provenance events: round trip through the item model, and chain checks
over stored items (every hashed field, the head, malformed items)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from domain.chain import ChainHead
from services.provenance.items import (
    chain_head,
    event_from_item,
    event_item,
    head_update,
)
from services.provenance.walk import check_chain
from storage.values import normalize_item
from tests._support.chain import shipped_chain

CERTIFICATE = "ab" * 32
T0 = datetime(2030, 5, 1, 9, 30, tzinfo=UTC)


def stored_chain(length: int = 3) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A product item and its events, as the store would hand them back."""
    events = shipped_chain(
        CERTIFICATE,
        length,
        start=T0,
        actor="carrier",
        location="Rotterdam",
        latitude=Decimal("51.9225"),
        longitude=Decimal("4.47917"),
        data=lambda n: {"leg": n, "notes": ["fragile"]},
    )
    items = [
        normalize_item(event_item(event, product_id="P1", brand_id="B1", recorded_at=T0))
        for event in events
    ]
    product = {
        "id": "P1",
        "certificateHash": CERTIFICATE,
        "chainHead": CERTIFICATE,
        "chainSequence": 0,
    }
    if items:
        product |= head_update(event_from_item(items[-1]))
    return product, items


def test_events_round_trip_through_the_item_model() -> None:
    product, items = stored_chain(1)
    event = event_from_item(items[0])
    assert event.latitude == Decimal("51.9225") and event.data == {"leg": 0, "notes": ["fragile"]}
    assert items[0]["SK"] == "EVENT#000000000001"
    assert chain_head(product) == ChainHead(1, event.hash, event.occurred_at)


def test_an_untouched_chain_verifies() -> None:
    product, items = stored_chain()
    assert check_chain(product, items).intact
    assert check_chain({**product, "chainHead": CERTIFICATE, "chainSequence": 0}, []).intact


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        ("location", "Antwerp"),
        ("actor", None),
        ("latitude", Decimal("51.9226")),
        ("longitude", None),
        ("data", {"leg": 0}),
        ("type", "INSPECTED"),
        ("occurredAt", "2030-05-01T09:30:00.000001Z"),
        ("previousHash", "cd" * 32),
        ("hash", "cd" * 32),
        ("sequence", 7),
    ],
)
def test_altering_any_hashed_field_breaks_the_chain(attribute: str, value: Any) -> None:
    product, items = stored_chain()
    items[1] = {**items[1], attribute: value}
    report = check_chain(product, items)
    assert not report.intact
    assert report.broken_at == 2


def test_a_truncated_or_extended_chain_breaks_against_the_head() -> None:
    product, items = stored_chain()
    assert not check_chain(product, items[:-1]).intact
    assert not check_chain({**product, "chainSequence": 2}, items).intact


@pytest.mark.parametrize(
    "damage",
    [
        lambda item: {k: v for k, v in item.items() if k != "hash"},
        lambda item: {**item, "type": "TELEPORTED"},
        lambda item: {**item, "occurredAt": "last tuesday"},
        lambda item: {**item, "data": "not an object"},
    ],
)
def test_a_malformed_item_is_a_break_not_an_error(damage: Any) -> None:
    product, items = stored_chain()
    items[0] = damage(items[0])
    assert not check_chain(product, items).intact


def test_a_product_without_a_head_is_a_break() -> None:
    product, items = stored_chain()
    del product["chainHead"]
    assert not check_chain(product, items).intact
