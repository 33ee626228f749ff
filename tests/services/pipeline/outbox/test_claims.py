"""Items claimed together are claimed in one transaction, on both backends;
one another relay claimed first is lost and the rest of the batch still
claimed, each under its own lease (docs/design.md, "Relay backpressure")."""

from __future__ import annotations

from datetime import timedelta

from services.pipeline import PipelineSettings
from services.pipeline.events import ScanEvent
from services.pipeline.outbox.claims import CLAIMS_MAX, claim_all
from services.pipeline.outbox.items import Lease, claim_update, outbox_put
from storage import Item, Storage
from storage.access_patterns import OUTBOX_DUE
from storage.sqlite import open_sqlite
from tests.services.pipeline._support import CURSOR_KEY, FAR_FUTURE, Counting, Product, utcnow

SETTINGS = PipelineSettings()


async def ready(storage: Storage, count: int) -> list[tuple[Item, Lease]]:
    """``count`` ready scan items as a poll reads them, each with a lease of its own."""
    product, now = Product("brand_1", utcnow()), utcnow()
    claims = []
    for index in range(count):
        event: ScanEvent = product.scan(now + timedelta(microseconds=index))[1]
        put = outbox_put(event, now=now, settings=SETTINGS)
        await storage.transact_write([put])
        claims.append((put.item, Lease("relay_a", f"token_{index}", now + timedelta(minutes=5))))
    return claims


async def tokens(storage: Storage) -> dict[str, str | None]:
    """Each stored item's lease token, by event id."""
    found: dict[str, str | None] = {}
    for shard in SETTINGS.shards:
        page = await storage.query(
            OUTBOX_DUE, {"shard": shard, "before": FAR_FUTURE}, tenant="test", first=100
        )
        found |= {item["id"]: item.get("leaseToken") for item in page.items}
    return found


async def test_items_claimed_together_are_claimed_in_one_transaction(store: Storage) -> None:
    claims = await ready(store, 5)
    counting = Counting(store)
    assert await claim_all(counting, claims) == [True] * 5  # type: ignore[arg-type]
    assert counting.transactions == [5]
    assert await tokens(store) == {item["id"]: lease.token for item, lease in claims}


async def test_an_item_another_relay_claimed_is_lost_and_the_rest_claimed(
    store: Storage,
) -> None:
    claims = await ready(store, 4)
    item, _ = claims[2]
    other = Lease("relay_b", "token_b", utcnow() + timedelta(minutes=5))
    await store.transact_write([claim_update(item, other)])
    counting = Counting(store)
    assert await claim_all(counting, claims) == [True, True, False, True]  # type: ignore[arg-type]
    assert counting.transactions == [4, 3]
    expected = {i["id"]: lease.token for i, lease in claims} | {item["id"]: other.token}
    assert await tokens(store) == expected


async def test_a_batch_is_at_most_one_transactions_worth() -> None:
    storage = await open_sqlite(":memory:", cursor_key=CURSOR_KEY)
    try:
        claims = await ready(storage, CLAIMS_MAX + 1)
        counting = Counting(storage)
        assert all(await claim_all(counting, claims))  # type: ignore[arg-type]
        assert counting.transactions == [CLAIMS_MAX, 1]
    finally:
        await storage.close()
