"""Scan analytics as counters, kept where scans and alerts are written, so a
dashboard reads a few items instead of every scan (docs/design.md, "Analytics").

One item per UTC day holds that day's counters as attributes: ``scans``,
``h_00``..``h_23`` (UTC hour of day), ``c_<country>`` (ISO 3166-1 alpha-2;
scans without a known country count in ``scans`` only), ``r_<verdict>`` and
``t_<threat type>``. A brand's day is split over ``BRAND_SHARDS`` items, each
scan adding to one chosen by its id, because a brand scanned 1,000 times a
second would exceed one partition's write rate; reads merge the shards.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

from .enums import ScanResult, ThreatType
from .errors import BadUserInput

__all__ = [
    "BRAND_SHARDS",
    "MAX_DAYS",
    "Summary",
    "alert_counters",
    "countries_counted",
    "day_key",
    "days_in",
    "hour_count",
    "scan_counters",
    "shard_of",
    "summarize",
]

BRAND_SHARDS = 8
"""A transactional write of a small item costs 2 WCU and a partition takes
1,000 WCU/s: 8 shards carry 4,000 scans a second with room to spare, and a
92-day read is 736 keys, 8 BatchGetItem calls."""
MAX_DAYS = 92

_SCANS, _HOUR, _COUNTRY, _RESULT, _THREAT = "scans", "h_", "c_", "r_", "t_"


def day_key(moment: datetime | date) -> str:
    """``moment.strftime("%Y-%m-%d")`` without strftime, which costs several
    times more (a key is spelled on every scan). For years before 1000, which
    no scan has, ISO pads the year where glibc's ``%Y`` does not."""
    return (moment.date() if isinstance(moment, datetime) else moment).isoformat()


def shard_of(event_id: str) -> int:
    """Stable across processes (not ``hash()``, which is salted per process)."""
    return zlib.crc32(event_id.encode()) % BRAND_SHARDS


def scan_counters(scanned_at: datetime, country: str | None, result: ScanResult) -> dict[str, int]:
    counters = {_SCANS: 1, f"{_HOUR}{scanned_at.hour:02d}": 1, f"{_RESULT}{result.value}": 1}
    if country is not None:
        counters[f"{_COUNTRY}{country}"] = 1
    return counters


def countries_counted(item: Mapping[str, object]) -> Iterator[str]:
    """The countries a day item counted scans from: its ``c_<country>`` counters."""
    for name, value in item.items():
        if name.startswith(_COUNTRY) and value:
            yield name[len(_COUNTRY) :]


def hour_count(item: Mapping[str, object], hour: int) -> int:
    """The scans a day item counted in one UTC hour of its day."""
    value = item.get(f"{_HOUR}{hour:02d}", 0)
    return int(value) if isinstance(value, int | Decimal) else 0


def alert_counters(threat_type: ThreatType) -> dict[str, int]:
    return {f"{_THREAT}{threat_type.value}": 1}


def days_in(start: date, end: date) -> list[date]:
    """Both ends included, as a dashboard's date picker means them."""
    if end < start:
        raise BadUserInput("`to` is before `from`", hint="Swap the two dates.")
    count = (end - start).days + 1
    if count > MAX_DAYS:
        raise BadUserInput(
            f"Analytics cover at most {MAX_DAYS} days, asked for {count}",
            hint="Ask for consecutive ranges of at most 92 days and add them up.",
        )
    return [start + timedelta(days=offset) for offset in range(count)]


@dataclass(frozen=True)
class Summary:
    daily: list[tuple[date, int]]
    hourly: list[int]
    countries: Counter[str]
    results: Counter[str]
    threats: Counter[str]


def summarize(days: list[date], items: Iterable[tuple[date, Mapping[str, object]]]) -> Summary:
    """Adds up day items (any number per day: shards) into one summary."""
    daily: Counter[date] = Counter()
    hourly = [0] * 24
    countries: Counter[str] = Counter()
    results: Counter[str] = Counter()
    threats: Counter[str] = Counter()
    for day, item in items:
        for name, value in item.items():
            if not isinstance(value, int | Decimal) or isinstance(value, bool):
                continue
            count = int(value)
            if name == _SCANS:
                daily[day] += count
            elif name.startswith(_HOUR):
                hourly[int(name[len(_HOUR) :])] += count
            elif name.startswith(_COUNTRY):
                countries[name[len(_COUNTRY) :]] += count
            elif name.startswith(_RESULT):
                results[name[len(_RESULT) :]] += count
            elif name.startswith(_THREAT):
                threats[name[len(_THREAT) :]] += count
    return Summary([(day, daily[day]) for day in days], hourly, countries, results, threats)
