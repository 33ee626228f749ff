"""Plans kept per parsed document, bounded in entries and in bytes.

Keyed by the operation node of the parsed document (the parse cache hands the
same document back for the same query text); an entry holds one plan
per set of values of the variables its ``@skip``/``@include`` read, since
those decide which fields a plan collects. An entry keeps its document alive,
so an id is never reused for another operation while the entry lives, and
with it the document's text (every node's location points at it): an entry
is charged that text, or 1,000 distinct 1 MB queries would hold 1 GB.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from api.graphql.execution.plan import OperationPlan, condition_variables

__all__ = [
    "PLAN_BYTES_PER_FIELD",
    "PLAN_CACHE_BYTES",
    "PLAN_CACHE_SIZE",
    "PLAN_VARIANTS",
    "PlanCache",
    "PlanEntry",
]

PLAN_CACHE_SIZE = 1000
PLAN_CACHE_BYTES = 16 * 1024 * 1024
"""Plans are a few KB; the rest is the text of the largest documents, which
the document cache (32 MiB) holds too while both keep them."""
PLAN_VARIANTS = 16
"""Plans per document for distinct ``@skip``/``@include`` values; more start over."""
PLAN_BYTES_PER_FIELD = 4096
"""A generous estimate of one field plan (closures, cells, names, argument
dict, its lines of the selection's generated function); measured at about
3 KB by tests/api/graphql/execution/test_execution_fused.py."""
PLAN_BYTES_BASE = 4096


@dataclass(slots=True)
class PlanEntry:
    document: Any
    conditions: tuple[str, ...]
    plans: dict[tuple[Any, ...], OperationPlan | None] = field(default_factory=dict)
    """None: the operation is left to graphql-core, for the reason in ``causes``."""
    causes: dict[tuple[Any, ...], str] = field(default_factory=dict)
    base: int = PLAN_BYTES_BASE
    """What the entry costs without plans: the base and the document's text."""
    size: int = PLAN_BYTES_BASE
    pinned: bool = False
    """A registered operation's: never evicted, and outside the byte budget,
    which bounds what clients bring (docs/design.md, "Named operations")."""


def _text_bytes(operation: Any) -> int:
    location = getattr(operation, "loc", None)
    return 0 if location is None else sys.getsizeof(location.source.body)


@dataclass(slots=True)
class PlanStats:
    compilations: int = 0
    fallbacks: int = 0
    """Compilations that found the operation unsupported."""


class PlanCache:
    def __init__(
        self,
        max_items: int = PLAN_CACHE_SIZE,
        max_bytes: int = PLAN_CACHE_BYTES,
        *,
        fused: bool = True,
        projection: bool = True,
    ) -> None:
        """``fused``, ``projection``: whether plans take those lanes
        (``PROOFGATE_EXECUTION``, docs/design.md, Fast paths and their switches)."""
        self.fused = fused
        self.projection = projection
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.bytes = 0
        self.stats = PlanStats()
        self._entries: OrderedDict[int, PlanEntry] = OrderedDict()
        self._pinned: dict[int, PlanEntry] = {}

    def __len__(self) -> int:
        return len(self._entries) + len(self._pinned)

    def pin(self, operation: Any, fragments: Iterable[Any]) -> PlanEntry:
        """The entry of a registered operation, kept for the life of the process."""
        entry = self._pinned.get(id(operation))
        if entry is None or entry.document is not operation:
            entry = PlanEntry(operation, condition_variables([operation, *fragments]), pinned=True)
            self._pinned[id(operation)] = entry
        return entry

    def entry(self, operation: Any, fragments: Iterable[Any]) -> PlanEntry:
        """The entry of one operation node of a parsed document."""
        key = id(operation)
        pinned = self._pinned.get(key)
        if pinned is not None and pinned.document is operation:
            return pinned
        entry = self._entries.get(key)
        if entry is not None and entry.document is operation:
            self._entries.move_to_end(key)
            return entry
        base = PLAN_BYTES_BASE + _text_bytes(operation)
        conditions = condition_variables([operation, *fragments])
        entry = PlanEntry(operation, conditions, base=base, size=base)
        self._entries[key] = entry
        self.bytes += entry.size
        self._evict()
        return entry

    def store(
        self,
        entry: PlanEntry,
        values: tuple[Any, ...],
        plan: OperationPlan | None,
        cause: str = "unsupported",
    ) -> None:
        """``cause``: why ``plan`` is None."""
        if plan is None:
            entry.causes[values] = cause
        if entry.pinned:
            if len(entry.plans) < PLAN_VARIANTS:
                entry.plans[values] = plan
            return
        if len(entry.plans) >= PLAN_VARIANTS:
            self.bytes -= entry.size - entry.base
            entry.size = entry.base
            entry.plans.clear()
            entry.causes.clear()
            if plan is None:
                entry.causes[values] = cause
        size = plan.fields * PLAN_BYTES_PER_FIELD if plan is not None else 0
        entry.plans[values] = plan
        entry.size += size
        self.bytes += size
        self._evict()

    def _evict(self) -> None:
        while self._entries and (
            len(self._entries) > self.max_items or self.bytes > self.max_bytes
        ):
            _, evicted = self._entries.popitem(last=False)
            self.bytes -= evicted.size
