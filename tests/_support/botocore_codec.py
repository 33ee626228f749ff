"""The codec as it read botocore's parsed responses before the data plane:
the reference the data plane's ``decode*`` is held to
(``tests/storage/dynamodb/test_dynamodb_wire_differential.py``).

Frozen on purpose: a copy of ``storage/dynamodb/_codec.py``'s reading as of
the commit before the data plane (and the driver's reading of a response
with it), so a change to the production codec shows
up as a difference instead of moving both sides at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Context, Decimal
from typing import Any

from storage.driver import BatchGetResult, QueryResult
from storage.keys import Key
from storage.limits import NUMBER_MAX_DIGITS
from storage.table import TABLE
from storage.values import Item, Value

__all__ = [
    "batch_get_result",
    "deserialize",
    "deserialize_item",
    "deserialize_key",
    "get_result",
    "query_result",
]

AttributeValue = dict[str, Any]

_PK, _SK = TABLE.primary.partition_key, TABLE.primary.sort_key
_NUMBERS = Context(prec=NUMBER_MAX_DIGITS)


def _number(text: str) -> int | Decimal:
    digits = text[1:] if text[:1] == "-" else text
    if digits.isascii() and digits.isdigit():
        return int(text)
    number = _NUMBERS.create_decimal(text).normalize(_NUMBERS)
    if number == number.to_integral_value():
        return int(number)
    return number


def _string_set(values: list[str]) -> list[str]:
    return sorted(values)


def _number_set(values: list[str]) -> list[int | Decimal]:
    return sorted(_number(v) for v in values)


def _binary_set(values: list[bytes]) -> list[bytes]:
    return sorted(values)


def _list(values: list[AttributeValue]) -> list[Value]:
    return [deserialize(v) for v in values]


def _map(values: dict[str, AttributeValue]) -> dict[str, Value]:
    return {name: deserialize(v) for name, v in values.items()}


def _null(_: bool) -> None:
    return None


def _identity(value: Value) -> Value:
    return value


_DECODERS: dict[str, Callable[[Any], Value]] = {
    "S": _identity,
    "N": _number,
    "BOOL": bool,
    "NULL": _null,
    "B": bytes,
    "M": _map,
    "L": _list,
    "SS": _string_set,
    "NS": _number_set,
    "BS": _binary_set,
}


def deserialize(value: AttributeValue) -> Value:
    for tag, raw in value.items():
        return _DECODERS[tag](raw)
    raise ValueError("Empty AttributeValue")


def deserialize_item(item: Mapping[str, AttributeValue]) -> Item:
    return {name: deserialize(value) for name, value in item.items()}


def deserialize_key(key: Mapping[str, AttributeValue]) -> Key:
    return Key(key[_PK]["S"], key[_SK]["S"])


def _capacity(response: Mapping[str, Any]) -> float:
    consumed = response.get("ConsumedCapacity")
    if not consumed:
        return 0.0
    if isinstance(consumed, list):
        return float(sum(entry.get("CapacityUnits", 0) for entry in consumed))
    return float(consumed.get("CapacityUnits", 0))


def get_result(response: Mapping[str, Any]) -> tuple[Item | None, float]:
    """The driver's GetItem result from botocore's parsed response, as it was."""
    item = response.get("Item")
    return (deserialize_item(item) if item else None), _capacity(response)


def batch_get_result(response: Mapping[str, Any], table_name: str) -> BatchGetResult:
    items = response.get("Responses", {}).get(table_name, [])
    unprocessed = response.get("UnprocessedKeys", {}).get(table_name, {}).get("Keys", [])
    return BatchGetResult(
        items=[deserialize_item(item) for item in items],
        unprocessed=[deserialize_key(key) for key in unprocessed],
        capacity=_capacity(response),
    )


def query_result(response: Mapping[str, Any]) -> QueryResult:
    last = response.get("LastEvaluatedKey")
    return QueryResult(
        items=[deserialize_item(item) for item in response.get("Items", [])],
        last_evaluated_key={name: deserialize(v) for name, v in last.items()} if last else None,
        capacity=_capacity(response),
    )
