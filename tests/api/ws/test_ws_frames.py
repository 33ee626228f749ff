"""WebSocket messages with a shared payload are the text the library path writes.

In process: ``encode_message`` against ``encode_json`` of the whole message
(what Strawberry's adapter sends through ``GraphQLApp.encode_json`` without
the shared payloads), over generated messages. Live: subscribers of one
alert, sharing its execution and its encoded payload, receive exactly the
frames a subscriber that shares nothing receives, on both protocols.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _live import ADMIN_KEY, LEGACY_WS, TRANSPORT_WS, Gateway, Socket
from hypothesis import given, settings
from hypothesis import strategies as st

from api.wire.json_response import encode_json
from api.ws.frames import SharedPayloads, encode_message

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_JSON = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
_DATA = st.dictionaries(st.text(max_size=8), _JSON, max_size=4)
_IDS = st.text(max_size=8) | st.integers(min_value=-(2**70), max_value=2**70)


def _messages(data: dict[str, Any], operation: Any) -> list[dict[str, Any]]:
    """The shapes Strawberry's two protocol handlers send, in their key order."""
    return [
        {"id": operation, "type": "next", "payload": {"data": data}},
        {"type": "data", "id": operation, "payload": {"data": data}},
        {"id": operation, "type": "next", "payload": {"data": data, "errors": [{"m": 1}]}},
        {"id": operation, "type": "next", "payload": {"data": None}},
        {"id": operation, "type": "complete"},
        {"data": data, "errors": None, "extensions": {"x": 1}},
    ]


@settings(max_examples=300, deadline=None)
@given(data=_DATA, operation=_IDS)
def test_a_message_reads_as_the_library_writes_it(data: dict[str, Any], operation: Any) -> None:
    payloads = SharedPayloads()
    for message in _messages(data, operation):
        expected = encode_json(message)
        assert encode_message(message, payloads) == expected
        assert encode_message(message, payloads) == expected, "again, from the shared payload"


def test_one_data_object_is_encoded_once_and_another_on_its_own() -> None:
    payloads = SharedPayloads()
    data = {"threatAlerts": {"id": "a1", "city": "Zürich"}}
    frames = [
        encode_message({"id": str(n), "type": "next", "payload": {"data": data}}, payloads)
        for n in range(3)
    ]
    assert (payloads.encoded, payloads.shared) == (1, 2)
    alert = '{"threatAlerts":{"id":"a1","city":"Zürich"}}'
    assert frames[2] == '{"id":"2","type":"next","payload":{"data":' + alert + "}}"
    # A planted difference: another subscriber's data, equal but for one
    # value, is its own object and never answered from the first one's text.
    planted = {"threatAlerts": {"id": "a1", "city": "Basel"}}
    own = encode_message({"id": "3", "type": "next", "payload": {"data": planted}}, payloads)
    assert json.loads(own)["payload"]["data"] == planted
    assert payloads.encoded == 2


def test_shared_payloads_stay_within_their_item_and_byte_budgets() -> None:
    payloads = SharedPayloads(max_items=3, max_bytes=200)
    kept = [{"n": n} for n in range(5)]
    for data in kept:
        payloads.payload(data)
    assert len(payloads) == 3
    big = {"text": "x" * 150}
    payloads.payload(big)
    assert payloads.bytes <= 200
    assert len(payloads) == 2, "the oldest went first"
    payloads.payload(big)
    assert payloads.shared == 1
    huge = {"text": "x" * 300}
    payloads.payload(huge)
    assert payloads.bytes <= 200, "a payload over the budget is encoded, not kept"


# --- live ------------------------------------------------------------------------

SELECTION = "id type severity details country city detectedAt resolved resolvedAt"
"""Not the cursor, which is minted with a fresh nonce by each execution."""
SHARED = f"""subscription($brand: ID!) {{ threatAlerts(brandId: $brand) {{ {SELECTION} }} }}"""
ALONE = f"""subscription Alone($brand: ID!) {{
    threatAlerts(brandId: $brand) {{ {SELECTION} }}
}}"""


@pytest.fixture(scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Gateway]:
    served = await Gateway(tmp_path_factory.mktemp("frames")).start()
    yield served
    await served.stop()


async def _start(socket: Socket, query: str, brand: str) -> None:
    kind = "subscribe" if socket.protocol == TRANSPORT_WS else "start"
    payload = {"query": query, "variables": {"brand": brand}}
    await socket.send({"id": "1", "type": kind, "payload": payload})


async def _frame(socket: Socket) -> str:
    """The next data frame as the server wrote it, answering pings."""
    while True:
        raw = await asyncio.wait_for(socket.connection.recv(), 5)
        assert isinstance(raw, str), "a text frame"
        kind = json.loads(raw)["type"]
        if kind == "ping":
            await socket.send({"type": "pong"})
        elif kind != "ka":
            return raw


@pytest.mark.slow
async def test_subscribers_sharing_an_alert_get_the_frames_of_one_that_shares_nothing(
    gateway: Gateway,
) -> None:
    brand, key = await gateway.brand()
    sharing = [await Socket.open(gateway, key) for _ in range(3)]
    alone = await Socket.open(gateway, key)
    legacy = [await Socket.open(gateway, key, LEGACY_WS) for _ in range(2)]
    admin = await Socket.open(gateway, ADMIN_KEY)
    for socket in [*sharing, *legacy, admin]:
        await _start(socket, SHARED, brand)
    # Another document, so another plan: executed and encoded on its own.
    await _start(alone, ALONE, brand)
    await gateway.wait_for_subscriptions(7)
    product = await gateway.product(brand, key, claimed=True)
    await gateway.dispute(product)

    reference = await _frame(alone)
    assert json.loads(reference)["payload"]["data"]["threatAlerts"]["type"]
    frames = [await _frame(socket) for socket in [*sharing, admin]]
    assert frames == [reference] * 4, "byte for byte, whoever executed and encoded it"
    legacy_frames = [await _frame(socket) for socket in legacy]
    assert legacy_frames[0] == legacy_frames[1]
    for frame in [reference, *legacy_frames]:
        message = json.loads(frame)
        assert frame == encode_json(message), "the text the library path writes"
        assert message["payload"] == json.loads(reference)["payload"]
    assert json.loads(legacy_frames[0])["type"] == "data"
    for socket in [*sharing, alone, *legacy, admin]:
        await socket.close()
