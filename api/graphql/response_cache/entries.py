"""The response cache's entries: encoded ``data`` by request, tagged by what
the execution read, byte-bounded LRU with a TTL backstop.

An entry is indexed by every item key its execution read (the keys of pages'
windows included) and by every page's (index, partition) and index, so an
invalidation finds the responses it can change as the storage cache finds
its pages: by an item key, by an image entering a partition inside a page's
sort range, or by an item moving inside an index. Generations (the storage
cache's class) keep a response computed across a write from being stored
(docs/design.md, Response cache).
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

from storage.cache import Entered, Generations, PageKey, ReadLog
from storage.keys import Key
from storage.table import IndexName

__all__ = ["CachedResponse", "ResponseCache", "ResponseKey", "ResponseStats", "etag_of"]

ENTRY_OVERHEAD_BYTES = 512
"""An entry, its key and its cost besides the encoded data."""
_TAG_BYTES = 96
"""Each tag: its place in the entry and in an index."""
_EXTENSIONS_BYTES = 256
"""A hit's body besides the data: ``extensions.cost``."""


class ResponseKey(NamedTuple):
    document: str
    """The SHA-256 of the registered document's text."""
    operation: str
    variables: bytes
    """The variables as canonical JSON (sorted keys, no spaces)."""
    scope: str
    """What the caller may see (``api/graphql/response_cache/requests.py``)."""


@dataclass(slots=True)
class CachedResponse:
    operation: str
    data: bytes
    """``data``, encoded: the body is built around it per answer."""
    cost: int | None
    """The planned cost, reported again on a hit."""
    etag: str
    size: int
    deadline: float
    keys: frozenset[Key]
    pages: frozenset[PageKey]
    bodies: dict[bool, bytes] = field(default_factory=dict)
    """The hit's body, built once per kind of caller: keyed or anonymous."""


class ResponseStats:
    __slots__ = ("dropped", "evictions", "flushes", "hits", "invalidations", "misses", "skipped")

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()
        self.evictions: Counter[tuple[str, str]] = Counter()
        """By (operation, reason): ``capacity``, ``expired``."""
        self.skipped: Counter[str] = Counter()
        """Answers not kept, by reason (errors, a write overtook, a read through...)."""
        self.invalidations = 0
        self.dropped = 0
        self.flushes = 0


def etag_of(data: bytes) -> str:
    return '"' + hashlib.blake2b(data, digest_size=16).hexdigest() + '"'


_K = TypeVar("_K")


class ResponseCache:
    def __init__(
        self,
        max_bytes: int,
        ttl_seconds: float,
        trusted: Callable[[], bool] = lambda: True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``trusted``: the storage cache's freshness gate; while it is down
        nothing is served or kept."""
        self.max_bytes = max_bytes
        self.bytes = 0
        self.stats = ResponseStats()
        self.generations = Generations()
        self.trusted = trusted
        self._ttl = ttl_seconds
        self._clock = clock
        self._lru: OrderedDict[ResponseKey, CachedResponse] = OrderedDict()
        self._by_key: dict[Key, set[ResponseKey]] = {}
        self._by_partition: dict[tuple[IndexName, str], set[ResponseKey]] = {}
        self._by_index: dict[IndexName, set[ResponseKey]] = {}

    def __len__(self) -> int:
        return len(self._lru)

    def held(self) -> frozenset[ResponseKey]:
        return frozenset(self._lru)

    def get(self, key: ResponseKey) -> CachedResponse | None:
        """The entry, counted as a hit or a miss; None while untrusted."""
        entry = self._lru.get(key) if self.trusted() else None
        if entry is not None and entry.deadline <= self._clock():
            self._drop(key, "expired")
            entry = None
        if entry is None:
            self.stats.misses[key.operation] += 1
            return None
        self._lru.move_to_end(key)
        self.stats.hits[key.operation] += 1
        return entry

    def peek(self, key: ResponseKey) -> CachedResponse | None:
        """The entry if it may be served, uncounted (a conditional GET's check)."""
        entry = self._lru.get(key) if self.trusted() else None
        return entry if entry is not None and entry.deadline > self._clock() else None

    def begin(self) -> int:
        return self.generations.begin()

    def end(self) -> None:
        self.generations.end()

    def put(
        self, key: ResponseKey, data: bytes, cost: int | None, log: ReadLog, start: int
    ) -> CachedResponse | None:
        """Keeps ``data`` if every read was one the storage cache keeps and no
        invalidation touching them was applied since ``start``."""
        why = self._refusal(log, start)
        if why is not None:
            self.stats.skipped[why] += 1
            return None
        deadline = min(self._clock() + self._ttl, log.expiry)
        # The data, and at most two bodies built around it (``bodies``).
        held = 3 * len(data) + 2 * _EXTENSIONS_BYTES
        size = ENTRY_OVERHEAD_BYTES + held + _TAG_BYTES * (len(log.keys) + len(log.pages))
        if size > self.max_bytes or deadline <= self._clock():
            self.stats.skipped["too large or expiring"] += 1
            return None
        entry = CachedResponse(
            key.operation,
            data,
            cost,
            etag_of(data),
            size,
            deadline,
            frozenset(log.keys),
            frozenset(log.pages),
        )
        if key in self._lru:
            self._drop(key, None)
        self._lru[key] = entry
        self.bytes += size
        self._index(key, entry)
        while self.bytes > self.max_bytes:
            self._drop(next(iter(self._lru)), "capacity")
        return entry

    def _refusal(self, log: ReadLog, start: int) -> str | None:
        if not log.exact:
            return "read through"
        if not self.trusted():
            return "untrusted"
        if not self.generations.unchanged(start, log.slots()):
            return "overtaken by a write"
        return None

    def _index(self, key: ResponseKey, entry: CachedResponse) -> None:
        for item_key in entry.keys:
            self._by_key.setdefault(item_key, set()).add(key)
        for page in entry.pages:
            self._by_partition.setdefault((page.table_index, page.partition), set()).add(key)
            self._by_index.setdefault(page.table_index, set()).add(key)

    def _drop(self, key: ResponseKey, reason: str | None) -> None:
        entry = self._lru.pop(key)
        self.bytes -= entry.size
        for item_key in entry.keys:
            _discard(self._by_key, item_key, key)
        for page in entry.pages:
            _discard(self._by_partition, (page.table_index, page.partition), key)
            _discard(self._by_index, page.table_index, key)
        if reason is not None:
            self.stats.evictions[(entry.operation, reason)] += 1

    # The storage cache's ``Dependent``

    def invalidated(
        self,
        keys: Iterable[Key],
        entered: Iterable[Entered],
        anywhere: Iterable[tuple[IndexName, str]],
    ) -> None:
        keys, entered, anywhere = list(keys), list(entered), list(anywhere)
        doomed: set[ResponseKey] = set()
        for key in keys:
            doomed.update(self._by_key.get(key, ()))
        for index, partition, sort_key in entered:
            for held in self._by_partition.get((index, partition), ()):
                if sort_key is None or self._holds(held, index, partition, sort_key):
                    doomed.add(held)
        for index, sort_key in anywhere:
            for held in self._by_index.get(index, ()):
                if self._holds(held, index, None, sort_key):
                    doomed.add(held)
        for gone in doomed:
            self._drop(gone, None)
        self.stats.invalidations += 1
        self.stats.dropped += len(doomed)
        slots: list[Hashable] = [*keys]
        slots.extend(("P", e.table_index, e.partition) for e in entered)
        slots.extend(index for index, _ in anywhere)
        self.generations.stamp(slots)

    def _holds(
        self, key: ResponseKey, index: IndexName, partition: str | None, sort_key: str
    ) -> bool:
        """Whether a page of ``key``'s entry in ``index`` (and ``partition``,
        unless None) has a sort range holding ``sort_key``."""
        return any(
            page.table_index is index
            and (partition is None or page.partition == partition)
            and page.sort.matches(sort_key)
            for page in self._lru[key].pages
        )

    def flushed(self) -> None:
        self._lru.clear()
        self._by_key.clear()
        self._by_partition.clear()
        self._by_index.clear()
        self.bytes = 0
        self.generations.forget_all()
        self.stats.flushes += 1


def _discard(index: dict[_K, set[ResponseKey]], slot: _K, key: ResponseKey) -> None:
    held = index.get(slot)
    if held is not None:
        held.discard(key)
        if not held:
            del index[slot]
