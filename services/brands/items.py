"""How a brand is stored: profile, counters and its entry in the brand index."""

from __future__ import annotations

from domain.datetimes import parse_datetime
from storage import Item, Key, KeyTemplate
from storage.access_patterns import BRAND_BY_ID, BRAND_STATS, BRANDS_NEWEST

__all__ = [
    "BRAND_INDEX_SORT",
    "STAT_COUNTERS",
    "brand_index_item",
    "brand_profile_item",
    "brand_stats_item",
    "brand_stats_key",
]

# AP02's sort key: creation time first, so the index reads newest first.
BRAND_INDEX_SORT = KeyTemplate("BRAND#{created_at:time}#{brand_id}")


def brand_profile_item(
    *, brand_id: str, name: str, domain: str, industry: str | None, plan: str, created_at: str
) -> Item:
    key = BRAND_BY_ID.key(brand_id=brand_id)
    return {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "Brand",
        "id": brand_id,
        "name": name,
        "domain": domain,
        "industry": industry,
        "plan": plan,
        "createdAt": created_at,
    }


def brand_index_item(*, brand_id: str, created_at: str) -> Item:
    return {
        "PK": BRANDS_NEWEST.partition({}),
        "SK": BRAND_INDEX_SORT.format(
            {"created_at": parse_datetime(created_at), "brand_id": brand_id}
        ),
        "entity": "BrandIndexEntry",
        "brandId": brand_id,
    }


def brand_stats_key(brand_id: str) -> Key:
    return BRAND_STATS.key(brand_id=brand_id)


# The counters BrandStats exposes; each is changed only by an atomic ADD.
STAT_COUNTERS = ("productCount", "scanCount", "threatCount", "openThreatCount")


def brand_stats_item(brand_id: str) -> Item:
    """Created with the brand, so every counter update can require it to exist."""
    key = brand_stats_key(brand_id)
    return {"PK": key.pk, "SK": key.sk, "entity": "BrandStats", **dict.fromkeys(STAT_COUNTERS, 0)}
