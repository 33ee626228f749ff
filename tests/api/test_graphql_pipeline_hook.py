"""The threat-pipeline hook: which commands signal what, and that the actions
the hook returns commit in the command's own transaction (sqlite only: the
hook is backend-agnostic)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from domain.enums import ProductStatus, ScanResult
from domain.identifiers import hash_device_fingerprint
from resolvers.claims import mutations as claims
from resolvers.context import Services
from resolvers.pipeline_hook import (
    ClaimDisputed,
    EventAppended,
    PipelineSignal,
    ProductRecalled,
    ScanRecorded,
)
from resolvers.provenance import append
from resolvers.verification import record
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
    """Stands in for the pipeline: records each signal and writes a marker item
    in the command's transaction, or fails it when told to."""

    def __init__(self) -> None:
        self.signals: list[PipelineSignal] = []
        self.markers: list[str] = []
        self.fail = False

    def __call__(self, signal: PipelineSignal, services: Services) -> list[WriteAction]:
        self.signals.append(signal)
        marker = f"marker-{uuid.uuid4().hex}"
        self.markers.append(marker)
        key = PRODUCT_BY_ID.key(product_id=marker)
        item = {"PK": key.pk, "SK": key.sk, "entity": "Marker"}
        return [Put(item, ItemExists() if self.fail else None)]


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    for module in (record, append, claims):
        monkeypatch.setattr(module, "pipeline_hook", recorder)
    return recorder


pytestmark = pytest.mark.parametrize("gateway", ["sqlite"], indirect=True)


@pytest.fixture
async def product(gateway) -> tuple[Any, dict[str, Any]]:
    brand = await gateway.register_brand()
    return brand, await gateway.register_product(brand)


async def markers_written(gateway, recorder: Recorder) -> list[bool]:
    storage = gateway.app.state.storage
    return [await storage.get(PRODUCT_BY_ID, product_id=m) is not None for m in recorder.markers]


async def test_a_scan_signals_its_facts_never_the_raw_device(
    gateway, product, recorder: Recorder
) -> None:
    brand, item = product
    await gateway.data(CLAIM, {"c": item["verificationCode"]})
    await gateway.data(
        VERIFY, {"c": item["verificationCode"], "s": {"deviceFingerprint": "bob", "country": "BR"}}
    )
    (signal,) = recorder.signals
    assert isinstance(signal, ScanRecorded)
    assert signal.result is ScanResult.AUTHENTIC
    assert signal.country == "BR"
    assert signal.device_hash == hash_device_fingerprint(SALT, "bob")
    assert signal.product.product_id == item["id"] and signal.product.brand_id == brand.id
    assert signal.product.scan_count == 1 and signal.product.status is ProductStatus.ACTIVE
    assert signal.claim is not None and signal.claim.device_hash == hash_device_fingerprint(
        SALT, "alice"
    )
    assert "bob" not in repr(signal) and "alice" not in repr(signal)
    assert await markers_written(gateway, recorder) == [True]


async def test_appends_recalls_and_disputes_signal(gateway, product, recorder: Recorder) -> None:
    brand, item = product
    first = (await gateway.data(ADD, {"p": item["id"]}, key=brand.key))["addProvenanceEvent"]
    await gateway.data(RECALL, {"p": item["id"]}, key=brand.key)
    await gateway.data(CLAIM, {"c": item["verificationCode"]})
    await gateway.data(DISPUTE, {"c": item["verificationCode"]})
    appended, recall_append, recalled, disputed = recorder.signals
    assert isinstance(appended, EventAppended) and appended.sequence == 1
    assert appended.previous_occurred_at is None
    assert isinstance(recall_append, EventAppended) and recall_append.sequence == 2
    assert recall_append.previous_occurred_at is not None
    assert recall_append.previous_occurred_at.isoformat().startswith(first["occurredAt"][:19])
    assert isinstance(recalled, ProductRecalled)
    assert (recalled.product_id, recalled.brand_id, recalled.reason) == (
        item["id"],
        brand.id,
        "Lead paint",
    )
    assert isinstance(disputed, ClaimDisputed)
    assert (disputed.product_id, disputed.dispute_count, disputed.reason) == (item["id"], 1, "Mine")
    assert await markers_written(gateway, recorder) == [True] * 4


async def test_hook_actions_share_the_command_transaction(
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
