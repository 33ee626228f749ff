"""``Driver`` over DynamoDB: one low-level client call per operation.

Paging, cursors, batch chunking and UnprocessedKeys retries live in ``Store``;
this module only speaks DynamoDB, retries throttled calls, and maps errors.
"""

from __future__ import annotations

from asyncio import sleep
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from typing import Any
from uuid import uuid4

from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    BotoCoreError,
    ClientError,
    HTTPClientError,
)
from botocore.exceptions import ConnectionError as EndpointUnreachable

from domain.errors import ProofgateError, ServiceUnavailable

from ..driver import BatchGetResult, QueryRequest, QueryResult
from ..keys import Key
from ..limits import BATCH_GET_MAX_ATTEMPTS
from ..registry import SortOperator
from ..store import backoff_delay
from ..values import Item
from ..writes import ConditionCheck, Put, Update, WriteAction
from ._client import connect
from ._codec import deserialize, deserialize_item, deserialize_key, serialize_key, serialize_strings
from ._errors import error_code, is_server_error, is_throttled, transaction_error, translate
from ._expressions import Expression
from ._requests import transact_item, write_parameters

__all__ = ["REQUEST_MAX_ATTEMPTS", "DynamoDriver"]

REQUEST_MAX_ATTEMPTS = BATCH_GET_MAX_ATTEMPTS

_THROTTLED_HINT = (
    "The store is throttling or unreachable; retry the request later "
    "(with the same idempotencyKey, if it had one)."
)
_UNKNOWN_OUTCOME_HINT = (
    "The write may or may not have applied; retry the request with the same idempotencyKey, "
    "or read the item before writing again."
)
# DynamoDB answers a retry that arrives while the first attempt still runs with this.
_IN_PROGRESS = "TransactionInProgressException"


def _capacity(response: Mapping[str, Any]) -> float:
    consumed = response.get("ConsumedCapacity")
    if not consumed:
        return 0.0
    if isinstance(consumed, list):
        return float(sum(entry.get("CapacityUnits", 0) for entry in consumed))
    return float(consumed.get("CapacityUnits", 0))


class DynamoDriver:
    name = "dynamodb"

    def __init__(
        self,
        client: Any,
        table_name: str,
        *,
        stack: AsyncExitStack | None = None,
        max_attempts: int = REQUEST_MAX_ATTEMPTS,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.client = client
        self.table_name = table_name
        self._stack = stack
        self.max_attempts = max_attempts

    @classmethod
    async def connect(
        cls,
        *,
        table_name: str,
        region: str,
        endpoint_url: str | None = None,
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
        max_attempts: int = REQUEST_MAX_ATTEMPTS,
    ) -> DynamoDriver:
        stack = AsyncExitStack()
        try:
            client = await connect(
                stack,
                region=region,
                endpoint_url=endpoint_url,
                access_key_id=access_key_id,
                secret_access_key=secret_access_key,
            )
        except BaseException:
            await stack.aclose()
            raise
        return cls(client, table_name, stack=stack, max_attempts=max_attempts)

    async def get_item(self, key: Key, consistent: bool) -> tuple[Item | None, float]:
        response = await self._call(
            "get_item",
            "GetItem",
            {
                "TableName": self.table_name,
                "Key": serialize_key(key),
                "ConsistentRead": consistent,
                "ReturnConsumedCapacity": "TOTAL",
            },
        )
        item = response.get("Item")
        return (deserialize_item(item) if item else None), _capacity(response)

    async def batch_get_items(self, keys: Sequence[Key], consistent: bool) -> BatchGetResult:
        response = await self._call(
            "batch_get_item",
            "BatchGetItem",
            {
                "RequestItems": {
                    self.table_name: {
                        "Keys": [serialize_key(key) for key in keys],
                        "ConsistentRead": consistent,
                    }
                },
                "ReturnConsumedCapacity": "TOTAL",
            },
        )
        items = response.get("Responses", {}).get(self.table_name, [])
        unprocessed = response.get("UnprocessedKeys", {}).get(self.table_name, {}).get("Keys", [])
        return BatchGetResult(
            items=[deserialize_item(item) for item in items],
            unprocessed=[deserialize_key(key) for key in unprocessed],
            capacity=_capacity(response),
        )

    async def query(self, request: QueryRequest) -> QueryResult:
        sort = request.sort
        if (
            sort.operator is SortOperator.BETWEEN
            and sort.value.encode() > (sort.upper or "").encode()
        ):
            # DynamoDB rejects an inverted BETWEEN; the range is simply empty.
            return QueryResult(items=[], last_evaluated_key=None, capacity=0.0)
        expression = Expression()
        parameters: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": expression.key_condition(
                request.index, request.partition, sort
            ),
            "ScanIndexForward": request.forward,
            "Limit": request.limit,
            "ReturnConsumedCapacity": "TOTAL",
            **expression.parameters(),
        }
        if request.index.is_global_secondary:
            parameters["IndexName"] = request.index.name.value
        else:
            parameters["ConsistentRead"] = request.consistent
        if request.start_key is not None:
            parameters["ExclusiveStartKey"] = serialize_strings(request.start_key)
        response = await self._call("query", "Query", parameters)
        last = response.get("LastEvaluatedKey")
        return QueryResult(
            items=[deserialize_item(item) for item in response.get("Items", [])],
            last_evaluated_key={name: deserialize(v) for name, v in last.items()} if last else None,
            capacity=_capacity(response),
        )

    async def write(self, action: WriteAction) -> float:
        if isinstance(action, ConditionCheck):
            # No single-item API checks a condition without writing.
            return await self.transact_write([action])
        if isinstance(action, Put):
            method, operation = "put_item", "PutItem"
        elif isinstance(action, Update):
            method, operation = "update_item", "UpdateItem"
        else:
            method, operation = "delete_item", "DeleteItem"
        parameters = write_parameters(action, self.table_name)
        parameters["ReturnConsumedCapacity"] = "TOTAL"
        response = await self._call(
            method,
            operation,
            parameters,
            idempotent=False,
            failed=lambda error: translate(error, operation, key=action.key),
        )
        return _capacity(response)

    async def transact_write(self, actions: Sequence[WriteAction]) -> float:
        """One token for every attempt: DynamoDB applies a transaction once per
        ``ClientRequestToken`` for ten minutes, so a retry after a 5xx or a broken
        connection cannot apply it twice."""
        actions = list(actions)
        response = await self._call(
            "transact_write_items",
            "TransactWriteItems",
            {
                "TransactItems": [transact_item(action, self.table_name) for action in actions],
                "ClientRequestToken": uuid4().hex,
                "ReturnConsumedCapacity": "TOTAL",
            },
            failed=lambda error: transaction_error(error, actions),
        )
        return _capacity(response)

    async def close(self) -> None:
        if self._stack is not None:
            await self._stack.aclose()

    async def _call(
        self,
        method: str,
        operation: str,
        parameters: dict[str, Any],
        *,
        idempotent: bool = True,
        failed: Callable[[ClientError], ProofgateError] | None = None,
    ) -> dict[str, Any]:
        """One API call, retried with capped full-jitter backoff.

        Throttled calls were not applied and are always sent again. A 5xx or a
        connection that broke mid-flight leaves a write's outcome unknown, so
        only ``idempotent`` calls (reads, transactions with their token) are
        sent again; a single write answers SERVICE_UNAVAILABLE at once rather
        than risk applying an ADD twice.
        """
        cause = ""
        for attempt in range(self.max_attempts):
            if attempt:
                await sleep(backoff_delay(attempt))
            try:
                response: dict[str, Any] = await getattr(self.client, method)(**parameters)
            except ClientError as error:
                cause = error_code(error)
                if is_throttled(error) or (idempotent and cause == _IN_PROGRESS):
                    continue
                if not is_server_error(error):
                    raise (failed(error) if failed else translate(error, operation)) from error
                if not idempotent:
                    raise _outcome_unknown(operation, f"the store failed ({cause})") from error
            except EndpointUnreachable as error:
                cause = type(error).__name__
            except HTTPClientError as error:
                if not idempotent:
                    raise _outcome_unknown(operation, "the connection broke") from error
                cause = type(error).__name__
            except BotoCoreError as error:
                # Credentials, configuration, parameters: nothing a retry fixes.
                raise ProofgateError(f"DynamoDB {operation}: {type(error).__name__}") from error
            else:
                return response
        raise ServiceUnavailable(
            f"DynamoDB {operation} failed {self.max_attempts} times ({cause})",
            hint=_THROTTLED_HINT,
        )


def _outcome_unknown(operation: str, what: str) -> ServiceUnavailable:
    return ServiceUnavailable(
        f"DynamoDB {operation}: {what}; the write may or may not have applied",
        hint=_UNKNOWN_OUTCOME_HINT,
    )
