"""The cache's entries: byte-bounded LRU, with the indexes invalidation needs.

Items are kept by their table key (a missing item too, as None). Pages are
kept by what names them (pattern, tenant, partition, sort range, page size,
cursor) and indexed by their partition and by every item key in their window
(the page's items and the one read beyond it), so a write finds the pages it
can change without looking at any other (docs/design.md, Storage cache).
"""

from __future__ import annotations

import base64
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import NamedTuple, TypeVar

import orjson

from ..keys import Key
from ..protocol import Page
from ..registry import SortRange
from ..table import TABLE, IndexName
from ..values import Item, item_size
from .invalidation import Entered

__all__ = ["ENTRY_OVERHEAD_BYTES", "Entries", "Entry", "PageKey"]

ENTRY_OVERHEAD_BYTES = 256
"""What an entry costs besides its items: the entry, its key, its index slots."""
_ITEM_OVERHEAD_BYTES = 64


class PageKey(NamedTuple):
    ap_id: str
    tenant: str
    table_index: IndexName
    partition: str
    sort: SortRange
    first: int
    after: str | None


@dataclass(slots=True)
class Entry:
    ap_id: str
    value: Item | Page | None
    size: int
    deadline: float
    window: tuple[Key, ...] = field(default=())


def _plain(value: object) -> object:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, set | frozenset):
        return list(value)
    raise TypeError(type(value).__name__)


def _size(value: object) -> int:
    """Bytes of the value as JSON: a little above DynamoDB's measure (quotes,
    braces), which is what a byte cap wants, and ~0.2 us an item where
    ``item_size`` takes ~5 (docs/design.md, Storage cache)."""
    try:
        return len(orjson.dumps(value, default=_plain))
    except TypeError:  # an int past 64 bits, which DynamoDB numbers may be
        if isinstance(value, list):
            return sum(item_size(item) for item in value)
        return item_size(value)  # type: ignore[arg-type]


def item_bytes(item: Item | None) -> int:
    return ENTRY_OVERHEAD_BYTES + (0 if item is None else _size(item))


def page_bytes(items: list[Item], after: str | None) -> int:
    return (
        ENTRY_OVERHEAD_BYTES + len(after or "") + _size(items) + _ITEM_OVERHEAD_BYTES * len(items)
    )


_K = TypeVar("_K")
_INDEX = {index.name: index for index in TABLE.indexes}


class Entries:
    def __init__(self, max_bytes: int, on_evict: Callable[[str, str], None]) -> None:
        """``on_evict(ap_id, reason)``: for the counters."""
        self.max_bytes = max_bytes
        self.bytes = 0
        self._lru: OrderedDict[Key | PageKey, Entry] = OrderedDict()
        self._by_key: dict[Key, set[PageKey]] = {}
        self._by_partition: dict[tuple[IndexName, str], set[PageKey]] = {}
        self._by_index: dict[IndexName, set[PageKey]] = {}
        self._on_evict = on_evict

    def __len__(self) -> int:
        return len(self._lru)

    def get(self, key: Key | PageKey, now: float) -> Entry | None:
        entry = self._lru.get(key)
        if entry is None:
            return None
        if entry.deadline <= now:
            self._drop(key, "expired")
            return None
        self._lru.move_to_end(key)
        return entry

    def put(self, key: Key | PageKey, entry: Entry) -> None:
        if entry.size > self.max_bytes:
            return
        if key in self._lru:
            self._drop(key, None)
        self._lru[key] = entry
        self.bytes += entry.size
        if isinstance(key, PageKey):
            self._index(key, entry)
        while self.bytes > self.max_bytes:
            oldest = next(iter(self._lru))
            self._drop(oldest, "capacity")

    def grow(self, key: PageKey, page: Page, change: int) -> None:
        """The page kept at ``key`` now carries ``change`` more bytes (what
        a reader derived from it, ``Page.derive``); a page no longer kept
        there is no longer counted."""
        entry = self._lru.get(key)
        if entry is None or entry.value is not page:
            return
        entry.size += change
        self.bytes += change
        if entry.size > self.max_bytes:
            self._drop(key, "capacity")
        while self.bytes > self.max_bytes:
            oldest = next(iter(self._lru))
            self._drop(oldest, "capacity")

    def _index(self, key: PageKey, entry: Entry) -> None:
        for item_key in entry.window:
            self._by_key.setdefault(item_key, set()).add(key)
        self._by_partition.setdefault((key.table_index, key.partition), set()).add(key)
        self._by_index.setdefault(key.table_index, set()).add(key)

    def _drop(self, key: Key | PageKey, reason: str | None) -> None:
        entry = self._lru.pop(key)
        self.bytes -= entry.size
        if isinstance(key, PageKey):
            for item_key in entry.window:
                _discard(self._by_key, item_key, key)
            _discard(self._by_partition, (key.table_index, key.partition), key)
            _discard(self._by_index, key.table_index, key)
        if reason is not None:
            self._on_evict(entry.ap_id, reason)

    def partition_of(self, key: Key, index: IndexName) -> str | None:
        """The partition of ``index`` the item at ``key`` is in, when an entry holds it."""
        entry = self._lru.get(key)
        if entry is not None and isinstance(entry.value, dict):
            partition = entry.value.get(_INDEX[index].partition_key)
            return partition if isinstance(partition, str) else None
        for page in self._by_key.get(key, ()):
            if page.table_index is index:
                return page.partition
        return None

    def drop(
        self,
        keys: Iterable[Key],
        entered: Iterable[Entered],
        anywhere: Iterable[tuple[IndexName, str]],
    ) -> int:
        """Drops every entry holding an item at ``keys``, every page an
        ``entered`` image falls inside, and every page of an index, in any
        partition, whose range holds a sort key of ``anywhere``; returns how
        many."""
        doomed: set[Key | PageKey] = set()
        lru, by_key, by_partition = self._lru, self._by_key, self._by_partition
        for key in keys:
            if key in lru:
                doomed.add(key)
            pages = by_key.get(key)
            if pages:
                doomed.update(pages)
        for index, partition, sort_key in entered:
            pages = by_partition.get((index, partition))
            if not pages:
                continue
            for page in pages:
                if sort_key is None or page.sort.matches(sort_key):
                    doomed.add(page)
        for index, sort_key in anywhere:
            for page in self._by_index.get(index, ()):
                if page.sort.matches(sort_key):
                    doomed.add(page)
        for gone in doomed:
            self._drop(gone, None)
        return len(doomed)

    def clear(self) -> None:
        self._lru.clear()
        self._by_key.clear()
        self._by_partition.clear()
        self._by_index.clear()
        self.bytes = 0

    def keys(self) -> Iterable[Key | PageKey]:
        return self._lru.keys()


def _discard(index: dict[_K, set[PageKey]], slot: _K, key: PageKey) -> None:
    keys = index.get(slot)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[slot]
