"""UpdateItem's clauses applied to an item's current image."""

from __future__ import annotations

from decimal import Context, Decimal
from typing import Any

from domain.errors import LimitExceeded

from ..table import TABLE
from ..values import Item, normalize_number
from ..writes import Update

__all__ = ["apply_update"]

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
    item: Item = dict(current) if current is not None else {_PK: update.key.pk, _SK: update.key.sk}
    item.update(update.set)
    for name, value in update.set_if_absent.items():
        item.setdefault(name, value)
    for name, amount in update.add.items():
        item[name] = _add(name, item[name], amount) if name in item else amount
    for name in update.remove:
        item.pop(name, None)
    return item
