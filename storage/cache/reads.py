"""What one execution read through the cache: the tags of a cached response.

The response cache above storage opens a ``ReadLog`` around an execution
(``recording``); ``CachedStorage`` notes in it every item key and every page
(its partition, sort range and window) a cacheable pattern read, hit or
miss, and the earliest expiry among the items. A read the storage cache
would not keep (a strong pattern, a ``freshness`` one, an untrusted cache)
or any write marks the log inexact, and an inexact execution's response is
not kept: the response cache serves only what the storage cache could
(docs/design.md, Response cache).
"""

from __future__ import annotations

from collections.abc import Hashable
from contextvars import ContextVar
from dataclasses import dataclass, field

from ..keys import Key
from ..trace import ContextValue
from .entries import PageKey

__all__ = ["ReadLog", "current_reads", "recording"]


@dataclass(slots=True)
class ReadLog:
    keys: set[Key] = field(default_factory=set)
    """Every item key read, and every key in a page's window."""
    pages: set[PageKey] = field(default_factory=set)
    expiry: float = float("inf")
    """The earliest item expiry among what was read, less the cache's margin."""
    exact: bool = True
    why_not: str | None = None

    def refuse(self, why: str) -> None:
        if self.exact:
            self.exact, self.why_not = False, why

    def slots(self) -> tuple[Hashable, ...]:
        """What a write must not have stamped since the read began, as the
        storage cache's generations name them."""
        partitions = {("P", page.table_index, page.partition) for page in self.pages}
        indexes = {page.table_index for page in self.pages}
        return (*self.keys, *partitions, *indexes)


_log: ContextVar[ReadLog | None] = ContextVar("proofgate_read_log", default=None)


def recording(log: ReadLog) -> ContextValue[ReadLog]:
    return ContextValue(_log, log)


def current_reads() -> ReadLog | None:
    return _log.get()
