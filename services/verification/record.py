"""What recording a scan writes, in one transaction.

- the scan item (AP10) with its result and the salted hashes of device and IP;
- ``ADD scanCount 1`` on the product and on the brand's STATS (atomic, never
  read-modify-write), each conditional on the item existing;
- the day's analytics counters of the brand (one write shard) and the product;
- the scan's outbox event (``Services.enqueue``), for the threat pipeline.

No audit entry: verifyProduct is public and the most frequent call, the scan
item already records it, and one ``AUDIT#<day>`` partition per day would turn
every scan of every brand into writes on a single hot key.
"""

from __future__ import annotations

from datetime import datetime

from domain.datetimes import parse_datetime
from domain.identifiers import new_id
from domain.threats.rules import ClaimFacts, ProductFacts
from storage import ItemAbsent, ItemExists, Put, Update, WriteAction
from storage.access_patterns import PRODUCT_BY_ID

from ..analytics.counters import scan_counter_updates
from ..brands.items import brand_stats_key
from ..claims.items import from_epoch
from ..context import Services
from ..pipeline.events import ScanEvent
from ..products.items import product_status
from ..scans.items import scan_item
from .checks import Checks
from .drafts import ScanDraft

__all__ = ["scan_actions"]

_COUNT_SCAN = Update(
    PRODUCT_BY_ID.key(product_id="shape"), add={"scanCount": 1}, condition=ItemExists()
)
"""``ADD scanCount 1`` if the item exists, built once: each scan moves it
onto its product and its brand's STATS (``Update.at``)."""


def _claim_facts(checks: Checks) -> ClaimFacts | None:
    claim = checks.claim
    if claim is None:
        return None
    return ClaimFacts(
        device_hash=claim["deviceHash"],
        expires_at=from_epoch(int(claim["expiresAt"])),
        claimed_at=parse_datetime(claim["claimedAt"]),
    )


def scan_actions(
    services: Services,
    checks: Checks,
    scan: ScanDraft,
    *,
    now: datetime,
    device_hash: str | None,
    ip_hash: str | None,
) -> list[WriteAction]:
    product = checks.product
    assert product is not None
    product_id: str = product["id"]
    brand_id: str = product["brandId"]
    scan_id = new_id(now)
    result = checks.outcome.result
    event = ScanEvent(
        scan_id=scan_id,
        scanned_at=now,
        country=scan.country,
        city=scan.city,
        device_hash=device_hash,
        result=result,
        product=ProductFacts(
            product_id=product_id,
            brand_id=brand_id,
            created_at=parse_datetime(product["createdAt"]),
            status=product_status(product),
            scan_count=int(product.get("scanCount", 0)) + 1,
        ),
        claim=_claim_facts(checks),
    )
    item = scan_item(
        scan_id=scan_id,
        product_id=product_id,
        brand_id=brand_id,
        scanned_at=now,
        result=result,
        country=scan.country,
        city=scan.city,
        device_hash=device_hash,
        ip_hash=ip_hash,
        user_agent=scan.user_agent,
    )
    return [
        Put(item, ItemAbsent()),
        _COUNT_SCAN.at(PRODUCT_BY_ID.key(product_id=product_id)),
        _COUNT_SCAN.at(brand_stats_key(brand_id)),
        *scan_counter_updates(
            brand_id=brand_id,
            product_id=product_id,
            scan_id=scan_id,
            scanned_at=now,
            country=scan.country,
            result=result,
        ),
        *services.enqueue(event),
    ]
