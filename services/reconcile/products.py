"""Reconciling one brand's products: every certificate and every chain verifies.

Products are read a page at a time and checked by ``CHAIN_READS_IN_FLIGHT``
workers: memory holds one page and that many chains, however many products
a brand has (docs/design.md, "Reconcile").
"""

from __future__ import annotations

import asyncio

from domain.signing import KeyRing
from storage import Item, Storage
from storage.access_patterns import BRAND_PRODUCTS

from ..ledger.directory import SYSTEM_TENANT
from ..paging import query_pages
from ..provenance.walk import check_chain, load_chain
from ..reads import StorageReads
from ..verification.checks import check_certificate
from .report import Report

__all__ = ["CHAIN_READS_IN_FLIGHT", "check_products"]

CHAIN_READS_IN_FLIGHT = 8
"""Chains are read concurrently, but few enough at once to leave the table's
capacity to the gateway."""


async def check_products(
    storage: Storage, brand_id: str, key_ring: KeyRing, report: Report
) -> None:
    params = {"brand_id": brand_id}
    async for page in query_pages(storage, BRAND_PRODUCTS, params, tenant=SYSTEM_TENANT):
        report.products += len(page)
        queue: asyncio.Queue[Item] = asyncio.Queue()
        for product in page:
            queue.put_nowait(product)
        workers = min(CHAIN_READS_IN_FLIGHT, len(page))
        await asyncio.gather(
            *(_work(storage, brand_id, key_ring, queue, report) for _ in range(workers))
        )


async def _work(
    storage: Storage, brand_id: str, key_ring: KeyRing, queue: asyncio.Queue[Item], report: Report
) -> None:
    while not queue.empty():
        product = queue.get_nowait()
        for problem in await _problems(storage, key_ring, product):
            report.add(brand_id, f"product {product.get('id')}", problem)


async def _problems(storage: Storage, key_ring: KeyRing, product: Item) -> list[str]:
    problems = []
    certificate = check_certificate(product, key_ring)
    if not certificate.hash_valid:
        problems.append("certificate hash does not match the stored product record")
    if not certificate.signature_valid:
        problems.append("certificate signature does not verify with any known key")
    # A loader per product: a whole chain is read once and then dropped.
    events = await load_chain(StorageReads(storage, SYSTEM_TENANT), product["id"])
    verdict = check_chain(product, events)
    if not verdict.intact:
        where = f" at event {verdict.broken_at}" if verdict.broken_at is not None else ""
        problems.append(f"provenance chain is broken{where}: {verdict.reason}")
    return problems
