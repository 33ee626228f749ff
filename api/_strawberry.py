"""Strawberry's private names, reached from here and nowhere else
(docs/design.md, "Libraries' private names").

Why: Strawberry has no public way to do five things the gateway needs. The
graphql-core schema it builds (``Schema._schema``) is what validation, the
cost walk, the registry and the compiled executor read, and the way back from
it (``GraphQLSchema._strawberry_schema``) is how the executor finds a field's
Strawberry definition. An HTTP stream is registered as a connection, so the
view overrides how a streaming response is made
(``_create_streaming_response``), maps each streamed result's errors
(``_process_stream_result``) and asks which stream a request wants before the
context is built (``_get_stream_transport_from_headers``). Incremental
delivery's initial payload gets its errors mapped after
``Schema._handle_execution_result``. Trusted-documents mode replaces a refused
query and must drop the operation name the client gave
(``ExecutionContext._provided_operation_name``).

Each is given a public name below (``graphql_schema_of``, ``StreamingGraphQL``'s
``stream_transport``/``streaming_response``/``stream_result``,
``HookedSchema.after_execution``, ``forget_operation_name``), which the rest of
the code uses. Checked against strawberry-graphql 0.341.2: on an upgrade, read
these names in its ``schema/schema.py``, ``http/base.py``,
``http/async_base_view.py`` and ``types/execution.py`` again;
``tests/test_library_doors.py`` fails until this line names the installed
version.

It sits at the top of ``api/`` because every layer that reads the schema
(``limits``, ``operations``, ``graphql``, its executor) imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import strawberry
from strawberry.asgi import GraphQL

if TYPE_CHECKING:
    from collections.abc import Mapping

    from graphql import GraphQLSchema
    from starlette.requests import Request
    from starlette.responses import Response
    from strawberry.extensions.runner import SchemaExtensionsRunner
    from strawberry.http import GraphQLHTTPResponse, GraphQLRequestProtocol
    from strawberry.http.streaming import HTTPStreamTransport
    from strawberry.types import ExecutionContext, ExecutionResult, SubscriptionExecutionResult

__all__ = [
    "HookedSchema",
    "StreamingGraphQL",
    "forget_operation_name",
    "graphql_schema_of",
    "strawberry_schema_of",
]

Context = TypeVar("Context")
RootValue = TypeVar("RootValue")


def graphql_schema_of(schema: strawberry.Schema) -> GraphQLSchema:
    """The graphql-core schema Strawberry built."""
    return schema._schema


def strawberry_schema_of(schema: GraphQLSchema) -> strawberry.Schema | None:
    """The Strawberry schema that built a graphql-core schema (None for one it did not)."""
    found = getattr(schema, "_strawberry_schema", None)
    return found if isinstance(found, strawberry.Schema) else None


def forget_operation_name(execution_context: ExecutionContext) -> None:
    """The operation name the client sent no longer names anything in the query."""
    execution_context._provided_operation_name = None


class HookedSchema(strawberry.Schema):
    @property
    def graphql_schema(self) -> GraphQLSchema:
        """The graphql-core schema Strawberry built, for the code that
        validates, costs or walks documents against it."""
        return self._schema

    async def after_execution(
        self,
        context: ExecutionContext,
        result: Any,
        handled: ExecutionResult,
        extensions_runner: SchemaExtensionsRunner,
    ) -> ExecutionResult:
        """``handled``: what Strawberry made of graphql-core's ``result``; a
        subclass may amend either."""
        return handled

    async def _handle_execution_result(
        self,
        context: ExecutionContext,
        result: Any,
        extensions_runner: SchemaExtensionsRunner,
        *,
        skip_process_errors: bool = False,
    ) -> ExecutionResult:
        handled = await super()._handle_execution_result(
            context, result, extensions_runner, skip_process_errors=skip_process_errors
        )
        return await self.after_execution(context, result, handled, extensions_runner)


class StreamingGraphQL(GraphQL[Context, RootValue]):
    def stream_transport(self, headers: Mapping[str, str]) -> HTTPStreamTransport | None:
        """The stream (multipart or SSE) a request's ``Accept`` asks for, if any."""
        return self._get_stream_transport_from_headers(headers)

    async def streaming_response(
        self,
        request: Request,
        result: SubscriptionExecutionResult,
        protocol: GraphQLRequestProtocol,
        sub_response: Response,
    ) -> Response:
        """The response for an operation asked for as a stream: Strawberry's."""
        return await super()._create_streaming_response(request, result, protocol, sub_response)

    async def stream_result(
        self, request: Request, value: Any, all_pending: list[Any]
    ) -> tuple[GraphQLHTTPResponse, list[Any]]:
        """One streamed result as its part's payload: Strawberry's."""
        return await super()._process_stream_result(request, value, all_pending)

    async def _create_streaming_response(
        self,
        request: Request,
        result: SubscriptionExecutionResult,
        protocol: GraphQLRequestProtocol,
        sub_response: Response,
    ) -> Response:
        return await self.streaming_response(request, result, protocol, sub_response)

    async def _process_stream_result(
        self, request: Request, value: Any, all_pending: list[Any]
    ) -> tuple[GraphQLHTTPResponse, list[Any]]:
        return await self.stream_result(request, value, all_pending)
