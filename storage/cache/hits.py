"""Hits without a coroutine: the part of ``CachedStorage`` a DataLoader asks
before it awaits (``KeptReads``), answering a hit at once, served, counted
and spent exactly as the awaited hit would be, or nothing having done
nothing (docs/design.md, Storage cache, Hits at once).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any

from ..keys import Key
from ..protocol import KeptReads, Page
from ..registry import AccessPattern, Operation, Registry
from ..values import Item
from .entries import ENTRY_OVERHEAD_BYTES, Entries, Entry, PageKey

__all__ = ["HitsAtOnce"]

_UNKEPT: tuple[bool, Item | None] = (False, None)


class HitsAtOnce:
    """``CachedStorage``'s ``kept``: a mixin over its entries, its rules and
    its clock, which it serves from as the awaited reads do."""

    entries: Entries
    _clock: Callable[[], float]
    _registry: Registry
    _keys: dict[Hashable, Any]
    _keys_max: int

    if TYPE_CHECKING:

        def _serves(self, ap: AccessPattern, now: float) -> bool | None: ...

        def _served_item(self, ap: AccessPattern, key: Key, entry: Entry) -> Item | None: ...

        def _served_page(self, ap: AccessPattern, key: PageKey, entry: Entry) -> Page: ...

    def _init_keys(self, max_bytes: int) -> None:
        self._keys = {}
        """Keys ``kept_item`` and ``kept_page`` made, by the caller's name for
        their params: a hit makes no key (docs/design.md, Storage cache, Hits at once)."""
        self._keys_max = max(1024, max_bytes // ENTRY_OVERHEAD_BYTES)

    def _remember(self, named: Hashable, key: Any) -> Any:
        """The key made for ``named``; all are forgotten at the bound (as
        many as the byte cap could hold entries), and made again."""
        keys = self._keys
        if len(keys) >= self._keys_max:
            keys.clear()
        keys[named] = key
        return key

    @property
    def kept(self) -> KeptReads:
        return self

    def kept_item(
        self, ap: AccessPattern, params: Mapping[str, Any], name: Hashable
    ) -> tuple[bool, Item | None]:
        """``(True, item)`` when ``get(ap, **params)`` would be a hit, served
        and counted as that hit; ``(False, None)`` having done nothing else.
        ``name``: the caller's hashable spelling of ``params``, by which the
        key they make is remembered rather than made again."""
        now = self._clock()
        if self._serves(ap, now) is not True:
            return _UNKEPT
        self._registry.require(ap, Operation.GET)  # the pattern registered under its id
        key = self._keys.get((ap.id, name))
        if key is None:
            key = self._remember((ap.id, name), ap.key(**params))
        entry = self.entries.get(key, now)
        if entry is None:
            return _UNKEPT
        return True, self._served_item(ap, key, entry)

    def kept_page(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        name: Hashable,
        *,
        tenant: str,
        first: int | None = None,
        after: str | None = None,
    ) -> Page | None:
        """The page when ``query`` would be a hit, served and counted as
        that hit; None having done nothing else."""
        now = self._clock()
        size = ap.default_page if first is None else first
        if type(size) is not int or self._serves(ap, now) is not True:
            return None
        self._registry.require(ap, Operation.QUERY)
        named = (ap.id, name, tenant, size, after)
        key = self._keys.get(named)
        if key is None:
            partition, sort = ap.partition(params), ap.sort_range(params)
            key = self._remember(
                named, PageKey(ap.id, tenant, ap.index, partition, sort, size, after)
            )
        entry = self.entries.get(key, now)
        return None if entry is None else self._served_page(ap, key, entry)
