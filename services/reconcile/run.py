"""``proofgate reconcile``: every brand, through the brand index (AP02)."""

from __future__ import annotations

from datetime import datetime

from domain.datetimes import parse_datetime
from domain.errors import ProofgateError
from domain.signing import KeyRing
from storage import Storage
from storage.access_patterns import BRAND_BY_ID

from ..ledger.directory import brand_pages
from .ledger import check_ledger
from .products import check_products
from .report import Report

__all__ = ["reconcile"]


async def reconcile(storage: Storage, key_ring: KeyRing, now: datetime) -> Report:
    report = Report()
    async for brand_ids in brand_pages(storage):
        profiles = await storage.batch_get(BRAND_BY_ID, [{"brand_id": b} for b in brand_ids])
        for brand_id, profile in zip(brand_ids, profiles, strict=True):
            report.brands += 1
            if profile is None:
                report.add(brand_id, "brand", "listed in the brand index but does not exist")
                continue
            try:
                since = parse_datetime(profile["createdAt"])
            except (KeyError, ProofgateError):
                report.add(brand_id, "brand", "profile has no valid createdAt")
                continue
            await check_ledger(storage, brand_id, since, now, report)
            await check_products(storage, brand_id, key_ring, report)
    return report
