"""``ChannelFreshness.heard_through``, the watermark, on clocks the test
moves (docs/design.md, Cache invalidations across processes, The watermark)."""

from __future__ import annotations

import math

from services.pipeline.live.cache_freshness import ChannelFreshness


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def freshness() -> tuple[ChannelFreshness, Clock, list[int]]:
    flushed: list[int] = []
    clock = Clock(100.0)
    gate = ChannelFreshness(
        lambda: flushed.append(1),
        deaf_after=1.0,
        skew=5.0,
        clock_skew=0.05,
        gone_after=10.0,
        clock=clock,
        wall_clock=lambda: 1_000.0,
    )
    return gate, clock, flushed


def heartbeat(gate: ChannelFreshness, publisher: str, through: float) -> None:
    gate.heard(publisher, 0, 0.0, invalidation=False, own=False, through=through)


def test_nothing_is_proved_until_every_live_publisher_had_time_to_be_heard() -> None:
    gate, clock, _ = freshness()
    assert gate.heard_through() == -math.inf  # not listening
    gate.listening()
    heartbeat(gate, "a", 2_000.0)
    assert gate.heard_through() == -math.inf  # listened for less than deaf_after
    clock.now += 1.0
    gate.heard("me", 0, 0.0, invalidation=False, own=True)  # its own: not counted
    assert gate.heard_through() == 2_000.0 - 0.05


def test_the_slowest_publisher_holds_it_back_until_it_is_gone() -> None:
    gate, clock, _ = freshness()
    gate.listening()
    clock.now += 1.0
    gate.heard("me", 0, 0.0, invalidation=False, own=True)
    heartbeat(gate, "a", 2_000.0)
    heartbeat(gate, "b", 1_990.0)
    assert gate.heard_through() == 1_990.0 - 0.05
    heartbeat(gate, "b", 1_980.0)  # a publisher's watermark never goes back
    assert gate.heard_through() == 1_990.0 - 0.05
    clock.now += 5.0  # b silent: it still holds the watermark (a keeps talking)
    gate.heard("me", 0, 0.0, invalidation=False, own=True)
    heartbeat(gate, "a", 2_005.0)
    assert gate.heard_through() == 1_990.0 - 0.05
    clock.now += 5.5  # b silent past gone_after: taken as stopped
    gate.heard("me", 0, 0.0, invalidation=False, own=True)
    heartbeat(gate, "a", 2_010.0)
    assert gate.heard_through() == 2_010.0 - 0.05
    assert gate.heard_of("b") is None


def test_deaf_proves_nothing_and_hearing_again_starts_over() -> None:
    gate, clock, flushed = freshness()
    gate.listening()
    clock.now += 1.0
    gate.heard("me", 0, 0.0, invalidation=False, own=True)
    heartbeat(gate, "a", 2_000.0)
    assert gate.heard_through() > 0  # positive control
    gate.deaf()
    assert gate.heard_through() == -math.inf
    gate.listening()
    heartbeat(gate, "a", 2_001.0)
    assert gate.heard_through() == -math.inf  # warming up again
    assert len(flushed) == 2
