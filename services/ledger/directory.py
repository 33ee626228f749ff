"""Every brand, page by page, through the brand index (AP02), never a scan.

For the operator's batch jobs (reconcile, releasing expired reservations),
which visit each brand once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from storage import Storage
from storage.access_patterns import BRANDS_NEWEST

__all__ = ["SYSTEM_TENANT", "brand_pages"]

SYSTEM_TENANT = "system"
"""The tenant internal jobs bind their cursors to; no client ever holds one."""


async def brand_pages(storage: Storage) -> AsyncIterator[list[str]]:
    after: str | None = None
    while True:
        page = await storage.query(
            BRANDS_NEWEST, {}, tenant=SYSTEM_TENANT, first=BRANDS_NEWEST.max_page, after=after
        )
        if page.items:
            yield [entry["brandId"] for entry in page.items]
        if not page.has_next_page:
            return
        after = page.end_cursor
