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
from .values import Item, item_size, normalize_number, normalize_value, sized_item

__all__ = ["ConditionCheck", "Delete", "Put", "Update", "WriteAction"]

_KEY_ATTRIBUTES = frozenset(TABLE.key_attributes)
_PRIMARY = (TABLE.primary.partition_key, TABLE.primary.sort_key)
_KEY_MAX_BYTES = {
    **{index.partition_key: PARTITION_KEY_MAX_BYTES for index in TABLE.indexes},
    **{index.sort_key: SORT_KEY_MAX_BYTES for index in TABLE.indexes},
}
_KEY_LIMITS = tuple(_KEY_MAX_BYTES.items())


def _plain_names(names: list[str]) -> bool:
    """Every name a str that is an identifier: what ``Update._check_names``
    asks of each, answered for all at once."""
    return all(type(name) is str and name.isidentifier() for name in names)


def _check_key_attributes(values: Mapping[str, Any]) -> None:
    """Index keys obey the table's key rules too; DynamoDB refuses the write otherwise."""
    for name, limit in _KEY_LIMITS:
        if name not in values:
            continue
        value = values[name]
        if not isinstance(value, str) or not value:
            raise LimitExceeded(f"Key attribute {name} must be a non-empty string")
        # UTF-8 spends at most 4 bytes on a character: short keys need no encoding.
        if len(value) > limit // 4 and len(value.encode("utf-8")) > limit:
            raise LimitExceeded(f"Key attribute {name} is longer than {limit} bytes")


@dataclass(frozen=True)
class Put:
    item: Item
    """The normalized copy the Put made; never changed afterwards."""
    condition: Condition | None = None
    size: int = field(init=False, repr=False, compare=False)
    """``item_size(item)``, measured once when the Put is built."""
    key: Key = field(init=False, repr=False, compare=False)
    """The item's key, built once: the store, the backend's duplicate check
    and its reads each ask for it (docs/design.md, Verify path)."""

    def __post_init__(self) -> None:
        item, size = sized_item(self.item)
        for attribute in _PRIMARY:
            if not isinstance(item.get(attribute), str):
                raise AccessPatternError(f"Put needs a string {attribute}")
        # The primary key's attributes are among the key attributes checked
        # here, by ``check_key``'s rules: it would refuse nothing more.
        _check_key_attributes(item)
        key = Key(item[_PRIMARY[0]], item[_PRIMARY[1]])
        object.__setattr__(self, "item", item)
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "key", key)


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
    size: int = field(init=False, repr=False, compare=False)
    """``item_size`` of the values the clauses write, what a transaction's
    size limit counts: measured once when the Update is built, and kept by
    ``at``'s copies, which write the same values."""

    def __post_init__(self) -> None:
        check_key(self.key)
        if isinstance(self.remove, str):
            raise AccessPatternError("Update.remove takes a tuple of names, not one string")
        names = [*self.set, *self.set_if_absent, *self.add, *self.remove]
        if not names:
            raise AccessPatternError("Update changes nothing")
        unique = set(names)
        if len(names) != len(unique):
            raise AccessPatternError("An attribute may appear in only one clause of an Update")
        if not (unique.isdisjoint(_KEY_ATTRIBUTES) and _plain_names(names)):
            # Nearly every Update names plain non-key attributes only, which
            # passes every check below; the rest take them one by one.
            self._check_names(names)
        set_ = self.set
        set_if_absent = self.set_if_absent
        add = self.add
        setattr_ = object.__setattr__
        setattr_(self, "set", {k: normalize_value(v) for k, v in set_.items()} if set_ else {})
        setattr_(
            self,
            "set_if_absent",
            {k: normalize_value(v) for k, v in set_if_absent.items()} if set_if_absent else {},
        )
        setattr_(self, "add", {k: normalize_number(v) for k, v in add.items()} if add else {})
        setattr_(self, "remove", tuple(self.remove))
        setattr_(self, "size", item_size({**self.set, **self.set_if_absent, **self.add}))

    def at(self, key: Key) -> Update:
        """These clauses on the item at ``key``. They were checked and
        normalised when this Update was built, so a command that writes the
        same clauses on every call (a scan's counters) builds them once and
        checks only the key (docs/design.md, Verify path). The copy shares
        the clause maps, which no Update changes once built."""
        check_key(key)
        update = object.__new__(Update)
        update.__dict__.update(self.__dict__, key=key)
        return update

    def _check_names(self, names: list[str]) -> None:
        for name in names:
            if not name.isidentifier():
                raise AccessPatternError(f"Update attribute {name!r} must be a plain identifier")
            if name in _PRIMARY:
                raise AccessPatternError(f"Update cannot change the key attribute {name}")
            if name in self.add and name in _KEY_ATTRIBUTES:
                raise AccessPatternError(f"ADD cannot change the string key attribute {name}")
        _check_key_attributes(self.set)
        _check_key_attributes(self.set_if_absent)


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
