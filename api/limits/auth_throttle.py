"""Failed authentications, throttled per client address.

A key is too long to guess, but each wrong one still costs a storage read,
and nothing should let a client try keys (the admin key above all) as fast as
it can send them. Each failed authentication takes a token from the client
address's bucket; with none left, every request of that address that carries
a key is refused with RATE_LIMITED before the key is looked at, so neither
the answer nor its timing says whether a key was right. Requests without a
key are not affected (docs/design.md, Limits and cost).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from api.settings.limits import AUTH_FAILURE_RATE, Rate
from domain.errors import RateLimited

__all__ = [
    "AuthThrottle",
    "InProcessThrottle",
    "too_many_failures",
]

MAX_ADDRESSES = 100_000
"""Addresses remembered at once (least recently failed dropped first)."""


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class AuthThrottle:
    def __init__(
        self,
        rate: Rate | None = AUTH_FAILURE_RATE,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_buckets: int = MAX_ADDRESSES,
    ) -> None:
        self.rate = rate
        self._clock = clock
        self._max_buckets = max_buckets
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def check(self, client: str | None) -> None:
        """Raises RATE_LIMITED (with ``retryAfter``) while ``client`` has no
        failures left to spend."""
        bucket = self._bucket(client, create=False)
        rate = self.rate
        if bucket is not None and rate is not None and bucket.tokens < 1:
            raise too_many_failures(rate, bucket.tokens)

    def failed(self, client: str | None) -> None:
        bucket = self._bucket(client, create=True)
        if bucket is not None:
            bucket.tokens = max(0.0, bucket.tokens - 1)

    def _bucket(self, client: str | None, *, create: bool) -> _Bucket | None:
        """Only an address that failed has a bucket."""
        rate = self.rate
        if rate is None or client is None:
            return None
        now = self._clock()
        bucket = self._buckets.get(client)
        if bucket is None:
            if not create:
                return None
            bucket = self._buckets[client] = _Bucket(float(rate.burst), now)
            if len(self._buckets) > self._max_buckets:
                self._buckets.popitem(last=False)
            return bucket
        self._buckets.move_to_end(client)
        refilled = bucket.tokens + (now - bucket.updated) * rate.per_second
        bucket.tokens = min(float(rate.burst), refilled)
        bucket.updated = now
        return bucket


class InProcessThrottle:
    """``AuthThrottle`` as the routes' ``FailedAuthThrottle`` (``api/http/authentication.py``)."""

    def __init__(self, throttle: AuthThrottle) -> None:
        self.local = throttle

    async def check(self, client: str | None) -> None:
        self.local.check(client)

    async def failed(self, client: str | None) -> None:
        self.local.failed(client)

    async def close(self) -> None:
        """Nothing held outside the process."""


def too_many_failures(rate: Rate, tokens: float) -> RateLimited:
    wait = math.ceil((1 - tokens) / rate.per_second * 1000) / 1000
    return RateLimited(
        "Too many wrong API keys from this address",
        hint=f"Retry after {wait} seconds with a valid key; requests without one go on.",
        retryAfter=wait,
    )
