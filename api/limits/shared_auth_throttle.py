"""The failed-auth throttle shared by every gateway process through Redis.

``AuthThrottle``'s buckets (``api.limits.auth_throttle``), kept in Redis and
moved by the rate limiter's Lua script (``TOKEN_BUCKET``), so an address
that spreads its guesses over ``--workers`` processes or hosts spends one
bucket. The check only reads (``REMAINING``): a request with a right key
writes nothing to Redis. A bucket expires once full again, which bounds what
Redis holds to the addresses that failed recently. While Redis is
unreachable each process falls back to its own buckets, as the rate limits do.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from api.limits.auth_throttle import AuthThrottle, too_many_failures
from api.limits.shared_ratelimit import TOKEN_BUCKET, redis_client
from api.settings.limits import Rate

__all__ = ["KEY_PREFIX", "REMAINING", "SharedAuthThrottle"]

KEY_PREFIX = "authfail:"
"""After the deployment's Redis prefix (``PROOFGATE_REDIS_PREFIX``)."""

REMAINING = """
local burst = tonumber(ARGV[1])
local per_second = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
local tokens = tonumber(state[1])
local updated = tonumber(state[2])
if tokens == nil or updated == nil then
    return string.format('%.17g', burst)
end
if now > updated then
    tokens = math.min(burst, tokens + (now - updated) * per_second)
end
return string.format('%.17g', tokens)
"""
"""KEYS[1]: the bucket; ARGV: burst, tokens per second, now. The tokens left, read only."""


class SharedAuthThrottle:
    def __init__(
        self,
        rate: Rate | None,
        url: str,
        *,
        prefix: str = "proofgate:",
        clock: Callable[[], float] = time.time,
        on_outage: Callable[[], None] | None = None,
    ) -> None:
        self.rate = rate
        self.local = AuthThrottle(rate)
        self._keys = prefix + KEY_PREFIX
        self._clock = clock
        self._on_outage = on_outage
        self._redis: Redis = redis_client(url)
        self._take = self._redis.register_script(TOKEN_BUCKET)
        self._remaining = self._redis.register_script(REMAINING)
        self._reachable = True

    async def check(self, client: str | None) -> None:
        rate = self.rate
        if rate is None or client is None:
            return
        try:
            tokens = float(
                await self._remaining(
                    keys=[self._keys + client],
                    args=[rate.burst, repr(rate.per_second), repr(self._clock())],
                )
            )
        except (RedisError, OSError):
            self._fall_back()
            self.local.check(client)
            return
        self._reachable = True
        if tokens < 1:
            raise too_many_failures(rate, tokens)

    async def failed(self, client: str | None) -> None:
        rate = self.rate
        if rate is None or client is None:
            return
        try:
            await self._take(
                keys=[self._keys + client],
                args=[rate.burst, repr(rate.per_second), 1, repr(self._clock())],
            )
        except (RedisError, OSError):
            self._fall_back()
            self.local.failed(client)

    def _fall_back(self) -> None:
        if self._reachable and self._on_outage is not None:
            self._on_outage()
        self._reachable = False

    async def close(self) -> None:
        await self._redis.aclose()
