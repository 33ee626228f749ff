"""Deliveries verified by the official Standard Webhooks verifiers (PyPI and
npm ``standardwebhooks``), as a receiver would run them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domain.enums import ProductStatus
from domain.webhooks import verify_signature
from services.pipeline import Pipeline, PipelineSettings, RecallEvent
from services.pipeline.events import WebhookEvent
from services.pipeline.webhooks.delivery import deliver
from storage import Storage
from tests._support.receiver import Receiver, Request
from tests._support.standard_webhooks import Delivery, node_verifier, python_verifies
from tests.services.pipeline._support import Product, eventually, new_brand, record_scan

from .test_delivery import deliveries, webhook


def flaky(request: Request, attempt: int) -> int:
    return 500 if attempt == 1 else 200


async def test_deliveries_verify_keep_their_id_across_retries_and_old_ones_are_refused(
    storage: Storage, pipeline: Pipeline, settings: PipelineSettings, t0: datetime
) -> None:
    node = node_verifier()
    brand = await new_brand(storage)
    async with Receiver(flaky) as receiver:
        _, secret = await webhook(storage, brand, receiver.url)
        product = Product(brand, t0 - timedelta(days=2), ProductStatus.ACTIVE)
        await record_scan(storage, product, t0, pipeline)
        await pipeline.committing(storage).transact_write(
            pipeline.enqueue(RecallEvent(product.id, brand, t0, "Lead"))
        )

        async def delivered() -> bool:
            records = await deliveries(storage, brand)
            return len(records) == 1 and records[0]["status"] == "DELIVERED"

        await eventually(delivered)
        assert receiver.answered == [500, 200]
        (record,) = await deliveries(storage, brand)
        event = WebhookEvent(
            record["id"],
            record["webhookId"],
            brand,
            record["alertId"],
            datetime.fromisoformat(record["createdAt"]),
        )
        # The same delivery sent again ten minutes late: what a replay of a
        # captured request looks like to a receiver.
        late = datetime.now(UTC) - timedelta(minutes=10)
        await deliver(storage, event, now=late, settings=settings, final=False)

    first, retry, replayed = (Delivery(secret, r.headers, r.body) for r in receiver.requests)
    assert {r.headers["webhook-id"] for r in receiver.requests} == {record["id"]}
    assert first.headers["webhook-id"] == first.headers["x-proofgate-delivery"]
    assert first.body == retry.body == replayed.body
    assert first.headers["webhook-signature"].startswith("v1,")
    assert [python_verifies(first), python_verifies(retry)] == [None, None]
    assert node.verify([first, retry]) == [None, None]
    assert "too old" in (python_verifies(replayed) or "")
    assert "too old" in (node.verify([replayed])[0] or "")
    assert int(replayed.headers["webhook-timestamp"]) == int(late.timestamp())
    # The older header still verifies, for receivers written against it.
    assert verify_signature(
        secret, first.headers["x-proofgate-signature"], first.body, now=datetime.now(UTC)
    )
    tampered = Delivery(secret, first.headers, first.body.replace(b"PRODUCT_RECALL", b"BURST"))
    assert python_verifies(tampered) == "No matching signature found"
    assert node.verify([tampered]) == ["No matching signature found"]
