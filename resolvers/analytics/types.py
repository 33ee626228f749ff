"""Analytics types. Every field reads the day counters through the request's
DataLoader, so the fields of one analytics object share one BatchGetItem."""

from __future__ import annotations

from datetime import date

import strawberry

from domain.analytics import Summary, days_in
from domain.enums import ProductStatus, ScanResult, ThreatType
from services.analytics import brand_summary, product_summary, status_counts
from storage.access_patterns import BRAND_ANALYTICS_DAY, BRAND_STATS, PRODUCT_ANALYTICS_DAY

from ..context import Info
from ..fields import ap_field

__all__ = ["BrandAnalytics", "ProductAnalytics", "analytics_range"]

_COUNTRIES_DEFAULT, _COUNTRIES_MAX = 10, 250


@strawberry.type
class DayCount:
    day: date
    scans: int


@strawberry.type(description="Scans in one UTC hour of the day (0-23), over the whole range")
class HourCount:
    hour: int
    scans: int


@strawberry.type
class CountryCount:
    country: str = strawberry.field(description="ISO 3166-1 alpha-2")
    scans: int


@strawberry.type
class ResultCount:
    result: ScanResult
    scans: int


@strawberry.type
class ThreatTypeCount:
    type: ThreatType
    alerts: int


@strawberry.type
class StatusCount:
    status: ProductStatus
    products: int


def analytics_range(start: date, end: date) -> tuple[date, date]:
    """Checked when the field is asked for, so a bad range fails before any read."""
    days_in(start, end)
    return start, end


def _top(summary: Summary, first: int) -> list[CountryCount]:
    first = max(0, min(first, _COUNTRIES_MAX))
    ranked = sorted(summary.countries.items(), key=lambda pair: (-pair[1], pair[0]))
    return [CountryCount(country=c, scans=n) for c, n in ranked[:first] if n > 0]


def _results(summary: Summary) -> list[ResultCount]:
    return [ResultCount(result=r, scans=summary.results.get(r.value, 0)) for r in ScanResult]


def _threats(summary: Summary) -> list[ThreatTypeCount]:
    return [
        ThreatTypeCount(type=t, alerts=summary.threats[t.value])
        for t in ThreatType
        if summary.threats.get(t.value)
    ]


def _daily(summary: Summary) -> list[DayCount]:
    return [DayCount(day=day, scans=count) for day, count in summary.daily]


def _hourly(summary: Summary) -> list[HourCount]:
    return [HourCount(hour=hour, scans=count) for hour, count in enumerate(summary.hourly)]


_DAILY = "Scans per UTC day, every day of the range (zeros included)"
_HOURLY = "Scans per UTC hour of the day, 24 entries"
_TOP = "Countries by scans, most first (scans without a country are not counted)"
_RESULTS = "Scans per verdict, every verdict"
_THREATS = "Threat alerts per type raised in the range"


@strawberry.type(description="A brand's scans and threats per UTC day, from counters")
class BrandAnalytics:
    brand_id: strawberry.Private[str]
    start: strawberry.Private[date]
    end: strawberry.Private[date]

    async def _summary(self, info: Info) -> Summary:
        return await brand_summary(info.context.loaders, self.brand_id, self.start, self.end)

    @ap_field(BRAND_ANALYTICS_DAY, description=_DAILY)
    async def daily(self, info: Info) -> list[DayCount]:
        return _daily(await self._summary(info))

    @ap_field(BRAND_ANALYTICS_DAY, description=_HOURLY)
    async def hourly(self, info: Info) -> list[HourCount]:
        return _hourly(await self._summary(info))

    @ap_field(BRAND_ANALYTICS_DAY, description=_TOP)
    async def top_countries(
        self, info: Info, first: int = _COUNTRIES_DEFAULT
    ) -> list[CountryCount]:
        return _top(await self._summary(info), first)

    @ap_field(BRAND_ANALYTICS_DAY, description=_RESULTS)
    async def results(self, info: Info) -> list[ResultCount]:
        return _results(await self._summary(info))

    @ap_field(BRAND_ANALYTICS_DAY, description=_THREATS)
    async def threats_by_type(self, info: Info) -> list[ThreatTypeCount]:
        return _threats(await self._summary(info))

    @ap_field(BRAND_STATS, description="The brand's products per status, now (not per day)")
    async def statuses(self, info: Info) -> list[StatusCount]:
        counts = await status_counts(info.context.loaders, self.brand_id)
        return [StatusCount(status=s, products=n) for s, n in counts.items()]


@strawberry.type(description="One product's scans and threats per UTC day, from counters")
class ProductAnalytics:
    product_id: strawberry.Private[str]
    start: strawberry.Private[date]
    end: strawberry.Private[date]

    async def _summary(self, info: Info) -> Summary:
        return await product_summary(info.context.loaders, self.product_id, self.start, self.end)

    @ap_field(PRODUCT_ANALYTICS_DAY, description=_DAILY)
    async def daily(self, info: Info) -> list[DayCount]:
        return _daily(await self._summary(info))

    @ap_field(PRODUCT_ANALYTICS_DAY, description=_HOURLY)
    async def hourly(self, info: Info) -> list[HourCount]:
        return _hourly(await self._summary(info))

    @ap_field(PRODUCT_ANALYTICS_DAY, description=_TOP)
    async def top_countries(
        self, info: Info, first: int = _COUNTRIES_DEFAULT
    ) -> list[CountryCount]:
        return _top(await self._summary(info), first)

    @ap_field(PRODUCT_ANALYTICS_DAY, description=_RESULTS)
    async def results(self, info: Info) -> list[ResultCount]:
        return _results(await self._summary(info))

    @ap_field(PRODUCT_ANALYTICS_DAY, description=_THREATS)
    async def threats_by_type(self, info: Info) -> list[ThreatTypeCount]:
        return _threats(await self._summary(info))
