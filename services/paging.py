"""Reading a query to its end, for the jobs that need every item of it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from storage import AccessPattern, Item, Storage

if TYPE_CHECKING:
    from .context import Reads

__all__ = ["query_all", "query_pages", "read_up_to"]


async def query_all(
    storage: Storage,
    ap: AccessPattern,
    params: Mapping[str, Any],
    *,
    tenant: str,
    limit: int | None = None,
) -> list[Item]:
    """Every item, in pages as large as ``ap`` allows, or the first ``limit``:
    reading stops at the page that reaches it."""
    items: list[Item] = []
    after: str | None = None
    while limit is None or len(items) < limit:
        page = await storage.query(ap, params, tenant=tenant, first=ap.max_page, after=after)
        items.extend(page.items)
        if not page.has_next_page:
            break
        after = page.end_cursor
    return items if limit is None else items[:limit]


async def query_pages(
    storage: Storage, ap: AccessPattern, params: Mapping[str, Any], *, tenant: str
) -> AsyncIterator[list[Item]]:
    """Every item, a page at a time, so a job holds one page, not the whole query."""
    after: str | None = None
    while True:
        page = await storage.query(ap, params, tenant=tenant, first=ap.max_page, after=after)
        yield page.items
        if not page.has_next_page:
            return
        after = page.end_cursor


async def read_up_to(
    reads: Reads, ap: AccessPattern, params: Mapping[str, Any], limit: int
) -> tuple[list[Item], bool]:
    """At most ``limit`` items through the request's reads, each page no
    larger than what is left; whether the query went on past them."""
    items: list[Item] = []
    after: str | None = None
    more = False
    while len(items) < limit:
        page = await reads.page(ap, params, first=min(ap.max_page, limit - len(items)), after=after)
        items.extend(page.items)
        more = page.has_next_page
        if not more:
            break
        after = page.end_cursor
    return items, more
