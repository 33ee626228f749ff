"""The one pipeline entry, ``Services.enqueue``: which commands enqueue what,
and that the actions it returns commit in the command's own transaction
(sqlite only: the entry is backend-agnostic)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from domain.enums import ProductStatus, ScanResult
from domain.identifiers import hash_device_fingerprint
from services.context import Services
from services.pipeline.events import (
    AppendEvent,
    DisputeEvent,
    OutboxEvent,
    RecallEvent,
    ScanEvent,
)
from storage import ItemExists, Put, WriteAction
from storage.access_patterns import PRODUCT_BY_ID

SALT = bytes(range(32))
VERIFY = """mutation($c: String!, $s: ScanInput) {
    verifyProduct(code: $c, scan: $s) { result scanCount }
}"""
ADD = """mutation($p: ID!) {
    addProvenanceEvent(productId: $p, input: {type: SHIPPED}) { sequence occurredAt }
}"""
RECALL = 'mutation($p: ID!) { recallProduct(productId: $p, reason: "Lead paint") { status } }'
CLAIM = 'mutation($c: String!) { claimProduct(code: $c, deviceFingerprint: "alice") { claimedAt } }'
DISPUTE = """mutation($c: String!) {
    disputeClaim(code: $c, deviceFingerprint: "bob", reason: "Mine") { claimedAt }
}"""


class Recorder:
    """Stands in for the pipeline: records each event and writes a marker item
    in the command's transaction, or fails it when told to."""

    def __init__(self) -> None:
        self.signals: list[OutboxEvent] = []
        self.markers: list[str] = []
        self.fail = False

    def __call__(self, services: Services, signal: OutboxEvent) -> list[WriteAction]:
        self.signals.append(signal)
        marker = f"marker-{uuid.uuid4().hex}"
        self.markers.append(marker)
        key = PRODUCT_BY_ID.key(product_id=marker)
        item = {"PK": key.pk, "SK": key.sk, "entity": "Marker"}
        return [Put(item, ItemExists() if self.fail else None)]


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    monkeypatch.setattr(Services, "enqueue", lambda services, event: recorder(services, event))
    return recorder


pytestmark = pytest.mark.parametrize("gateway", ["sqlite"], indirect=True)


@pytest.fixture
async def product(gateway) -> tuple[Any, dict[str, Any]]:
    brand = await gateway.register_brand()
    return brand, await gateway.register_product(brand)


async def markers_written(gateway, recorder: Recorder) -> list[bool]:
    storage = gateway.app.state.storage
    return [await storage.get(PRODUCT_BY_ID, product_id=m) is not None for m in recorder.markers]


async def test_a_scan_enqueues_its_facts_never_the_raw_device(
    gateway, product, recorder: Recorder
) -> None:
    brand, item = product
    await gateway.data(CLAIM, {"c": item["verificationCode"]})
    await gateway.data(
        VERIFY, {"c": item["verificationCode"], "s": {"deviceFingerprint": "bob", "country": "BR"}}
    )
    (signal,) = recorder.signals
    assert isinstance(signal, ScanEvent)
    # Bob is not the claimant: a possibly cloned tag (docs/design.md, "Verification").
    assert signal.result is ScanResult.SUSPICIOUS
    assert signal.country == "BR"
    assert signal.device_hash == hash_device_fingerprint(SALT, "bob")
    assert signal.product.product_id == item["id"] and signal.product.brand_id == brand.id
    assert signal.product.scan_count == 1 and signal.product.status is ProductStatus.ACTIVE
    assert signal.claim is not None and signal.claim.device_hash == hash_device_fingerprint(
        SALT, "alice"
    )
    assert "bob" not in repr(signal) and "alice" not in repr(signal)
    assert await markers_written(gateway, recorder) == [True]


async def test_appends_recalls_and_disputes_enqueue(gateway, product, recorder: Recorder) -> None:
    brand, item = product
    first = (await gateway.data(ADD, {"p": item["id"]}, key=brand.key))["addProvenanceEvent"]
    await gateway.data(RECALL, {"p": item["id"]}, key=brand.key)
    await gateway.data(CLAIM, {"c": item["verificationCode"]})
    await gateway.data(DISPUTE, {"c": item["verificationCode"]})
    appended, recall_append, recalled, disputed = recorder.signals
    assert isinstance(appended, AppendEvent) and appended.sequence == 1
    assert appended.previous_occurred_at is None
    assert isinstance(recall_append, AppendEvent) and recall_append.sequence == 2
    assert recall_append.previous_occurred_at is not None
    assert recall_append.previous_occurred_at.isoformat().startswith(first["occurredAt"][:19])
    assert isinstance(recalled, RecallEvent)
    assert (recalled.product_id, recalled.brand_id, recalled.reason) == (
        item["id"],
        brand.id,
        "Lead paint",
    )
    assert isinstance(disputed, DisputeEvent)
    assert (disputed.product_id, disputed.dispute_count, disputed.reason) == (item["id"], 1, "Mine")
    assert await markers_written(gateway, recorder) == [True] * 4


async def test_enqueued_actions_share_the_command_transaction(
    gateway, product, recorder: Recorder
) -> None:
    brand, item = product
    recorder.fail = True
    body = await gateway.execute(VERIFY, {"c": item["verificationCode"]})
    assert gateway.codes(body) == ["CONFLICT"]
    body = await gateway.execute(RECALL, {"p": item["id"]}, key=brand.key)
    assert gateway.codes(body) == ["CONFLICT"]
    recorder.fail = False
    after = await gateway.data(
        """query($p: ID!) {
            product(id: $p) { status scanCount provenance { edges { node { sequence } } } }
        }""",
        {"p": item["id"]},
        key=brand.key,
    )
    assert after["product"] == {"status": "ACTIVE", "scanCount": 0, "provenance": {"edges": []}}
