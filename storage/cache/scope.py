"""Where a kept page can be: the partitions a write's images can change.

A page is kept only for a pattern the cache serves (``Rule.served``), so it
is a page of that pattern's index, in a partition its template spells. A
write's image that enters a partition no served query can name (an outbox
item's ``OUTBOX#...``, a lease moving through ``GSI2``) can drop no page in
any process, and the invalidation leaves it out; its item key stays in, as
an entry may hold the item itself (docs/design.md, Storage cache).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..registry import AccessPattern, Operation, Registry
from ..table import TABLE, IndexDefinition, IndexName

__all__ = ["EVERYWHERE", "Scope"]


class Scope:
    def __init__(self, prefixes: Mapping[IndexName, tuple[str, ...]] | None) -> None:
        """``prefixes``: per index, the literal start of each served query's
        partition template (``""`` when it starts with a parameter); None:
        every partition of every index."""
        if prefixes is None:
            prefixes = {index.name: ("",) for index in TABLE.indexes}
        self.prefixes: dict[IndexName, tuple[str, ...]] = dict(prefixes)
        """Per index with served pages: what their partitions start with
        (``str.startswith`` takes the tuple)."""
        self.table: tuple[str, ...] | None = self.prefixes.get(TABLE.primary.name)
        """The table's, or None: no served page of the table."""
        self.gsis: tuple[IndexDefinition, ...] = tuple(
            index for index in TABLE.global_secondary if index.name in self.prefixes
        )
        """The GSIs with served pages."""

    @classmethod
    def of(cls, registry: Registry, served: Callable[[AccessPattern], bool]) -> Scope:
        prefixes: dict[IndexName, tuple[str, ...]] = {}
        for pattern in registry:
            if pattern.operation is not Operation.QUERY or not served(pattern):
                continue
            first = pattern.partition_key.parts[0]
            prefix = first if isinstance(first, str) else ""
            prefixes[pattern.index] = (*prefixes.get(pattern.index, ()), prefix)
        return cls(prefixes)

    def holds(self, index: IndexName, partition: str) -> bool:
        """Whether a served page of ``index`` can be in ``partition``."""
        prefixes = self.prefixes.get(index)
        return prefixes is not None and partition.startswith(prefixes)


EVERYWHERE = Scope(None)
