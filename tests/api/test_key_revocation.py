"""A revoked API key, across two gateway processes on one SQLite file: the
process that revoked it refuses it at once, the other within the key cache's
time (``PROOFGATE_KEY_CACHE_MS``, 100 ms by default)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tests.api._live import Gateway

CREATE_KEY = """mutation($brand: ID!) {
  createApiKey(brandId: $brand, name: "leaked", role: BRAND) { id apiKey }
}"""
REVOKE_KEY = "mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }"
VIEWER = "{ viewer { role brandId } }"
KEY_CACHE_SECONDS = 0.1
MARGIN_SECONDS = 0.5
"""A request or two on a busy shared machine."""


@pytest.fixture
async def two_gateways(tmp_path: Path) -> AsyncIterator[tuple[Gateway, Gateway]]:
    a = await Gateway(tmp_path).start()
    b = await Gateway(tmp_path, PROOFGATE_RELAY_POLL_MS="600000").start()
    try:
        yield a, b
    finally:
        await a.stop()
        await b.stop()


def _refused(body: dict[str, object]) -> bool:
    errors = body.get("errors")
    return isinstance(errors, list) and any(
        e.get("extensions", {}).get("code") == "UNAUTHENTICATED" for e in errors
    )


async def test_a_revoked_key_is_refused_here_at_once_and_there_within_the_cache_time(
    two_gateways: tuple[Gateway, Gateway], record_property: Callable[[str, object], None]
) -> None:
    a, b = two_gateways
    brand, brand_key = await a.brand()
    created = (await a.data(CREATE_KEY, {"brand": brand}, brand_key))["createApiKey"]
    leaked = created["apiKey"]
    assert (await b.data(VIEWER, key=leaked))["viewer"]["brandId"] == brand  # now in B's cache
    assert (await a.data(VIEWER, key=leaked))["viewer"]["brandId"] == brand  # and in A's

    await a.data(REVOKE_KEY, {"id": created["id"]}, brand_key)
    revoked = time.monotonic()

    assert _refused(await a.execute(VIEWER, key=leaked))
    accepted_after = 0
    while not _refused(await b.execute(VIEWER, key=leaked)):
        accepted_after += 1
        assert time.monotonic() - revoked < KEY_CACHE_SECONDS + MARGIN_SECONDS
    latency = time.monotonic() - revoked
    record_property("revocation_latency_ms", round(latency * 1000))
    assert latency < KEY_CACHE_SECONDS + MARGIN_SECONDS, (latency, accepted_after)
