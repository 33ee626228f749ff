"""How scans are stored: ``PRODUCT#<id>`` / ``SCAN#<time>#<scanId>`` (AP10).

Time first, so a time range is one key range and the partition reads newest
first; the scan id keeps two scans in one microsecond apart. Device
fingerprints and IPs are stored only as salted hashes (``hash_salt``), so a
device is recognised across scans without being recorded.
"""

from __future__ import annotations

from datetime import datetime

from domain.datetimes import format_datetime
from domain.enums import ScanResult
from storage import Item, KeyTemplate
from storage.access_patterns import PRODUCT_SCANS

__all__ = ["SCAN_SORT", "scan_item"]

SCAN_SORT = KeyTemplate("SCAN#{scanned_at:time}#{scan_id}")
_PARTITION = PRODUCT_SCANS.partition_key
_SPELLED_SORT = KeyTemplate("SCAN#{scanned_at}#{scan_id}")
"""``SCAN_SORT`` given the time as ``format_datetime`` spells it, which is the
key's spelling and plain text: the scan's moment is spelled once for the key,
``scannedAt`` and the scan's event payload (``format_datetime`` remembers it)."""


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
    spelled = format_datetime(scanned_at)
    sort = _SPELLED_SORT.format({"scanned_at": spelled, "scan_id": scan_id})
    return {
        "PK": _PARTITION.format({"product_id": product_id}),
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
