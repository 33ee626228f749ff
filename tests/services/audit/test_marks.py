"""mark_once: the change and its audit entry are written together, once,
however many calls race for it (revokeApiKey, revokeIntegration, resolveThreat)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from decimal import Decimal

import pytest

from domain.errors import ConditionFailed
from domain.identifiers import new_id
from domain.signing import KeyRing, SigningKey
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.audit.items import audit_day
from services.audit.marks import mark_once
from services.auth import Principal, Role
from services.context import Services, utcnow
from storage import AttributeAbsent, Item, ItemExists, Storage, Update
from storage.access_patterns import AUDIT_DAY, BRAND_STATS
from storage.sqlite import open_sqlite


@pytest.fixture
async def storage() -> AsyncIterator[Storage]:
    store = await open_sqlite(":memory:", cursor_key=bytes(32))
    yield store
    await store.close()


def context(storage: Storage) -> RequestContext:
    services = Services(
        storage=storage,
        admin_key_hash="0" * 64,
        key_ring=KeyRing.of(SigningKey.generate()),
        hash_salt=bytes(16),
        registration_fee=Decimal(0),
    )
    principal = Principal(Role.ADMIN)
    return RequestContext(services, principal, Loaders(storage, principal.tenant), request_id="t")


async def audit_entries(storage: Storage) -> list[Item]:
    params = {"day": audit_day(utcnow())}
    return (await storage.query(AUDIT_DAY, params, tenant="admin", first=100)).items


async def test_racing_calls_make_one_change_and_one_entry(storage: Storage) -> None:
    brand_id = new_id()
    target = BRAND_STATS.key(brand_id=brand_id)
    await storage.transact_write([Update(target, set={"name": "x"})])
    ctx = context(storage)

    async def mark(value: str) -> bool:
        return await mark_once(
            ctx,
            target,
            mark={"revokedAt": value},
            unmarked=AttributeAbsent("revokedAt"),
            action="revokeApiKey",
            brand_id=brand_id,
            target_id=brand_id,
            now=utcnow(),
        )

    made = await asyncio.gather(*(mark(f"t{n}") for n in range(5)))
    assert sorted(made) == [False] * 4 + [True]
    entries = await audit_entries(storage)
    assert [(e["action"], e["targetIds"]) for e in entries] == [("revokeApiKey", [brand_id])]
    assert not await mark("again")
    assert len(await audit_entries(storage)) == 1


async def test_a_missing_item_is_not_created(storage: Storage) -> None:
    target = BRAND_STATS.key(brand_id=new_id())
    made = await mark_once(
        context(storage),
        target,
        mark={"resolved": True},
        unmarked=AttributeAbsent("resolved"),
        action="resolveThreat",
        brand_id="b",
        target_id="t",
        now=utcnow(),
    )
    assert not made
    assert await storage.get(BRAND_STATS, brand_id=target.pk.split("#", 1)[1]) is None
    assert await audit_entries(storage) == []


async def test_a_failed_companion_write_is_raised_and_nothing_is_written(storage: Storage) -> None:
    brand_id = new_id()
    target = BRAND_STATS.key(brand_id=brand_id)
    await storage.transact_write([Update(target, set={"name": "x"})])
    missing = BRAND_STATS.key(brand_id=new_id())
    with pytest.raises(ConditionFailed):
        await mark_once(
            context(storage),
            target,
            mark={"revokedAt": "now"},
            unmarked=AttributeAbsent("revokedAt"),
            action="revokeIntegration",
            brand_id=brand_id,
            target_id=brand_id,
            now=utcnow(),
            along=[Update(missing, set={"revokedAt": "now"}, condition=ItemExists())],
        )
    assert "revokedAt" not in (await storage.get(BRAND_STATS, brand_id=brand_id) or {})
    assert await audit_entries(storage) == []
