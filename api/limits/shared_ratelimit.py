"""Rate limits shared by every gateway process through Redis.

The same token buckets as ``api.limits.ratelimit``, kept in Redis and moved by one
Lua script, so taking tokens is atomic however many processes a client
spreads its calls over. A bucket key expires once it would be full again
(a full bucket and no bucket are the same), which bounds what Redis holds.
The caller's clock is passed in, not Redis's, so the script computes what
``RateLimiter`` computes (a differential test holds them together); a
process whose clock is behind never refills anyone's bucket backwards.

While Redis is unreachable each process falls back to its own buckets,
logged once per outage: limits loosen to N times the rate, they never stop
the API.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from api.limits.ratelimit import RateLimit, RateLimiter, check_batch, too_many
from api.settings.limits import Rate
from domain.errors import RateLimited
from services.auth import Principal

__all__ = [
    "KEY_PREFIX",
    "TOKEN_BUCKET",
    "SharedRateLimit",
    "SharedRateLimiter",
    "redis_client",
]

logger = logging.getLogger("proofgate.limits")

KEY_PREFIX = "rate:"
"""After the deployment's Redis prefix (``PROOFGATE_REDIS_PREFIX``)."""
_TIMEOUT_SECONDS = 0.5

TOKEN_BUCKET = """
local burst = tonumber(ARGV[1])
local per_second = tonumber(ARGV[2])
local calls = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
local tokens = tonumber(state[1])
local updated = tonumber(state[2])
if tokens == nil or updated == nil then
    tokens = burst
    updated = now
end
if now > updated then
    tokens = math.min(burst, tokens + (now - updated) * per_second)
    updated = now
end
local allowed = 0
if tokens >= calls then
    tokens = tokens - calls
    allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens),
           'updated', string.format('%.17g', updated))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / per_second * 1000) + 1000)
return {allowed, string.format('%.17g', tokens)}
"""
"""KEYS[1]: the bucket; ARGV: burst, tokens per second, calls, now (seconds).
Returns whether the calls were allowed and the tokens left."""


def redis_client(url: str) -> Redis:
    """A client for the limits' Redis: short timeouts and no retries, so an
    unreachable Redis costs a request half a second once, then the fallback."""
    return Redis.from_url(
        url,
        retry=Retry(NoBackoff(), 0),
        socket_connect_timeout=_TIMEOUT_SECONDS,
        socket_timeout=_TIMEOUT_SECONDS,
    )


class SharedRateLimiter:
    def __init__(
        self,
        anonymous: Rate | None,
        keyed: Rate | None,
        url: str,
        *,
        clock: Callable[[], float] = time.time,
        on_outage: Callable[[], None] | None = None,
        prefix: str = "proofgate:",
    ) -> None:
        self.local = RateLimiter(anonymous, keyed)
        self._keys = prefix + KEY_PREFIX
        """The per-process buckets used while Redis is unreachable."""
        self._clock = clock
        self._on_outage = on_outage
        self._redis = redis_client(url)
        self._script = self._redis.register_script(TOKEN_BUCKET)
        self._reachable = True
        self.outages = 0

    async def check(self, principal: Principal, client: str | None, calls: int) -> None:
        chosen = self.local.bucket(principal, client)
        if chosen is None:
            return
        rate, key = chosen
        check_batch(rate, calls)
        try:
            allowed, tokens = await self._script(
                keys=[self._keys + key],
                args=[rate.burst, repr(rate.per_second), calls, repr(self._clock())],
            )
        except (RedisError, OSError) as error:
            self._fall_back(error)
            self.local.check(principal, client, calls)
            return
        if not self._reachable:
            logger.warning("Redis is reachable again; rate limits are shared")
            self._reachable = True
        if not int(allowed):
            raise too_many(rate, calls, float(tokens))

    def _fall_back(self, error: BaseException) -> None:
        if not self._reachable:
            return
        self._reachable = False
        self.outages += 1
        if self._on_outage is not None:
            self._on_outage()
        logger.warning(
            "Redis unreachable (%s: %s); rate limits are counted per process until it is back",
            type(error).__name__,
            error,
        )

    async def close(self) -> None:
        await self._redis.aclose()


class SharedRateLimit(RateLimit):
    """``RateLimit`` with the buckets in Redis; Strawberry awaits this hook."""

    def __init__(self, limiter: SharedRateLimiter) -> None:
        super().__init__(limiter.local)
        self.shared = limiter

    async def on_execute(self) -> None:  # type: ignore[override]
        calls = self._calls()
        if calls is not None:
            try:
                await self.shared.check(*calls)
            except RateLimited as error:
                self._refuse(error)
