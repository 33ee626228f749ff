"""The store as commands see it while a pipeline runs: outbox items reach
this process's relay the moment the transaction that wrote them commits.

Without this the relay would learn of a new item only at its next poll; with
it, a scan's alerts are raised a few milliseconds after the scan commits, and
no claim is attempted before the item exists. While the relay's lane has
room, the item is even written claimed by it (``born_put``), so the relay
works it without a claim's write of its own (docs/design.md, Pipeline).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import NamedTuple, Protocol

from domain.errors import ConditionFailed
from storage import Forwarding, Item, Put, Storage, WriteAction
from storage.protocol import kept_reads

from .events import EventKind, OutboxEvent
from .outbox.intake import is_webhook
from .outbox.items import Lease, born_put, outbox_put
from .settings import PipelineSettings

__all__ = ["HANDOVER_MAX", "CommittingStorage", "Handover", "Holder"]

_OUTBOX_ENTITY = "OutboxItem"
HANDOVER_MAX = 256
"""Outbox items built and not yet committed (or abandoned) that the handover
remembers: one per command in flight, the oldest forgotten first."""


class Holder(Protocol):
    """What the relay offers commands (``Relay``)."""

    def reserve(self) -> Lease | None: ...
    def born(self, item: Item, lease: Lease, event: OutboxEvent | None = None) -> None: ...
    def expect(self, item: Item) -> None: ...


class Handover:
    """The events of the outbox items this process's commands built, by
    event id, so the committing store hands the relay the event itself rather
    than the payload to parse back (the payload stays what every other reader
    reads). Only the very ``Put`` noted counts (an equal one from elsewhere is
    parsed); a transaction that never commits leaves an entry the bound forgets."""

    def __init__(self, limit: int = HANDOVER_MAX) -> None:
        self._limit = limit
        self._built: dict[str, tuple[Put, OutboxEvent, Lease | None]] = {}

    def note(self, put: Put, event: OutboxEvent, lease: Lease | None = None) -> Put:
        """``lease``: the one ``put`` was built born claimed under."""
        built = self._built
        if len(built) >= self._limit:
            del built[next(iter(built))]
        built[event.event_id] = (put, event, lease)
        return put

    def _noted(self, put: Put) -> tuple[Put, OutboxEvent, Lease | None] | None:
        built = self._built.get(put.item["id"])
        return built if built is not None and built[0] is put else None

    def find(self, put: Put) -> OutboxEvent | None:
        built = self._noted(put)
        return None if built is None else built[1]

    def lease(self, put: Put) -> Lease | None:
        built = self._noted(put)
        return None if built is None else built[2]

    def forget(self, put: Put) -> None:
        if self._noted(put) is not None:
            del self._built[put.item["id"]]

    def __len__(self) -> int:
        return len(self._built)


class _Born(NamedTuple):
    put: Put
    """As written; ``original`` as the command built it."""
    original: Put
    lease: Lease
    event: OutboxEvent | None


class CommittingStorage(Forwarding):
    """A ``Storage`` that hands every outbox item a successful
    ``transact_write`` created to ``relay``: born claimed when it reserved
    room, as a hint otherwise."""

    def __init__(
        self,
        inner: Storage,
        relay: Holder,
        handover: Handover | None = None,
        *,
        settings: PipelineSettings | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__(inner)
        self.kept = kept_reads(inner)
        """The cache's hits at once, read past this store as its reads are
        (docs/design.md, Storage cache, Hits at once)."""
        self._relay = relay
        self._handover = handover if handover is not None else Handover()
        self._settings = settings if settings is not None else PipelineSettings()
        self._clock = clock

    def enqueue(self, event: OutboxEvent) -> list[WriteAction]:
        """``Pipeline.enqueue`` for a transaction written through this
        storage: the item built born claimed at once while the relay has room,
        rather than built ready and copied at the commit. Only for actions
        this storage writes: anything else writes ``Pipeline.enqueue``'s ready
        item, which no lease hides from the relays."""
        if self._clock is None:
            raise RuntimeError("CommittingStorage.enqueue needs the pipeline's clock")
        lease = None if event.kind is EventKind.WEBHOOK else self._relay.reserve()
        put = outbox_put(event, now=self._clock(), settings=self._settings, lease=lease)
        return [self._handover.note(put, event, lease)]

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        """A call that fails may still have committed (a reply lost after the
        driver's retries, a request cancelled mid-commit): each of its outbox
        items is then hinted, so one that committed is claimed now rather
        than when its lease ends, and the claim of one that did not simply
        loses. A failed condition is no such case: nothing was written."""
        written, born, hinted = self._born(actions)
        try:
            await self.inner.transact_write(written)
        except ConditionFailed:
            self._forget(born, hinted)
            raise
        except BaseException:
            self._forget(born, hinted)
            for item in [entry.put.item for entry in born] + [put.item for put in hinted]:
                self._relay.expect(item)
            raise
        self._forget(born, hinted)
        for entry in born:
            self._relay.born(entry.put.item, entry.lease, entry.event)
        for put in hinted:
            self._relay.expect(put.item)

    def _forget(self, born: list[_Born], hinted: list[Put]) -> None:
        for entry in born:
            self._handover.forget(entry.original)
        for put in hinted:
            self._handover.forget(put)

    def _born(
        self, actions: Sequence[WriteAction]
    ) -> tuple[Sequence[WriteAction], list[_Born], list[Put]]:
        """``actions`` with each outbox item the relay has room for born
        claimed by it; those items with their leases and events; the outbox
        items to hint instead."""
        born: list[_Born] = []
        hinted: list[Put] = []
        written: list[WriteAction] | None = None
        for index, action in enumerate(actions):
            if not isinstance(action, Put) or action.item.get("entity") != _OUTBOX_ENTITY:
                continue
            lease = self._handover.lease(action)
            if lease is not None:  # built born claimed by ``enqueue``
                born.append(_Born(action, action, lease, self._handover.find(action)))
                continue
            lease = None if is_webhook(action.item) else self._relay.reserve()
            if lease is None:
                hinted.append(action)
                continue
            put = born_put(action, lease)
            born.append(_Born(put, action, lease, self._handover.find(action)))
            written = written if written is not None else list(actions)
            written[index] = put
        return (actions if written is None else written), born, hinted
