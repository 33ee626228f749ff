"""Demo data for ``proofgate serve --demo`` (and ``make run``).

Loaded through the real GraphQL operations, with the real keys, so the demo
exercises what a client would: validation, access control, credits, hash
chains, partner ingest, scans and the threat pipeline. Loading converges
rather than replays: each step first reads what is already there (through
the API) and does only what is missing, so a second start, or a start after
one that crashed half-way, never duplicates anything.

The brands, products and chains are set up as of a week before today and
the catalogue's week of scans is recorded day by day after it, each
operation run with the services' clock set to its own time (``_Timeline``):
the same ``verifyProduct`` a phone calls, so the analytics counters, the scan
history and the threat rules agree as they do for real scans. Claims,
transfers, recalls and today's scans happen at the real time.

API and ingest keys are shown once by the API, so the demo keeps the ones
it was given (``api.demo.keys``), to print them again on the next start.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, TextIO

import strawberry

from api.demo import documents
from api.demo.catalog import CATALOG, HISTORY_DAYS, BrandPlan, EventPlan, HistoryScan, ProductPlan
from api.demo.client import DemoClient
from api.demo.keys import DEMO_KEYS_FILE, DemoBrand, locked, read_keys, write_keys
from api.settings.gateway import Settings
from domain.errors import ErrorCode
from services.auth import ANONYMOUS, Principal
from services.context import Services

__all__ = ["DEMO_KEYS_FILE", "Demo", "DemoBrand", "load_demo", "render_demo", "start_demo"]


@dataclass(frozen=True)
class Demo:
    brands: tuple[DemoBrand, ...]
    verification_code: str
    """A code printed on a demo product, for verifyProduct."""
    ingested: dict[str, Any] | None = field(default=None, hash=False)
    """The variables of an ``ingestEvent`` the demo made with the first
    brand's ingest key: sent again (the explorer's Ingest tab), it is a replay."""
    reused: bool = field(default=False, compare=False)
    """Nothing was written: the demo was complete in the store already (a restart)."""

    @property
    def brand(self) -> DemoBrand:
        """The brand whose key the explorer and the banner offer."""
        return self.brands[0]


@dataclass(frozen=True)
class _Timeline:
    """When each backdated step happens, from the UTC midnight of the load's day."""

    today: datetime

    @classmethod
    def of(cls, now: datetime) -> _Timeline:
        return cls(datetime.combine(now.astimezone(UTC).date(), datetime.min.time(), UTC))

    def setup(self, minute: int = 0) -> datetime:
        return self.today - timedelta(days=HISTORY_DAYS + 1, hours=-8, minutes=-minute)

    def event(self, product: int, sequence: int) -> datetime:
        return self.setup(product) + timedelta(hours=sequence + 1)

    def scanned_at(self, scan: HistoryScan, index: int) -> datetime:
        return self.today - timedelta(days=scan.days_ago, hours=-scan.hour, minutes=-(index % 60))


@dataclass(frozen=True)
class _Keys:
    """The principals a brand's steps run as."""

    brand: Principal
    ingest: Principal | None


async def load_demo(
    schema: strawberry.Schema,
    services: Services,
    settings: Settings,
    catalog: Sequence[BrandPlan] = CATALOG,
) -> Demo:
    """The demo brands, registering and filling in whatever is missing."""
    client = DemoClient(schema, services)
    admin = await client.principal(settings.admin_key)
    timeline = _Timeline.of(services.clock())
    path = settings.data_dir / DEMO_KEYS_FILE
    with locked(settings.data_dir):
        saved = read_keys(path)
        brands: list[DemoBrand] = []
        codes: list[str] = []
        ingested: list[dict[str, Any]] = []
        for plan in catalog:
            brand = await _ensure_brand(client, admin, plan, saved.get(plan.slug), timeline)
            brand = await _ensure_integration(client, plan, brand, timeline)
            saved[plan.slug] = brand
            write_keys(path, saved)
            loaded = await _ensure_products(client, admin, plan, brand, timeline)
            codes.extend(loaded.codes)
            ingested.extend(loaded.ingested if not brands else ())
            brands.append(brand)
    first = ingested[0] if ingested else None
    return Demo(
        brands=tuple(brands),
        verification_code=codes[0],
        ingested=first,
        reused=not client.mutations,
    )


async def _ensure_brand(
    client: DemoClient,
    admin: Principal,
    plan: BrandPlan,
    saved: DemoBrand | None,
    timeline: _Timeline,
) -> DemoBrand:
    if saved is not None:
        found = await client.execute(documents.BRAND, {"id": saved.id}, admin)
        if not found.errors:
            return saved
        if found.codes != [ErrorCode.NOT_FOUND.value]:
            await client.data(documents.BRAND, {"id": saved.id}, admin)
    data = await client.data(
        documents.REGISTER_BRAND, {"input": plan.as_input()}, admin, timeline.setup()
    )
    payload = data["registerBrand"]
    return DemoBrand(plan.slug, payload["brand"]["id"], plan.name, plan.plan, payload["apiKey"])


async def _ensure_integration(
    client: DemoClient, plan: BrandPlan, brand: DemoBrand, timeline: _Timeline
) -> DemoBrand:
    """An ingest key is shown once: without a saved one, a new integration."""
    if plan.integration is None or brand.ingest_key is not None:
        return brand
    key = await client.principal(brand.api_key)
    variables = {"brandId": brand.id, "name": plan.integration.name, "type": plan.integration.type}
    data = await client.data(documents.CREATE_INTEGRATION, variables, key, timeline.setup(1))
    payload = data["createIntegration"]
    return replace(
        brand, ingest_key=payload["ingestKey"], integration_id=payload["integration"]["id"]
    )


@dataclass(frozen=True)
class _Loaded:
    codes: list[str]
    """The verification codes of the brand's demo products, in catalogue order."""
    ingested: list[dict[str, Any]]
    """The variables of every ingestEvent of the brand's plan."""


async def _ensure_products(
    client: DemoClient, admin: Principal, plan: BrandPlan, brand: DemoBrand, timeline: _Timeline
) -> _Loaded:
    key = await client.principal(brand.api_key)
    data = await client.data(documents.BRAND_PRODUCTS, {"id": brand.id}, key)
    existing = {edge["node"]["sku"]: edge["node"] for edge in data["brand"]["products"]["edges"]}
    missing = [p for p in plan.products if p.sku not in existing]
    if missing:
        available = Decimal(data["brand"]["ledger"]["balance"]["available"])
        if plan.credits and available < len(missing):
            amount = str(plan.credits)
            grant = {"brandId": brand.id, "amount": amount, "key": f"demo-credits-{brand.id}"}
            await client.data(documents.GRANT, grant, admin, timeline.setup(1))
        inputs = [p.as_input(brand.id) for p in missing]
        # Keyed by what is registered: a retry of this very call replays it.
        skus = hashlib.sha256(",".join(p.sku for p in missing).encode()).hexdigest()[:16]
        variables = {"inputs": inputs, "key": f"demo-products-{skus}"}
        created = await client.data(documents.REGISTER_PRODUCTS, variables, key, timeline.setup(2))
        existing.update({p["sku"]: p for p in created["registerProducts"]})
    ingest = await client.principal(brand.ingest_key) if brand.ingest_key else None
    keys = _Keys(key, ingest)
    for index, product in enumerate(plan.products):
        await _ensure_history(client, keys, product, existing[product.sku], timeline, index)
    return _Loaded(
        [existing[p.sku]["verificationCode"] for p in plan.products],
        [
            _ingest_variables(event, existing[product.sku]["id"])
            for product in plan.products
            for event in product.events
            if event.ingested_as and ingest is not None
        ],
    )


def _ingest_variables(event: EventPlan, product_id: str) -> dict[str, Any]:
    fields = {"eventId": event.ingested_as, "productId": product_id, **event.as_input()}
    return {"input": fields}


async def _ensure_events(
    client: DemoClient,
    keys: _Keys,
    plan: ProductPlan,
    product: Mapping[str, Any],
    appended: int,
    at: Callable[[int], datetime],
) -> None:
    for sequence, event in enumerate(plan.events):
        if sequence < appended:
            continue
        if event.ingested_as and keys.ingest is not None:
            variables = _ingest_variables(event, product["id"])
            await client.data(documents.INGEST, variables, keys.ingest, at(sequence))
        else:
            variables = {"id": product["id"], "input": event.as_input()}
            await client.data(documents.ADD_EVENT, variables, keys.brand, at(sequence))


async def _ensure_history(
    client: DemoClient,
    keys: _Keys,
    plan: ProductPlan,
    product: Mapping[str, Any],
    timeline: _Timeline,
    index: int,
) -> None:
    """Events, then the week of scans, then the claim, transfer or recall and
    today's scans: each step counted against what the product already shows."""
    state = (await client.data(documents.PRODUCT_STATE, {"id": product["id"]}, keys.brand))[
        "product"
    ]
    code = product["verificationCode"]
    appended = len(state["provenance"]["edges"])
    await _ensure_events(client, keys, plan, product, appended, lambda n: timeline.event(index, n))
    scanned = state["scanCount"]
    for number, past in enumerate(plan.history[scanned:], start=scanned):
        variables = {"code": code, "scan": past.scan.as_input()}
        await client.data(documents.VERIFY, variables, ANONYMOUS, timeline.scanned_at(past, number))
    if plan.claimed_by is not None and state["claim"] is None:
        await client.data(documents.CLAIM, {"code": code, "device": plan.claimed_by}, ANONYMOUS)
    if plan.transfer_to is not None and state["status"] == "ACTIVE":
        await client.data(
            documents.TRANSFER, {"id": product["id"], "to": plan.transfer_to}, keys.brand
        )
    if plan.recall_reason is not None and state["status"] != "RECALLED":
        variables = {"id": product["id"], "reason": plan.recall_reason}
        await client.data(documents.RECALL, variables, keys.brand)
    for scan in plan.scans[max(0, scanned - len(plan.history)) :]:
        await client.data(documents.VERIFY, {"code": code, "scan": scan.as_input()}, ANONYMOUS)


def render_demo(demo: Demo, settings: Settings) -> str:
    """What ``serve --demo`` prints once the demo data is in place."""
    lines = ["Demo data reused (already in the store):" if demo.reused else "Demo data loaded:"]
    for brand in demo.brands:
        lines.append(f"  {brand.name} ({brand.plan}, id {brand.id})")
        lines.append(f"    API key: {brand.api_key}")
        if brand.ingest_key:
            lines.append(f"    Ingest key (integration {brand.integration_id}): {brand.ingest_key}")
    lines += [
        f"  Verification code to try: {demo.verification_code}",
        f"  Keys are kept in {settings.data_dir / DEMO_KEYS_FILE}",
        f"  Explorer: open {settings.url}/graphql in a browser",
        "  Try:",
        f"    curl -s {settings.url}/graphql -H 'Content-Type: application/json' \\",
        f"      -H 'Authorization: Bearer {demo.brand.api_key}' \\",
        '      -d \'{"query": "{ viewer { role brandId } }"}\'',
    ]
    return "\n".join(lines)


async def start_demo(
    schema: strawberry.Schema, services: Services, settings: Settings, out: TextIO | None = None
) -> Demo:
    """Loads the demo and prints its keys: the lifespan's step under ``--demo``."""
    demo = await load_demo(schema, services, settings)
    print(render_demo(demo, settings), file=out or sys.stdout, flush=True)
    return demo
