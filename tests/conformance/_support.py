"""Item builders and read helpers shared by the conformance tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, TypeAlias

from storage import Item, Key, Put, Storage
from storage.access_patterns import (
    BRAND_PRODUCTS,
    OUTBOX_DUE,
    PRODUCT_BY_ID,
    PRODUCT_SCANS,
    PROVENANCE_CHAIN,
)
from storage.keys import encode_int, encode_time
from storage.registry import AccessPattern

__all__ = [
    "BASE_TIME",
    "TENANT",
    "MotoDeviation",
    "OpenStorage",
    "at",
    "chain_event",
    "collect",
    "gallery_product",
    "outbox_entry",
    "product",
    "product_key",
    "put_all",
    "read_product",
    "scan_record",
    "sort_keys",
    "typed",
    "walk",
]

OpenStorage: TypeAlias = Callable[[bytes], Awaitable[Storage]]
MotoDeviation: TypeAlias = Callable[[str], None]

TENANT = "tenant-a"
BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return BASE_TIME + timedelta(minutes=minutes)


def product_key(product_id: str) -> Key:
    return PRODUCT_BY_ID.key(product_id=product_id)


def product(product_id: str, **attributes: Any) -> Item:
    """An AP01 item: the product's table key and ``attributes``, nothing else."""
    key = product_key(product_id)
    return {"PK": key.pk, "SK": key.sk, **attributes}


async def read_product(storage: Storage, product_id: str) -> Item | None:
    return await storage.get(PRODUCT_BY_ID, product_id=product_id)


def chain_event(product_id: str, sequence: int, **attributes: Any) -> Item:
    """An AP09 item: the event's sort key is zero-padded so text order is numeric order."""
    return {
        "PK": PROVENANCE_CHAIN.partition({"product_id": product_id}),
        "SK": f"EVENT#{encode_int(sequence)}",
        "sequence": sequence,
        **attributes,
    }


def scan_record(product_id: str, when: datetime, **attributes: Any) -> Item:
    return {
        "PK": PRODUCT_SCANS.partition({"product_id": product_id, "start": when, "end": when}),
        "SK": f"SCAN#{encode_time(when)}",
        **attributes,
    }


def gallery_product(
    brand_id: str, product_id: str, created: datetime | None, **attributes: Any
) -> Item:
    """A product item; with ``created`` it is projected into GSI1 for AP07."""
    item = product(product_id, productId=product_id, **attributes)
    if created is not None:
        item["GSI1PK"] = BRAND_PRODUCTS.partition({"brand_id": brand_id})
        item["GSI1SK"] = f"PRODUCT#{encode_time(created)}"
    return item


def outbox_entry(shard: int, due: datetime, entry_id: str) -> Item:
    return {
        "PK": f"OUTBOX#{entry_id}",
        "SK": "META",
        "GSI2PK": OUTBOX_DUE.partition({"shard": shard, "before": due}),
        "GSI2SK": f"DUE#{encode_time(due)}#{entry_id}",
    }


async def put_all(storage: Storage, items: Iterable[Item]) -> None:
    """Plain concurrent puts: moto's transactions copy the whole table per action."""
    puts = [Put(item) for item in items]
    limit = asyncio.Semaphore(16)

    async def put(action: Put) -> None:
        async with limit:
            await storage.transact_write([action])

    await asyncio.gather(*(put(action) for action in puts))


async def walk(
    storage: Storage, ap: AccessPattern, params: Mapping[str, Any], first: int, tenant: str = TENANT
) -> list[list[Item]]:
    """Every page, following endCursor until hasNextPage is false."""
    pages: list[list[Item]] = []
    after: str | None = None
    while True:
        page = await storage.query(ap, params, tenant=tenant, first=first, after=after)
        pages.append(page.items)
        if not page.has_next_page:
            return pages
        assert page.end_cursor is not None, "a page with a next page must have an end cursor"
        after = page.end_cursor
        assert len(pages) < 1000, "pagination does not terminate"


async def collect(
    storage: Storage, ap: AccessPattern, params: Mapping[str, Any], first: int = 100
) -> list[Item]:
    return [item for page in await walk(storage, ap, params, first) for item in page]


def sort_keys(items: Iterable[Item], attribute: str = "SK") -> list[str]:
    return [item[attribute] for item in items]


def typed(value: Any) -> Any:
    """The value with every scalar tagged by its exact type: ``True == 1`` and
    ``Decimal(5) == 5`` in Python, but they are different stored values."""
    if isinstance(value, dict):
        return {key: typed(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [typed(inner) for inner in value]
    if isinstance(value, Decimal):
        return ("Decimal", str(value))
    return (type(value).__name__, value)
