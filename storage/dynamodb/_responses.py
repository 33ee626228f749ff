"""A hot call's decoded JSON as the driver's results.

Pure functions of the response, so the differential test can hand them the
JSON of any generated response and compare with what botocore's parser and
the codec made of the same bytes (docs/design.md, DynamoDB data plane).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..driver import BatchGetResult, QueryResult
from ..values import Item
from ._codec import decode, decode_item, decode_key

__all__ = ["batch_get_result", "capacity", "get_result", "query_result"]


def capacity(response: Mapping[str, Any]) -> float:
    consumed = response.get("ConsumedCapacity")
    if not consumed:
        return 0.0
    if isinstance(consumed, list):
        return float(sum(entry.get("CapacityUnits", 0) for entry in consumed))
    return float(consumed.get("CapacityUnits", 0))


def get_result(response: Mapping[str, Any]) -> tuple[Item | None, float]:
    item = response.get("Item")
    return (decode_item(item) if item else None), capacity(response)


def batch_get_result(response: Mapping[str, Any], table_name: str) -> BatchGetResult:
    items = response.get("Responses", {}).get(table_name, [])
    unprocessed = response.get("UnprocessedKeys", {}).get(table_name, {}).get("Keys", [])
    return BatchGetResult(
        items=[decode_item(item) for item in items],
        unprocessed=[decode_key(key) for key in unprocessed],
        capacity=capacity(response),
    )


def query_result(response: Mapping[str, Any]) -> QueryResult:
    last = response.get("LastEvaluatedKey")
    return QueryResult(
        items=[decode_item(item) for item in response.get("Items", [])],
        last_evaluated_key={name: decode(v) for name, v in last.items()} if last else None,
        capacity=capacity(response),
    )
