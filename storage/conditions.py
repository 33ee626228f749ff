"""Typed write conditions: callers compose these, never raw expressions.

The SQLite backend evaluates them in Python with DynamoDB's semantics (a
comparison with a missing attribute or a value of another type is false); the
DynamoDB backend renders them to a ConditionExpression with placeholders only.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any, TypeAlias

from domain.errors import AccessPatternError

from .values import normalize_value

__all__ = [
    "All",
    "Any_",
    "AttributeAbsent",
    "AttributeExists",
    "Compare",
    "Comparison",
    "Condition",
    "ItemAbsent",
    "ItemExists",
    "evaluate",
]


def _attribute(name: str) -> str:
    if not name.isidentifier():
        raise AccessPatternError(f"Condition attribute {name!r} must be a plain identifier")
    return name


_ORDERED_TYPES = (int, Decimal, str, bytes)


class Comparison(StrEnum):
    EQ = "="
    NE = "<>"
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="


@dataclass(frozen=True)
class ItemExists:
    """The item is present (attribute_exists on the partition key)."""


@dataclass(frozen=True)
class ItemAbsent:
    """The item is not present: the conditional create."""


@dataclass(frozen=True)
class AttributeExists:
    name: str

    def __post_init__(self) -> None:
        _attribute(self.name)


@dataclass(frozen=True)
class AttributeAbsent:
    name: str

    def __post_init__(self) -> None:
        _attribute(self.name)


@dataclass(frozen=True)
class Compare:
    name: str
    op: Comparison
    value: Any

    def __post_init__(self) -> None:
        _attribute(self.name)
        object.__setattr__(self, "op", Comparison(self.op))
        if isinstance(self.value, float):
            raise AccessPatternError("Conditions compare with int or Decimal, never float")
        ordered = self.op not in (Comparison.EQ, Comparison.NE)
        orderable = not isinstance(self.value, bool) and isinstance(self.value, _ORDERED_TYPES)
        if ordered and not orderable:
            # DynamoDB rejects the request: only numbers, strings and binary have an order.
            raise AccessPatternError(f"{self.op.value} compares numbers, strings or binary only")
        object.__setattr__(self, "value", normalize_value(self.value))


@dataclass(frozen=True, init=False)
class All:
    conditions: tuple[Condition, ...]

    def __init__(self, *conditions: Condition) -> None:
        if not conditions:
            raise AccessPatternError("All() needs at least one condition")
        object.__setattr__(self, "conditions", conditions)


@dataclass(frozen=True, init=False)
class Any_:
    conditions: tuple[Condition, ...]

    def __init__(self, *conditions: Condition) -> None:
        if not conditions:
            raise AccessPatternError("Any_() needs at least one condition")
        object.__setattr__(self, "conditions", conditions)


Condition: TypeAlias = (
    ItemExists | ItemAbsent | AttributeExists | AttributeAbsent | Compare | All | Any_
)


_NUMBERS = (int, Decimal)


def _kind(value: Any) -> type:
    """DynamoDB's type of a stored value: int and Decimal are both N."""
    if isinstance(value, bool):
        return bool
    if isinstance(value, _NUMBERS):
        return Decimal
    return type(value)


def _equal(left: Any, right: Any) -> bool:
    """Equality within one DynamoDB type, recursing into lists and maps, where
    Python's own ``==`` would equate True with 1."""
    if _kind(left) is not _kind(right):
        return False
    if isinstance(left, list):
        if len(left) != len(right):
            return False
        return all(_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_equal(v, right[k]) for k, v in left.items())
    return bool(left == right)


def _compare(left: Any, op: Comparison, right: Any) -> bool:
    if op is Comparison.EQ:
        return _equal(left, right)
    if op is Comparison.NE:
        return not _equal(left, right)
    if _kind(left) is not _kind(right) or _kind(left) not in (Decimal, str, bytes):
        return False
    if isinstance(left, str):
        left, right = left.encode(), right.encode()
    match op:
        case Comparison.LT:
            return bool(left < right)
        case Comparison.LE:
            return bool(left <= right)
        case Comparison.GT:
            return bool(left > right)
        case _:
            return bool(left >= right)


def evaluate(condition: Condition | None, item: dict[str, Any] | None) -> bool:
    """DynamoDB's condition semantics over the item's current image."""
    if condition is None:
        return True
    match condition:
        case ItemExists():
            return item is not None
        case ItemAbsent():
            return item is None
        case AttributeExists(name):
            return item is not None and name in item
        case AttributeAbsent(name):
            return item is None or name not in item
        case Compare(name, op, value):
            if item is None or name not in item:
                return op is Comparison.NE
            return _compare(item[name], op, value)
        case All(conditions):
            return all(evaluate(c, item) for c in conditions)
        case Any_(conditions):
            return any(evaluate(c, item) for c in conditions)
    raise AccessPatternError(f"Unknown condition {condition!r}")
