"""The prepared lane: POST /graphql for a document this process already knows.

Strawberry's view and schema pipeline cost a small query more than its
execution: fourteen extensions enter up to four lifecycle hooks each, per
request. What those hooks decide from the document alone (parse, token limit,
validation, operation type) was decided the first time the text ran, and the
document cache keeps the answer. So a request whose text the cache holds as
valid runs here: the checks that depend on the request (trusted documents for
this caller, the cost with these variables, the caller's rate bucket, the read
budget) and the work after execution (error mapping, the request log's
fields) call the same functions the extensions call, and the operation runs
on the schema's own executor (docs/design.md, Prepared lane).

The lane is built beside the view (``prepared_lane``, from the schema's
document cache and the settings that decide what runs freely) and answers an
``ExecutionResult``: the view turns it into a response as it does Strawberry's.
It uses Strawberry's and graphql-core's public API only, so a Strawberry
release is an upgrade, not a port (``tests/api/test_prepared.py`` greps).

Everything else declines to Strawberry's full path, with the body untouched: a
body with ``extensions`` (APQ), a batch, a trace header, OpenTelemetry spans, a
subscription, a query with ``@defer`` or ``@stream`` (answered in parts), a
document not yet validated or not valid, a document outside the registry when
only registered ones run freely, and any refusal (over the cost budget, out of
rate tokens), which the full path then answers in its own words. The lane
decides before anything runs or any token is taken, so a declined request is
answered exactly once. ``tests/api/graphql/test_prepared.py``
sends the suite's operations both ways and compares the responses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphql import (
    DocumentNode,
    GraphQLError,
    OperationDefinitionNode,
    experimental_execute_incrementally,
    get_operation_ast,
)
from graphql import (
    ExecutionResult as CoreExecutionResult,
)
from graphql import OperationType as CoreOperationType
from strawberry.execution.is_awaitable import optimized_is_awaitable
from strawberry.types import ExecutionResult

from api.graphql.execution.executor import OperationStart
from api.graphql.execution.plan import incremental
from api.limits.cost import cost_model
from api.limits.cost_report import ActualCost, cost_extension, shows_reads
from api.limits.ratelimit import RateCheck, public_calls
from api.observability.fallbacks import fell_back
from api.observability.request_log import record_operation
from api.observability.spans import spans_on
from api.operations.trusted import runs_freely
from api.settings.limits import Lane
from api.wire.errors import map_errors
from api.wire.request_json import MalformedJSON, decode_request_json
from domain.errors import ProofgateError, RateLimited
from storage.budget import READ_BUDGET, ReadBudget
from storage.trace import ACCOUNTS

if TYPE_CHECKING:
    from api.graphql.schema import ProofgateSchema
    from api.limits.document_cache import DocumentCache
    from api.operations.registry import OperationRegistry
    from api.settings.limits import Limits
    from api.settings.operations import TrustedDocuments
    from resolvers.context import RequestContext
    from services.auth import Principal

__all__ = ["PreparedLane", "PreparedOperation", "PreparedRequest", "prepared_lane"]

_FIELDS = frozenset({"query", "variables", "operationName"})


@dataclass(frozen=True, slots=True)
class PreparedOperation:
    """What the lane works out once per operation of a validated document,
    kept with the document in its cache (``DocumentCache.prepared``)."""

    document: DocumentNode
    operation: OperationDefinitionNode
    operation_name: str | None
    """As Strawberry names it: the one the request named, else the only one's."""
    admitted: bool | None
    """Within the cost budget whatever the variables (True, False), or None:
    the cost depends on them and is measured per request."""
    cost: int | None
    """The cost when the variables change nothing (``admitted`` not None)."""
    start: OperationStart


@dataclass(slots=True)
class PreparedRequest:
    prepared: PreparedOperation
    variables: dict[str, Any] | None
    cost: int | None = None
    """The planned cost with these variables, once ``within_cost`` measured it."""

    @property
    def document(self) -> DocumentNode:
        return self.prepared.document

    @property
    def operation(self) -> OperationDefinitionNode:
        return self.prepared.operation

    @property
    def operation_name(self) -> str | None:
        return self.prepared.operation_name


def prepared_lane(
    schema: ProofgateSchema,
    limits: Limits,
    registry: OperationRegistry | None,
    trusted_documents: TrustedDocuments,
) -> PreparedLane | None:
    """The lane for the view to take, or None: without the ``prepared`` lane
    (``PROOFGATE_EXECUTION``: ``graphql-core`` and ``library`` leave it out)
    or a schema without a document cache, every request takes the full path."""
    documents = schema.document_cache
    if Lane.PREPARED not in limits.execution or documents is None:
        return None
    return PreparedLane(schema, documents, limits, registry, trusted_documents)


class PreparedLane:
    def __init__(
        self,
        schema: ProofgateSchema,
        documents: DocumentCache,
        limits: Limits,
        registry: OperationRegistry | None,
        trusted_documents: TrustedDocuments,
    ) -> None:
        self.schema = schema
        self.documents = documents
        self.limits = limits
        self.registry = registry
        self.trusted_documents = trusted_documents
        self.answered = 0
        self.declined = 0

    def prepare(self, body: bytes, principal: Principal) -> PreparedRequest | None:
        """The request, if it may take the lane as far as its text tells;
        None, the fallback counted by cause, for the full path."""
        request = self._request(body, principal)
        if isinstance(request, str):
            fell_back(Lane.PREPARED, request)
            return None
        return request

    def _request(self, body: bytes, principal: Principal) -> PreparedRequest | str:
        try:
            data = decode_request_json(body)
        except MalformedJSON:
            return "body not JSON"
        if not isinstance(data, dict):
            return "batch"
        request = self.request_of(data, principal)
        if isinstance(request, str):
            return request
        if request.operation.operation is CoreOperationType.SUBSCRIPTION:
            return "subscription"
        return request

    def request_of(self, data: dict[str, Any], principal: Principal) -> PreparedRequest | str:
        """A request's fields (a POST's body, a WebSocket ``subscribe``'s
        payload) as far as its text tells; or why the full path answers it.
        The direct fan-out takes subscriptions from here
        (``api/graphql/alert_fanout.py``), which a POST never runs."""
        if not _FIELDS.issuperset(data):
            return "extensions or other fields"
        query, variables, name = data.get("query"), data.get("variables"), data.get("operationName")
        if not (name is None or isinstance(name, str)):
            return "malformed fields"
        if not (variables is None or isinstance(variables, dict)):
            return "malformed fields"
        if query is None and self.registry is not None and name:
            registered = self.registry.by_name.get(name)
            query = registered.text if registered is not None else None
        if not isinstance(query, str):
            return "no query"
        if not runs_freely(self.trusted_documents, self.registry, query, principal):
            return "untrusted document"
        prepared = self.documents.prepared(query, self.limits.max_tokens, name, self._prepare)
        if prepared is None:
            return "document not validated or invalid"
        if isinstance(prepared, str):
            return prepared
        return PreparedRequest(prepared, variables)

    def _prepare(self, document: DocumentNode, name: str | None) -> PreparedOperation | str:
        """What depends on the text alone, once per document and operation
        name; or why the full path answers it."""
        operation = get_operation_ast(document, name)
        if operation is None:
            return "no such operation"
        if incremental(document.definitions):  # answered in parts, by the full path
            return "@defer or @stream"
        if name is None and operation.name is not None:
            name = operation.name.value  # as Strawberry names the only operation
        admitted = cost = None
        if not operation.variable_definitions:
            admitted, cost = self._within_cost(document, name, None)
        schema = self.schema
        start = OperationStart(
            schema.execution_context_class, schema.graphql_schema, document, name
        )
        return PreparedOperation(document, operation, name, admitted, cost, start)

    def within_cost(self, prepared: PreparedRequest) -> bool:
        admitted = prepared.prepared.admitted
        if admitted is not None:
            prepared.cost = prepared.prepared.cost
            return admitted
        admitted, prepared.cost = self._within_cost(
            prepared.document, prepared.operation_name, prepared.variables
        )
        return admitted

    def _within_cost(
        self, document: DocumentNode, name: str | None, variables: dict[str, Any] | None
    ) -> tuple[bool, int | None]:
        try:
            cost = cost_model(self.schema).measure(document, name, variables)
        except ProofgateError:
            return False, None
        return cost is None or cost <= self.limits.max_cost, cost

    def admits(self, prepared: PreparedRequest) -> bool:
        """What the lane checks before the request's context exists: no spans
        to open (the full path opens them), and within the cost budget."""
        if spans_on():
            fell_back(Lane.PREPARED, "spans")
            return False
        if not self.within_cost(prepared):
            fell_back(Lane.PREPARED, "over the cost budget")
            return False
        return True

    async def run(
        self, prepared: PreparedRequest, context: RequestContext
    ) -> ExecutionResult | None:
        """The result, errors mapped and the operation recorded; or None
        (nothing done, no token taken) for the full path to answer."""
        kind = prepared.prepared.operation.operation
        mutation = kind is CoreOperationType.MUTATION
        if mutation and not await _took_tokens(self.schema, prepared, context):
            fell_back(Lane.PREPARED, "out of rate tokens")
            return None
        self.answered += 1
        account = ACCOUNTS.get()
        if account is None:  # outside a request: an account of its own
            with ActualCost() as actual:
                result = await self._execute(prepared, context)
            calls = actual.calls() if shows_reads(context) else None
        else:  # ``ActualCost`` without its object: the request's calls from here on
            start = len(account.calls)
            result = await self._execute(prepared, context)
            calls = account.calls[start:] if shows_reads(context) else None
        result.extensions = {"cost": cost_extension(prepared.cost, self.limits.max_cost, calls)}
        if result.errors:
            result.errors = map_errors(result.errors, context.request_id)
        # The type's text without the enum's ``value`` property, a call apiece.
        text = "query" if kind is CoreOperationType.QUERY else kind.value
        record_operation(prepared.operation_name, text, context.principal)
        return result

    async def _execute(self, prepared: PreparedRequest, context: Any) -> ExecutionResult:
        limits = self.limits
        try:
            # ``reading_within``, without its object and calls.
            budget = READ_BUDGET.set(ReadBudget(limits.max_read_items, limits.max_read_units))
            try:
                result = prepared.prepared.start.start(context, prepared.variables)
                if result is None:  # not on its compiled plan: through graphql-core's build
                    result = self._core(prepared, context)
                # A result answered at once is tested by its type: the test for
                # an awaitable looks for ``__await__`` on it, an AttributeError
                # raised and caught each request (~3,000 instructions).
                if type(result) is not CoreExecutionResult and optimized_is_awaitable(result):
                    result = await result
            finally:
                READ_BUDGET.reset(budget)
        except Exception as error:  # as Strawberry does: a result error, masked later
            unexpected = error if isinstance(error, GraphQLError) else None
            return ExecutionResult(
                data=None, errors=[unexpected or GraphQLError(str(error), original_error=error)]
            )
        assert isinstance(result, CoreExecutionResult)  # no @defer or @stream here
        return ExecutionResult(data=result.data, errors=result.errors)

    def _core(self, prepared: PreparedRequest, context: Any) -> Any:
        """graphql-core's ``execute``, as Strawberry calls it."""
        schema = self.schema
        return experimental_execute_incrementally(
            schema.graphql_schema,
            prepared.document,
            variable_values=prepared.variables,
            operation_name=prepared.operation_name,
            context_value=context,
            is_awaitable=optimized_is_awaitable,  # type: ignore[arg-type]
            executor_class=schema.execution_context_class,
        )


async def _took_tokens(
    schema: ProofgateSchema, prepared: PreparedRequest, context: RequestContext
) -> bool:
    """The caller's rate tokens for the public mutations it calls (``RateLimit``);
    False, with nothing taken, when the bucket is short."""
    host = context.client_host
    calls = public_calls(prepared.document, prepared.operation_name)
    check: RateCheck | None = schema.rate_check
    if host is None or not calls or check is None:
        return True
    try:
        await check(context.principal, host, calls)
    except RateLimited:
        return False
    return True
