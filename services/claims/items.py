"""How claims and disputes are stored.

- ``PRODUCT#<id>`` / ``CLAIM`` (AP11): the one claim of a product. ``expiresAt``
  is the TTL attribute (epoch seconds); the TTL only schedules deletion, so
  every read and the conditional create check expiry themselves. The claimant
  is kept only as the salted hash of their device fingerprint.
- ``PRODUCT#<id>`` / ``OWNERSHIP_DISPUTE#<time>#<id>``: an open dispute of
  the claim, written with the bump of the claim's ``disputeCount``. No access
  pattern reads disputes yet; the OWNERSHIP_DISPUTE alert carries them to the
  brand. The key sorts after ``META``, outside the verify path's one read of
  CLAIM..META (AP33), so disputes, which anyone may add, never lengthen it;
  disputes stored before at ``DISPUTE#...`` sort inside and are skipped
  (docs/design.md, Verify path).
"""

from __future__ import annotations

from datetime import UTC, datetime

from domain.datetimes import format_datetime
from storage import Item, Key, KeyTemplate
from storage.access_patterns import PRODUCT_CLAIM

__all__ = [
    "DISPUTE_SORT",
    "DisputeStatus",
    "claim_is_active",
    "claim_item",
    "dispute_item",
    "epoch_seconds",
    "from_epoch",
]

DISPUTE_SORT = KeyTemplate("OWNERSHIP_DISPUTE#{disputed_at:time}#{dispute_id}")


class DisputeStatus:
    OPEN = "OPEN"


def epoch_seconds(moment: datetime) -> int:
    return int(moment.timestamp())


def from_epoch(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def claim_is_active(claim: Item | None, now: datetime) -> bool:
    """The same test as the conditional create: expired at ``expiresAt <= now``."""
    return claim is not None and int(claim.get("expiresAt", 0)) > epoch_seconds(now)


def claim_item(
    *, product_id: str, brand_id: str, device_hash: str, claimed_at: datetime, expires_at: int
) -> Item:
    key = PRODUCT_CLAIM.key(product_id=product_id)
    return {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "Claim",
        "productId": product_id,
        "brandId": brand_id,
        "deviceHash": device_hash,
        "claimedAt": format_datetime(claimed_at),
        "expiresAt": expires_at,
        "disputeCount": 0,
    }


def dispute_item(
    *,
    dispute_id: str,
    product_id: str,
    brand_id: str,
    disputed_at: datetime,
    device_hash: str,
    reason: str,
    claimed_at: str,
) -> Item:
    partition = PRODUCT_CLAIM.partition({"product_id": product_id})
    key = Key(
        partition, DISPUTE_SORT.format({"disputed_at": disputed_at, "dispute_id": dispute_id})
    )
    return {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "Dispute",
        "id": dispute_id,
        "productId": product_id,
        "brandId": brand_id,
        "status": DisputeStatus.OPEN,
        "reason": reason,
        "deviceHash": device_hash,
        "disputedAt": format_datetime(disputed_at),
        "claimedAt": claimed_at,
    }
