"""threatAlerts over HTTP streams (SSE and multipart) against a real ``proofgate serve``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from _asgi import answer as without_extensions
from _live import SUBSCRIBE, Gateway

pytestmark = pytest.mark.slow

SSE = "text/event-stream"
MULTIPART = 'multipart/mixed;subscriptionSpec="1.0",application/json'
_PART = re.compile(rb"Content-Length: (\d+)\r\n\r\n")


@pytest.fixture(scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Gateway]:
    served = await Gateway(
        tmp_path_factory.mktemp("streams"), PROOFGATE_SUBSCRIPTIONS_PER_KEY="2"
    ).start()
    yield served
    await served.stop()


class Stream:
    """One streamed response, read event by event (SSE) or part by part (multipart)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.chunks = response.aiter_bytes()
        self.buffer = b""
        self.heartbeats = 0

    async def _more(self, deadline: float) -> None:
        chunk = await asyncio.wait_for(anext(self.chunks), max(0.01, deadline - time.monotonic()))
        self.buffer += chunk

    async def event(self, timeout: float = 5) -> dict[str, str]:
        """The next SSE event's fields; heartbeat comments are counted. Lines
        end with ``\n`` alone, which every SSE parser splits (urql's needs it)."""
        deadline = time.monotonic() + timeout
        while True:
            while b"\n\n" not in self.buffer:
                await self._more(deadline)
            block, self.buffer = self.buffer.split(b"\n\n", 1)
            assert b"\r" not in block, block
            lines = block.decode().split("\n")
            if all(line.startswith(":") for line in lines):
                self.heartbeats += 1
                continue
            fields = (line.partition(":") for line in lines)
            return {name: value.removeprefix(" ") for name, _, value in fields}

    async def alert(self, timeout: float = 5) -> tuple[str, dict[str, Any]]:
        event = await self.event(timeout)
        assert event["event"] == "next", event
        alert: dict[str, Any] = json.loads(event["data"])["data"]["threatAlerts"]
        return event["id"], alert

    async def part(self, timeout: float = 5) -> dict[str, Any]:
        """The next multipart part's JSON; heartbeats (``{}``) are counted."""
        deadline = time.monotonic() + timeout
        while True:
            while (match := _PART.search(self.buffer)) is None or (
                len(self.buffer) < match.end() + int(match.group(1))
            ):
                await self._more(deadline)
            end = match.end() + int(match.group(1))
            part: dict[str, Any] = json.loads(self.buffer[match.end() : end])
            self.buffer = self.buffer[end:]
            if part == {}:
                self.heartbeats += 1
                continue
            return part


@contextlib.asynccontextmanager
async def subscribed(
    gateway: Gateway,
    brand: str,
    key: str,
    accept: str = SSE,
    after: str | None = None,
    **headers: str,
) -> AsyncIterator[Stream]:
    body = {"query": SUBSCRIBE, "variables": {"brand": brand, "after": after}}
    sent = {"Authorization": f"Bearer {key}", "Accept": accept, **headers}
    async with (
        httpx.AsyncClient(base_url=gateway.url, timeout=10) as client,
        client.stream("POST", "/graphql", json=body, headers=sent) as response,
    ):
        assert response.status_code == 200
        yield Stream(response)


async def test_an_sse_stream_cut_after_3_of_10_alerts_resumes_with_last_event_id(
    gateway: Gateway,
) -> None:
    """The client subscribes after an alert it already has (so no alert can
    be raised before its subscription is registered), and re-sends the same
    request when it reconnects, as graphql-sse does, plus ``Last-Event-ID``."""
    brand, key, product, start = await gateway.brand_with_an_alert()
    async with subscribed(gateway, brand, key, after=start) as stream:
        for _ in range(5):
            await gateway.dispute(product)
        first = [await stream.alert() for _ in range(3)]
    for _ in range(5):  # two were on their way when the stream was cut, five raised since
        await gateway.dispute(product)
    resume = {"Last-Event-ID": first[-1][0]}
    async with subscribed(gateway, brand, key, after=start, **resume) as resumed:
        rest = [await resumed.alert() for _ in range(7)]
        stored = (await gateway.alerts(brand, key))[1:]
        assert len(stored) == 10
        assert [alert["id"] for _, alert in first + rest] == [alert["id"] for alert in stored]
        # Nothing else came between: the next event is the next alert raised.
        await gateway.dispute(product)
        _, sentinel = await resumed.alert()
        assert sentinel["id"] == (await gateway.alerts(brand, key))[-1]["id"]
    # Every event's id is its alert's cursor: resuming from the 10th resumes there.
    async with subscribed(gateway, brand, key, **{"Last-Event-ID": rest[-1][0]}) as again:
        _, replayed = await again.alert()
        assert replayed["id"] == sentinel["id"]


async def test_a_multipart_subscription_gets_heartbeats_and_alerts(gateway: Gateway) -> None:
    brand, key, product, start = await gateway.brand_with_an_alert()
    async with subscribed(gateway, brand, key, MULTIPART, after=start) as stream:
        assert stream.response.headers["content-type"].startswith("multipart/mixed")
        await gateway.dispute(product)
        part = await stream.part()
        alert = part["payload"]["data"]["threatAlerts"]
        assert alert["id"] == (await gateway.alerts(brand, key))[-1]["id"]
        assert stream.heartbeats >= 1  # the first part, before any alert
        with pytest.raises(TimeoutError):
            await stream.part(timeout=1)
        assert stream.heartbeats >= 2  # every 300 ms here (PROOFGATE_WS_KEEPALIVE_MS)


async def test_an_idle_sse_stream_gets_heartbeat_comments(gateway: Gateway) -> None:
    brand, key = await gateway.brand()
    async with subscribed(gateway, brand, key) as stream:
        with pytest.raises(TimeoutError):
            await stream.event(timeout=1)
        assert stream.heartbeats >= 2


async def test_a_revoked_keys_http_streams_end_with_the_reason(gateway: Gateway) -> None:
    brand, key, product, start = await gateway.brand_with_an_alert()
    created = await gateway.data(
        """mutation($b: ID!) {
            createApiKey(brandId: $b, name: "partner", role: PARTNER) { id apiKey }
        }""",
        {"b": brand},
        key,
    )
    partner = created["createApiKey"]
    async with (
        subscribed(gateway, brand, partner["apiKey"], after=start) as sse,
        subscribed(gateway, brand, partner["apiKey"], MULTIPART, after=start) as parts,
    ):
        await gateway.dispute(product)
        await sse.alert()
        assert "payload" in await parts.part()
        await gateway.data(
            """mutation($id: ID!) { revokeApiKey(id: $id) { id } }""", {"id": partner["id"]}, key
        )
        ended = await sse.event(timeout=3)
        assert ended["event"] == "next"
        (error,) = json.loads(ended["data"])["errors"]
        assert (error["message"], error["extensions"]["code"]) == (
            "API key revoked",
            "UNAUTHENTICATED",
        )
        assert (await sse.event())["event"] == "complete"
        transport_error = await parts.part(timeout=3)
        assert transport_error["payload"] is None
        assert transport_error["errors"][0]["message"] == "API key revoked"


async def test_http_streams_count_against_the_per_key_cap(gateway: Gateway) -> None:
    """Two subscriptions per key here; the third is refused until one ends."""
    brand, key, product, start = await gateway.brand_with_an_alert()
    async with (
        subscribed(gateway, brand, key, after=start) as one,
        subscribed(gateway, brand, key, MULTIPART, after=start) as two,
    ):
        await gateway.dispute(product)
        await one.alert()
        await two.part()
        async with subscribed(gateway, brand, key) as third:
            refused = await third.event()
            (error,) = json.loads(refused["data"])["errors"]
            assert error["extensions"]["code"] == "RATE_LIMITED"
            assert (await third.event())["event"] == "complete"
    # Both streams ended with their clients (the server counts none): a new one is served.
    await gateway.wait_for_subscriptions(0)
    async with subscribed(gateway, brand, key, after=start) as fourth:
        event = await fourth.event()
    assert "errors" not in event["data"], event


async def test_a_bad_last_event_id_is_refused(gateway: Gateway) -> None:
    brand, key = await gateway.brand()
    async with subscribed(gateway, brand, key, **{"Last-Event-ID": "not-a-cursor"}) as stream:
        refused = await stream.event()
        assert json.loads(refused["data"])["errors"][0]["extensions"]["code"] in (
            "INVALID_CURSOR",
            "BAD_USER_INPUT",
        )
        assert (await stream.event())["event"] == "complete"


async def test_a_subscription_without_a_streaming_accept_is_told_how(gateway: Gateway) -> None:
    brand, key = await gateway.brand()
    response = await gateway.client.post(
        "/graphql",
        json={"query": SUBSCRIBE, "variables": {"brand": brand}},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert "text/event-stream" in error["extensions"]["hint"]


async def test_a_query_over_sse_is_one_event_then_complete(gateway: Gateway) -> None:
    """As graphql-sse runs any operation: the prepared lane, which answers JSON,
    leaves a request for a stream to Strawberry's full path."""
    brand, key = await gateway.brand()
    query = "query($id: ID!) { brand(id: $id) { id } }"
    for _ in range(2):  # the second time the lane knows the document
        async with (
            httpx.AsyncClient(base_url=gateway.url, timeout=10) as client,
            client.stream(
                "POST",
                "/graphql",
                json={"query": query, "variables": {"id": brand}},
                headers={"Authorization": f"Bearer {key}", "Accept": SSE},
            ) as response,
        ):
            assert response.headers["content-type"].startswith(SSE)
            stream = Stream(response)
            answer = await stream.event()
            assert without_extensions(json.loads(answer["data"])) == {
                "data": {"brand": {"id": brand}}
            }
            assert (await stream.event())["event"] == "complete"
