from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from domain.datetimes import format_datetime
from domain.enums import Severity
from domain.errors import ServiceUnavailable
from domain.threats.filters import AlertFilter
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


async def test_a_brands_ids_are_forgotten_by_age_not_only_by_count() -> None:
    """An alert a second for ten minutes, below the count bound (2 * 256):
    the broker keeps four overlaps' worth (5 s each), and still drops a
    repeat within two overlaps."""
    hub = Broker(queue_max=256, limits=SubscriptionLimits(), overlap=timedelta(seconds=5))
    hub.add("B1")
    for second in range(600):
        assert hub.publish(alert(f"a{second}", at=T0 + timedelta(seconds=second)))
    assert 10 <= hub.remembered("B1") <= 21
    assert not hub.publish(alert("a595", at=T0 + timedelta(seconds=595)))


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


def full_alert(alert_id: str, product: str, country: str | None, severity: str) -> Item:
    return {
        **alert(alert_id),
        "productId": product,
        "country": country,
        "type": "BURST_SCAN",
        "severity": severity,
    }


async def test_a_filtered_subscriber_is_offered_only_the_alerts_its_filter_admits() -> None:
    hub = broker()
    everything = hub.add("B1")
    french = hub.add("B1", alert_filter=AlertFilter(countries=frozenset({"FR"})))
    p1_serious = hub.add(
        "B1",
        alert_filter=AlertFilter(
            product_ids=frozenset({"P1"}), severities=frozenset({Severity.HIGH})
        ),
    )
    hub.publish(full_alert("a", "P1", "FR", "MEDIUM"))
    hub.publish(full_alert("b", "P1", None, "HIGH"))
    hub.publish(full_alert("c", "P2", "FR", "HIGH"))
    assert len(everything) == 3
    assert [(await french.next() or {})["id"] for _ in range(2)] == ["a", "c"]
    assert len(french) == 0
    assert (await p1_serious.next() or {})["id"] == "b"
    assert len(p1_serious) == 0
    hub.remove(french)
    hub.publish(full_alert("d", "P1", "FR", "HIGH"))
    assert len(p1_serious) == 1 and len(everything) == 4 and len(french) == 0
