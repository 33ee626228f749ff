"""A keep-alive round (docs/design.md, Keep-alives): frames written a batch a
turn of the loop, so other work (an alert's fan-out) waits for one batch at
most, and the sockets whose transport asked to pause sent their keep-alive
by their handler, counted."""

from __future__ import annotations

import asyncio

from api.observability import fallbacks
from api.runtime.direct_frames import HELD, WRITTEN, IdleAnswer
from api.settings.limits import Lane
from api.ws.connections import KEEPALIVE_BATCH, Connections, LiveConnection
from api.ws.keepalive import PING


class _Socket:
    """A ``FrameWriter`` that keeps what it was asked to write."""

    def __init__(self, written: list[bytes], paused: bool = False) -> None:
        self.written = written
        self.paused = paused

    def write(self, data: bytes, frame: bytes) -> int:
        self.written.append(frame)
        return WRITTEN

    def write_ready(self, data: bytes, frame: bytes) -> int:
        return HELD if self.paused else self.write(data, frame)

    def answer_idle(self, answer: IdleAnswer | None) -> None:
        raise AssertionError("a round does not answer messages")


async def test_a_round_writes_a_batch_a_turn_and_leaves_paused_sockets_to_their_handler() -> None:
    written: list[bytes] = []
    through_handler: list[int] = []
    connections = Connections()
    count = 2 * KEEPALIVE_BATCH + 10
    paused = {3, KEEPALIVE_BATCH + 7}
    for index in range(count):

        async def keepalive(index: int = index) -> None:
            through_handler.append(index)

        connection = LiveConnection(None, None, keepalive)
        connection.direct = (_Socket(written, paused=index in paused), PING)
        connections.add(connection)
    held_before = fallbacks.counts().get((Lane.KEEPALIVE.value, "transport paused"), 0)

    async def other_work() -> int:
        return len(written)

    round_ = asyncio.create_task(connections.keep_alive_round())
    seen = await asyncio.create_task(other_work())  # runs when the round yields
    await round_
    # The first batch's sockets (some of them paused: the set has no order).
    assert KEEPALIVE_BATCH - len(paused) <= seen <= KEEPALIVE_BATCH
    assert written == [PING.frame] * (count - len(paused))
    assert sorted(through_handler) == sorted(paused)
    held = fallbacks.counts().get((Lane.KEEPALIVE.value, "transport paused"), 0)
    assert held == held_before + len(paused)
