from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from domain.enums import ProductStatus, Severity, ThreatType
from domain.errors import Forbidden
from domain.identifiers import new_id, new_webhook_secret
from domain.webhooks import verify_signature
from services.context import utcnow
from services.pipeline import Pipeline, PipelineSettings, RecallEvent
from services.pipeline.webhooks.delivery import NO_RESPONSE
from services.pipeline.webhooks.http import post
from services.webhooks.items import DeliveryStatus, WebhookRef, webhook_item
from storage import CursorCodec, Item, Storage
from storage.access_patterns import OUTBOX_PARKED, WEBHOOK_DELIVERIES
from tests._support.ports import free_port
from tests._support.receiver import Receiver, Request
from tests.services.pipeline._support import (
    CURSOR_KEY,
    Product,
    eventually,
    new_brand,
    record_scan,
)


async def webhook(storage: Storage, brand: str, url: str, **options: object) -> tuple[str, str]:
    """A webhook's id and secret."""
    ref, secret = WebhookRef(brand, new_id()), new_webhook_secret()
    put = webhook_item(
        ref,
        url=url,
        secret=secret,
        min_severity=options.get("min_severity", Severity.LOW),  # type: ignore[arg-type]
        types=options.get("types"),  # type: ignore[arg-type]
        created_at=datetime.now(UTC),
    )
    await storage.transact_write([put])
    return ref.id, secret


async def deliveries(storage: Storage, brand: str) -> list[Item]:
    page = await storage.query(WEBHOOK_DELIVERIES, {"brand_id": brand}, tenant="test", first=100)
    return page.items


def flaky(request: Request, attempt: int) -> int:
    return 500 if attempt == 1 else 200


async def test_a_delivery_is_signed_retried_after_a_500_and_recorded(
    storage: Storage, pipeline: Pipeline, t0: datetime
) -> None:
    brand = await new_brand(storage)
    async with Receiver(flaky) as receiver:
        hook_id, secret = await webhook(storage, brand, receiver.url, min_severity=Severity.HIGH)
        product = Product(brand, t0 - timedelta(days=2), ProductStatus.RECALLED)
        await record_scan(storage, product, t0, pipeline)
        await pipeline.committing(storage).transact_write(
            pipeline.enqueue(RecallEvent(product.id, brand, t0, "Lead"))
        )

        async def delivered() -> bool:
            records = await deliveries(storage, brand)
            return len(records) == 1 and records[0]["status"] == "DELIVERED"

        await eventually(delivered)

    assert len(receiver.requests) == 2 and receiver.answered == [500, 200]
    ids = {request.headers["x-proofgate-delivery"] for request in receiver.requests}
    assert len(ids) == 1, "a retry reuses its delivery id"
    for request in receiver.requests:
        assert request.path == "/hooks/alerts?via=test"
        assert verify_signature(
            secret, request.headers["x-proofgate-signature"], request.body, now=datetime.now(UTC)
        )
        assert not verify_signature(
            "whsec_other",
            request.headers["x-proofgate-signature"],
            request.body,
            now=datetime.now(UTC),
        )
    body = json.loads(receiver.requests[-1].body)
    assert (body["type"], body["webhookId"], body["alert"]["type"]) == (
        "threat.alert",
        hook_id,
        "PRODUCT_RECALL",
    )
    [record] = await deliveries(storage, brand)
    assert (record["id"], record["attempts"], record["lastStatusCode"]) == (body["id"], 2, 200)
    assert record["alertId"] == body["alert"]["id"]


async def test_deliveries_honour_the_webhooks_types(
    storage: Storage, pipeline: Pipeline, t0: datetime
) -> None:
    brand = await new_brand(storage)
    async with Receiver(lambda request, attempt: 204) as receiver:
        await webhook(storage, brand, receiver.url, types=[ThreatType.RECALLED_PRODUCT_SCAN])
        await webhook(storage, brand, receiver.url, types=[ThreatType.OWNERSHIP_DISPUTE])
        product = Product(brand, t0 - timedelta(days=2), ProductStatus.RECALLED)
        await record_scan(storage, product, t0, pipeline)

        async def delivered() -> bool:
            return [r["status"] for r in await deliveries(storage, brand)] == ["DELIVERED"]

        await eventually(delivered)
    assert [json.loads(r.body)["alert"]["type"] for r in receiver.requests] == [
        "RECALLED_PRODUCT_SCAN"
    ]


async def test_a_receiver_that_keeps_failing_ends_failed_and_parked_at_the_horizon(
    storage: Storage, settings: PipelineSettings, t0: datetime
) -> None:
    """Retried until the delivery is ``webhook_retry_horizon`` old, however
    many attempts that is: ``max_attempts`` counts alert items only."""
    brand = await new_brand(storage)
    own = replace(settings, webhook_retry_horizon=timedelta(seconds=1))
    pipeline = Pipeline(storage, own, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    await pipeline.start()
    try:
        async with Receiver(lambda request, attempt: 503) as receiver:
            await webhook(storage, brand, receiver.url)
            await pipeline.committing(storage).transact_write(
                pipeline.enqueue(RecallEvent(new_id(), brand, t0, None))
            )

            async def failed() -> bool:
                return [r["status"] for r in await deliveries(storage, brand)] == ["FAILED"]

            await eventually(failed, timeout=10)
    finally:
        await pipeline.stop()
    [record] = await deliveries(storage, brand)
    assert record["lastError"] == "HTTP 503"
    assert receiver.answered == [503] * record["attempts"]
    assert record["attempts"] > own.max_attempts
    last = datetime.fromisoformat(record["updatedAt"])
    assert last >= datetime.fromisoformat(record["createdAt"]) + own.webhook_retry_horizon
    [parked] = (await storage.query(OUTBOX_PARKED, {}, tenant="test")).items
    assert (parked["kind"], parked["payload"]["deliveryId"]) == ("WEBHOOK", record["id"])


async def test_private_addresses_are_refused_unless_allowed() -> None:
    async with Receiver(lambda request, attempt: 200) as receiver:
        with pytest.raises(Forbidden):
            await post(receiver.url, b"{}", {}, timeout=2, allow_private=False)
        response = await post(receiver.url, b"{}", {"X-Test": "1"}, timeout=2, allow_private=True)
    assert (response.status, response.body) == (200, b"ok")
    assert receiver.requests[0].headers["x-test"] == "1"


async def test_each_attempt_is_reported_with_its_result(
    storage: Storage, settings: PipelineSettings, t0: datetime
) -> None:
    results: list[DeliveryStatus] = []
    counting = Pipeline(
        storage,
        settings,
        cursors=CursorCodec(CURSOR_KEY),
        clock=lambda: datetime.now(UTC),
        on_delivery=results.append,
    )
    brand = await new_brand(storage)
    await counting.start()
    try:
        async with Receiver(flaky) as receiver:
            await webhook(storage, brand, receiver.url)
            await counting.committing(storage).transact_write(
                counting.enqueue(RecallEvent(new_id(), brand, t0, "Lead"))
            )

            async def delivered() -> bool:
                return DeliveryStatus.DELIVERED in results

            await eventually(delivered)
    finally:
        await counting.stop()
    assert results == [DeliveryStatus.RETRYING, DeliveryStatus.DELIVERED]
    assert receiver.answered == [500, 200]


@pytest.mark.parametrize(
    ("url", "allow_private"),
    [
        ("http://no-such-host.invalid/hook", True),
        ("http://127.0.0.1:{closed}/hook", True),
        ("http://127.0.0.1:{closed}/hook", False),
        ("http://localhost:{closed}/hook", False),
    ],
    ids=["unresolvable", "refused", "private-address", "private-name"],
)
async def test_a_failure_without_an_answer_tells_the_brand_nothing_about_the_network(
    storage: Storage, settings: PipelineSettings, t0: datetime, url: str, allow_private: bool
) -> None:
    """Whether a name resolves, and whether to a private address, is the
    operator's business: lastError reads the same for all of them. A
    receiver's own answer (HTTP 503 above) is still reported."""
    closed = free_port()
    brand = await new_brand(storage)
    await webhook(storage, brand, url.format(closed=closed))
    own = replace(settings, webhook_allow_private=allow_private, webhook_retry_horizon=timedelta(0))
    pipeline = Pipeline(storage, own, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    await pipeline.start()
    try:
        await pipeline.committing(storage).transact_write(
            pipeline.enqueue(RecallEvent(new_id(), brand, t0, None))
        )

        async def failed() -> bool:
            return [r["status"] for r in await deliveries(storage, brand)] == ["FAILED"]

        await eventually(failed)
    finally:
        await pipeline.stop()
    [record] = await deliveries(storage, brand)
    assert (record["lastError"], record.get("lastStatusCode")) == (NO_RESPONSE, None)
