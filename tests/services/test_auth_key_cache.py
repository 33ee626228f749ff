"""KeyCache: one consistent read of a busy key per ttl, never a revoked key
accepted after its revocation returned in this process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from domain.errors import Unauthenticated
from domain.identifiers import hash_api_key
from services.auth import KeyCache, Principal, Role, authenticate
from storage import Key, Put, Storage, Update
from storage.access_patterns import API_KEY_BY_HASH
from storage.sqlite import open_sqlite

CURSOR_KEY = bytes(range(32))
ADMIN = hash_api_key("admin-key-for-the-test")
TTL = timedelta(milliseconds=100)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Counting:
    """The store, counting AP20 reads."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self.reads = 0

    async def get(self, ap: Any, /, **params: Any) -> Any:
        self.reads += ap is API_KEY_BY_HASH
        return await self._storage.get(ap, **params)


@pytest.fixture
async def storage() -> AsyncIterator[Storage]:
    store = await open_sqlite(":memory:", cursor_key=CURSOR_KEY)
    yield store
    await store.close()


async def _key(storage: Storage, secret: str) -> Key:
    key_hash = hash_api_key(secret)
    key = API_KEY_BY_HASH.key(key_hash=key_hash)
    await storage.transact_write(
        [Put({"PK": key.pk, "SK": key.sk, "id": key_hash, "role": "BRAND", "brandId": "b1"})]
    )
    return key


async def test_a_busy_key_is_read_once_per_ttl(storage: Storage) -> None:
    await _key(storage, "brand-key-1")
    clock, counting = Clock(), Counting(storage)
    keys = KeyCache(TTL, clock=clock)

    for _ in range(50):
        principal = await authenticate(counting, "Bearer brand-key-1", ADMIN, keys)  # type: ignore[arg-type]
    assert principal == Principal(Role.BRAND, "b1", hash_api_key("brand-key-1"))
    assert counting.reads == 1
    clock.now += TTL.total_seconds()
    await authenticate(counting, "Bearer brand-key-1", ADMIN, keys)  # type: ignore[arg-type]
    assert counting.reads == 2
    # Without a cache, every request reads: the positive control.
    for _ in range(3):
        await authenticate(counting, "Bearer brand-key-1", ADMIN)  # type: ignore[arg-type]
    assert counting.reads == 5


async def test_a_key_revoked_here_is_refused_at_once(storage: Storage) -> None:
    key = await _key(storage, "brand-key-2")
    keys = KeyCache(TTL, clock=Clock())
    await authenticate(storage, "Bearer brand-key-2", ADMIN, keys)

    await storage.transact_write([Update(key, set={"revokedAt": "2026-01-01T00:00:00Z"})])
    keys.forget(hash_api_key("brand-key-2"))

    with pytest.raises(Unauthenticated):
        await authenticate(storage, "Bearer brand-key-2", ADMIN, keys)


async def test_a_key_revoked_elsewhere_is_refused_here_once_its_entry_is_ttl_old(
    storage: Storage,
) -> None:
    """The contract across processes (tests/api/test_key_revocation.py runs
    two): B, whose cache is not told, accepts the key from its cache with no
    read until the entry is ``ttl`` old by the cache's own clock, then reads
    it again and refuses it."""
    key = await _key(storage, "brand-key-3")
    clock, counting = Clock(), Counting(storage)
    here, there = KeyCache(TTL, clock=clock), KeyCache(TTL, clock=clock)
    for keys in (here, there):
        await authenticate(counting, "Bearer brand-key-3", ADMIN, keys)  # type: ignore[arg-type]
    assert counting.reads == 2

    await storage.transact_write([Update(key, set={"revokedAt": "2026-01-01T00:00:00Z"})])
    here.forget(hash_api_key("brand-key-3"))
    with pytest.raises(Unauthenticated):
        await authenticate(counting, "Bearer brand-key-3", ADMIN, here)  # type: ignore[arg-type]
    assert counting.reads == 3

    clock.now += TTL.total_seconds() - 0.001
    stale = await authenticate(counting, "Bearer brand-key-3", ADMIN, there)  # type: ignore[arg-type]
    assert (stale.role, counting.reads) == (Role.BRAND, 3)
    clock.now += 0.001
    with pytest.raises(Unauthenticated):
        await authenticate(counting, "Bearer brand-key-3", ADMIN, there)  # type: ignore[arg-type]
    assert counting.reads == 4


def test_a_read_begun_before_a_revocation_does_not_put_its_key_back() -> None:
    clock = Clock()
    keys = KeyCache(TTL, clock=clock)
    principal = Principal(Role.BRAND, "b1", "hash")
    read_at = clock()
    keys.forget("hash")  # the revocation commits while the read is in flight
    keys.put("hash", principal, read_at)
    assert keys.get("hash") is None
    clock.now += 0.001
    keys.put("hash", principal, clock())  # a read begun after it: kept
    assert keys.get("hash") == principal


def test_the_cache_is_bounded_and_off_at_zero() -> None:
    clock = Clock()
    keys = KeyCache(TTL, entries=3, clock=clock)
    for n in range(5):
        keys.put(f"k{n}", Principal(Role.BRAND, "b", f"k{n}"), clock())
    assert [keys.get(f"k{n}") is not None for n in range(5)] == [False, False, True, True, True]
    off = KeyCache(timedelta(0), clock=clock)
    off.put("k", Principal(Role.BRAND, "b", "k"), clock())
    assert off.get("k") is None
