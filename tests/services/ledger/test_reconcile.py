"""reconcile: a consistent store passes; tampering with stored items directly
through the adapter is caught and reported."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from services.ledger import FeeReservation
from services.reconcile import reconcile
from services.reconcile.ledger import months_between
from storage import Put, Update
from storage.access_patterns import (
    LEDGER_BALANCE,
    LEDGER_STATEMENT,
    LEDGER_TRANSACTION,
    PRODUCT_BY_ID,
    PROVENANCE_CHAIN,
)

ADD_EVENT = """mutation($p: ID!, $input: ProvenanceEventInput!) {
    addProvenanceEvent(productId: $p, input: $input) { sequence }
}"""
REVERSE = """mutation($id: ID!, $key: String!) {
    reverseLedgerTransaction(id: $id, idempotencyKey: $key) { id }
}"""


async def populate(api) -> tuple[object, list[str]]:
    """A FREE brand with grants, a reversal, two products with events, and a
    PRO brand with nothing at all."""
    brand = await api.brand("FREE")
    grant = await api.grant(brand, "5.00")
    await api.grant(brand, "2.00")
    await api.data(REVERSE, {"id": grant["id"], "key": uuid.uuid4().hex})
    products = []
    for _ in range(2):
        body = await api.register_product(brand)
        assert "errors" not in body, body
        products.append(body["data"]["registerProduct"]["id"])
    for product_id in products:
        for kind in ("MANUFACTURED", "SHIPPED"):
            event = {"type": kind, "location": "Porto"}
            await api.data(ADD_EVENT, {"p": product_id, "input": event}, as_=brand.principal)
    await api.brand("PRO")
    return brand, products


async def run(api):
    return await reconcile(api.storage, api.services.key_ring, api.clock())


async def test_a_consistent_store_reconciles(fresh_api) -> None:
    api = fresh_api
    await populate(api)
    report = await run(api)
    assert report.discrepancies == []
    assert (report.brands, report.products) == (2, 2)
    assert report.transactions == 6  # plan grant, 2 grants, reversal, 2 fees
    assert report.postings == 6
    assert report.render().startswith(
        "Checked 2 brands, 6 ledger transactions, 6 postings, 2 products."
    )
    assert "OK" in report.render()


async def test_a_tampered_posting_and_a_tampered_event_are_both_reported(fresh_api) -> None:
    api = fresh_api
    brand, products = await populate(api)
    month = api.clock().strftime("%Y-%m")
    page = await api.storage.query(
        LEDGER_STATEMENT, {"brand_id": brand.id, "month": month}, tenant="test", first=100
    )
    posting = next(p for p in page.items if p["amount"] == Decimal("-1"))
    await api.storage.transact_write([Put({**posting, "amount": Decimal("-0.50")})])
    events = await api.storage.query(
        PROVENANCE_CHAIN, {"product_id": products[1]}, tenant="test", first=10
    )
    await api.storage.transact_write([Put({**events.items[0], "location": "Lisbon"})])

    report = await run(api)
    assert not report.ok
    problems = {(d.subject, d.problem) for d in report.discrepancies}
    assert ("balance CREDIT", "posted is 10.00 but the postings sum to 10.50") in problems
    assert (
        f"transaction {posting['transactionId']}",
        "line 0 is -1.00 CREDIT but its posting says -0.50 CREDIT",
    ) in problems
    chain = [d for d in report.discrepancies if d.subject == f"product {products[1]}"]
    assert [d.problem for d in chain] == [
        "provenance chain is broken at event 1: event 1 content does not match its hash"
    ]
    assert {d.brand_id for d in report.discrepancies} == {brand.id}
    text = report.render()
    assert "FAILED: 3 discrepancies" in text
    assert f"brand {brand.id}: product {products[1]}: provenance chain is broken" in text


async def test_unbalanced_transactions_missing_postings_and_bad_links(sqlite_api) -> None:
    api = sqlite_api
    brand = await api.brand("PRO")
    grant = await api.grant(brand, "3.00")
    other = await api.grant(brand, "1.00")
    item = await api.storage.get(LEDGER_TRANSACTION, transaction_id=grant["id"])
    lines = [{**item["lines"][0], "amount": Decimal("-2.00")}, item["lines"][1]]
    await api.storage.transact_write([Put({**item, "lines": lines, "reversedBy": other["id"]})])

    report = await reconcile(api.storage, api.services.key_ring, api.clock())
    mine = {d.problem for d in report.discrepancies if d.brand_id == brand.id}
    assert mine == {
        "unbalanced: CREDIT lines sum to 1.00",
        f"names {other['id']} as its reversal, which does not reverse it",
    }


async def test_a_certificate_that_no_longer_matches_its_product(sqlite_api) -> None:
    api = sqlite_api
    brand = await api.brand("FREE")
    product_id = (await api.register_product(brand))["data"]["registerProduct"]["id"]
    product = await api.storage.get(PRODUCT_BY_ID, product_id=product_id)
    await api.storage.transact_write([Put({**product, "name": "Counterfeit"})])
    report = await reconcile(api.storage, api.services.key_ring, api.clock())
    mine = [d.problem for d in report.discrepancies if d.brand_id == brand.id]
    assert mine == ["certificate hash does not match the stored product record"]


async def test_reservations_must_match_what_is_reserved(sqlite_api) -> None:
    api = sqlite_api
    brand = await api.brand("FREE")
    reservation = await FeeReservation.reserve(
        api.storage, brand.id, 2, Decimal("1.00"), api.clock(), ttl=timedelta(minutes=5)
    )
    assert reservation is not None
    report = await reconcile(api.storage, api.services.key_ring, api.clock())
    assert [d for d in report.discrepancies if d.brand_id == brand.id] == []
    key = LEDGER_BALANCE.key(brand_id=brand.id, currency="CREDIT")
    await api.storage.transact_write([Update(key, add={"reserved": Decimal("1.00")})])
    report = await reconcile(api.storage, api.services.key_ring, api.clock())
    assert {d.problem for d in report.discrepancies if d.brand_id == brand.id} == {
        "available 8.00 != posted 10.00 - reserved 3.00",
        "reserved is 3.00 but open holds hold 2.00",
    }


def test_months_between_spans_year_ends() -> None:
    start = datetime(2030, 11, 30, tzinfo=UTC)
    assert list(months_between(start, datetime(2031, 2, 1, tzinfo=UTC))) == [
        "2030-11",
        "2030-12",
        "2031-01",
        "2031-02",
    ]
    assert list(months_between(start, start)) == ["2030-11"]


class GrantDuringStatement:
    """A store that lets a grant commit between reconcile's statement read
    and its balance read, as a live gateway would."""

    def __init__(self, api, brand) -> None:
        self.inner = api.storage
        self.backend = api.storage.backend
        self._api, self._brand = api, brand
        self.read_statement = False
        self.grants = 0

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    async def query(self, ap, params, **options):
        if ap is LEDGER_STATEMENT and params["brand_id"] == self._brand.id:
            self.read_statement = True
        return await self.inner.query(ap, params, **options)

    async def batch_get(self, ap, params):
        if ap is LEDGER_BALANCE and self.read_statement and not self.grants:
            self.grants += 1
            await self._api.grant(self._brand, "1.00")
        return await self.inner.batch_get(ap, params)


async def test_a_grant_committed_while_reconcile_reads_is_no_discrepancy(fresh_api) -> None:
    """Before: the postings were read without the grant and the balance with
    it, and reconcile reported "posted is 8.00 but the postings sum to 7.00"."""
    api = fresh_api
    brand, _ = await populate(api)
    live = GrantDuringStatement(api, brand)
    report = await reconcile(live, api.services.key_ring, api.clock())
    assert live.grants == 1
    assert report.discrepancies == [] and report.unsettled == []
    assert report.postings == 7, "the second attempt saw the grant's posting"


async def test_a_ledger_that_moves_under_every_attempt_is_named_not_failed(
    fresh_api, monkeypatch
) -> None:
    from services.reconcile import ledger as ledger_module

    monkeypatch.setattr(ledger_module, "SETTLE_PAUSE", 0.01)
    api = fresh_api
    brand, _ = await populate(api)
    live = GrantDuringStatement(api, brand)
    original = live.query

    async def always(ap, params, **options):
        live.grants = 0
        return await original(ap, params, **options)

    live.query = always  # a grant after every statement read
    report = await reconcile(live, api.services.key_ring, api.clock())
    assert report.ok and not report.complete
    assert report.unsettled == [brand.id]
    assert "INCOMPLETE" in report.render()


async def test_products_are_checked_by_a_few_workers_not_a_task_each(sqlite_api) -> None:
    """Before: one task per product, all at once (20 here, a million for a
    large brand); now at most CHAIN_READS_IN_FLIGHT besides the caller's."""
    from services.reconcile.products import CHAIN_READS_IN_FLIGHT

    api = sqlite_api
    brand = await api.brand("PRO")
    await api.grant(brand, "100.00")
    for _ in range(3 * CHAIN_READS_IN_FLIGHT):
        body = await api.register_product(brand)
        assert "errors" not in body, body

    class CountingTasks:
        def __init__(self, inner) -> None:
            self.inner, self.backend = inner, inner.backend
            self.most = 0

        def __getattr__(self, name: str):
            return getattr(self.inner, name)

        async def query(self, ap, params, **options):
            if ap is PROVENANCE_CHAIN:
                self.most = max(self.most, len(asyncio.all_tasks()))
            return await self.inner.query(ap, params, **options)

    counting = CountingTasks(api.storage)
    baseline = len(asyncio.all_tasks())
    report = await reconcile(counting, api.services.key_ring, api.clock())
    assert report.products >= 3 * CHAIN_READS_IN_FLIGHT
    assert 0 < counting.most <= baseline + CHAIN_READS_IN_FLIGHT
