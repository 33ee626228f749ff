"""How scans are stored: ``PRODUCT#<id>`` / ``SCAN#<time>#<scanId>`` (AP10).

Time first, so a time range is one key range and the partition reads newest
first; the scan id keeps two scans in one microsecond apart. Device
fingerprints and IPs are stored only as salted hashes (``hash_salt``), so a
device is recognised across scans without being recorded.
"""

from __future__ import annotations

from datetime import datetime

from domain.enums import ScanResult
from storage import Item
from storage.access_patterns import PRODUCT_SCANS

from ..sort_keys import TimedSort, plain, prefix_of

__all__ = ["SCAN_SORT", "scan_item"]

_SORT = TimedSort("SCAN", "scanned_at", "scan_id")
SCAN_SORT = _SORT.template
_PARTITION = prefix_of(PRODUCT_SCANS.partition_key, "product_id")


def scan_item(
    *,
    scan_id: str,
    product_id: str,
    brand_id: str,
    scanned_at: datetime,
    result: ScanResult,
    country: str | None,
    city: str | None,
    device_hash: str | None,
    ip_hash: str | None,
    user_agent: str | None,
) -> Item:
    sort, spelled = _SORT.spell(scanned_at, scan_id)
    return {
        "PK": (
            _PARTITION + product_id
            if plain(product_id)
            else PRODUCT_SCANS.partition_key.format({"product_id": product_id})
        ),
        "SK": sort,
        "entity": "Scan",
        "id": scan_id,
        "productId": product_id,
        "brandId": brand_id,
        "scannedAt": spelled,
        "result": result.value,
        "country": country,
        "city": city,
        "deviceHash": device_hash,
        "ipHash": ip_hash,
        "userAgent": user_agent,
    }
