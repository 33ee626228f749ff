"""The registration command: transaction layout, and resuming a batch."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from decimal import Decimal
from typing import Any

import pytest

from domain.certificates import Certificate as DomainCertificate
from domain.certificates import CertificateRecord, verify_certificate
from domain.errors import ServiceUnavailable
from domain.identifiers import new_id
from domain.signing import KeyRing, SigningKey
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import Principal, Role
from services.brands.items import brand_stats_item
from services.context import Services, utcnow
from services.ledger import FEE_ACTIONS
from services.products.drafts import ProductDraft
from services.products.register import register_products
from services.products.registration import (
    PRODUCT_ACTIONS,
    PRODUCTS_PER_TRANSACTION,
    Slot,
    chunk_actions,
    chunk_plans,
    locate_action,
    plan_product,
)
from storage import Put, Storage, Update, WriteAction
from storage.access_patterns import BRAND_STATS, IDEMPOTENCY_RECORD
from storage.limits import TRANSACT_MAX_ITEMS
from storage.sqlite import open_sqlite

SIGNER = SigningKey.generate()


class FlakyStorage:
    """Delegates to a real store; fails chosen transactions (by call number)."""

    def __init__(self, storage: Storage, fail_on: set[int]) -> None:
        self._storage = storage
        self.backend = storage.backend
        self.fail_on = fail_on
        self.transactions = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage, name)

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        self.transactions += 1
        if self.transactions in self.fail_on:
            raise ServiceUnavailable("injected")
        await self._storage.transact_write(actions)


@pytest.fixture(scope="module")
async def store() -> AsyncIterator[Storage]:
    storage = await open_sqlite(":memory:", cursor_key=bytes(32))
    yield storage
    await storage.close()


def context(storage: Any, brand_id: str) -> RequestContext:
    services = Services(
        storage=storage,
        admin_key_hash="0" * 64,
        key_ring=KeyRing.of(SIGNER),
        hash_salt=bytes(16),
        registration_fee=Decimal(0),
    )
    principal = Principal(Role.BRAND, brand_id, "k" * 64)
    return RequestContext(
        services, principal, Loaders(storage, principal.tenant), request_id="test"
    )


def drafts(brand_id: str, count: int) -> list[ProductDraft]:
    return [ProductDraft(brand_id, f"Item {n}", None, None, None, {}) for n in range(count)]


def test_a_full_chunk_fits_one_transaction() -> None:
    shared = 3 + FEE_ACTIONS  # counters, audit entry, idempotency record, the fee
    assert PRODUCTS_PER_TRANSACTION * PRODUCT_ACTIONS + shared <= TRANSACT_MAX_ITEMS
    assert (PRODUCTS_PER_TRANSACTION + 1) * PRODUCT_ACTIONS + shared > TRANSACT_MAX_ITEMS


def test_chunk_layout_matches_the_slots() -> None:
    brand_id = new_id()
    now = utcnow()
    plans = [
        plan_product(n, d, new_id(now), now, SIGNER) for n, d in enumerate(drafts(brand_id, 2))
    ]
    actions = chunk_actions(
        plans, principal=Principal(Role.ADMIN), action="registerProducts", now=now
    )
    assert len(actions) == 2 * PRODUCT_ACTIONS + 2
    for index, planned in enumerate(plans):
        own = actions[index * PRODUCT_ACTIONS : (index + 1) * PRODUCT_ACTIONS]
        assert (
            isinstance(own[Slot.PRODUCT], Put)
            and own[Slot.PRODUCT].item["id"] == planned.product_id
        )
        assert own[Slot.NAME].key.sk.startswith("PRODUCT_NAME#")
        assert own[Slot.CODE].key.pk.startswith("VERIFY#")
        assert own[Slot.HASH].key.pk == f"HASH#{planned.item['certificateHash']}"
        assert own[Slot.INDEX].key.pk == "PRODUCT_INDEX"
    stats = actions[2 * PRODUCT_ACTIONS]
    assert isinstance(stats, Update) and stats.key == BRAND_STATS.key(brand_id=brand_id)
    assert stats.add == {"productCount": 2, "status_ACTIVE": 2}


def test_units_with_serials_take_six_actions_and_fewer_fit_a_transaction() -> None:
    brand_id, now = new_id(), utcnow()
    shared = 3 + FEE_ACTIONS
    units = [
        ProductDraft(brand_id, f"Unit {n}", None, None, None, {}, "09506000134352", f"S{n}")
        for n in range(40)
    ]
    plans = [plan_product(n, d, new_id(now), now, SIGNER) for n, d in enumerate(units)]
    assert all(len(p.actions) == PRODUCT_ACTIONS + 1 for p in plans)
    gtin_put = plans[0].actions[Slot.GTIN]
    assert isinstance(gtin_put, Put) and gtin_put.key.pk == "GTIN#09506000134352#S0"
    chunks = chunk_plans(plans)
    per_chunk = (TRANSACT_MAX_ITEMS - shared) // (PRODUCT_ACTIONS + 1)
    assert [len(c) for c in chunks] == [per_chunk, per_chunk, 40 - 2 * per_chunk]
    assert [p.position for c in chunks for p in c] == list(range(40))
    plain = [
        plan_product(n, d, new_id(now), now, SIGNER) for n, d in enumerate(drafts(brand_id, 40))
    ]
    assert len(chunk_plans(plain)[0]) == PRODUCTS_PER_TRANSACTION
    mixed = [plain[0], plans[1], plain[2]]
    assert locate_action(mixed, 5 + Slot.GTIN) == (1, Slot.GTIN)
    assert locate_action(mixed, 5 + 6 + Slot.NAME) == (2, Slot.NAME)
    assert locate_action(mixed, 16) == (None, 0)


def test_planned_certificate_verifies() -> None:
    now = utcnow()
    [draft] = drafts(new_id(), 1)
    planned = plan_product(0, draft, new_id(now), now, SIGNER)
    item = planned.item
    record = CertificateRecord(
        item["id"], item["brandId"], item["name"], now, item["sku"], item["metadata"]
    )
    certificate = DomainCertificate(item["certificateHash"], item["signature"], item["keyId"])
    assert verify_certificate(record, certificate, KeyRing.of(SIGNER)).valid


async def test_batch_resumes_with_its_planned_ids_after_a_failure(store: Storage) -> None:
    brand_id = new_id()
    await store.transact_write([Put(brand_stats_item(brand_id))])
    batch = drafts(brand_id, 30)
    fields = [f"inputs[{n}]" for n in range(30)]
    flaky = FlakyStorage(store, fail_on={2})
    with pytest.raises(ServiceUnavailable):
        await register_products(
            context(flaky, brand_id),
            batch,
            fields,
            operation="registerProducts",
            idempotency_key="resume-me",
        )
    record = await store.get(IDEMPOTENCY_RECORD, scope=brand_id, key="resume-me")
    assert record is not None and record["status"] == "PENDING"
    planned = record["result"]["productIds"]
    assert (await store.get(BRAND_STATS, brand_id=brand_id) or {})[
        "productCount"
    ] == PRODUCTS_PER_TRANSACTION

    retry = FlakyStorage(store, fail_on=set())
    items = await register_products(
        context(retry, brand_id),
        batch,
        fields,
        operation="registerProducts",
        idempotency_key="resume-me",
    )
    assert [item["id"] for item in items] == planned
    assert [item["name"] for item in items] == [d.name for d in batch]
    assert retry.transactions == 1
    assert (await store.get(BRAND_STATS, brand_id=brand_id) or {})["productCount"] == 30
    record = await store.get(IDEMPOTENCY_RECORD, scope=brand_id, key="resume-me")
    assert record is not None and record["status"] == "COMPLETE"

    replay = FlakyStorage(store, fail_on=set())
    again = await register_products(
        context(replay, brand_id),
        batch,
        fields,
        operation="registerProducts",
        idempotency_key="resume-me",
    )
    assert [item["id"] for item in again] == planned
    assert replay.transactions == 0
