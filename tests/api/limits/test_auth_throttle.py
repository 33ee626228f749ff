"""Wrong keys are throttled per client address (docs/design.md, Limits and cost)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _asgi import ADMIN_KEY, codes, connect, serving

from api.limits.auth_throttle import AuthThrottle
from api.settings.limits import Rate
from domain.errors import RateLimited

HEALTH = "{ health { status } }"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_failures_spend_an_addresses_burst_and_refill_at_the_rate() -> None:
    clock = Clock()
    throttle = AuthThrottle(Rate(per_minute=60, burst=3), clock=clock)
    for _ in range(3):
        throttle.check("10.0.0.1")
        throttle.failed("10.0.0.1")
    with pytest.raises(RateLimited) as refused:
        throttle.check("10.0.0.1")
    assert refused.value.extensions["retryAfter"] == 1.0
    throttle.check("10.0.0.2")
    clock.now += 1
    throttle.check("10.0.0.1")


def test_no_rate_and_no_address_are_never_throttled() -> None:
    for throttle, client in ((AuthThrottle(None), "10.0.0.1"), (AuthThrottle(), None)):
        for _ in range(100):
            throttle.failed(client)
        throttle.check(client)


async def test_wrong_keys_are_throttled_before_they_are_read(tmp_path: Path) -> None:
    """After the burst, a key from that address is refused unread, the right
    admin key too (else the throttle would tell a right guess from a wrong
    one); callers without a key, and other addresses, are not affected."""
    async with serving(
        tmp_path, PROOFGATE_AUTH_FAILURE_LIMIT="6", PROOFGATE_AUTH_FAILURE_BURST="3"
    ) as gateway:
        assert (await gateway.post(HEALTH, key=ADMIN_KEY)).status_code == 200
        for attempt in range(3):
            wrong = await gateway.post(HEALTH, key=f"wrong-admin-key-{attempt:04}")
            assert (wrong.status_code, codes(wrong.json())) == (401, ["UNAUTHENTICATED"])
        for key in ("wrong-admin-key-9999", ADMIN_KEY):
            refused = await gateway.post(HEALTH, key=key)
            assert (refused.status_code, codes(refused.json())) == (429, ["RATE_LIMITED"])
            assert 1 <= int(refused.headers["Retry-After"]) <= 10
        metrics = await gateway.http.get(
            "/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"}
        )
        assert metrics.status_code == 429
        assert (await gateway.post(HEALTH)).status_code == 200
        async with connect(gateway.app, ("10.0.0.2", 5000)) as elsewhere:
            answer = await elsewhere.post(
                "/graphql", json={"query": HEALTH}, headers={"Authorization": f"Bearer {ADMIN_KEY}"}
            )
            assert answer.status_code == 200
