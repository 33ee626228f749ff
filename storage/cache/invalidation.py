"""What a committed write changed, by key: the event that drops cache entries.

Derived from the write's own actions, with no read and no old image: the
item keys written, each (index, partition, sort key) an image entered, and
each index where an item moved to a sort key the write names inside a
partition it does not name. A page is affected by a write only through an
item in its window (dropped by the item's key, which the cache indexes) or an
item entering its partition inside its sort range, so the old image is never
needed (docs/design.md, Storage cache). The event is plain data, the same in
every process, so another process can apply it as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from ..keys import Key
from ..table import TABLE, IndexDefinition, IndexName
from ..writes import ConditionCheck, Delete, Put, Update, WriteAction
from .scope import EVERYWHERE, Scope

__all__ = ["Entered", "Invalidation", "Moved", "invalidation_of"]


class Entered(NamedTuple):
    """An image entered ``partition`` of ``table_index`` at ``sort_key``; None: at
    a sort key the write does not name (any page of the partition)."""

    table_index: IndexName
    partition: str
    sort_key: str | None


class Moved(NamedTuple):
    """The item at ``key`` took ``sort_key`` in ``table_index``, inside a partition
    the write does not name: a process that holds the item knows it; one that
    does not drops every page of the index whose range holds ``sort_key``."""

    key: Key
    table_index: IndexName
    sort_key: str


class Invalidation(NamedTuple):
    """A tuple, as it is made for every write (a frozen dataclass's
    ``__init__`` took twice as long)."""

    keys: frozenset[Key]
    entered: frozenset[Entered] = frozenset()
    moved: frozenset[Moved] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.keys)

    def to_plain(self) -> dict[str, list[list[str | None]]]:
        """JSON-ready, for another process (``from_plain`` reads it back)."""
        return {
            "keys": [[k.pk, k.sk] for k in sorted(self.keys)],
            "entered": [[e.table_index.value, e.partition, e.sort_key] for e in self.entered],
            "moved": [[m.key.pk, m.key.sk, m.table_index.value, m.sort_key] for m in self.moved],
        }

    @classmethod
    def from_plain(cls, plain: Any) -> Invalidation:
        """Raises ``ValueError`` for anything ``to_plain`` does not make."""
        try:
            keys = frozenset(Key(_text(pk), _text(sk)) for pk, sk in plain["keys"])
            entered = frozenset(
                Entered(IndexName(index), _text(partition), _text_or_none(sort))
                for index, partition, sort in plain["entered"]
            )
            moved = frozenset(
                Moved(Key(_text(pk), _text(sk)), IndexName(index), _text(sort))
                for pk, sk, index, sort in plain["moved"]
            )
        except (KeyError, TypeError) as error:
            raise ValueError(f"not an invalidation: {error}") from None
        return cls(keys, entered, moved)


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value


def _text_or_none(value: object) -> str | None:
    return None if value is None else _text(value)


_PRIMARY = TABLE.primary.name
_NOTHING: frozenset[Any] = frozenset()
_GSI_KEYS = frozenset(
    a for index in TABLE.global_secondary for a in (index.partition_key, index.sort_key)
)


def _put(put: Put, entered: set[Entered], scope: Scope) -> None:
    key, item = put.key, put.item
    table = scope.table
    if table is not None and key.pk.startswith(table):
        entered.add(Entered(_PRIMARY, key.pk, key.sk))
    for index in scope.gsis:
        partition = item.get(index.partition_key)
        if isinstance(partition, str) and partition.startswith(scope.prefixes[index.name]):
            sort_key = item.get(index.sort_key)
            entered.add(
                Entered(index.name, partition, sort_key if isinstance(sort_key, str) else None)
            )


def _written(update: Update, name: str) -> str | None:
    """The value ``update`` may give ``name`` (SET, or SET if absent)."""
    value: Any = update.set.get(name, update.set_if_absent.get(name))
    return value if isinstance(value, str) else None


def _update(update: Update, entered: set[Entered], moved: set[Moved], scope: Scope) -> None:
    key = update.key
    # An Update of a missing item creates it, in the key's table partition.
    table = scope.table
    if table is not None and key.pk.startswith(table):
        entered.add(Entered(_PRIMARY, key.pk, key.sk))
    if _GSI_KEYS.isdisjoint(update.set) and _GSI_KEYS.isdisjoint(update.set_if_absent):
        return  # most Updates: counters and plain attributes
    for index in scope.gsis:
        _update_index(update, index, entered, moved, scope)


def _update_index(
    update: Update, index: IndexDefinition, entered: set[Entered], moved: set[Moved], scope: Scope
) -> None:
    partition = _written(update, index.partition_key)
    sort_key = _written(update, index.sort_key)
    if partition is not None:
        if partition.startswith(scope.prefixes[index.name]):
            entered.add(Entered(index.name, partition, sort_key))
    elif sort_key is not None:
        moved.add(Moved(update.key, index.name, sort_key))
    # Neither named: the item keeps its place in the index (or stays out of
    # it, or leaves it by REMOVE): only pages holding it change, by its key.


def invalidation_of(actions: Iterable[WriteAction], scope: Scope = EVERYWHERE) -> Invalidation:
    """What ``actions`` can have changed; images that enter a partition
    outside ``scope`` (where no kept page can be) are left out."""
    keys: set[Key] = set()
    entered: set[Entered] = set()
    moved: set[Moved] = set()
    for action in actions:
        kind = type(action)  # the action types are final: one look, not four
        if kind is Update:
            keys.add(action.key)
            _update(action, entered, moved, scope)  # type: ignore[arg-type]
        elif kind is Put:
            keys.add(action.key)
            _put(action, entered, scope)  # type: ignore[arg-type]
        elif kind is Delete:
            keys.add(action.key)  # removal only: pages that held it are found by key
        elif not isinstance(action, ConditionCheck):  # a ConditionCheck changes nothing
            raise TypeError(f"not a write action: {kind.__name__}")
    return Invalidation(
        frozenset(keys),
        frozenset(entered) if entered else _NOTHING,
        frozenset(moved) if moved else _NOTHING,
    )
