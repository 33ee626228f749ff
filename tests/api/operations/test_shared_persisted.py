"""Automatic persisted queries shared through a real redis-server: a query
registered on A runs by its hash alone on B."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from _live import Gateway
from redis.asyncio import Redis

from api.operations.shared_persisted import KEY_PREFIX
from tests._support.redis_server import RedisServer

pytestmark = pytest.mark.slow

QUERY = "query Shared { health { status } }"
PLANTED = "query Planted { health { version } }"


def _persisted(query: str) -> dict[str, Any]:
    return {
        "persistedQuery": {"version": 1, "sha256Hash": hashlib.sha256(query.encode()).hexdigest()}
    }


async def test_a_query_registered_on_one_process_runs_by_hash_on_another(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    env = {"PROOFGATE_REDIS_URL": redis_server.url}
    a = await Gateway(tmp_path, **env).start()
    b = await Gateway(tmp_path, **env).start()
    client = Redis.from_url(redis_server.url)
    try:
        unknown = await b.client.post("/graphql", json={"extensions": _persisted(QUERY)})
        assert unknown.json()["errors"][0]["message"] == "PersistedQueryNotFound"
        registered = await a.client.post(
            "/graphql", json={"query": QUERY, "extensions": _persisted(QUERY)}
        )
        assert registered.json()["data"]["health"]["status"]
        by_hash = await b.client.post("/graphql", json={"extensions": _persisted(QUERY)})
        assert by_hash.json()["data"]["health"]["status"]
        # A text stored under another query's hash is never run.
        planted_hash = _persisted(PLANTED)["persistedQuery"]["sha256Hash"]
        await client.set("proofgate:" + KEY_PREFIX + planted_hash, QUERY)
        planted = await b.client.post("/graphql", json={"extensions": _persisted(PLANTED)})
        assert planted.json()["errors"][0]["message"] == "PersistedQueryNotFound"
    finally:
        await client.aclose()
        await a.stop()
        await b.stop()
