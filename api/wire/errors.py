"""The one place errors become GraphQL errors.

A ``ProofgateError`` keeps its message and gains ``extensions.code`` (and its
hint). Anything else is a bug: the client sees a masked INTERNAL_SERVER_ERROR
with the request id, and the log gets the traceback under the same id.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from graphql import ExecutionResult as GraphQLExecutionResult
from graphql.error import GraphQLError
from starlette.responses import JSONResponse
from strawberry.extensions import SchemaExtension
from strawberry.schema.exceptions import InvalidOperationTypeError
from strawberry.types.execution import ExecutionResult as StrawberryExecutionResult

from api.observability.observation import current_observation, note_error_codes
from domain.errors import BadUserInput, ErrorCode, ProofgateError
from resolvers.context import request_context

__all__ = [
    "ErrorMapper",
    "error_extensions",
    "error_response",
    "map_errors",
    "to_graphql_error",
]

logger = logging.getLogger("proofgate.errors")


def error_extensions(error: ProofgateError) -> dict[str, Any]:
    extensions: dict[str, Any] = {"code": error.code.value, **error.extensions}
    if error.hint:
        extensions["hint"] = error.hint
    return extensions


def error_response(error: ProofgateError, status_code: int) -> JSONResponse:
    """A refusal before execution, shaped like any GraphQL error response so a
    client handles it with the same code path."""
    note_error_codes([error.code.value])
    extensions = error_extensions(error)
    observation = current_observation()
    if observation is not None:
        extensions["requestId"] = observation.request_id
    body = {"data": None, "errors": [{"message": error.message, "extensions": extensions}]}
    return JSONResponse(body, status_code=status_code)


def to_graphql_error(error: GraphQLError, request_id: str | None) -> GraphQLError:
    original = error.original_error
    while isinstance(original, GraphQLError) and original.original_error is not None:
        original = original.original_error
    if isinstance(original, InvalidOperationTypeError):
        original = _wrong_transport(error.message)
    if isinstance(original, ProofgateError):
        message, extensions = original.message, error_extensions(original)
        if original.code is ErrorCode.INTERNAL_SERVER_ERROR:
            logger.error("request %s: %s", request_id, original.message, exc_info=original)
            message = "Internal server error"
            extensions = {"code": ErrorCode.INTERNAL_SERVER_ERROR.value}
    elif original is None or isinstance(original, GraphQLError):
        # Parse and validation errors, and variables that do not coerce (a
        # null for a non-null type): the request itself is wrong.
        message = error.message
        extensions = {"code": (error.extensions or {}).get("code", ErrorCode.BAD_USER_INPUT.value)}
    else:
        logger.error("request %s: unhandled error", request_id, exc_info=original)
        message = "Internal server error"
        extensions = {"code": ErrorCode.INTERNAL_SERVER_ERROR.value}
    if request_id:
        extensions["requestId"] = request_id
    return GraphQLError(
        message,
        nodes=error.nodes,
        source=error.source,
        positions=error.positions,
        path=error.path,
        extensions=extensions,
    )


def map_errors(errors: Iterable[GraphQLError], request_id: str | None) -> list[GraphQLError]:
    """An operation's errors as the client sees them; their codes go to the request's log line."""
    mapped = [to_graphql_error(error, request_id) for error in errors]
    note_error_codes(str((error.extensions or {})["code"]) for error in mapped)
    return mapped


def _wrong_transport(message: str) -> BadUserInput:
    """Legacy graphql-ws's ``start`` runs subscriptions only; a query or a
    mutation sent there is the client's mistake, not the server's."""
    return BadUserInput(
        f"{message[:1].upper()}{message[1:]} on this transport",
        hint="Legacy graphql-ws carries subscriptions only: send queries and mutations "
        "as POST /graphql, or over graphql-transport-ws.",
    )


class ErrorMapper(SchemaExtension):
    def _request_id(self) -> str | None:
        context = request_context(self.execution_context.context)
        return context.request_id if context is not None else None

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        if (
            isinstance(result, (GraphQLExecutionResult, StrawberryExecutionResult))
            and result.errors
        ):
            result.errors = map_errors(result.errors, self._request_id())

    def on_stream_result(self, result: Any) -> None:  # type: ignore[override]
        """Subscriptions send each result as it is produced, long before
        ``on_operation`` ends, so their errors are mapped here. A function,
        not a generator: nothing runs after the result is sent, and it runs
        for every subscriber of every alert (docs/design.md, Alert fan-out)."""
        if (
            isinstance(result, (GraphQLExecutionResult, StrawberryExecutionResult))
            and result.errors
        ):
            request_id = self._request_id()
            result.errors = [to_graphql_error(e, request_id) for e in result.errors]
