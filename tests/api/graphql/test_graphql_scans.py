"""Product.scans by time range over HTTP, on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.datetimes import format_datetime
from services.context import Services

SCANS = """query($p: ID!, $since: DateTime, $until: DateTime, $first: Int, $after: String) {
    product(id: $p) {
        scans(since: $since, until: $until, first: $first, after: $after) {
            edges { cursor node { id scannedAt result country } }
            pageInfo { hasNextPage endCursor }
        }
    }
}"""
VERIFY = "mutation($c: String!, $s: ScanInput) { verifyProduct(code: $c, scan: $s) { result } }"
T0 = datetime(2031, 3, 1, 12, 0, tzinfo=UTC)


async def scans(gateway, product_id: str, key: str, **variables: Any) -> dict[str, Any]:
    data = await gateway.data(SCANS, {"p": product_id, **variables}, key=key)
    connection: dict[str, Any] = data["product"]["scans"]
    return connection


def times(connection: dict[str, Any]) -> list[str]:
    return [edge["node"]["scannedAt"] for edge in connection["edges"]]


async def scanned_product(
    gateway, monkeypatch: pytest.MonkeyPatch, count: int
) -> tuple[Any, dict[str, Any], list[str]]:
    """A product scanned once an hour from T0, with the clock pinned to each scan."""
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    services: Services = gateway.app.state.graphql.services
    moments = [T0 + timedelta(hours=n) for n in range(count)]
    for moment in moments:
        monkeypatch.setattr(services, "clock", lambda moment=moment: moment)
        await gateway.data(VERIFY, {"c": product["verificationCode"], "s": {"country": "JP"}})
    return brand, product, [format_datetime(m) for m in moments]


async def test_scans_read_newest_first_within_a_half_open_range(
    gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    brand, product, moments = await scanned_product(gateway, monkeypatch, 4)
    everything = await scans(gateway, product["id"], brand.key)
    assert times(everything) == moments[::-1]
    assert {edge["node"]["country"] for edge in everything["edges"]} == {"JP"}
    window = await scans(gateway, product["id"], brand.key, since=moments[1], until=moments[3])
    assert times(window) == [moments[2], moments[1]]
    assert times(await scans(gateway, product["id"], brand.key, since=moments[3])) == [moments[3]]
    assert times(await scans(gateway, product["id"], brand.key, until=moments[0])) == []


async def test_scans_paginate_within_their_range(gateway, monkeypatch: pytest.MonkeyPatch) -> None:
    brand, product, moments = await scanned_product(gateway, monkeypatch, 4)
    bounds = {"since": moments[0], "until": format_datetime(T0 + timedelta(days=1))}
    first = await scans(gateway, product["id"], brand.key, first=3, **bounds)
    assert times(first) == moments[:0:-1]
    assert first["pageInfo"]["hasNextPage"] is True
    rest = await scans(
        gateway, product["id"], brand.key, first=3, after=first["pageInfo"]["endCursor"], **bounds
    )
    assert times(rest) == [moments[0]]
    assert rest["pageInfo"]["hasNextPage"] is False
    # A cursor cannot widen a range it was not minted for.
    narrower = await gateway.execute(
        SCANS,
        {"p": product["id"], "since": moments[3], "after": first["edges"][-1]["cursor"]},
        key=brand.key,
    )
    assert gateway.codes(narrower) == ["BAD_USER_INPUT"]


async def test_a_reversed_range_is_bad_user_input(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    body = await gateway.execute(
        SCANS,
        {"p": product["id"], "since": "2031-01-02T00:00:00Z", "until": "2031-01-01T00:00:00Z"},
        key=brand.key,
    )
    assert gateway.codes(body) == ["BAD_USER_INPUT"]


async def test_scans_are_for_the_brand_and_its_partners_only(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    other = await gateway.register_brand()
    partner = await gateway.create_key(brand, "PARTNER")
    await gateway.data(VERIFY, {"c": product["verificationCode"]})
    assert len((await scans(gateway, product["id"], partner))["edges"]) == 1
    assert len((await scans(gateway, product["id"], gateway.admin_key))["edges"]) == 1
    by_code = (
        "query($c: String!) { productByCode(code: $c) { id scans { edges { node { id } } } } }"
    )
    for key, code in ((None, "UNAUTHENTICATED"), (other.key, "FORBIDDEN")):
        body = await gateway.execute(by_code, {"c": product["verificationCode"]}, key=key)
        assert gateway.codes(body) == [code]
        assert body["data"]["productByCode"] == {"id": product["id"], "scans": None}
    foreign = await gateway.execute(SCANS, {"p": product["id"]}, key=other.key)
    assert gateway.codes(foreign) == ["NOT_FOUND"]
    assert product["id"] not in str(foreign["errors"])
