"""What an anonymous APQ flood can write to a real redis-server: only
documents that parsed, validated and passed trusted documents, within
``SHARED_MAX_BYTES`` and ``SHARED_MAX_ENTRIES`` (issue 27, row 3)."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _limits import Client, serve
from redis.asyncio import Redis

from api.operations.shared_persisted import (
    BYTES_KEY,
    KEY_PREFIX,
    SHARED_MAX_BYTES,
    SHARED_MAX_QUERY_BYTES,
)
from api.settings.operations import OperationSettings, TrustedDocuments
from services.pipeline.settings import PipelineSettings
from tests._support.redis_server import RedisServer

PREFIX = "proofgate:"
PADDING = "#" + "x" * (SHARED_MAX_QUERY_BYTES - 200) + "\n"
"""A comment: it takes bytes but no tokens, as a hostile text would."""


def _apq(query: str) -> dict[str, Any]:
    digest = hashlib.sha256(query.encode()).hexdigest()
    return {"query": query, "extensions": {"persistedQuery": {"version": 1, "sha256Hash": digest}}}


async def _register(gateway: Client, query: str) -> dict[str, Any]:
    answer = await gateway.http.post("/graphql", json=_apq(query))
    body: dict[str, Any] = answer.json()
    return body


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_server.url)
    try:
        yield client
    finally:
        await client.aclose()


async def _texts(redis: Redis) -> list[bytes]:
    return [key async for key in redis.scan_iter(match=PREFIX + KEY_PREFIX + "*")]


async def test_row3_refused_documents_are_never_written(
    redis_server: RedisServer, redis: Redis
) -> None:
    pipeline = PipelineSettings(redis_url=redis_server.url)
    async with serve(pipeline=pipeline) as gateway:
        for n in range(5):
            broken = await _register(gateway, f"{PADDING}{{ health {{ status }} n{n}")
            invalid = await _register(gateway, f"{PADDING}{{ health {{ nope{n} }} }}")
            assert broken["errors"] and invalid["errors"]
        assert await _texts(redis) == []
        ok = await _register(gateway, "query Fine { health { status } }")
        assert ok["data"]["health"]["status"]
        assert len(await _texts(redis)) == 1
    enforce = OperationSettings(trusted_documents=TrustedDocuments.ENFORCE)
    async with serve(pipeline=pipeline, operations=enforce) as gateway:
        refused = await _register(gateway, "query Untrusted { health { status } }")
        assert refused["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_ALLOWED"
        assert len(await _texts(redis)) == 1


async def test_row3_redis_memory_is_bounded_under_an_anonymous_flood(
    redis_server: RedisServer, redis: Redis
) -> None:
    """Valid documents of 64 KB each, 1.25 times the byte bound: Redis keeps
    the newest within the bound, and its memory grows by no more."""
    pipeline = PipelineSettings(redis_url=redis_server.url)
    flood = SHARED_MAX_BYTES * 5 // 4 // len(PADDING)
    before = (await redis.info("memory"))["used_memory"]
    async with serve(pipeline=pipeline) as gateway:
        last = ""
        for n in range(flood):
            last = f"{PADDING}query Flood{n} {{ health {{ status }} }}"
            assert "errors" not in await _register(gateway, last)
    grown = (await redis.info("memory"))["used_memory"] - before
    stored = int(await redis.get(PREFIX + BYTES_KEY) or 0)
    sizes = [await redis.strlen(key) for key in await _texts(redis)]
    assert stored == sum(sizes) <= SHARED_MAX_BYTES
    assert len(sizes) < flood
    assert grown < SHARED_MAX_BYTES * 1.25, grown
    newest = PREFIX + KEY_PREFIX + hashlib.sha256(last.encode()).hexdigest()
    assert await redis.get(newest) == last.encode()


async def test_one_text_is_bounded_in_bytes_not_characters(
    redis_server: RedisServer, redis: Redis
) -> None:
    """A comment of four-byte characters under the bound in characters and
    over it in bytes is not written; the same count of ASCII is (the control)."""
    pipeline = PipelineSettings(redis_url=redis_server.url)
    count = SHARED_MAX_QUERY_BYTES // 2
    wide = "#" + "\U0001f600" * count + "\nquery Wide { health { status } }"
    narrow = "#" + "x" * count + "\nquery Narrow { health { status } }"
    assert len(wide) < SHARED_MAX_QUERY_BYTES < len(wide.encode())
    async with serve(pipeline=pipeline) as gateway:
        assert "errors" not in await _register(gateway, wide)
        assert await _texts(redis) == []
        assert "errors" not in await _register(gateway, narrow)
        assert len(await _texts(redis)) == 1
