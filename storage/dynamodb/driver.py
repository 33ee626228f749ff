"""``Driver`` over DynamoDB: one data-plane call per operation.

Paging, cursors, batch chunking and UnprocessedKeys retries live in ``Store``;
this module only speaks DynamoDB, retries throttled calls, and maps errors.
Calls go out on ``_wire`` (signed by our own SigV4 signer, ``_signing``, held to
botocore's by a differential test; decoded once); the aiobotocore
client is kept for what it is good at and closed with the driver.
"""

from __future__ import annotations

from asyncio import sleep
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from typing import Any
from uuid import uuid4

from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    BotoCoreError,
    ClientError,
)

from domain.errors import ProofgateError, ServiceUnavailable

from ..driver import BatchGetResult, QueryRequest, QueryResult
from ..keys import Key
from ..limits import BATCH_GET_MAX_ATTEMPTS
from ..registry import SortOperator
from ..store import backoff_delay
from ..values import Item
from ..writes import ConditionCheck, Put, Update, WriteAction
from ._client import client_config, connect
from ._codec import serialize_key, serialize_strings
from ._errors import error_code, is_server_error, is_throttled, transaction_error, translate
from ._expressions import Expression
from ._requests import transact_item, write_parameters
from ._responses import batch_get_result, capacity, get_result, query_result
from ._wire import RequestNotSent, ResponseLost, Wire

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


class DynamoDriver:
    name = "dynamodb"

    def __init__(
        self,
        wire: Wire,
        table_name: str,
        *,
        stack: AsyncExitStack | None = None,
        max_attempts: int = REQUEST_MAX_ATTEMPTS,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.wire = wire
        self.client = wire.client
        """The aiobotocore client the wire signs for (its guards stay registered)."""
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
            connection = await connect(
                stack,
                region=region,
                endpoint_url=endpoint_url,
                access_key_id=access_key_id,
                secret_access_key=secret_access_key,
            )
            config = client_config()
            wire = Wire.open(
                connection.client,
                connection.credentials,
                pool=config.max_pool_connections,
                connect_timeout=config.connect_timeout,
                read_timeout=config.read_timeout,
            )
            stack.push_async_callback(wire.close)
        except BaseException:
            await stack.aclose()
            raise
        return cls(wire, table_name, stack=stack, max_attempts=max_attempts)

    async def get_item(self, key: Key, consistent: bool) -> tuple[Item | None, float]:
        response = await self._call(
            "GetItem",
            {
                "TableName": self.table_name,
                "Key": serialize_key(key),
                "ConsistentRead": consistent,
                "ReturnConsumedCapacity": "TOTAL",
            },
        )
        return get_result(response)

    async def batch_get_items(self, keys: Sequence[Key], consistent: bool) -> BatchGetResult:
        response = await self._call(
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
        return batch_get_result(response, self.table_name)

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
                request.table_index, request.partition, sort
            ),
            "ScanIndexForward": request.forward,
            "Limit": request.limit,
            "ReturnConsumedCapacity": "TOTAL",
            **expression.parameters(),
        }
        if request.table_index.is_global_secondary:
            parameters["IndexName"] = request.table_index.name.value
        else:
            parameters["ConsistentRead"] = request.consistent
        if request.start_key is not None:
            parameters["ExclusiveStartKey"] = serialize_strings(request.start_key)
        return query_result(await self._call("Query", parameters))

    async def write(self, action: WriteAction) -> float:
        if isinstance(action, ConditionCheck):
            # No single-item API checks a condition without writing.
            return await self.transact_write([action])
        if isinstance(action, Put):
            operation = "PutItem"
        elif isinstance(action, Update):
            operation = "UpdateItem"
        else:
            operation = "DeleteItem"
        parameters = write_parameters(action, self.table_name)
        parameters["ReturnConsumedCapacity"] = "TOTAL"
        response = await self._call(
            operation,
            parameters,
            idempotent=False,
            failed=lambda error: translate(error, operation, key=action.key),
        )
        return capacity(response)

    async def transact_write(self, actions: Sequence[WriteAction]) -> float:
        """One token for every attempt: DynamoDB applies a transaction once per
        ``ClientRequestToken`` for ten minutes, so a retry after a 5xx or a broken
        connection cannot apply it twice."""
        actions = list(actions)
        response = await self._call(
            "TransactWriteItems",
            {
                "TransactItems": [transact_item(action, self.table_name) for action in actions],
                "ClientRequestToken": uuid4().hex,
                "ReturnConsumedCapacity": "TOTAL",
            },
            failed=lambda error: transaction_error(error, actions),
        )
        return capacity(response)

    async def close(self) -> None:
        if self._stack is not None:
            await self._stack.aclose()

    async def _call(
        self,
        operation: str,
        parameters: dict[str, Any],
        *,
        idempotent: bool = True,
        failed: Callable[[ClientError], ProofgateError] | None = None,
    ) -> dict[str, Any]:
        """One API call, retried with capped full-jitter backoff.

        Throttled calls and calls that never left (no connection was made)
        were not applied and are always sent again. A 5xx, a connection that
        broke after the request went out, or an answer that failed its CRC
        leaves a write's outcome unknown, so only ``idempotent`` calls (reads,
        transactions with their token) are sent again; a single write answers
        SERVICE_UNAVAILABLE at once rather than risk applying an ADD twice.
        """
        cause = ""
        for attempt in range(self.max_attempts):
            if attempt:
                await sleep(backoff_delay(attempt))
            try:
                response: dict[str, Any] = await self.wire.call(operation, parameters)
            except ClientError as error:
                cause = error_code(error)
                if is_throttled(error) or (idempotent and cause == _IN_PROGRESS):
                    continue
                if not is_server_error(error):
                    raise (failed(error) if failed else translate(error, operation)) from error
                if not idempotent:
                    raise _outcome_unknown(operation, f"the store failed ({cause})") from error
            except RequestNotSent as error:
                cause = str(error)
            except ResponseLost as error:
                if not idempotent:
                    raise _outcome_unknown(operation, f"the answer was lost ({error})") from error
                cause = str(error)
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
