"""Demo data: loaded through the API on start, idempotent, resumable, and
enough for every example operation of the explorer to return something."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import stat
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from _asgi import GraphQLClient, running
from graphql import OperationDefinitionNode, OperationType, parse, validate
from starlette.applications import Starlette

from api.app import create_app
from api.demo.catalog import AURORA, CATALOG, HISTORY_DAYS, VERDANT
from api.demo.loader import DEMO_KEYS_FILE, Demo, load_demo, render_demo, start_demo
from api.graphql.schema import schema
from api.http.explorer_examples import ANALYTICS as ANALYTICS_QUERY
from api.http.explorer_examples import examples
from api.settings.gateway import Settings
from domain.errors import ProofgateError
from domain.signing import SigningKey

ADMIN_KEY = "demo-test-admin-key-0123456789"
BRANDS = "query { brands(first: 100) { edges { node { id name } } } }"
BRAND = """query($id: ID!) {
    brand(id: $id) {
        plan
        stats { productCount scanCount threatCount }
        ledger { balance { available } }
        products(first: 10) {
            edges { node { id name sku status scanCount claim { claimedAt }
                provenance(first: 10) { edges { node { type } } } } }
        }
        threats(first: 20) { edges { node { type product { name } } } }
    }
}"""
VIEWER = "query { viewer { role brandId } }"


class Gateway(GraphQLClient):
    def __init__(self, app: Starlette, http: httpx.AsyncClient, settings: Settings) -> None:
        super().__init__(app, http)
        self.settings = settings

    async def load(self, catalog: Any = CATALOG) -> Demo:
        services = self.app.state.graphql.services
        return await load_demo(schema, services, self.settings, catalog)

    async def brand(self, brand_id: str) -> dict[str, Any]:
        brand: dict[str, Any] = (await self.data(BRAND, {"id": brand_id}, key=ADMIN_KEY))["brand"]
        return brand

    async def brand_count(self) -> int:
        return len((await self.data(BRANDS, key=ADMIN_KEY))["brands"]["edges"])


def demo_settings(data_dir: Path, *, demo: bool) -> Settings:
    return Settings(
        cursor_key=bytes(range(32)),
        admin_key=ADMIN_KEY,
        sqlite_path=":memory:",
        data_dir=data_dir,
        demo=demo,
        signing_key=SigningKey.generate().private_key_pem().decode(),
        hash_salt=bytes(range(32)),
    )


@asynccontextmanager
async def started(settings: Settings) -> AsyncIterator[Gateway]:
    app = create_app(settings)
    async with running(app) as http:
        yield Gateway(app, http, settings)


@pytest.fixture(scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Gateway]:
    """One gateway started with demo=True: the lifespan loads the demo."""
    async with started(demo_settings(tmp_path_factory.mktemp("demo"), demo=True)) as served:
        yield served


@pytest.fixture
async def bare(tmp_path: Path) -> AsyncIterator[Gateway]:
    """A gateway started without the demo, for tests that load it themselves."""
    async with started(demo_settings(tmp_path, demo=False)) as served:
        yield served


def saved_keys(data_dir: Path) -> dict[str, dict[str, str]]:
    brands: dict[str, dict[str, str]] = json.loads((data_dir / DEMO_KEYS_FILE).read_text())[
        "brands"
    ]
    return brands


async def wait_for_threats(gateway: Gateway, brand_id: str, types: set[str]) -> set[str]:
    """The threat pipeline runs after the scans commit, so alerts come a moment later."""
    deadline = time.monotonic() + 10
    while True:
        brand = await gateway.brand(brand_id)
        found = {edge["node"]["type"] for edge in brand["threats"]["edges"]}
        if types <= found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)


async def test_start_loads_the_catalogue_through_the_api(gateway: Gateway) -> None:
    demo: Demo = gateway.app.state.demo
    assert [b.name for b in demo.brands] == [plan.name for plan in CATALOG]
    for plan, brand in zip(CATALOG, demo.brands, strict=True):
        loaded = await gateway.brand(brand.id)
        assert loaded["plan"] == plan.plan
        products = {edge["node"]["sku"]: edge["node"] for edge in loaded["products"]["edges"]}
        assert set(products) == {p.sku for p in plan.products}
        for product_plan in plan.products:
            product = products[product_plan.sku]
            events = [e["node"]["type"] for e in product["provenance"]["edges"]]
            lifecycle = ["TRANSFERRED"] * bool(product_plan.transfer_to) + ["RECALLED"] * bool(
                product_plan.recall_reason
            )
            assert events == [e.type for e in product_plan.events] + lifecycle
            assert product["scanCount"] == product_plan.scan_total
            assert (product["claim"] is not None) == (product_plan.claimed_by is not None)
        assert loaded["stats"]["scanCount"] == sum(p.scan_total for p in plan.products)


async def test_the_demo_brands_cover_free_and_pro_plans_and_raise_threats(
    gateway: Gateway,
) -> None:
    assert {AURORA.plan, VERDANT.plan} == {"PRO", "FREE"}
    aurora = gateway.app.state.demo.brands[0]
    wanted = {"GEOGRAPHIC_ANOMALY", "CLAIMED_PRODUCT_SCAN", "PRODUCT_RECALL"}
    assert wanted <= await wait_for_threats(gateway, aurora.id, wanted)
    statuses = {
        edge["node"]["status"] for edge in (await gateway.brand(aurora.id))["products"]["edges"]
    }
    assert {"ACTIVE", "TRANSFERRED", "RECALLED"} <= statuses


async def test_demo_keys_are_kept_private_and_work(gateway: Gateway) -> None:
    path = gateway.settings.data_dir / DEMO_KEYS_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    saved = saved_keys(gateway.settings.data_dir)
    for brand in gateway.app.state.demo.brands:
        assert saved[brand.slug]["api_key"] == brand.api_key
        viewer = (await gateway.data(VIEWER, key=brand.api_key))["viewer"]
        assert viewer == {"role": "BRAND", "brandId": brand.id}
    assert ADMIN_KEY not in path.read_text()


async def test_loading_again_changes_nothing(gateway: Gateway) -> None:
    demo: Demo = gateway.app.state.demo
    before = [await gateway.brand(b.id) for b in demo.brands]
    count = await gateway.brand_count()
    again = await gateway.load()
    assert again == demo
    assert await gateway.brand_count() == count
    after = [await gateway.brand(b.id) for b in demo.brands]
    for old, new in zip(before, after, strict=True):
        assert new["stats"] == old["stats"]
        assert new["ledger"] == old["ledger"]
        assert new["products"] == old["products"]


async def test_a_partial_load_is_completed_without_duplicates(bare: Gateway) -> None:
    """What a start that crashed half-way leaves: some products, a few events."""
    meridian = AURORA.products[0]
    partial = dataclasses.replace(
        AURORA,
        products=(
            dataclasses.replace(
                meridian,
                events=meridian.events[:2],
                history=meridian.history[:3],
                scans=meridian.scans[:1],
            ),
        ),
    )
    first = await bare.load([partial])
    assert await bare.brand_count() == 1
    demo = await bare.load()
    assert demo.brands[0] == first.brands[0]
    assert await bare.brand_count() == len(CATALOG)
    brand = await bare.brand(demo.brands[0].id)
    products = {edge["node"]["sku"]: edge["node"] for edge in brand["products"]["edges"]}
    assert len(products) == len(AURORA.products)
    resumed = products[meridian.sku]
    assert len(resumed["provenance"]["edges"]) == len(meridian.events)
    assert resumed["scanCount"] == meridian.scan_total
    assert demo.verification_code == first.verification_code


async def test_a_key_file_naming_a_lost_brand_registers_it_again(bare: Gateway) -> None:
    """The database was deleted but the key file was not."""
    stale = {"slug": "aurora", "id": "01M8KRT9P85G7C3D2HC6VTRA7Y", "name": AURORA.name}
    stale |= {"plan": AURORA.plan, "api_key": "pg_stale"}
    path = bare.settings.data_dir / DEMO_KEYS_FILE
    path.write_text(json.dumps({"brands": {"aurora": stale}}))
    demo = await bare.load([AURORA])
    assert demo.brand.id != stale["id"]
    assert saved_keys(bare.settings.data_dir)["aurora"]["api_key"] == demo.brand.api_key
    viewer = (await bare.data(VIEWER, key=demo.brand.api_key))["viewer"]
    assert viewer["brandId"] == demo.brand.id


async def test_an_unreadable_key_file_stops_the_load_with_a_hint(bare: Gateway) -> None:
    (bare.settings.data_dir / DEMO_KEYS_FILE).write_text("{not json")
    with pytest.raises(ProofgateError, match="not readable") as caught:
        await bare.load()
    assert caught.value.hint and DEMO_KEYS_FILE in caught.value.hint
    assert await bare.brand_count() == 0


async def test_every_explorer_example_runs_on_the_demo(gateway: Gateway) -> None:
    demo: Demo = gateway.app.state.demo
    for example in examples(demo):
        tab = example.as_tab()
        document = parse(example.query)
        (operation,) = document.definitions
        assert isinstance(operation, OperationDefinitionNode)
        if operation.operation is OperationType.SUBSCRIPTION:
            assert validate(schema.graphql_schema, document) == []
            continue
        variables = json.loads(tab["variables"]) if tab["variables"] else {}
        headers = json.loads(tab["headers"]) if tab["headers"] else {}
        body = await gateway.execute(example.query, variables, headers=headers)
        assert "errors" not in body, (example.query, body)
        assert all(value is not None for value in body["data"].values()), body


async def test_the_analytics_tab_shows_a_week_of_the_demo_scans(gateway: Gateway) -> None:
    """Recorded through verifyProduct at their own times, so the counters agree
    with the scans: every scan of the brand falls in the tab's week."""
    demo: Demo = gateway.app.state.demo
    [tab] = [e.as_tab() for e in examples(demo) if "query Analytics" in e.query]
    assert tab["variables"] is not None and tab["headers"] is not None
    body = await gateway.execute(
        ANALYTICS_QUERY, json.loads(tab["variables"]), headers=json.loads(tab["headers"])
    )
    analytics = body["data"]["brand"]["analytics"]
    # The RecordScan tab, run by another test of this module, may add a scan.
    total = (await gateway.brand(demo.brand.id))["stats"]["scanCount"]
    assert total >= sum(product.scan_total for product in AURORA.products)
    assert sum(day["scans"] for day in analytics["daily"]) == total
    assert sum(hour["scans"] for hour in analytics["hourly"]) == total
    assert sum(result["scans"] for result in analytics["results"]) == total
    assert len(analytics["daily"]) == HISTORY_DAYS + 1
    assert all(day["scans"] > 0 for day in analytics["daily"])
    assert len({hour["hour"] for hour in analytics["hourly"] if hour["scans"]}) >= 12
    assert len(analytics["topCountries"]) == 5
    assert {r["result"] for r in analytics["results"] if r["scans"]} >= {"AUTHENTIC", "SUSPICIOUS"}


async def test_the_demo_sends_the_carriers_events_through_partner_ingest(gateway: Gateway) -> None:
    demo: Demo = gateway.app.state.demo
    aurora = demo.brand
    assert aurora.ingest_key and aurora.integration_id and demo.ingested is not None
    assert saved_keys(gateway.settings.data_dir)["aurora"]["ingest_key"] == aurora.ingest_key
    query = """query($b: ID!) { brand(id: $b) {
        integrations(first: 5) { edges { node { id type eventCount } } }
        products(first: 10) { edges { node { provenance(first: 10) {
            edges { node { type source actor } } } } } }
    } }"""
    brand = (await gateway.data(query, {"b": aurora.id}, key=aurora.api_key))["brand"]
    [integration] = [edge["node"] for edge in brand["integrations"]["edges"]]
    assert integration == {"id": aurora.integration_id, "type": "CARRIER", "eventCount": 4}
    sources = [
        (event["node"]["type"], event["node"]["source"])
        for product in brand["products"]["edges"]
        for event in product["node"]["provenance"]["edges"]
    ]
    assert sources.count(("SHIPPED", "SHIPPING")) == 4
    assert all(source is None for kind, source in sources if kind != "SHIPPED")


async def test_start_prints_the_keys_and_a_code(gateway: Gateway) -> None:
    out = io.StringIO()
    demo = await start_demo(schema, gateway.app.state.graphql.services, gateway.settings, out)
    printed = out.getvalue()
    assert printed == render_demo(demo, gateway.settings) + "\n"
    for brand in demo.brands:
        assert brand.api_key in printed
    assert demo.verification_code in printed
    assert f"{gateway.settings.url}/graphql" in printed
    assert ADMIN_KEY not in printed


async def test_a_restart_says_the_demo_was_reused_not_loaded(bare: Gateway) -> None:
    first = await bare.load()
    again = await bare.load()
    assert (first.reused, again.reused) == (False, True)
    assert render_demo(first, bare.settings).startswith("Demo data loaded:")
    assert render_demo(again, bare.settings).startswith("Demo data reused")
