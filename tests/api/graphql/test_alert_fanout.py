"""The direct fan-out against Strawberry's path, frame for frame, over a real server.

Every subscription is opened twice with the same document and variables:
once as the fan-out takes it, once with an ``extensions`` member in its
payload, which the fan-out leaves to Strawberry (a counted fallback). Random
filters and selections, alerts of random types, countries and products,
sockets dropped and resumed with ``after``, and subscriptions completed
midway; each twin must receive the same frames, byte for byte but for
the operation id and the cursors' sealed text, in the same order
(docs/design.md, Alert fan-out). A planted fault in the fan-out (one
alert's frame left out) must fail the comparison.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from _live import ADMIN_KEY, LEGACY_WS, TRANSPORT_WS, VERIFY, Gateway, free_port
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import Operation
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from api.app import create_app
from api.observability import fallbacks
from api.runtime.http_protocol import DirectFrames, LeanWebSocketProtocol, OneWriteHttpProtocol
from api.settings.gateway import Settings
from api.settings.limits import Lane, Limits
from domain.threats import product_recall
from services.pipeline import PipelineSettings
from services.pipeline.alerts.records import alert_item

pytestmark = [pytest.mark.slow, pytest.mark.fast_paths]

QUERIES = [
    """subscription($brand: ID!, $filter: AlertFilterInput, $after: String) {
        threatAlerts(brandId: $brand, filter: $filter, after: $after) {
            id cursor type severity country product { id name }
        }
    }""",
    """subscription Alerts($brand: ID!, $min: Severity, $after: String) {
        threatAlerts(brandId: $brand, minSeverity: $min, after: $after) { id cursor type details }
    }""",
]
COUNTRIES = ["DE", "FR", "US"]
CURSOR = re.compile(r'"cursor":"[^"]*"')
RECALL = """mutation($id: ID!) { recallProduct(productId: $id, reason: "Recalled") { status } }"""
RECALLS = """query($id: ID!) {
    brand(id: $id) { threats(first: 100) { edges { node { id type product { id } } } } }
}"""


@dataclass
class Twin:
    """One subscription's two copies: ``d…`` for the fan-out, ``s…`` for Strawberry."""

    number: int
    query: int
    variables: dict[str, Any]
    frames: dict[str, list[str]] = field(default_factory=lambda: {"d": [], "s": []})


class Client:
    """A graphql-transport-ws connection that keeps each operation's raw frames."""

    def __init__(self, connection: ClientConnection, protocol: str) -> None:
        self.connection = connection
        self.legacy = protocol == LEGACY_WS
        self.frames: dict[str, list[str]] = {}
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, gateway: Gateway, key: str, protocol: str) -> Client:
        connection = await connect(gateway.ws_url, subprotocols=[protocol])  # type: ignore[list-item]
        await connection.send(
            json.dumps({"type": "connection_init", "payload": {"authorization": f"Bearer {key}"}})
        )
        assert json.loads(await connection.recv())["type"] == "connection_ack"
        return cls(connection, protocol)

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self._frames()

    async def _frames(self) -> None:
        async for raw in self.connection:
            message = json.loads(raw)
            if message["type"] == "ping":
                await self.connection.send('{"type":"pong"}')
            elif "id" in message:
                self.frames.setdefault(message["id"], []).append(str(raw))

    async def subscribe(self, operation: str, twin: Twin, *, library: bool) -> None:
        payload: dict[str, Any] = {"query": QUERIES[twin.query], "variables": twin.variables}
        if library:
            payload["extensions"] = {}
        kind = "start" if self.legacy else "subscribe"
        await self.connection.send(json.dumps({"id": operation, "type": kind, "payload": payload}))

    async def complete(self, operation: str) -> None:
        kind = "stop" if self.legacy else "complete"
        await self.connection.send(json.dumps({"id": operation, "type": kind}))

    async def close(self) -> None:
        await self.connection.close()
        await self.reader


@contextlib.asynccontextmanager
async def _serving(
    tmp_path: Path, pipeline: PipelineSettings | None = None
) -> AsyncIterator[tuple[Gateway, Any]]:
    """The app under uvicorn as ``serve`` runs it (its WebSocket protocol,
    which offers direct frames), in this process; and the app."""
    settings = Settings(
        cursor_key=bytes(range(32)),
        admin_key=ADMIN_KEY,
        sqlite_path=str(tmp_path / "embedded.db"),
        port=free_port(),
        limits=Limits(rate_limit=None, key_rate_limit=None),
        pipeline=pipeline or PipelineSettings(),
    )
    assert Lane.FANOUT in settings.limits.execution
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=settings.port,
        log_level="warning",
        http=OneWriteHttpProtocol,
        ws=LeanWebSocketProtocol,
        ws_per_message_deflate=False,
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    gateway = Gateway(tmp_path, port=settings.port)
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        yield gateway, app
    finally:
        await gateway.stop()
        server.should_exit = True
        await serving


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Gateway]:
    async with _serving(tmp_path) as (gateway, _):
        yield gateway


def _variables(
    rng: random.Random, query: int, brand: str, products: list[str], sentinel: str
) -> dict[str, Any]:
    """Variables whose filter admits the sentinel alert (a CRITICAL recall of
    ``sentinel``) and a random share of the rest."""
    if query == 1:
        return {"brand": brand, "min": rng.choice([None, "LOW", "HIGH"])}
    wanted: dict[str, Any] = {}
    if rng.random() < 0.5:
        wanted["productIds"] = [sentinel, *rng.sample(products, rng.randint(1, 3))]
    if rng.random() < 0.3:
        wanted["severities"] = ["CRITICAL", *rng.sample(["LOW", "HIGH"], rng.randint(0, 1))]
    return {"brand": brand, "filter": wanted or None}


async def _act(gateway: Gateway, key: str, rng: random.Random, product: dict[str, str]) -> None:
    action = rng.random()
    if action < 0.4:
        await gateway.dispute(product)
    elif action < 0.5:
        await gateway.execute(RECALL, {"id": product["id"]}, key)
    else:
        scan = {"deviceFingerprint": f"d{rng.randint(0, 9)}", "country": rng.choice(COUNTRIES)}
        await gateway.execute(VERIFY, {"code": product["verificationCode"], "scan": scan})


def _unsealed(frame: str, operation: str) -> str:
    """A frame without its operation id and with its cursors' text left out:
    a cursor is sealed with a fresh nonce each time it is written, so two
    cursors of one alert differ; the resumed subscriptions use them."""
    return CURSOR.sub('"cursor":"C"', frame.replace(f'"id":"{operation}"', '"id":"X"', 1))


def _alerts_only(frames: list[str]) -> list[str]:
    return [frame for frame in frames if json.loads(frame)["type"] in ("next", "data")]


def _differences(twins: list[Twin], completed: int = 1) -> list[tuple[int, int, int]]:
    """(twin, frames via the fan-out, frames via Strawberry) of each twin
    whose frames differ beyond their operation ids and cursors
    (``_unsealed``). The twin ``completed`` midway is compared up to where
    the shorter copy stopped: its two ``complete`` messages went out one
    after the other, with alerts coming."""
    differ = []
    for twin in twins:
        direct = [_unsealed(f, f"d{twin.number}") for f in twin.frames["d"]]
        library = [_unsealed(f, f"s{twin.number}") for f in twin.frames["s"]]
        if twin.number == completed:  # its alerts up to the shorter copy's complete
            direct, library = _alerts_only(direct), _alerts_only(library)
            shorter = min(len(direct), len(library))
            direct, library = direct[:shorter], library[:shorter]
        if direct != library:
            differ.append((twin.number, len(direct), len(library)))
    return differ


async def _run(gateway: Gateway, seed: int, protocol: str) -> tuple[list[Twin], str]:
    """The scenario; each twin's frames once both copies ended on the sentinel."""
    rng = random.Random(seed)
    brand, key, _, start = await gateway.brand_with_an_alert()
    products = [await gateway.product(brand, key, claimed=True) for _ in range(6)]
    sentinel = await gateway.product(brand, key)
    ids = [p["id"] for p in products]
    twins = [
        Twin(n, query, _variables(rng, query, brand, ids, sentinel["id"]))
        for n, query in enumerate(rng.choice([0, 0, 1]) for _ in range(10))
    ]
    for twin in twins[::3]:
        twin.variables["after"] = start
    # Strawberry's copies first: their run validates each text, which the
    # fan-out then finds in the document cache.
    library = await Client.open(gateway, key, protocol)
    direct = await Client.open(gateway, key, protocol)
    dropping = await Client.open(gateway, key, protocol)
    for twin in twins:
        await library.subscribe(f"s{twin.number}", twin, library=True)
    await gateway.wait_for_subscriptions(len(twins))
    started = fallbacks.taken().get(Lane.FANOUT, 0)
    dropped = twins[-3:]
    for twin in twins:
        target = dropping if twin in dropped else direct
        await target.subscribe(f"d{twin.number}", twin, library=False)
    await gateway.wait_for_subscriptions(2 * len(twins))
    assert fallbacks.taken().get(Lane.FANOUT, 0) == started + len(twins)

    for step in range(30):
        await _act(gateway, key, rng, rng.choice(products))
        if step == 10:  # a subscription completed midway, on both paths
            await library.complete(f"s{twins[1].number}")
            await direct.complete(f"d{twins[1].number}")
    # The dropped socket's copies resume after the last alert their Strawberry twin got so far.
    await dropping.close()
    for twin in dropped:
        twin.frames["d"] = list(dropping.frames.get(f"d{twin.number}", []))
        last = json.loads(twin.frames["d"][-1]) if twin.frames["d"] else None
        twin.variables["after"] = (
            last["payload"]["data"]["threatAlerts"]["cursor"] if last else start
        )
    resumed = await Client.open(gateway, key, protocol)
    for twin in dropped:
        await resumed.subscribe(f"d{twin.number}", twin, library=False)
    for _ in range(10):
        await _act(gateway, key, rng, rng.choice(products))
    await gateway.execute(RECALL, {"id": sentinel["id"]}, key)
    last = await _recall_of(gateway, brand, key, sentinel["id"])

    async with asyncio.timeout(30):
        for twin in twins:
            if twin.number == twins[1].number:
                continue
            for side, client in (("s", library), ("d", resumed if twin in dropped else direct)):
                while not any(
                    last in frame for frame in client.frames.get(f"{side}{twin.number}", [])
                ):
                    await asyncio.sleep(0.02)
    for twin in twins:
        twin.frames["s"] = library.frames.get(f"s{twin.number}", [])
        if twin in dropped:
            twin.frames["d"] += resumed.frames.get(f"d{twin.number}", [])
        else:
            twin.frames["d"] = direct.frames.get(f"d{twin.number}", [])
    for client in (library, direct, resumed):
        await client.close()
    return twins, last


async def _recall_of(gateway: Gateway, brand: str, key: str, product: str) -> str:
    """The id of ``product``'s PRODUCT_RECALL alert, once stored."""
    async with asyncio.timeout(10):
        while True:
            data = await gateway.data(RECALLS, {"id": brand}, key)
            for edge in data["brand"]["threats"]["edges"]:
                node = edge["node"]
                if node["type"] == "PRODUCT_RECALL" and node["product"]["id"] == product:
                    return str(node["id"])
            await asyncio.sleep(0.05)


@pytest.mark.parametrize(
    ("protocol", "seed"), [(TRANSPORT_WS, 1), (TRANSPORT_WS, 2), (LEGACY_WS, 3)]
)
async def test_the_fanout_sends_strawberrys_frames_in_strawberrys_order(
    served: Gateway, protocol: str, seed: int
) -> None:
    twins, last = await _run(served, seed, protocol)
    assert _differences(twins) == []
    completed = twins[1].frames
    assert not any(last in frame for frame in completed["d"] + completed["s"])
    if protocol == LEGACY_WS:  # a stop is answered with complete, on both paths
        assert [json.loads(completed[side][-1])["type"] for side in "ds"] == ["complete"] * 2
    delivered = sum(len(t.frames["d"]) for t in twins)
    assert delivered > 3 * len(twins)  # the alerts did reach them, and were compared


class _Dropping:
    """A socket's transport that leaves out the first frame of ``d0``."""

    def __init__(self, transport: Any, dropped: list[bytes]) -> None:
        self.transport = transport
        self.dropped = dropped

    def write(self, frame: bytes) -> None:
        if not self.dropped and b'"id":"d0"' in frame:
            self.dropped.append(frame)
            return
        self.transport.write(frame)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


async def test_a_planted_fault_in_the_fanout_is_caught(
    served: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    ready = DirectFrames.ready
    dropped: list[bytes] = []

    def leaves_one_out(self: DirectFrames) -> Any:
        transport = ready(self)
        return None if transport is None else _Dropping(transport, dropped)

    monkeypatch.setattr(DirectFrames, "ready", leaves_one_out)
    twins, _ = await _run(served, 1, TRANSPORT_WS)
    assert len(dropped) == 1
    assert [number for number, _, _ in _differences(twins)] == [0]


def _strawberry_operations() -> int:
    return sum(type(o) is Operation for o in gc.get_objects())


async def test_an_idle_direct_subscription_keeps_no_task_and_no_strawberry_operation(
    served: Gateway,
) -> None:
    brand, key = await served.brand()
    product = await served.product(brand, key, claimed=True)
    twin = Twin(0, 0, {"brand": brand, "filter": None})
    library = await Client.open(served, key, TRANSPORT_WS)
    await library.subscribe("s0", twin, library=True)  # validates the text
    await served.wait_for_subscriptions(1)
    clients = [await Client.open(served, key, TRANSPORT_WS) for _ in range(3)]
    gc.collect()  # an earlier test's operations, left for the collector
    tasks, operations = len(asyncio.all_tasks()), _strawberry_operations()
    assert operations == 1
    for client in clients:
        for n in range(3):
            await client.subscribe(f"d{n}", twin, library=False)
    await served.wait_for_subscriptions(10)
    assert (len(asyncio.all_tasks()), _strawberry_operations()) == (tasks, operations)
    # The positive control: one more on Strawberry's path is a task and an operation.
    await library.subscribe("s1", twin, library=True)
    await served.wait_for_subscriptions(11)
    assert (len(asyncio.all_tasks()), _strawberry_operations()) == (tasks + 1, operations + 1)
    # And the idle ones are live: an alert reaches each of them.
    await served.dispute(product)
    async with asyncio.timeout(10):
        for client in clients:
            while sum(len(client.frames.get(f"d{n}", [])) for n in range(3)) < 3:
                await asyncio.sleep(0.02)
    for client in (library, *clients):
        await client.close()


async def test_a_slow_direct_subscriber_is_closed_as_the_broker_closes_one(tmp_path: Path) -> None:
    """The queue holds four alerts; the fan-out counts what it has not yet
    written, so a flood faster than any socket drains closes the connection
    with 4008 at the fifth, as on Strawberry's path
    (``tests/api/ws/test_websocket.py``)."""
    async with _serving(tmp_path, PipelineSettings(queue_max=4)) as (gateway, app):
        brand, key = await gateway.brand()
        twin = Twin(0, 0, {"brand": brand, "filter": None})
        library = await Client.open(gateway, key, TRANSPORT_WS)
        await library.subscribe("s0", twin, library=True)  # validates the text
        await gateway.wait_for_subscriptions(1)
        await library.close()
        await gateway.wait_for_subscriptions(0)
        taken = fallbacks.taken().get(Lane.FANOUT, 0)
        direct = await Client.open(gateway, key, TRANSPORT_WS)
        await direct.subscribe("d0", twin, library=False)
        await gateway.wait_for_subscriptions(1)
        assert fallbacks.taken().get(Lane.FANOUT, 0) == taken + 1
        now = datetime.now(UTC)
        broker = app.state.pipeline.broker
        for index in range(50):
            draft = product_recall(
                brand_id=brand, product_id=f"P{index}", recalled_at=now, reason=None
            )
            broker.publish(alert_item(draft, now + timedelta(microseconds=index)))
        await direct.reader
        assert direct.connection.close_code == 4008
        assert (direct.connection.close_reason or "").startswith("Slow consumer")
        assert len(direct.frames.get("d0", [])) <= 4
        await gateway.wait_for_subscriptions(0)
