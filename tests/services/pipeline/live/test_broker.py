from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from domain.datetimes import format_datetime
from domain.errors import ServiceUnavailable
from services.pipeline import Broker, SubscriptionLimits
from storage import Item

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def alert(alert_id: str, brand: str = "B1", at: datetime = T0) -> Item:
    return {"id": alert_id, "brandId": brand, "recordedAt": format_datetime(at)}


def broker(queue_max: int = 4, subscriptions_max: int = 10) -> Broker:
    return Broker(
        queue_max=queue_max,
        limits=SubscriptionLimits(per_process=subscriptions_max),
        overlap=timedelta(seconds=5),
    )


async def test_alerts_reach_only_their_brands_subscribers_in_order() -> None:
    hub = broker()
    mine, theirs = hub.add("B1"), hub.add("B2")
    for name in ("a", "b", "c"):
        assert hub.publish(alert(name))
    assert [(await mine.next() or {})["id"] for _ in range(3)] == ["a", "b", "c"]
    assert len(theirs) == 0


async def test_an_alert_is_passed_on_once_however_often_it_is_offered() -> None:
    hub = broker()
    subscriber = hub.add("B1")
    assert hub.publish(alert("a"))
    assert not hub.publish(alert("a"))
    assert len(subscriber) == 1


async def test_alerts_of_unwatched_brands_are_dropped() -> None:
    hub = broker()
    assert not hub.publish(alert("a"))
    subscriber = hub.add("B1")
    assert hub.publish(alert("a"))
    assert len(subscriber) == 1


async def test_alerts_known_before_watching_are_never_news() -> None:
    hub = broker()
    subscriber = hub.add("B1")
    hub.mark_seen("B1", [alert("old")], T0)
    assert not hub.publish(alert("old"))
    assert hub.publish(alert("new"))
    assert (await subscriber.next() or {})["id"] == "new"


async def test_a_slow_subscriber_is_closed_and_told_not_silently_skipped() -> None:
    overflowed: list[str] = []
    hub = broker(queue_max=3)
    slow = hub.add("B1", lambda: overflowed.append("slow"))
    fast = hub.add("B1", lambda: overflowed.append("fast"))
    for index in range(3):
        hub.publish(alert(f"a{index}"))
        await fast.next()
    hub.publish(alert("a3"))
    assert overflowed == ["slow"]
    assert slow.overflowed and slow.closed
    assert await slow.next() is None
    assert (await fast.next() or {})["id"] == "a3"


async def test_next_waits_for_the_next_alert() -> None:
    hub = broker()
    subscriber = hub.add("B1")
    waiting = asyncio.create_task(subscriber.next())
    await asyncio.sleep(0)
    assert not waiting.done()
    hub.publish(alert("a"))
    assert (await waiting or {})["id"] == "a"


async def test_removing_the_last_subscriber_forgets_the_brand() -> None:
    hub = broker()
    first, second = hub.add("B1"), hub.add("B1")
    hub.remove(first)
    assert hub.watched() == ["B1"]
    hub.remove(second)
    hub.remove(second)
    assert hub.watched() == []
    assert hub.subscription_count == 0
    assert await second.next() is None


async def test_subscriptions_are_capped_per_process() -> None:
    hub = broker(subscriptions_max=2)
    hub.add("B1")
    hub.add("B2")
    with pytest.raises(ServiceUnavailable):
        hub.add("B3")
