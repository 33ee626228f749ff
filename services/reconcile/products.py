"""Reconciling one brand's products: every certificate and every chain verifies."""

from __future__ import annotations

import asyncio

from domain.signing import KeyRing
from storage import Item, Storage
from storage.access_patterns import BRAND_PRODUCTS

from ..ledger.directory import SYSTEM_TENANT
from ..paging import query_all
from ..provenance.walk import check_chain, load_chain
from ..reads import StorageReads
from ..verification.checks import check_hash, check_signature
from .report import Report

__all__ = ["CHAIN_READS_IN_FLIGHT", "check_products"]

CHAIN_READS_IN_FLIGHT = 8
"""Chains are read concurrently, but few enough at once to leave the table's
capacity to the gateway."""


async def _products(storage: Storage, brand_id: str) -> list[Item]:
    params = {"brand_id": brand_id}
    return await query_all(storage, BRAND_PRODUCTS, params, tenant=SYSTEM_TENANT)


async def check_products(
    storage: Storage, brand_id: str, key_ring: KeyRing, report: Report
) -> None:
    products = await _products(storage, brand_id)
    report.products += len(products)
    gate = asyncio.Semaphore(CHAIN_READS_IN_FLIGHT)

    async def check(product: Item) -> list[str]:
        problems = []
        if not check_hash(product):
            problems.append("certificate hash does not match the stored product record")
        if not check_signature(product, key_ring):
            problems.append("certificate signature does not verify with any known key")
        async with gate:
            # A loader per product: a whole chain is read once and then dropped.
            events = await load_chain(StorageReads(storage, SYSTEM_TENANT), product["id"])
        verdict = check_chain(product, events)
        if not verdict.intact:
            where = f" at event {verdict.broken_at}" if verdict.broken_at is not None else ""
            problems.append(f"provenance chain is broken{where}: {verdict.reason}")
        return problems

    results = await asyncio.gather(*(check(product) for product in products))
    for product, problems in zip(products, results, strict=True):
        for problem in problems:
            report.add(brand_id, f"product {product.get('id')}", problem)
