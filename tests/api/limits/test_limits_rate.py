"""Rate limits on the public mutations: over HTTP, and the bucket itself."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _asgi import codes
from _limits import ADMIN_KEY, Client, serve

from api.graphql.schema import schema
from api.limits.ratelimit import PUBLIC_MUTATIONS, RateLimiter
from api.settings.limits import Limits, Rate
from domain.errors import RateLimited
from services.auth import ANONYMOUS, Principal, Role

# A token a second: slow enough that a burst sent under load earns no extra
# token before the call that must be refused, quick enough to wait for one.
ANONYMOUS_RATE = Rate(per_minute=60, burst=3)
KEY_RATE = Rate(per_minute=60, burst=5)

VERIFY = "mutation($code: String!) { verifyProduct(code: $code) { result scanCount } }"


class Setup:
    def __init__(self, client: Client, code: str, product_id: str, brand_key: str) -> None:
        self.client = client
        self.code = code
        self.product_id = product_id
        self.brand_key = brand_key

    async def verify(self, *, key: str | None = None) -> Any:
        return await self.client.post(VERIFY, {"code": self.code}, key=key)

    async def scans(self) -> int:
        data = await self.client.data(
            "query($id: ID!) { product(id: $id) { scanCount } }",
            {"id": self.product_id},
            key=ADMIN_KEY,
        )
        count: int = data["product"]["scanCount"]
        return count


@pytest.fixture
async def setup() -> AsyncIterator[Setup]:
    async with serve(Limits(anonymous_rate=ANONYMOUS_RATE, key_rate=KEY_RATE)) as client:
        brand_id, brand_key = await client.brand()
        product = await client.product(brand_key, brand_id)
        yield Setup(client, product["verificationCode"], product["id"], brand_key)


async def test_anonymous_calls_are_limited_after_the_burst_and_recover(setup: Setup) -> None:
    for _ in range(ANONYMOUS_RATE.burst):
        response = await setup.verify()
        assert response.status_code == 200
        assert "errors" not in response.json()
    refused = await setup.verify()
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "1"
    body = refused.json()
    assert body["data"] is None
    assert codes(body) == ["RATE_LIMITED"]
    retry_after = body["errors"][0]["extensions"]["retryAfter"]
    assert 0 < retry_after <= 1
    assert await setup.scans() == ANONYMOUS_RATE.burst
    await asyncio.sleep(retry_after)
    recovered = await setup.verify()
    assert recovered.status_code == 200
    assert "errors" not in recovered.json()
    assert await setup.scans() == ANONYMOUS_RATE.burst + 1


async def test_each_aliased_call_takes_a_token(setup: Setup) -> None:
    twice = """mutation($code: String!) {
        a: verifyProduct(code: $code) { result }
        b: verifyProduct(code: $code) { result }
    }"""
    assert (await setup.client.post(twice, {"code": setup.code})).status_code == 200
    assert (await setup.verify()).status_code == 200
    assert (await setup.client.post(twice, {"code": setup.code})).status_code == 429
    too_many = (
        "mutation($c: String!) { "
        + " ".join(
            f'c{i}: claimProduct(code: $c, deviceFingerprint: "d") {{ claimedAt }}'
            for i in range(4)
        )
        + " }"
    )
    body = (await setup.client.post(too_many, {"c": setup.code})).json()
    assert codes(body) == ["RATE_LIMITED"]
    assert "retryAfter" not in body["errors"][0]["extensions"]


async def test_queries_and_other_mutations_are_not_limited(setup: Setup) -> None:
    for _ in range(ANONYMOUS_RATE.burst + 2):
        body = (
            await setup.client.post(
                "query($c: String!) { verification(code: $c) { result } }", {"c": setup.code}
            )
        ).json()
        assert "errors" not in body


async def test_each_client_address_has_its_own_bucket(setup: Setup) -> None:
    for _ in range(ANONYMOUS_RATE.burst):
        await setup.verify()
    assert (await setup.verify()).status_code == 429
    async with setup.client.at("198.51.100.9") as other:
        assert (await other.post(VERIFY, {"code": setup.code})).status_code == 200


async def test_keys_have_their_own_higher_limit_and_admin_none(setup: Setup) -> None:
    for _ in range(ANONYMOUS_RATE.burst):
        await setup.verify()
    assert (await setup.verify()).status_code == 429
    for _ in range(KEY_RATE.burst):
        assert (await setup.verify(key=setup.brand_key)).status_code == 200
    assert (await setup.verify(key=setup.brand_key)).status_code == 429
    for _ in range(KEY_RATE.burst + 2):
        assert (await setup.verify(key=ADMIN_KEY)).status_code == 200


async def test_off_means_unlimited() -> None:
    async with serve(Limits(anonymous_rate=None)) as client:
        brand_id, brand_key = await client.brand()
        product = await client.product(brand_key, brand_id)
        for _ in range(25):
            body = (await client.post(VERIFY, {"code": product["verificationCode"]})).json()
            assert "errors" not in body


def test_the_limited_mutations_exist() -> None:
    """Renaming one must not silently lift its limit."""
    mutations = schema.get_type_by_name("Mutation")
    names = {schema.config.name_converter.get_graphql_name(f) for f in mutations.fields}  # type: ignore[union-attr]
    assert names >= PUBLIC_MUTATIONS


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_bucket_refills_at_the_rate_up_to_the_burst() -> None:
    clock = Clock()
    limiter = RateLimiter(Rate(per_minute=60, burst=2), None, clock=clock)
    limiter.check(ANONYMOUS, "192.0.2.1", 2)
    with pytest.raises(RateLimited) as refused:
        limiter.check(ANONYMOUS, "192.0.2.1", 1)
    assert refused.value.extensions["retryAfter"] == 1.0
    clock.now += 0.5
    with pytest.raises(RateLimited) as refused:
        limiter.check(ANONYMOUS, "192.0.2.1", 1)
    assert refused.value.extensions["retryAfter"] == 0.5
    clock.now += 0.5
    limiter.check(ANONYMOUS, "192.0.2.1", 1)
    clock.now += 3600
    limiter.check(ANONYMOUS, "192.0.2.1", 2)
    with pytest.raises(RateLimited):
        limiter.check(ANONYMOUS, "192.0.2.1", 1)


def test_in_process_callers_and_the_admin_are_not_limited() -> None:
    limiter = RateLimiter(Rate(per_minute=1, burst=1), Rate(per_minute=1, burst=1), clock=Clock())
    brand = Principal(Role.BRAND, "brand", "key")
    for _ in range(3):
        limiter.check(ANONYMOUS, None, 1)
        limiter.check(brand, None, 1)
        limiter.check(Principal(Role.ADMIN), "192.0.2.1", 1)


def test_buckets_are_bounded() -> None:
    clock = Clock()
    limiter = RateLimiter(Rate(per_minute=1, burst=1), None, clock=clock, max_buckets=2)
    for address in ("192.0.2.1", "192.0.2.2", "192.0.2.3"):
        limiter.check(ANONYMOUS, address, 1)
    # The oldest bucket was dropped, so its debt is forgiven; the others keep theirs.
    limiter.check(ANONYMOUS, "192.0.2.1", 1)
    with pytest.raises(RateLimited):
        limiter.check(ANONYMOUS, "192.0.2.3", 1)
