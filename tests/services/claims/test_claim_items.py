"""Claim expiry: reads apply the same rule as the conditional create."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.claims.items import claim_is_active, claim_item, epoch_seconds, from_epoch
from storage import Any_, Compare, Comparison, ItemAbsent
from storage.conditions import evaluate

NOW = datetime(2030, 6, 1, 8, 0, 0, 500000, tzinfo=UTC)


def claim_expiring(seconds_from_now: int) -> dict[str, object]:
    return claim_item(
        product_id="P1",
        brand_id="B1",
        device_hash="h" * 64,
        claimed_at=NOW - timedelta(days=1),
        expires_at=epoch_seconds(NOW) + seconds_from_now,
    )


def test_expiry_is_exclusive_and_agrees_with_the_create_condition() -> None:
    replace_if_expired = Any_(ItemAbsent(), Compare("expiresAt", Comparison.LE, epoch_seconds(NOW)))
    for offset, active in ((-1, False), (0, False), (1, True)):
        item = claim_expiring(offset)
        assert claim_is_active(item, NOW) is active
        assert evaluate(replace_if_expired, item) is not active
    assert not claim_is_active(None, NOW)
    assert evaluate(replace_if_expired, None)


def test_epoch_round_trip_is_whole_seconds_in_utc() -> None:
    moment = from_epoch(epoch_seconds(NOW))
    assert moment == NOW.replace(microsecond=0) and moment.tzinfo is UTC


def test_a_claim_records_no_device_but_its_hash() -> None:
    item = claim_expiring(60)
    assert set(item) == {
        "PK",
        "SK",
        "entity",
        "productId",
        "brandId",
        "deviceHash",
        "claimedAt",
        "expiresAt",
        "disputeCount",
    }
    assert (item["PK"], item["SK"]) == ("PRODUCT#P1", "CLAIM")
