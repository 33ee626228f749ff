"""How scans are stored: ``PRODUCT#<id>`` / ``SCAN#<time>#<scanId>`` (AP10).

Time first, so a time range is one key range and the partition reads newest
first; the scan id keeps two scans in one microsecond apart. Device
fingerprints and IPs are stored only as salted hashes (``hash_salt``), so a
device is recognised across scans without being recorded.
"""

from __future__ import annotations

from datetime import datetime

from domain.enums import ScanResult
from storage import Item, KeyTemplate
from storage.access_patterns import PRODUCT_SCANS

__all__ = ["SCAN_SORT", "scan_item"]

SCAN_SORT = KeyTemplate("SCAN#{scanned_at:time}#{scan_id}")
_PARTITION = PRODUCT_SCANS.partition_key
_SCANNED_AT = SCAN_SORT.span("scanned_at")
"""``scannedAt`` as the key spells it, which is ``format_datetime``'s
spelling: the time is spelled once for both."""


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
    sort = SCAN_SORT.format({"scanned_at": scanned_at, "scan_id": scan_id})
    return {
        "PK": _PARTITION.format({"product_id": product_id}),
        "SK": sort,
        "entity": "Scan",
        "id": scan_id,
        "productId": product_id,
        "brandId": brand_id,
        "scannedAt": sort[_SCANNED_AT],
        "result": result.value,
        "country": country,
        "city": city,
        "deviceHash": device_hash,
        "ipHash": ip_hash,
        "userAgent": user_agent,
    }
