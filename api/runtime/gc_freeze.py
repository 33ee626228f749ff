"""``gc.freeze()`` once the application has started, and a young generation
sized for a request.

Start-up leaves a large, long-lived heap (the schema, its caches, the
storage clients, the demo data). Left in the collected generations, every
full collection walks it again: measured on this stack, p99 on a 50-item
query fell from ~14 ms to ~2 ms once it was frozen. Freezing on the
lifespan's ``startup.complete`` catches everything start-up built, and only
in a served process: tests that run the lifespan in-process keep a normal GC.

The youngest generation is collected when the objects allocated since the
last collection, less those freed, pass its threshold. At CPython's default
(700) a verification crosses it mid-request on its own: the items it
decodes and the actions it builds are alive together, and are freed by
their reference counts moments later. So the collector ran about once per
seven verifications to find almost nothing, ~75 us a verification under
load (measured with ``gc.callbacks``). At ``YOUNG_THRESHOLD`` a request's
own objects stay below it and the collector runs about once per thousand
verifications. The bound on uncollected cyclic garbage stays a count of
objects, seven times the default's.

A full collection waits, besides the counts, until the objects moved to the
oldest generation since the last one exceed a quarter of those it kept. The
collection before the freeze kept the whole start-up heap, hundreds of
thousands of objects, so with that count standing the next full collection
waited for as many newcomers: a closed WebSocket leaves ~130 objects in
reference cycles (uvicorn's protocol and its parser, websockets' protocol
and its generator), and the soak's reconnects piled them up for tens of
minutes, RSS climbing all the while (docs/design.md, Memory growth). One
more full collection after the freeze, over the then-empty oldest
generation, counts only what is not frozen, so full collections come as the
live heap grows and walk only it.

Even so the oldest generation is examined only after ten collections of the
middle one, which under steady load (a request frees what it allocates) is
an hour apart: a socket open for minutes is in the oldest generation when it
closes, and its cycles waited that long. So a served process also collects
everything every ``PROOFGATE_GC_FULL_MS`` (60 s): the frozen heap is not
walked, the rest (~150k objects under the soak's 500 sockets) takes ~15 ms.
"""

from __future__ import annotations

import asyncio
import gc
from datetime import timedelta

from starlette.types import ASGIApp

from api.runtime.startup_hook import AfterStartup

__all__ = ["FULL_EVERY", "YOUNG_THRESHOLD", "FreezeAfterStartup"]

FULL_EVERY = timedelta(seconds=60)

YOUNG_THRESHOLD = 5_000


class FreezeAfterStartup(AfterStartup):
    def __init__(self, app: ASGIApp, *, full_every: timedelta = FULL_EVERY) -> None:
        """``full_every``: how often to collect every generation; zero: never."""
        super().__init__(app)
        self.full_every = full_every.total_seconds()
        self._timer: asyncio.TimerHandle | None = None

    def started(self) -> None:
        gc.collect()
        gc.freeze()
        gc.collect()
        _, middle, oldest = gc.get_threshold()
        gc.set_threshold(YOUNG_THRESHOLD, middle, oldest)
        if self.full_every > 0:
            self._timer = asyncio.get_running_loop().call_later(self.full_every, self._collect)

    def stop(self) -> None:
        """No more periodic collections: the lifespan's shut-down stops them,
        and a test that started them by hand stops them itself."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _collect(self) -> None:
        gc.collect()
        self._timer = asyncio.get_running_loop().call_later(self.full_every, self._collect)
