"""Typed writes: Put, Update, Delete and ConditionCheck.

Callers build these from registered key templates (``AccessPattern.key``) and
typed conditions; no caller ever hands the store an expression string.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeAlias

from domain.errors import AccessPatternError, LimitExceeded

from .conditions import Condition
from .keys import Key, check_key
from .limits import PARTITION_KEY_MAX_BYTES, SORT_KEY_MAX_BYTES
from .table import TABLE
from .values import Item, normalize_number, normalize_value, sized_item

__all__ = ["ConditionCheck", "Delete", "Put", "Update", "WriteAction"]

_KEY_ATTRIBUTES = frozenset(TABLE.key_attributes)
_PRIMARY = (TABLE.primary.partition_key, TABLE.primary.sort_key)
_KEY_MAX_BYTES = {
    **{index.partition_key: PARTITION_KEY_MAX_BYTES for index in TABLE.indexes},
    **{index.sort_key: SORT_KEY_MAX_BYTES for index in TABLE.indexes},
}


def _check_key_attributes(values: Mapping[str, Any]) -> None:
    """Index keys obey the table's key rules too; DynamoDB refuses the write otherwise."""
    for name in _KEY_ATTRIBUTES & values.keys():
        value = values[name]
        if not isinstance(value, str) or not value:
            raise LimitExceeded(f"Key attribute {name} must be a non-empty string")
        if len(value.encode("utf-8")) > _KEY_MAX_BYTES[name]:
            raise LimitExceeded(f"Key attribute {name} is longer than {_KEY_MAX_BYTES[name]} bytes")


@dataclass(frozen=True)
class Put:
    item: Item
    """The normalized copy the Put made; never changed afterwards."""
    condition: Condition | None = None
    size: int = field(init=False, repr=False, compare=False)
    """``item_size(item)``, measured once when the Put is built."""

    def __post_init__(self) -> None:
        item, size = sized_item(self.item)
        for attribute in _PRIMARY:
            if not isinstance(item.get(attribute), str):
                raise AccessPatternError(f"Put needs a string {attribute}")
        _check_key_attributes(item)
        check_key(Key(item[_PRIMARY[0]], item[_PRIMARY[1]]))
        object.__setattr__(self, "item", item)
        object.__setattr__(self, "size", size)

    @property
    def key(self) -> Key:
        return Key(self.item[_PRIMARY[0]], self.item[_PRIMARY[1]])


@dataclass(frozen=True)
class Update:
    """SET, SET-if-absent, ADD (atomic counters) and REMOVE on one item.

    An Update of a missing item creates it, as in DynamoDB; make it conditional
    (``ItemExists()``) when that is not wanted.
    """

    key: Key
    set: Mapping[str, Any] = field(default_factory=dict)
    set_if_absent: Mapping[str, Any] = field(default_factory=dict)
    add: Mapping[str, int | Decimal] = field(default_factory=dict)
    remove: tuple[str, ...] = ()
    condition: Condition | None = None

    def __post_init__(self) -> None:
        check_key(self.key)
        if isinstance(self.remove, str):
            raise AccessPatternError("Update.remove takes a tuple of names, not one string")
        names = [*self.set, *self.set_if_absent, *self.add, *self.remove]
        if not names:
            raise AccessPatternError("Update changes nothing")
        if len(names) != len(set(names)):
            raise AccessPatternError("An attribute may appear in only one clause of an Update")
        for name in names:
            if not name.isidentifier():
                raise AccessPatternError(f"Update attribute {name!r} must be a plain identifier")
            if name in _PRIMARY:
                raise AccessPatternError(f"Update cannot change the key attribute {name}")
            if name in self.add and name in _KEY_ATTRIBUTES:
                raise AccessPatternError(f"ADD cannot change the string key attribute {name}")
        _check_key_attributes(self.set)
        _check_key_attributes(self.set_if_absent)
        object.__setattr__(self, "set", {k: normalize_value(v) for k, v in self.set.items()})
        object.__setattr__(
            self, "set_if_absent", {k: normalize_value(v) for k, v in self.set_if_absent.items()}
        )
        object.__setattr__(self, "add", {k: normalize_number(v) for k, v in self.add.items()})
        object.__setattr__(self, "remove", tuple(self.remove))


@dataclass(frozen=True)
class Delete:
    key: Key
    condition: Condition | None = None

    def __post_init__(self) -> None:
        check_key(self.key)


@dataclass(frozen=True)
class ConditionCheck:
    key: Key
    condition: Condition

    def __post_init__(self) -> None:
        check_key(self.key)


WriteAction: TypeAlias = Put | Update | Delete | ConditionCheck
