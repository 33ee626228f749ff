"""``CachedStorage``: a ``Storage`` that keeps what cacheable patterns read.

It wraps any ``Storage`` (the same Protocol, so nothing above it changes).
Gets, batch gets and query pages of patterns whose rule allows it are kept;
every write that may have committed drops, by its own keys, what it can
have changed, and stamps the generations a read in flight checks before it
keeps its answer (docs/design.md, Storage cache).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from decimal import Decimal
from functools import partial
from typing import Any, Protocol

from domain.errors import ConditionFailed, TransactionCanceled

from ..access_patterns import REGISTRY
from ..budget import before_read, spend_read
from ..keys import Key
from ..protocol import Page, Storage
from ..registry import AccessPattern, Operation, Registry
from ..store import Store
from ..table import TABLE, IndexName
from ..values import Item
from ..writes import WriteAction
from .around import ReadsAround
from .entries import Entries, Entry, PageKey, item_bytes, page_bytes
from .freshness import Freshness, LocalFreshness
from .frozen import freeze_item, freeze_page
from .generations import Generations
from .hits import HitsAtOnce
from .invalidation import Entered, Invalidation, invalidation_of
from .reads import ReadLog, current_reads
from .rules import RULES, Rule
from .scope import Scope
from .stats import CacheStats

__all__ = [
    "CANCELLED_WRITE_SECONDS",
    "EXPIRY_MARGIN_SECONDS",
    "REPLICA_SETTLE_SECONDS",
    "CachedStorage",
    "Dependent",
]

EXPIRY_MARGIN_SECONDS = 5.0
"""An entry holding an item that carries an expiry is dropped this long
before it: a TTL delete (ours, or DynamoDB's by its own clock) is never
announced, and may never come earlier than the expiry."""
CANCELLED_WRITE_SECONDS = 10.0
"""A write whose caller was cancelled may commit after its invalidation (a
queued group commit, a request DynamoDB had received): its invalidation is
applied again this much later, past SQLite's lock wait and any request's end.
Such a write was never acknowledged; until then a read may keep what it saw
before it committed."""
REPLICA_SETTLE_SECONDS = 1.0
"""On DynamoDB an eventually consistent read (every GSI read) may return
what was there before an acknowledged write for a short while; each
invalidation is applied once more after this long, so a page read from a
lagging replica is not kept past it."""

_TTL = TABLE.ttl_attribute
_LAGGING_BACKENDS = frozenset({"dynamodb"})


def _slots_of_page(key: PageKey, window: Sequence[Key]) -> tuple[Hashable, ...]:
    return (*window, ("P", key.table_index, key.partition), key.table_index)


_NUMBER = (int, Decimal)


def _expiry(items: Sequence[Item | None]) -> float:
    """The earliest expiry among ``items`` minus the margin; inf without one."""
    earliest = float("inf")
    for item in items:
        if item is None:
            continue
        value = item.get(_TTL)
        if isinstance(value, _NUMBER) and not isinstance(value, bool):
            earliest = min(earliest, float(value) - EXPIRY_MARGIN_SECONDS)
    return earliest


def _key_of(item: Item) -> Key:
    return Key(item[TABLE.primary.partition_key], item[TABLE.primary.sort_key])


def _window(page: Page) -> list[Item]:
    """What the page's answer rests on: its items and the one read beyond."""
    return page.items if page.beyond is None else [*page.items, page.beyond]


class Dependent(Protocol):
    """A cache built on what this one reads (the response cache): it hears
    every invalidation applied here, resolved as applied, and every flush."""

    def invalidated(
        self,
        keys: Iterable[Key],
        entered: Iterable[Entered],
        anywhere: Iterable[tuple[IndexName, str]],
    ) -> None: ...

    def flushed(self) -> None: ...


def _note_item(log: ReadLog | None, key: Key, item: Item | None) -> None:
    if log is not None:
        log.keys.add(key)
        log.expiry = min(log.expiry, _expiry((item,)))


def _note_page(log: ReadLog | None, key: PageKey, items: Sequence[Item]) -> None:
    if log is not None:
        log.pages.add(key)
        log.keys.update(_key_of(item) for item in items)
        log.expiry = min(log.expiry, _expiry(items))


def _note_through(ap: AccessPattern) -> None:
    log = current_reads()
    if log is not None:
        log.refuse(f"{ap.id} read through")


class CachedStorage(HitsAtOnce):
    def __init__(
        self,
        inner: Storage,
        *,
        max_bytes: int,
        ttl_seconds: float,
        freshness: Freshness | None = None,
        registry: Registry = REGISTRY,
        rules: Mapping[str, Rule] = RULES,
        clock: Callable[[], float] = time.time,
        settle_seconds: float | None = None,
        doubt_seconds: float = CANCELLED_WRITE_SECONDS,
    ) -> None:
        """``settle_seconds``: when to apply each invalidation again (None: by
        the backend, ``REPLICA_SETTLE_SECONDS`` on DynamoDB, never on SQLite)."""
        self.inner = inner
        self.backend = inner.backend
        self.stats = CacheStats()
        self.entries = Entries(max_bytes, self.stats.evicted)
        self.generations = Generations()
        self.freshness: Freshness = freshness if freshness is not None else LocalFreshness()
        self._registry = registry
        self._rules = rules
        self._scope = Scope.of(
            registry, lambda pattern: pattern.id in rules and rules[pattern.id].served
        )
        self._ttl = ttl_seconds
        self._clock = clock
        if settle_seconds is None:
            lagging = inner.backend in _LAGGING_BACKENDS
            settle_seconds = REPLICA_SETTLE_SECONDS if lagging else 0.0
        self._settle = settle_seconds
        self._doubt = doubt_seconds
        self._listeners: list[Callable[[Invalidation], None]] = []
        self._dependents: list[Dependent] = []
        self._pending: dict[int, float] = {}
        """This process's writes that may commit and whose invalidation has
        not been applied and handed to the listeners: their start times."""
        self._writes = 0
        self._init_keys(max_bytes)

    # Reads

    def _serves(self, ap: AccessPattern, now: float) -> bool | None:
        """True: serve from the cache; False: read through but keep the
        answer; None: pass through."""
        rule = self._rules.get(ap.id)
        if rule is Rule.CACHED:
            return self.freshness.trusted() or None
        if rule is not Rule.FRESHNESS or not self.freshness.trusted():
            return None
        heard = self.freshness.heard_through()
        # A channel that can never prove anything (LocalFreshness): keeping
        # what no one may be served would only crowd out what can be.
        if heard == -math.inf:
            return None
        # docs/design.md, Storage cache, The watermark: every write committed
        # before the read began has been applied here, others' and our own.
        return min(heard, self.settled_through()) >= now

    def settled_through(self) -> float:
        """A wall-clock time before which every write of this process that
        may have committed has had its invalidation applied here and handed
        to the listeners: the start of the oldest write still in flight (a
        write cancelled in doubt stays in flight until its second drop), or
        ``inf`` when none is."""
        pending = self._pending
        return min(pending.values()) if pending else math.inf

    def _keeps(self, start: int, slots: Sequence[Hashable]) -> bool:
        return self.freshness.trusted() and self.generations.unchanged(start, slots)

    def _deadline(self, items: Sequence[Item | None]) -> float:
        return min(self._clock() + self._ttl, _expiry(items))

    @property
    def inner(self) -> Storage:
        return self._inner

    @inner.setter
    def inner(self, inner: Storage) -> None:
        """A store put under the cache later (a test's stand-in) is read as
        the first was: ``_keyed`` follows it."""
        self._inner = inner
        self._keyed = inner if isinstance(inner, Store) else None
        """The store itself: a miss reads by the key spelled here, not again."""

    def _served_item(self, ap: AccessPattern, key: Key, entry: Entry) -> Item | None:
        item: Item | None = entry.value  # type: ignore[assignment]
        self.stats.hits[ap.id] += 1
        before_read()
        spend_read(int(item is not None), 0.0)
        _note_item(current_reads(), key, item)
        return item

    def _served_page(self, ap: AccessPattern, key: PageKey, entry: Entry) -> Page:
        page: Page = entry.value  # type: ignore[assignment]
        self.stats.hits[ap.id] += 1
        before_read()
        spend_read(len(entry.window), 0.0)
        log = current_reads()
        if log is not None:
            _note_page(log, key, _window(page))
        return page

    async def get(self, ap: AccessPattern, /, **params: Any) -> Item | None:
        now = self._clock()
        serves = self._serves(ap, now)
        if not serves:
            _note_through(ap)
        if serves is None:
            return await self.inner.get(ap, **params)
        self._registry.require(ap, Operation.GET)
        key = ap.key(**params)
        if serves:
            entry = self.entries.get(key, now)
            if entry is not None:
                return self._served_item(ap, key, entry)
            self.stats.misses[ap.id] += 1
        start = self.generations.begin()
        try:
            keyed = self._keyed
            if keyed is None:
                item = await self.inner.get(ap, **params)
            else:
                item = await keyed.get_at(ap, key)
            self._keep_item(ap, key, item, start)
        finally:
            self.generations.end()
        _note_item(current_reads(), key, item)
        return item

    def _keep_item(self, ap: AccessPattern, key: Key, item: Item | None, start: int) -> None:
        if not self._keeps(start, (key,)):
            return
        now = self._clock()
        deadline = now + self._ttl
        if item is not None and _TTL in item:
            deadline = min(deadline, _expiry((item,)))
            if deadline <= now:
                return
        size = item_bytes(item)
        if size <= self.entries.max_bytes:
            kept = None if item is None else freeze_item(item)
            self.entries.put(key, Entry(ap.id, kept, size, deadline))

    async def batch_get(
        self, ap: AccessPattern, params: Sequence[Mapping[str, Any]]
    ) -> list[Item | None]:
        now = self._clock()
        serves = self._serves(ap, now)
        if not serves:
            _note_through(ap)
        if serves is None:
            return await self.inner.batch_get(ap, params)
        self._registry.require(ap, Operation.BATCH_GET)
        keys = [ap.key(**p) for p in params]
        found: dict[Key, Item | None] = {}
        wanted: dict[Key, Mapping[str, Any]] = {}
        for key, p in zip(keys, params, strict=True):
            if key in found or key in wanted:
                continue
            entry = self.entries.get(key, now) if serves else None
            if entry is None:
                wanted[key] = p
            else:
                found[key] = entry.value  # type: ignore[assignment]
        hits = len(found)
        if hits:
            self.stats.hits[ap.id] += hits
            before_read()
            spend_read(sum(item is not None for item in found.values()), 0.0)
        if wanted:
            if serves:
                self.stats.misses[ap.id] += len(wanted)
            start = self.generations.begin()
            try:
                keyed = self._keyed
                if keyed is None:
                    items = await self.inner.batch_get(ap, list(wanted.values()))
                else:
                    items = await keyed.batch_get_at(ap, list(wanted))
                for key, item in zip(wanted, items, strict=True):
                    found[key] = item
                    self._keep_item(ap, key, item, start)
            finally:
                self.generations.end()
        log = current_reads()
        if log is not None:
            for key, item in found.items():
                _note_item(log, key, item)
        return [found[key] for key in keys]

    async def query(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        *,
        tenant: str,
        first: int | None = None,
        after: str | None = None,
    ) -> Page:
        now = self._clock()
        serves = self._serves(ap, now)
        size = ap.default_page if first is None else first
        if not serves:
            _note_through(ap)
        if serves is None or type(size) is not int:  # a bad size: the store refuses it
            return await self.inner.query(ap, params, tenant=tenant, first=first, after=after)
        self._registry.require(ap, Operation.QUERY)
        key = PageKey(
            ap.id, tenant, ap.index, ap.partition(params), ap.sort_range(params), size, after
        )
        if serves:
            entry = self.entries.get(key, now)
            if entry is not None:
                return self._served_page(ap, key, entry)
            self.stats.misses[ap.id] += 1
        start = self.generations.begin()
        page: Page
        try:
            page = await self.inner.query(ap, params, tenant=tenant, first=first, after=after)
            self._keep_page(ap, key, page, start)
        finally:
            self.generations.end()
        _note_page(current_reads(), key, _window(page))
        return page

    def _keep_page(self, ap: AccessPattern, key: PageKey, page: Page, start: int) -> None:
        items = _window(page)
        window = tuple(_key_of(item) for item in items)
        if not self._keeps(start, _slots_of_page(key, window)):
            return
        deadline = self._deadline(items)
        if deadline <= self._clock():
            return
        size = page_bytes(items, key.after)
        if size > self.entries.max_bytes:
            return
        # A hit hands out this one object: frozen, and charged for what a
        # reader derives from it (docs/design.md, Storage cache).
        kept = freeze_page(page)
        self.entries.put(key, Entry(ap.id, kept, size, deadline, window))
        kept.charge_with(partial(self.entries.grow, key))

    # Writes

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        log = current_reads()
        if log is not None:
            log.refuse("wrote")
        self._writes += 1
        token = self._writes
        self._pending[token] = self._clock()
        try:
            await self.inner.transact_write(actions)
        except (ConditionFailed, TransactionCanceled):
            del self._pending[token]
            raise  # nothing committed
        except asyncio.CancelledError:
            # The write may still commit (a queued group commit, a request
            # DynamoDB received): drop now, and again once it must have
            # ended; until then it holds settled_through back.
            invalidation = self._written(actions)
            loop = asyncio.get_running_loop()
            loop.call_later(self._doubt, self._doubted, token, invalidation)
            raise
        except BaseException:
            try:
                self._written(actions)  # a lost answer may hide a commit
            finally:
                del self._pending[token]
            raise
        try:
            self._written(actions)
        finally:
            del self._pending[token]

    def _doubted(self, token: int, invalidation: Invalidation) -> None:
        """A cancelled write's second drop, heard by the listeners too."""
        if invalidation:
            self.invalidate(invalidation)
            for listener in self._listeners:
                listener(invalidation)
        self._pending.pop(token, None)

    def _written(self, actions: Sequence[WriteAction]) -> Invalidation:
        invalidation = invalidation_of(actions, self._scope)
        if not invalidation:
            return invalidation
        self.invalidate(invalidation)
        for listener in self._listeners:
            listener(invalidation)
        if self._settle > 0:
            asyncio.get_running_loop().call_later(self._settle, self.invalidate, invalidation)
        return invalidation

    # Invalidation, from this process's writes or from elsewhere

    def on_invalidation(self, listener: Callable[[Invalidation], None]) -> None:
        """``listener`` hears every invalidation this process's writes make,
        after it was applied here: what another process must apply too."""
        self._listeners.append(listener)

    def invalidate(self, invalidation: Invalidation) -> None:
        """Drops what ``invalidation`` can have changed and stamps its slots."""
        entries = self.entries
        entered: frozenset[Entered] | set[Entered] = invalidation.entered
        anywhere: set[tuple[IndexName, str]] = set()
        if invalidation.moved:
            entered, anywhere = self._resolved(invalidation)
        self.stats.invalidations += 1
        self.stats.dropped += entries.drop(invalidation.keys, entered, anywhere)
        for dependent in self._dependents:
            dependent.invalidated(invalidation.keys, entered, anywhere)
        generations = self.generations
        if not generations.reading:
            generations.stamp(())  # no read in flight needs the slots
            return
        generations.stamp(
            (
                *invalidation.keys,
                *(("P", e.table_index, e.partition) for e in entered),
                *(index for index, _ in anywhere),
            )
        )

    def reads_around(self) -> Storage:
        """This cache with reads that pass it: for a reader of what a write
        just changed (the relay, ``around.py``)."""
        return ReadsAround(self)

    def _resolved(
        self, invalidation: Invalidation
    ) -> tuple[set[Entered], set[tuple[IndexName, str]]]:
        """Each moved item's partition, from an entry that holds it, or the
        whole index (resolved before anything is dropped)."""
        entered = set(invalidation.entered)
        anywhere: set[tuple[IndexName, str]] = set()
        for moved in invalidation.moved:
            partition = self.entries.partition_of(moved.key, moved.table_index)
            if partition is None:
                anywhere.add((moved.table_index, moved.sort_key))
            else:
                entered.add(Entered(moved.table_index, partition, moved.sort_key))
        return entered, anywhere

    def flush(self) -> None:
        """Drops everything, and every read in flight keeps nothing: for a
        channel that was deaf for a while and cannot say what it missed."""
        self.entries.clear()
        self.generations.forget_all()
        self.stats.flushes += 1
        for dependent in self._dependents:
            dependent.flushed()

    def add_dependent(self, dependent: Dependent) -> None:
        """``dependent`` hears every invalidation applied here (this process's
        writes, their second applications, and any heard from elsewhere) and
        every flush (docs/design.md, Response cache)."""
        self._dependents.append(dependent)

    async def close(self) -> None:
        self.entries.clear()
        await self.inner.close()
