"""The storage adapter as its callers see it.

Resolvers type against ``Storage``; which backend sits behind it is decided
once, when the application is built.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Protocol

from .registry import AccessPattern
from .values import Item
from .writes import WriteAction

__all__ = ["KeptReads", "Page", "Storage", "kept_reads"]


class Page:
    """One page of a query. Cursors are minted lazily: most callers only need
    the end cursor, and each cursor costs an encryption. The end cursor is
    minted once: every reader of a shared page then asks for the same next
    page, which the request's DataLoader reads once (a fresh nonce per reader
    would make each of them read it again).

    ``beyond`` is the item read past the page, which decided
    ``has_next_page``: the cache keeps the page only while that item too is
    unchanged (docs/design.md, Storage cache)."""

    __slots__ = (
        "_charge",
        "_derived_bytes",
        "_end",
        "_mint",
        "beyond",
        "derived",
        "has_next_page",
        "items",
    )

    def __init__(
        self,
        items: list[Item],
        has_next_page: bool,
        mint: Callable[[Item], str],
        beyond: Item | None = None,
    ) -> None:
        self.items = items
        self.has_next_page = has_next_page
        self._mint = mint
        self._end: str | None = None
        self.beyond = beyond
        self.derived: Any = None
        """What a reader above derived from the items (``derive``), kept with
        the page so the next reader of the same page object (the cache hands
        out one per entry) need not derive it again (docs/design.md,
        Projected pages)."""
        self._derived_bytes = 0
        self._charge: Callable[[Page, int], None] | None = None
        """Set by a cache that keeps the page: charges it what ``derived`` adds."""

    @property
    def mint(self) -> Callable[[Item], str]:
        """Makes an item's cursor (a copy of the page mints the same way)."""
        return self._mint

    def charge_with(self, charge: Callable[[Page, int], None]) -> None:
        """A cache that keeps the page is charged what ``derived`` adds."""
        self._charge = charge

    @property
    def charged(self) -> bool:
        """Whether a cache keeps the page, to be served again as this object."""
        return self._charge is not None

    def derive(self, derived: Any, size: int) -> None:
        """Keeps ``derived`` (``size`` bytes, as the cache measures items)
        in place of what was; a cache holding the page counts the change
        against its byte cap (docs/design.md, Storage cache)."""
        change, self._derived_bytes = size - self._derived_bytes, size
        self.derived = derived
        charge = self._charge
        if charge is not None and change:
            charge(self, change)

    def cursor(self, index: int) -> str:
        return self._mint(self.items[index])

    @property
    def end_cursor(self) -> str | None:
        if self._end is None and self.items:
            self._end = self._mint(self.items[-1])
        return self._end

    def __len__(self) -> int:
        return len(self.items)


class Storage(Protocol):
    """Key-only access to the table. There is deliberately no scan."""

    backend: str

    async def get(self, ap: AccessPattern, /, **params: Any) -> Item | None: ...

    async def batch_get(
        self, ap: AccessPattern, params: Sequence[Mapping[str, Any]]
    ) -> list[Item | None]:
        """Items in input order, None where missing; duplicates read once."""

    async def query(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        *,
        tenant: str,
        first: int | None = None,
        after: str | None = None,
    ) -> Page: ...

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        """All or nothing. A failed condition raises ``ConditionFailed`` naming
        the index of the action that failed."""

    async def close(self) -> None: ...


class KeptReads(Protocol):
    """A cache's hits answered without a coroutine: a storage that has one
    names it ``kept`` (``CachedStorage``; a wrapper passes its inner's on),
    and a reader asks it before it awaits (docs/design.md, Storage cache,
    Hits at once). A miss does nothing: the reader reads as before. ``name``
    is the reader's hashable spelling of ``params`` (equal params, equal
    names), by which the cache remembers the key they make."""

    def kept_item(
        self, ap: AccessPattern, params: Mapping[str, Any], name: Hashable
    ) -> tuple[bool, Item | None]: ...

    def kept_page(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        name: Hashable,
        *,
        tenant: str,
        first: int | None = None,
        after: str | None = None,
    ) -> Page | None: ...


def kept_reads(storage: object) -> KeptReads | None:
    """The hits ``storage`` answers at once, if it has any."""
    kept: KeptReads | None = getattr(storage, "kept", None)
    return kept
