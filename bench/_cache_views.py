"""Page views through the storage cache, in one process: the storage calls,
read units and CPU of 1,000 views of a brand's page of 50, cached and not,
while a write changes a product on the page every ``WRITE_EVERY`` views
(docs/design.md, Storage cache).

A view is what the page request reads (AP01 the brand, AP07 the page of 50
with the item beyond it); the write is a verification's counter ADD on one
of the page's products, which drops that page. Counts come from the storage
trace, so they are the calls a request would make; writes are not counted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from storage import Put, Storage, Update
from storage.access_patterns import BRAND_BY_ID, BRAND_PRODUCTS, PRODUCT_BY_ID
from storage.cache import CachedStorage
from storage.trace import Trace, tracing

__all__ = ["VIEWS", "WRITE_EVERY", "Views", "seed", "views"]

VIEWS = 1000
WRITE_EVERY = 10
"""One write per ten views: the page misses once in ten, the brand never,
so about 95% of the reads hit."""
PRODUCTS = 60
BRAND = "bench-brand"


@dataclass(frozen=True)
class Views:
    """Per 1,000 views."""

    calls: float
    read_units: float
    hit_ratio: float | None
    us_per_view: float


async def seed(storage: Storage) -> None:
    key = BRAND_BY_ID.key(brand_id=BRAND)
    await storage.transact_write([Put({"PK": key.pk, "SK": key.sk, "name": "Bench"})])
    for i in range(PRODUCTS):
        product = PRODUCT_BY_ID.key(product_id=f"bp{i:03d}")
        item = {
            "PK": product.pk,
            "SK": product.sk,
            "GSI1PK": f"BRAND#{BRAND}",
            "GSI1SK": f"PRODUCT#2026-01-01T00:00:{i:02d}.000000Z#bp{i:03d}",
            "id": f"bp{i:03d}",
            "name": f"Product {i}",
            "sku": f"SKU-{i:05d}",
            "status": "ACTIVE",
            "scanCount": 0,
        }
        await storage.transact_write([Put(item)])


async def views(storage: Storage, count: int = VIEWS) -> Views:
    trace = Trace()
    spent = 0.0
    before = _counts(storage)
    with tracing(trace):
        for view in range(count):
            if view and view % WRITE_EVERY == 0:
                product = PRODUCT_BY_ID.key(product_id=f"bp{PRODUCTS - 1 - view % 50:03d}")
                await storage.transact_write([Update(product, add={"scanCount": 1})])
            start = time.perf_counter()
            await storage.get(BRAND_BY_ID, brand_id=BRAND)
            await storage.query(BRAND_PRODUCTS, {"brand_id": BRAND}, tenant=BRAND, first=50)
            spent += time.perf_counter() - start
    reads = [call for call in trace.calls if call.access_pattern is not None]
    after = _counts(storage)
    hits, misses = after[0] - before[0], after[1] - before[1]
    ratio = hits / (hits + misses) if isinstance(storage, CachedStorage) else None
    per_thousand = 1000 / count
    return Views(
        len(reads) * per_thousand,
        sum(call.capacity for call in reads) * per_thousand,
        ratio,
        spent / count * 1e6,
    )


def _counts(storage: Storage) -> tuple[int, int]:
    if not isinstance(storage, CachedStorage):
        return 0, 0
    stats = storage.stats
    return sum(stats.hits.values()), sum(stats.misses.values())
