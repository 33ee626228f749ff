"""threatAlerts(filter:) against client-side filtering, over a real server.

One unfiltered subscription sees every alert of the brand; each filtered one
must see exactly the alerts its filter admits, in the same order: none
missing, none extra, including subscriptions whose socket dropped and which
resumed with ``after`` (docs/design.md, Alert filters).
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from _live import ADMIN_KEY, CLAIM, VERIFY, Gateway, Inbox, Socket

pytestmark = pytest.mark.slow

FILTERED = """subscription($brand: ID!, $filter: AlertFilterInput, $after: String) {
    threatAlerts(brandId: $brand, filter: $filter, after: $after) {
        id cursor type severity country product { id }
    }
}"""
GRANT = """mutation($b: ID!, $key: String!) {
    grantCredits(brandId: $b, amount: "50", idempotencyKey: $key) { id }
}"""
RECALL = """mutation($id: ID!) { recallProduct(productId: $id, reason: "Recalled") { status } }"""
COUNTRIES = ["DE", "FR", "US", "JP", "BR"]
SEVERITY_RANK = {"LOW": 0, "MEDIUM": 1, "HIGH": 2, "CRITICAL": 3}
PER_SOCKET = 8


@pytest.fixture(scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Gateway]:
    served = await Gateway(tmp_path_factory.mktemp("filters")).start()
    yield served
    await served.stop()


def _matches(wanted: Mapping[str, Any], alert: Mapping[str, Any]) -> bool:
    """The client-side filter: the oracle the server's index is held to."""
    checks = [
        ("productIds", alert["product"]["id"]),
        ("countries", alert["country"]),
        ("types", alert["type"]),
        ("severities", alert["severity"]),
    ]
    if any(name in wanted and value not in wanted[name] for name, value in checks):
        return False
    minimum = wanted.get("minSeverity")
    return minimum is None or SEVERITY_RANK[alert["severity"]] >= SEVERITY_RANK[minimum]


def _random_filter(rng: random.Random, products: list[str], sentinel: str) -> dict[str, Any]:
    """A filter that admits the sentinel alert (a foreign scan of ``sentinel``
    from DE: CLAIMED_PRODUCT_SCAN, HIGH), and a random share of the rest."""
    wanted: dict[str, Any] = {}
    if rng.random() < 0.6:
        wanted["productIds"] = [sentinel, *rng.sample(products, rng.randint(0, 3))]
    if rng.random() < 0.4:
        wanted["countries"] = ["DE", *rng.sample(COUNTRIES[1:], rng.randint(0, 2))]
    if rng.random() < 0.4:
        others = ["OWNERSHIP_DISPUTE", "PRODUCT_RECALL", "RECALLED_PRODUCT_SCAN"]
        wanted["types"] = ["CLAIMED_PRODUCT_SCAN", *rng.sample(others, rng.randint(0, 2))]
    if rng.random() < 0.3:
        wanted["severities"] = ["HIGH", *rng.sample(["LOW", "CRITICAL"], rng.randint(0, 1))]
    if rng.random() < 0.2:
        wanted["minSeverity"] = rng.choice(["LOW", "MEDIUM", "HIGH"])
    return wanted


async def _act(gateway: Gateway, key: str, rng: random.Random, product: dict[str, str]) -> None:
    """One step that raises alerts of some type, severity and country."""
    action = rng.random()
    if action < 0.35:
        await gateway.dispute(product)
    elif action < 0.45:
        await gateway.execute(RECALL, {"id": product["id"]}, key)
    else:
        scan = {"deviceFingerprint": f"d{rng.randint(0, 9)}", "country": rng.choice(COUNTRIES)}
        await gateway.execute(VERIFY, {"code": product["verificationCode"], "scan": scan})


async def _read_until(inbox: Inbox, operation: str, product_id: str) -> list[dict[str, Any]]:
    """Alerts up to and including the first of ``product_id``."""
    received = []
    while True:
        alert = await inbox.alert(operation, timeout=15)
        received.append(alert)
        if alert["product"]["id"] == product_id:
            return received


async def _subscribe(
    socket: Socket, operation: str, brand: str, wanted: Mapping[str, Any], after: str | None
) -> None:
    variables = {"brand": brand, "filter": dict(wanted), "after": after}
    payload = {"query": FILTERED, "variables": variables}
    await socket.send({"id": operation, "type": "subscribe", "payload": payload})


@pytest.mark.parametrize("seed", [1, 2])
async def test_filtered_subscriptions_get_exactly_what_client_side_filtering_keeps(
    gateway: Gateway, seed: int
) -> None:
    rng = random.Random(seed)
    brand, key, _, start = await gateway.brand_with_an_alert()
    await gateway.data(GRANT, {"b": brand, "key": f"filters-{seed}"}, ADMIN_KEY)
    products = [await gateway.product(brand, key, claimed=True) for _ in range(8)]
    sentinel = await gateway.product(brand, key, claimed=True)
    ids = [p["id"] for p in products]
    filters = [_random_filter(rng, ids, sentinel["id"]) for _ in range(3 * PER_SOCKET)]

    reference = await Socket.open(gateway, key)
    reference_inbox = Inbox(reference)
    await _subscribe(reference, "all", brand, {}, start)
    sockets = [await Socket.open(gateway, key) for _ in range(3)]
    inboxes = [Inbox(s) for s in sockets]
    for n, wanted in enumerate(filters):
        await _subscribe(sockets[n // PER_SOCKET], str(n), brand, wanted, start)

    for _ in range(40):
        await _act(gateway, key, rng, rng.choice(products))
    # A marker alert ends the first part: the reference has seen every alert
    # of it once the marker arrives, so each filtered subscription on the
    # third socket has at least its share of them waiting. It reads a random
    # number of those, then the socket drops, and it resumes after the last
    # one it read while alerts keep coming.
    marker = await gateway.product(brand, key, claimed=True)
    await gateway.dispute(marker)
    first_part = await _read_until(reference_inbox, "all", marker["id"])
    dropped = range(2 * PER_SOCKET, 3 * PER_SOCKET)
    before_drop: dict[int, list[dict[str, Any]]] = {}
    for n in dropped:
        admitted = [a for a in first_part if _matches(filters[n], a)]
        count = rng.randint(0, len(admitted))
        before_drop[n] = [await inboxes[2].alert(str(n), timeout=15) for _ in range(count)]
    await sockets[2].close()
    for _ in range(30):
        await _act(gateway, key, rng, rng.choice(products))
    resumed = await Socket.open(gateway, key)
    resumed_inbox = Inbox(resumed)
    for n in dropped:
        after = before_drop[n][-1]["cursor"] if before_drop[n] else start
        await _subscribe(resumed, str(n), brand, filters[n], after)
    await gateway.data(VERIFY, {"code": sentinel["verificationCode"], "scan": {"country": "DE"}})

    everything = first_part + await _read_until(reference_inbox, "all", sentinel["id"])
    assert everything[-1]["type"] == "CLAIMED_PRODUCT_SCAN"
    assert len({a["id"] for a in everything}) == len(everything) > 40
    missing = extra = admitted = 0
    for n, wanted in enumerate(filters):
        expected = [a["id"] for a in everything if _matches(wanted, a)]
        admitted += len(expected)
        if n in before_drop:
            got = [a["id"] for a in before_drop[n]]
            rest = await _read_until(resumed_inbox, str(n), sentinel["id"])
            got += [a["id"] for a in rest]
        else:
            rest = await _read_until(inboxes[n // PER_SOCKET], str(n), sentinel["id"])
            got = [a["id"] for a in rest]
        missing += len(set(expected) - set(got))
        extra += len(got) - len(set(got) & set(expected))
        assert got == expected, (n, wanted)
    assert (missing, extra) == (0, 0)
    # The filters did filter: neither everything nor only the sentinel.
    assert 2 * len(filters) < admitted < len(filters) * len(everything)
    for socket in (reference, *sockets[:2], resumed):
        await socket.close()


async def _live_subscriptions(gateway: Gateway) -> int:
    scraped = await gateway.client.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    (line,) = [x for x in scraped.text.splitlines() if x.startswith("proofgate_subscriptions ")]
    return int(float(line.split()[1]))


async def test_bad_filters_are_refused_naming_the_limit_and_register_nothing(
    gateway: Gateway,
) -> None:
    (brand, key), (other, other_key) = await gateway.brand(), await gateway.brand()
    mine = await gateway.product(brand, key)
    theirs = await gateway.product(other, other_key)
    unknown = "01JD8X3V9Q7ZK5M2N4P6R8T0W1"
    socket = await Socket.open(gateway, key)
    inbox = Inbox(socket)
    before = await _live_subscriptions(gateway)
    cases = {
        "foreign": ({"productIds": [mine["id"], theirs["id"]]}, f"{theirs['id']} is not a product"),
        "unknown": ({"productIds": [unknown]}, f"{unknown} is not a product of brand"),
        "too many": ({"productIds": [mine["id"]] * 10_001}, "at most 10,000 values"),
        "malformed": ({"countries": ["DE", "Germany"]}, "ISO 3166-1 alpha-2"),
        "empty": ({"types": []}, "at least one type"),
    }
    for operation, (wanted, message) in cases.items():
        await _subscribe(socket, operation, brand, wanted, None)
        refused = await inbox.next(operation, timeout=15)
        assert refused["type"] == "error", refused
        (error,) = refused["payload"]
        assert error["extensions"]["code"] == "BAD_USER_INPUT", error
        assert message in error["message"], error
    assert await _live_subscriptions(gateway) == before
    # The positive control: a good filter of the same products registers one.
    await _subscribe(socket, "good", brand, {"productIds": [mine["id"]]}, None)
    await gateway.dispute(await gateway.product(brand, key, claimed=True))
    await gateway.data(CLAIM, {"code": mine["verificationCode"]})
    await gateway.dispute(mine)
    alert = await inbox.alert("good", timeout=15)
    assert alert["product"]["id"] == mine["id"]
    assert await _live_subscriptions(gateway) == before + 1
    await socket.close()
