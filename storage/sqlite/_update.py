"""UpdateItem's clauses applied to an item's current image."""

from __future__ import annotations

from decimal import Context, Decimal
from typing import Any

from domain.errors import LimitExceeded

from ..table import TABLE
from ..values import Item, attribute_size, item_size, normalize_number, value_size
from ..writes import Update

__all__ = ["apply_sized_update", "apply_update"]

# Wide enough that adding two stored numbers is exact; normalize_number then
# refuses a sum DynamoDB could not store.
_EXACT = Context(prec=1000, Emin=-10_000, Emax=10_000)
_PK, _SK = TABLE.primary.partition_key, TABLE.primary.sort_key


def _add(name: str, current: Any, amount: int | Decimal) -> int | Decimal:
    if isinstance(current, bool) or not isinstance(current, (int, Decimal)):
        raise LimitExceeded(f"ADD needs a number, but {name} holds a {type(current).__name__}")
    if isinstance(current, int) and isinstance(amount, int):
        return normalize_number(current + amount)
    return normalize_number(_EXACT.add(Decimal(current), Decimal(amount)))


def apply_update(current: Item | None, update: Update) -> Item:
    """The new image. An update of a missing item creates it, as in DynamoDB;
    ADD on a missing attribute starts from zero."""
    size = 0 if current is None else item_size(current)
    return apply_sized_update(current, size, update)[0]


def apply_sized_update(current: Item | None, size: int, update: Update) -> tuple[Item, int]:
    """``apply_update``, and the new image's ``item_size`` from ``size``, the
    current image's: an item's size is the sum of its attributes', so only
    the attributes the update changes are measured. A day-counter item holds
    dozens of counters and an update changes three or four of them
    (docs/design.md, Verify path). A differential test holds the size to
    ``item_size`` of the new image."""
    if current is None:
        item: Item = {_PK: update.key.pk, _SK: update.key.sk}
        size = item_size(item)
    else:
        item = dict(current)
    for name, value in update.set.items():
        if name in item:
            size += value_size(value) - value_size(item[name])
        else:
            size += attribute_size(name, value)
        item[name] = value
    for name, value in update.set_if_absent.items():
        if name not in item:
            size += attribute_size(name, value)
            item[name] = value
    for name, amount in update.add.items():
        if name in item:
            old = item[name]
            new = item[name] = _add(name, old, amount)
            size += value_size(new) - value_size(old)
        else:
            size += attribute_size(name, amount)
            item[name] = amount
    for name in update.remove:
        if name in item:
            size -= attribute_size(name, item.pop(name))
    return item, size
