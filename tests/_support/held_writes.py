"""A store stand-in whose writes commit and then wait: a write committed
whose caller has not heard so yet (docs/design.md, Storage cache, The
watermark)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from storage import Forwarding, Storage, WriteAction

__all__ = ["HeldWrites"]


class HeldWrites(Forwarding):
    """Commits each write through ``inner``, then answers only once ``release``
    is set (set from the start unless ``held``)."""

    def __init__(self, inner: Storage, *, held: bool = True) -> None:
        super().__init__(inner)
        self.committed = asyncio.Event()
        self.release = asyncio.Event()
        if not held:
            self.release.set()

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        await self.inner.transact_write(actions)
        self.committed.set()
        await self.release.wait()
