"""A page the storage cache keeps carries its projection: the next request
served the same page object reuses the edges while every item they name
from elsewhere (the brand) is the same object the request holds, and
projects again when it is not (docs/design.md, Projected pages; Storage
cache). On both backends, with a planted fault that keeps a stale brand."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from _asgi import running
from conftest import BACKENDS, Gateway, _settings, with_lanes

import api.graphql.execution.projection as projection
import storage.cache.storage as cached_storage
from api.app import create_app
from api.settings.gateway import Backend, CacheChannel
from storage import Update
from storage.access_patterns import BRAND_BY_ID, PRODUCT_BY_ID
from storage.protocol import kept_reads
from storage.trace import Trace, tracing

pytestmark = pytest.mark.fast_paths

PAGE = """query($b: ID!) { brand(id: $b) { name products(first: 3) {
  edges { cursor node { id name sku status brand { name } certificate { hash } } }
  pageInfo { hasNextPage }
} } }"""


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
async def gateway(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Gateway]:
    # moto has no lagging replicas: the second drop a second after each write
    # (REPLICA_SETTLE_SECONDS) would only drop entries at a time of its own.
    monkeypatch.setattr(cached_storage, "_LAGGING_BACKENDS", frozenset())
    settings = replace(
        with_lanes(_settings(request.param, request)),
        cache=True,
        cache_channel=CacheChannel.NONE,  # one process: its own writes are all it hears
    )
    if settings.backend is Backend.DYNAMODB:
        from storage.dynamodb import create_table

        await create_table(
            table_name=settings.table,
            region=settings.aws_region,
            endpoint_url=settings.dynamodb_endpoint,
        )
    app = create_app(settings)
    async with running(app) as http:
        yield Gateway(app, http, request.param)


class Reuses:
    """Counts what ``_still_held`` answered: True, the edges were reused."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, planted: bool = False) -> None:
        self.answers: list[bool] = []
        real = projection._still_held

        def counted(memo: Any, context: Any) -> bool:
            answer = real(memo, context)
            self.answers.append(answer)
            return True if planted else answer

        monkeypatch.setattr(projection, "_still_held", counted)


async def _seeded(gateway: Gateway) -> tuple[str, str, list[str]]:
    brand = await gateway.register_brand("Plain", plan="PRO", credits=20)
    ids = [(await gateway.register_product(brand, sku=f"SKU-{i}"))["id"] for i in range(3)]
    await gateway.drained()  # the relay's writes would drop entries at their own time
    return brand.id, brand.key, ids


async def _page(gateway: Gateway, brand_id: str, key: str) -> tuple[dict[str, Any], list[str]]:
    """The data, and the page's reads that reached the store (the caller's
    key, AP20, is read through whenever the key's own cache lets it go)."""
    trace = Trace()
    with tracing(trace):
        data = await gateway.data(PAGE, {"b": brand_id}, key=key)
    return data, [ap for ap in trace.access_patterns if ap != "AP20"]


def _names(data: dict[str, Any]) -> list[tuple[str, str]]:
    edges = data["brand"]["products"]["edges"]
    return [(edge["node"]["name"], edge["node"]["brand"]["name"]) for edge in edges]


def _uncursored(data: dict[str, Any]) -> list[Any]:
    return [edge["node"] for edge in data["brand"]["products"]["edges"]]


async def _write(gateway: Gateway, action: Update) -> None:
    await gateway.app.state.graphql.services.storage.transact_write([action])


async def test_a_kept_pages_projection_is_reused_until_its_brand_changes(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    brand_id, key, ids = await _seeded(gateway)
    # The resolvers' store (the pipeline's, over the cache) answers hits at once.
    assert kept_reads(gateway.app.state.graphql.services.storage) is not None
    reuses = Reuses(monkeypatch)
    first, _ = await _page(gateway, brand_id, key)
    second, calls = await _page(gateway, brand_id, key)
    third, _ = await _page(gateway, brand_id, key)
    # The miss minted its own cursors; the kept page mints once and for all.
    assert _uncursored(second) == _uncursored(first)
    assert second == third
    assert calls == []
    assert reuses.answers == [True]  # the miss's page is not kept; the second projects it
    # The brand changes: its entry is dropped, the page's is not (another
    # partition), so the kept page's edges name a brand item no longer held.
    await _write(gateway, Update(BRAND_BY_ID.key(brand_id=brand_id), set={"name": "Renamed"}))
    renamed, _ = await _page(gateway, brand_id, key)
    assert reuses.answers[-1] is False
    assert renamed["brand"]["name"] == "Renamed"
    assert {brand for _, brand in _names(renamed)} == {"Renamed"}
    # The miss handed the request the store's brand, not the kept copy, so
    # the next request projects once more, and the one after reuses that.
    for reused in (False, True):
        again, _ = await _page(gateway, brand_id, key)
        assert _uncursored(again) == _uncursored(renamed) and reuses.answers[-1] is reused
    # A product changes: the page is dropped, read again, projected afresh.
    await _write(gateway, Update(PRODUCT_BY_ID.key(product_id=ids[0]), set={"name": "New"}))
    changed, _ = await _page(gateway, brand_id, key)
    assert ("New", "Renamed") in _names(changed)
    assert [edge["cursor"] for edge in changed["brand"]["products"]["edges"]]


async def test_a_reuse_that_skips_the_check_is_caught(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted fault: the edges are reused whatever brand the request holds."""
    brand_id, key, _ = await _seeded(gateway)
    Reuses(monkeypatch, planted=True)
    await _page(gateway, brand_id, key)
    await _page(gateway, brand_id, key)
    await _write(gateway, Update(BRAND_BY_ID.key(brand_id=brand_id), set={"name": "Renamed"}))
    stale, _ = await _page(gateway, brand_id, key)
    assert stale["brand"]["name"] == "Renamed"
    assert {brand for _, brand in _names(stale)} == {"Plain"}  # what the check prevents
