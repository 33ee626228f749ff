"""A revoked API key, across two gateway processes on one SQLite file: the
process that revoked it refuses it at once, the other once its cache entry
expires (``PROOFGATE_KEY_CACHE_MS``, 100 ms by default). That bound is the
cache's, held by its own clock in tests/services/test_auth_key_cache.py;
here only that B, never told, does come to refuse it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.api._live import Gateway

CREATE_KEY = """mutation($brand: ID!) {
  createApiKey(brandId: $brand, name: "leaked", role: BRAND) { id apiKey }
}"""
REVOKE_KEY = "mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }"
VIEWER = "{ viewer { role brandId } }"
REFUSED_WITHIN_REQUESTS = 10_000
"""A hang guard, not a latency bound: B reads the key again once its entry
is 100 ms old, which a loop of requests passes long before this many."""


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


async def test_a_revoked_key_is_refused_here_at_once_and_there_once_cached_entries_expire(
    two_gateways: tuple[Gateway, Gateway],
) -> None:
    a, b = two_gateways
    brand, brand_key = await a.brand()
    created = (await a.data(CREATE_KEY, {"brand": brand}, brand_key))["createApiKey"]
    leaked = created["apiKey"]
    assert (await b.data(VIEWER, key=leaked))["viewer"]["brandId"] == brand  # now in B's cache
    assert (await a.data(VIEWER, key=leaked))["viewer"]["brandId"] == brand  # and in A's

    await a.data(REVOKE_KEY, {"id": created["id"]}, brand_key)

    assert _refused(await a.execute(VIEWER, key=leaked))
    for _ in range(REFUSED_WITHIN_REQUESTS):
        if _refused(await b.execute(VIEWER, key=leaked)):
            break
    else:
        pytest.fail(f"B still accepts the revoked key after {REFUSED_WITHIN_REQUESTS} requests")
    assert _refused(await b.execute(VIEWER, key=leaked))
