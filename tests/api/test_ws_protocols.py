"""What a hostile WebSocket client must not get past, against a real
``proofgate serve`` process over real sockets (docs/design.md, WebSocket
connections; Subscription limits)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _live import LEGACY_WS, TRANSPORT_WS, Closed, Gateway, Inbox, Socket
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

pytestmark = pytest.mark.slow

INIT_TIMEOUT_MS = 600
PER_KEY, PER_BRAND, COST_PER_BRAND = 3, 5, 8
PARTNER_KEY = """mutation($b: ID!) {
    createApiKey(brandId: $b, name: "wall", role: PARTNER) { id apiKey }
}"""
REVOKE = """mutation($id: ID!) { revokeApiKey(id: $id) { id } }"""
WIDE = """subscription($brand: ID!) {
    threatAlerts(brandId: $brand) { id product { id name } brand { id name } }
}"""
"""Plans 3 reads per alert: the alert, its product, its brand."""


@pytest.fixture(scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Gateway]:
    served = await Gateway(
        tmp_path_factory.mktemp("ws-protocols"),
        PROOFGATE_WS_INIT_TIMEOUT_MS=str(INIT_TIMEOUT_MS),
        PROOFGATE_SUBSCRIPTIONS_PER_KEY=str(PER_KEY),
        PROOFGATE_SUBSCRIPTIONS_PER_BRAND=str(PER_BRAND),
        PROOFGATE_ALERT_COST_PER_BRAND=str(COST_PER_BRAND),
    ).start()
    yield served
    await served.stop()


async def _partner(gateway: Gateway, brand: str, key: str) -> dict[str, str]:
    created: dict[str, str] = (await gateway.data(PARTNER_KEY, {"b": brand}, key))["createApiKey"]
    return created


async def _start(socket: Socket, query: str, variables: dict[str, Any], op: str = "q") -> None:
    kind = "subscribe" if socket.protocol == TRANSPORT_WS else "start"
    await socket.send({"id": op, "type": kind, "payload": {"query": query, "variables": variables}})


def _codes(message: dict[str, Any]) -> list[str]:
    payload = message["payload"]
    errors = payload if isinstance(payload, list) else payload.get("errors", [payload])
    return [error["extensions"]["code"] for error in errors]


# --- connection_init -------------------------------------------------------------


async def test_a_second_connection_init_closes_a_legacy_connection(gateway: Gateway) -> None:
    """Re-initialising as anonymous would hide the connection from the
    revocation watcher while its subscriptions run on."""
    brand, key = await gateway.brand()
    socket = await Socket.open(gateway, key, protocol=LEGACY_WS)
    inbox = Inbox(socket)
    operation = await socket.subscribe(brand)
    await asyncio.sleep(0.1)
    product = await gateway.product(brand, key, claimed=True)
    await gateway.dispute(product)
    assert (await inbox.alert(operation))["type"] == "OWNERSHIP_DISPUTE"

    await socket.send({"type": "connection_init", "payload": {}})
    with pytest.raises(Closed) as closed:
        await inbox.next(operation, timeout=3)
    assert (closed.value.code, closed.value.reason) == (4429, "Too many initialisation requests")


async def test_a_revoked_keys_legacy_subscriptions_close_and_others_keep_theirs(
    gateway: Gateway,
) -> None:
    brand, key = await gateway.brand()
    partner = await _partner(gateway, brand, key)
    revoked = await Socket.open(gateway, partner["apiKey"], protocol=LEGACY_WS)
    kept = await Socket.open(gateway, key, protocol=LEGACY_WS)
    revoked_inbox, kept_inbox = Inbox(revoked), Inbox(kept)
    revoked_op, kept_op = await revoked.subscribe(brand), await kept.subscribe(brand)
    await asyncio.sleep(0.1)
    product = await gateway.product(brand, key, claimed=True)
    await gateway.dispute(product)
    assert (await revoked_inbox.alert(revoked_op))["type"] == "OWNERSHIP_DISPUTE"
    assert (await kept_inbox.alert(kept_op))["type"] == "OWNERSHIP_DISPUTE"

    await gateway.data(REVOKE, {"id": partner["id"]}, key)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(Closed) as closed:
        await revoked_inbox.next(revoked_op, timeout=3)
    assert (closed.value.code, closed.value.reason) == (4403, "API key revoked")
    assert loop.time() - started < 1.5  # the key check runs every 200 ms here
    await gateway.dispute(product)
    assert (await kept_inbox.alert(kept_op))["type"] == "OWNERSHIP_DISPUTE"
    await kept.close()


@pytest.mark.parametrize("protocol", [LEGACY_WS, TRANSPORT_WS])
async def test_a_socket_that_never_initialises_is_closed(gateway: Gateway, protocol: str) -> None:
    _, key = await gateway.brand()
    initialised = await Socket.open(gateway, key, protocol=protocol)
    silent = await connect(gateway.ws_url, subprotocols=[protocol])  # type: ignore[list-item]
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(silent.recv(), 5)
    assert (silent.close_code, silent.close_reason) == (4408, "Connection initialisation timeout")
    assert INIT_TIMEOUT_MS / 1000 - 0.1 < loop.time() - started < INIT_TIMEOUT_MS / 1000 + 1.5
    # The initialised socket outlives the timeout: it still gets keep-alives.
    before = initialised.pings + initialised.keepalives
    with pytest.raises(TimeoutError):
        await initialised.receive(timeout=0.7)
    assert initialised.pings + initialised.keepalives > before
    await initialised.close()
