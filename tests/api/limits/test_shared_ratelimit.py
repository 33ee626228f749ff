"""Rate limits shared through a real redis-server: the Lua bucket against the
in-process one, the fall-back when Redis is gone, and two gateway processes
limiting one client at the configured rate, not twice it."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest
from _live import VERIFY, Gateway

from api.limits.ratelimit import RateLimiter
from api.limits.shared_ratelimit import SharedRateLimiter
from api.settings.limits import Rate
from domain.errors import RateLimited
from services.auth import ANONYMOUS, Principal, Role
from tests._support.ports import free_port
from tests._support.redis_server import RedisServer

RATE = Rate(per_minute=120, burst=4)


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


async def _outcome_shared(limiter: SharedRateLimiter, principal: Principal, calls: int) -> object:
    try:
        await limiter.check(principal, "192.0.2.7", calls)
    except RateLimited as error:
        return error.extensions["retryAfter"]
    return "ok"


def _outcome_local(limiter: RateLimiter, principal: Principal, calls: int) -> object:
    try:
        limiter.check(principal, "192.0.2.7", calls)
    except RateLimited as error:
        return error.extensions["retryAfter"]
    return "ok"


async def test_the_lua_bucket_decides_what_the_in_process_bucket_decides(
    redis_server: RedisServer,
) -> None:
    """The same random calls and clock steps through both; every answer, and
    every retryAfter, agrees."""
    clock = Clock()
    shared = SharedRateLimiter(RATE, Rate(per_minute=60, burst=2), redis_server.url, clock=clock)
    local = RateLimiter(RATE, Rate(per_minute=60, burst=2), clock=clock)
    brand = Principal(Role.BRAND, "brand", "key-hash")
    randomness = random.Random(14)
    refused = 0
    try:
        for _ in range(400):
            clock.now += randomness.choice([0.0, 0.0, 0.05, 0.3, 1.0, 7.5])
            principal = randomness.choice([ANONYMOUS, brand])
            calls = randomness.randint(1, 2)
            expected = _outcome_local(local, principal, calls)
            assert await _outcome_shared(shared, principal, calls) == expected
            refused += expected != "ok"
        assert 50 < refused < 350
        assert shared.outages == 0
    finally:
        await shared.close()


async def test_without_redis_each_process_limits_on_its_own() -> None:
    shared = SharedRateLimiter(RATE, None, f"redis://127.0.0.1:{free_port()}/0")
    try:
        for _ in range(RATE.burst):
            await shared.check(ANONYMOUS, "192.0.2.8", 1)
        with pytest.raises(RateLimited):
            await shared.check(ANONYMOUS, "192.0.2.8", 1)
        assert shared.outages == 1
    finally:
        await shared.close()


async def test_two_deployments_with_their_own_prefix_share_no_bucket(
    redis_server: RedisServer,
) -> None:
    """PROOFGATE_REDIS_PREFIX: one Redis, two deployments, two sets of buckets."""
    clock = Clock()
    one = SharedRateLimiter(RATE, None, redis_server.url, clock=clock, prefix="one:")
    two = SharedRateLimiter(RATE, None, redis_server.url, clock=clock, prefix="two:")
    also_one = SharedRateLimiter(RATE, None, redis_server.url, clock=clock, prefix="one:")
    try:
        for _ in range(RATE.burst):
            await one.check(ANONYMOUS, "192.0.2.9", 1)
        with pytest.raises(RateLimited):
            await also_one.check(ANONYMOUS, "192.0.2.9", 1)
        await two.check(ANONYMOUS, "192.0.2.9", 1)
        assert one.outages == two.outages == 0
    finally:
        for limiter in (one, two, also_one):
            await limiter.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("per_minute", "burst", "seconds"),
    [(600, 10, 4.0), (60, 5, 15.0)],
    ids=["600-per-minute", "60-per-minute"],
)
async def test_a_client_alternating_between_two_processes_gets_the_rate_once(
    tmp_path: Path, redis_server: RedisServer, per_minute: int, burst: int, seconds: float
) -> None:
    """One address alternating between A and B as fast as it can: what one
    bucket of ``burst`` refilled at the rate allows for these requests'
    times succeeds, within 10%; per process it would be twice that. The
    60/min case is the issue's bar (issue 14). The bucket is replayed over
    the times the requests were sent rather than taken as ``burst`` plus the
    rate over the whole run: on a loaded machine a request may stall for
    over a second, while the bucket, full, drops what it would have refilled."""
    env = {
        "PROOFGATE_REDIS_URL": redis_server.url,
        "PROOFGATE_RATE_LIMIT": str(per_minute),
        "PROOFGATE_RATE_BURST": str(burst),
    }
    a = await Gateway(tmp_path, **env).start()
    b = await Gateway(tmp_path, **env).start()
    try:
        allowed = {"a": 0, "b": 0}
        refused = 0
        started = time.monotonic()
        index = 0
        sent: list[float] = []
        while time.monotonic() - started < seconds:
            name, gateway = (("a", a), ("b", b))[index % 2]
            index += 1
            sent.append(time.monotonic())
            response = await gateway.client.post(
                "/graphql", json={"query": VERIFY, "variables": {"code": "no-such-code"}}
            )
            if response.status_code == 429:
                refused += 1
            else:
                assert response.status_code == 200, response.text
                allowed[name] += 1
            await asyncio.sleep(0.01)
        expected = _one_bucket_allows(sent, per_minute, burst)
        total = allowed["a"] + allowed["b"]
        assert refused > 0
        assert allowed["a"] > 0 and allowed["b"] > 0, "both processes answered"
        assert abs(total - expected) <= 0.1 * expected, (allowed, expected, refused)
    finally:
        await a.stop()
        await b.stop()


def _one_bucket_allows(sent: list[float], per_minute: int, burst: int) -> int:
    """Requests sent at ``sent`` that one token bucket admits: ``burst`` at
    first, refilled at ``per_minute`` and never past ``burst``."""
    tokens, last, allowed = float(burst), sent[0], 0
    for moment in sent:
        tokens = min(float(burst), tokens + (moment - last) * per_minute / 60)
        last = moment
        if tokens >= 1:
            tokens -= 1
            allowed += 1
    return allowed
