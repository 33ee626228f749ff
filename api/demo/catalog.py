"""What ``proofgate serve --demo`` loads: two brands and their products.

Chosen so every example operation of the explorer has something to show: a
PRO and a FREE brand, chains of several events (one event of each watch sent
by a carrier's integration through partner ingest), a week of scans from
several countries for the analytics tab (each product in at most two
markets, so the history alone raises no GEOGRAPHIC_ANOMALY), today's scans
(one product from enough countries to raise one), a claimed product scanned
by another device, a transfer and a recall.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "CATALOG",
    "HISTORY_DAYS",
    "BrandPlan",
    "EventPlan",
    "HistoryScan",
    "IntegrationPlan",
    "ProductPlan",
    "ScanPlan",
]

HISTORY_DAYS = 6
"""Days of backdated scans before today: with today, the week the explorer's
Analytics tab asks for."""


@dataclass(frozen=True)
class EventPlan:
    type: str
    actor: str
    location: str
    latitude: float | None = None
    longitude: float | None = None
    data: dict[str, Any] | None = None
    ingested_as: str | None = None
    """The partner event id under which the brand's integration sends this
    event through ingestEvent; None: the brand appends it itself."""

    def as_input(self) -> dict[str, Any]:
        fields = {
            "type": self.type,
            "actor": self.actor,
            "location": self.location,
            "latitude": self.latitude,
            "longitude": self.longitude,
            "data": self.data,
        }
        return {name: value for name, value in fields.items() if value is not None}


@dataclass(frozen=True)
class ScanPlan:
    country: str
    city: str
    device: str

    def as_input(self) -> dict[str, str]:
        return {
            "country": self.country,
            "city": self.city,
            "deviceFingerprint": self.device,
            "userAgent": "proofgate-demo",
        }


@dataclass(frozen=True)
class HistoryScan:
    """A scan of the week before the demo loads, recorded at its own time."""

    days_ago: int
    hour: int
    scan: ScanPlan


@dataclass(frozen=True)
class IntegrationPlan:
    name: str
    type: str


@dataclass(frozen=True)
class ProductPlan:
    name: str
    sku: str
    category: str
    description: str
    metadata: dict[str, Any]
    events: tuple[EventPlan, ...]
    scans: tuple[ScanPlan, ...] = ()
    claimed_by: str | None = None
    """The device that claims the product, before any scan."""
    transfer_to: str | None = None
    recall_reason: str | None = None
    history: tuple[HistoryScan, ...] = ()
    """Recorded before the claim, transfer and recall, which happen today."""
    gtin: str | None = None
    serial: str | None = None
    """With ``gtin``: the label carries a GS1 Digital Link URI (GS1's
    demonstration prefix 952, so no real product is named)."""

    @property
    def scan_total(self) -> int:
        return len(self.history) + len(self.scans)

    def as_input(self, brand_id: str) -> dict[str, Any]:
        return {
            "brandId": brand_id,
            "name": self.name,
            "sku": self.sku,
            "category": self.category,
            "description": self.description,
            "metadata": self.metadata,
            **({"gtin": self.gtin, "serial": self.serial} if self.gtin else {}),
        }


@dataclass(frozen=True)
class BrandPlan:
    slug: str
    """Names the brand in the demo key file."""
    name: str
    domain: str
    industry: str
    plan: str
    products: tuple[ProductPlan, ...]
    credits: int = 0
    """Granted before registering products: only FREE brands start with credits."""
    integration: IntegrationPlan | None = None
    """The partner integration that sends the events marked ``ingested_as``."""

    def as_input(self) -> dict[str, str]:
        return {
            "name": self.name,
            "domain": self.domain,
            "industry": self.industry,
            "plan": self.plan,
        }


def _week(
    sku: str, markets: tuple[tuple[str, str], ...], per_day: tuple[int, ...]
) -> tuple[HistoryScan, ...]:
    """``per_day[d]`` scans ``HISTORY_DAYS - d`` days ago, at hours spread
    over the day, alternating between the product's markets."""
    scans = []
    for day, count in enumerate(per_day):
        for index in range(count):
            country, city = markets[(day + index) % len(markets)]
            device = f"demo-shopper-{sku.lower()}-{day}{index}"
            hour = (8 + 5 * index + 3 * day) % 24
            scans.append(HistoryScan(HISTORY_DAYS - day, hour, ScanPlan(country, city, device)))
    return tuple(scans)


def _watch_chain(model: str, retailer: str, city: str) -> tuple[EventPlan, ...]:
    return (
        EventPlan(
            "MANUFACTURED",
            "Aurora Manufacture",
            "Le Locle, CH",
            47.0562,
            6.7492,
            {"calibre": 3120, "model": model},
        ),
        EventPlan("INSPECTED", "COSC", "Biel/Bienne, CH", 47.1368, 7.2468, {"rating": 1}),
        EventPlan(
            "SHIPPED",
            "Swiss Post Logistics",
            "Zurich, CH",
            47.3769,
            8.5417,
            ingested_as=f"SPL-{model.upper()}-0001",
        ),
        EventPlan("RECEIVED", retailer, city),
        EventPlan("SOLD", retailer, city, data={"receipt": 1042}),
    )


def _serum_chain(batch: int) -> tuple[EventPlan, ...]:
    return (
        EventPlan("MANUFACTURED", "Verdant Lab", "Grasse, FR", 43.6589, 6.9248, {"batch": batch}),
        EventPlan("INSPECTED", "Verdant QA", "Grasse, FR", data={"batch": batch}),
        EventPlan("SHIPPED", "Verdant Logistics", "Lyon, FR", 45.764, 4.8357),
    )


AURORA = BrandPlan(
    slug="aurora",
    name="Aurora Timepieces",
    domain="aurora-timepieces.example",
    industry="Luxury watches",
    plan="PRO",
    credits=50,
    integration=IntegrationPlan("Swiss Post Logistics", "CARRIER"),
    products=(
        ProductPlan(
            name="Meridian Chronograph",
            sku="AUR-MER-001",
            category="Watches",
            description="Automatic chronograph, 42 mm steel case.",
            metadata={"caseMm": 42, "material": "steel", "waterResistanceM": 100},
            events=_watch_chain("Meridian", "Maison Horloge", "Paris, FR"),
            scans=(
                ScanPlan("FR", "Paris", "demo-phone-claire"),
                ScanPlan("US", "New York", "demo-phone-sam"),
                ScanPlan("JP", "Tokyo", "demo-phone-yuki"),
                ScanPlan("BR", "Sao Paulo", "demo-phone-ana"),
            ),
            history=_week("AUR-MER-001", (("FR", "Paris"), ("CH", "Geneva")), (3, 2, 4, 1, 3, 2)),
            gtin="9521000000018",
            serial="MER-000147",
        ),
        ProductPlan(
            name="Solstice Diver",
            sku="AUR-SOL-200",
            category="Watches",
            description="Dive watch with a ceramic bezel, 300 m.",
            metadata={"caseMm": 41, "material": "titanium", "waterResistanceM": 300},
            events=_watch_chain("Solstice", "Uhren Keller", "Munich, DE"),
            scans=(
                ScanPlan("DE", "Munich", "demo-phone-jonas"),
                ScanPlan("DE", "Berlin", "demo-phone-unknown"),
            ),
            claimed_by="demo-phone-jonas",
            history=_week("AUR-SOL-200", (("DE", "Munich"), ("AT", "Vienna")), (1, 2, 1, 2, 1, 1)),
        ),
        ProductPlan(
            name="Equinox Dress Watch",
            sku="AUR-EQX-310",
            category="Watches",
            description="Hand-wound dress watch, 38 mm rose gold.",
            metadata={"caseMm": 38, "material": "rose gold"},
            events=_watch_chain("Equinox", "Orologi Bianchi", "Milan, IT"),
            scans=(ScanPlan("IT", "Milan", "demo-phone-luca"),),
            transfer_to="Second owner (private sale)",
            history=_week("AUR-EQX-310", (("IT", "Milan"),), (2, 1, 1, 2, 0, 1)),
        ),
        ProductPlan(
            name="Polaris GMT",
            sku="AUR-POL-420",
            category="Watches",
            description="Travel watch with a second time zone.",
            metadata={"caseMm": 40, "material": "steel"},
            events=_watch_chain("Polaris", "Time Square Watches", "London, GB")[:3],
            scans=(ScanPlan("GB", "London", "demo-phone-oliver"),),
            recall_reason="Crown gasket may let water in",
            history=_week("AUR-POL-420", (("GB", "London"), ("IE", "Dublin")), (1, 0, 2, 1, 1, 0)),
        ),
    ),
)

VERDANT = BrandPlan(
    slug="verdant",
    name="Verdant Botanicals",
    domain="verdant-botanicals.example",
    industry="Cosmetics",
    plan="FREE",
    products=(
        ProductPlan(
            name="Rosehip Renewal Serum",
            sku="VB-RRS-30",
            category="Skincare",
            description="Cold-pressed rosehip oil serum, 30 ml.",
            metadata={"volumeMl": 30, "vegan": True},
            events=_serum_chain(2401),
            scans=(
                ScanPlan("FR", "Lyon", "demo-phone-ines"),
                ScanPlan("BE", "Brussels", "demo-phone-noah"),
            ),
            history=_week("VB-RRS-30", (("FR", "Lyon"), ("BE", "Brussels")), (2, 3, 1, 2, 2, 3)),
            gtin="9522000000015",
            serial="RRS-2401-0007",
        ),
        ProductPlan(
            name="Lavender Night Balm",
            sku="VB-LNB-50",
            category="Skincare",
            description="Overnight balm with Provence lavender, 50 ml.",
            metadata={"volumeMl": 50, "vegan": True},
            events=_serum_chain(2402),
            scans=(ScanPlan("ES", "Madrid", "demo-phone-lucia"),),
            history=_week("VB-LNB-50", (("ES", "Madrid"), ("PT", "Lisbon")), (1, 1, 2, 0, 1, 2)),
        ),
    ),
)

CATALOG: tuple[BrandPlan, ...] = (AURORA, VERDANT)
