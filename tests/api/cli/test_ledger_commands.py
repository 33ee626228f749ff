"""``proofgate reconcile`` and ``proofgate release-reservations`` on an
embedded store in a data directory, as an operator runs them."""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from api.cli.main import main
from api.graphql.schema import schema
from api.runtime.backend import open_storage
from api.runtime.resolver_services import build_services
from api.settings.gateway import Settings
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import Principal, Role
from services.context import Services
from services.ledger import FeeReservation
from storage import Put
from storage.access_patterns import PRODUCT_BY_ID

REGISTER = """mutation($domain: String!) {
    registerBrand(input: {name: "Acme", domain: $domain, plan: FREE}) { brand { id } }
}"""
PRODUCT = """mutation($b: ID!) { registerProduct(input: {brandId: $b, name: "Runner"}) { id } }"""


async def execute(services: Services, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    principal = Principal(Role.ADMIN)
    context = RequestContext(services, principal, Loaders(services.storage, principal.tenant), "t")
    result = await schema.execute(query, variable_values=variables, context_value=context)
    assert not result.errors, result.errors
    assert result.data is not None
    return result.data


async def populate(settings: Settings) -> tuple[str, str]:
    """A FREE brand, one product, and a reservation that expires at once."""
    storage = await open_storage(settings)
    try:
        services = build_services(settings, storage)
        brand = await execute(services, REGISTER, {"domain": "acme.example.com"})
        brand_id = brand["registerBrand"]["brand"]["id"]
        product = await execute(services, PRODUCT, {"b": brand_id})
        now = datetime.now(UTC)
        await FeeReservation.reserve(storage, brand_id, 3, Decimal("1.00"), now, ttl=timedelta(0))
        return brand_id, product["registerProduct"]["id"]
    finally:
        await storage.close()


async def tamper(settings: Settings, product_id: str) -> None:
    storage = await open_storage(settings)
    try:
        product = await storage.get(PRODUCT_BY_ID, product_id=product_id)
        assert product is not None
        await storage.transact_write([Put({**product, "sku": "FORGED"})])
    finally:
        await storage.close()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    for name in list(os.environ):
        if name.startswith("PROOFGATE_"):
            monkeypatch.delenv(name)
    return str(tmp_path / "data")


def test_reconcile_and_release_reservations(
    data_dir: str, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings.from_env({"PROOFGATE_DATA_DIR": data_dir})
    brand_id, product_id = asyncio.run(populate(settings))

    assert main(["reconcile", "--data-dir", data_dir]) == 0
    assert (
        "Checked 1 brands, 2 ledger transactions, 2 postings, 1 products."
        in capsys.readouterr().out
    )

    assert main(["release-reservations", "--data-dir", data_dir]) == 0
    out = capsys.readouterr().out
    assert f"released 3.00 CREDIT held for brand {brand_id}" in out
    assert "1 expired reservations released" in out
    assert main(["release-reservations", "--data-dir", data_dir]) == 0
    assert "0 expired reservations released" in capsys.readouterr().out

    asyncio.run(tamper(settings, product_id))
    assert main(["reconcile", "--data-dir", data_dir]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "FAILED: 1 discrepancies" in captured.err
    assert (
        f"brand {brand_id}: product {product_id}: "
        "certificate hash does not match the stored product record"
    ) in captured.err
