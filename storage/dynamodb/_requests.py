"""Typed write actions as DynamoDB request parameters.

The same parameters serve PutItem/UpdateItem/DeleteItem and the entries of
TransactWriteItems, so a transaction and a single write can never disagree on
what an action means.
"""

from __future__ import annotations

from typing import Any

from ..writes import ConditionCheck, Delete, Put, Update, WriteAction
from ._codec import serialize_item, serialize_key
from ._expressions import Expression

__all__ = ["transact_item", "write_parameters"]


def write_parameters(action: WriteAction, table_name: str) -> dict[str, Any]:
    expression = Expression()
    parameters: dict[str, Any] = {"TableName": table_name}
    if isinstance(action, Put):
        parameters["Item"] = serialize_item(action.item)
    else:
        parameters["Key"] = serialize_key(action.key)
    if isinstance(action, Update):
        parameters["UpdateExpression"] = expression.update(action)
    if action.condition is not None:
        parameters["ConditionExpression"] = expression.condition(action.condition)
    parameters.update(expression.parameters())
    return parameters


_TRANSACT_KINDS: dict[type[Any], str] = {
    Put: "Put",
    Update: "Update",
    Delete: "Delete",
    ConditionCheck: "ConditionCheck",
}


def transact_item(action: WriteAction, table_name: str) -> dict[str, Any]:
    return {_TRANSACT_KINDS[type(action)]: write_parameters(action, table_name)}
