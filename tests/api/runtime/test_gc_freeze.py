"""After the freeze, cyclic garbage is collected as the live heap grows, not
once as many objects as start-up built have moved to the oldest generation."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import textwrap
import weakref
from datetime import timedelta
from pathlib import Path
from typing import Any

from api.runtime.gc_freeze import FreezeAfterStartup

ROOT = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent(
    """
    import gc, sys, weakref
    from datetime import timedelta
    from api.runtime.gc_freeze import FreezeAfterStartup

    class Node:
        __slots__ = ("other", "__weakref__")

    start_up = [[] for _ in range(1_000_000)]  # the heap start-up built
    FreezeAfterStartup(None, full_every=timedelta(0)).started()
    full_before = gc.get_stats()[2]["collections"]

    # 10,000 cycles, as closed WebSockets leave them: old enough to reach
    # the oldest generation, then dropped.
    cycles = []
    for _ in range(10_000):
        a, b = Node(), Node()
        a.other, b.other = b, a
        cycles.append(a)
    gc.collect(1)
    watched = weakref.ref(cycles[0])
    del cycles, a, b

    # Requests come and go: short-lived objects, more than a young generation at a time.
    for _ in range(200):
        chunk = [[] for _ in range(6_000)]
        del chunk
    full = gc.get_stats()[2]["collections"] - full_before
    print(full, watched() is None)
    """
)


def test_cycles_in_the_oldest_generation_are_collected_after_the_freeze() -> None:
    result = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, check=True
    )
    full, collected = result.stdout.split()
    assert int(full) >= 1
    assert collected == "True"


class Node:
    __slots__ = ("__weakref__", "other")


def _old_cycle() -> weakref.ref[Node]:
    """A dropped cycle in the oldest generation, as a closed socket leaves one."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    gc.collect(1)
    return weakref.ref(a)


async def test_a_served_process_collects_every_generation_every_period() -> None:
    """Only the period's collections run here. The thresholds' are off:
    whatever else allocates on the suite's loop meanwhile could reach them
    during the control's wait. (One run of the suite failed the control on
    another lifespan's periodic collection, left running on that loop; it
    now ends with its lifespan, the test below.)"""
    threshold = gc.get_threshold()
    periodic = FreezeAfterStartup(None, full_every=timedelta(milliseconds=20))  # type: ignore[arg-type]
    gc.disable()
    try:
        FreezeAfterStartup(None, full_every=timedelta(0)).started()  # type: ignore[arg-type]
        kept = _old_cycle()
        await asyncio.sleep(0.2)
        assert kept() is not None, "without the period nothing collects the cycle"
        periodic.started()
        freed = _old_cycle()
        async with asyncio.timeout(10):
            while freed() is not None:
                await asyncio.sleep(0.01)
        assert kept() is None
    finally:
        # Left running, it collected the test process's whole heap every
        # 20 ms for every later test on the same loop (seconds each, once
        # unfrozen): the suite's last minutes crawled and timing tests failed.
        periodic.stop()
        gc.unfreeze()
        gc.set_threshold(*threshold)
        gc.enable()


async def test_the_periodic_collection_ends_with_the_lifespan() -> None:
    """A lifespan that shuts down takes its collections with it: one left on
    a loop that outlives it (the suite's, an embedding server's) collected
    every generation every period for as long as the loop ran, and freed a
    later test's control cycle. Counted over a window, the automatic
    collections off; before the shut-down the same window counts them."""
    messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "lifespan.startup.complete"})
        await receive()
        await send({"type": "lifespan.shutdown.complete"})

    async def nothing(message: Any) -> None:
        pass

    threshold = gc.get_threshold()
    freezer = FreezeAfterStartup(app, full_every=timedelta(milliseconds=10))
    gc.disable()
    try:
        await messages.put({"type": "lifespan.startup"})
        lifespan = asyncio.create_task(freezer({"type": "lifespan"}, messages.get, nothing))
        assert await _full_collections_in(0.1) > 0  # the positive control: running
        await messages.put({"type": "lifespan.shutdown"})
        await lifespan
        assert await _full_collections_in(0.1) == 0
    finally:
        freezer.stop()
        gc.unfreeze()
        gc.set_threshold(*threshold)
        gc.enable()


async def _full_collections_in(seconds: float) -> int:
    before = gc.get_stats()[2]["collections"]
    await asyncio.sleep(seconds)
    return int(gc.get_stats()[2]["collections"] - before)
