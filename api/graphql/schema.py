"""The Strawberry schema: root types from resolvers, extensions from api."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from functools import cache, partial
from typing import Any

from graphql import ExperimentalIncrementalExecutionResults, GraphQLError
from strawberry.extensions import AddValidationRules, SchemaExtension
from strawberry.extensions.runner import SchemaExtensionsRunner
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.graphql import OperationType

from api._strawberry import HookedSchema
from api.graphql.execution import PlanCache, compiled_executor
from api.graphql.extension_hooks import ClassifiedExtensionsRunner
from api.graphql.operation_plans import prepare_operations
from api.limits.cost import CostBudget
from api.limits.cost_directives import add_cost_directives
from api.limits.document_cache import DocumentCache, ValidatedDocuments
from api.limits.ratelimit import RateCheck, RateLimit, RateLimiter
from api.limits.read_budget import ReadLimit
from api.limits.subscription_cost import SubscriptionCost
from api.limits.validation import DocumentLimits, document_rules, hide_suggestions
from api.observability.request_log import OperationObserver
from api.observability.spans import OperationSpans
from api.observability.trace_extension import StorageTracing
from api.operations.persisted import PersistedQueries, PersistedQueryStore
from api.operations.registry import OperationRegistry
from api.operations.trusted import NamedOperations, TrustedDocumentCheck, UntrustedCounter
from api.settings.limits import MAX_ALIASES, MAX_DEPTH, MAX_TOKENS, Lane, Limits
from api.settings.operations import TrustedDocuments
from api.wire.errors import ErrorMapper, map_errors
from resolvers.context import request_context
from resolvers.root import Mutation, Query, Subscription
from resolvers.types.scalars import SCALAR_MAP

__all__ = [
    "MAX_ALIASES",
    "MAX_DEPTH",
    "MAX_TOKENS",
    "ProofgateSchema",
    "build_schema",
    "default_schema",
]

_ALL_OPERATIONS = frozenset(OperationType)


class ProofgateSchema(HookedSchema):
    document_cache: DocumentCache | None = None
    rate_check: RateCheck | None = None
    """The buckets of this schema's rate limits, for ``POST /ingest``."""
    operations: OperationRegistry | None = None
    """The registered operations this schema answers by name or hash."""

    def as_str(self) -> str:
        """The SDL with the cost directives made from the planner's prices
        (docs/design.md, Cost directives)."""
        add_cost_directives(self)
        return super().as_str()

    closers: tuple[Callable[[], Awaitable[None]], ...] = ()
    """What ``close`` awaits: the shared state's Redis clients."""

    async def close(self) -> None:
        """Closes the clients of the shared state; the app's lifespan calls it."""
        for close in self.closers:
            await close()

    async def execute(
        self,
        query: str | None,
        variable_values: dict[str, Any] | None = None,
        context_value: Any | None = None,
        root_value: Any | None = None,
        operation_name: str | None = None,
        allowed_operation_types: Iterable[OperationType] | None = None,
        operation_extensions: dict[str, Any] | None = None,
    ) -> ExecutionResult:
        """Only HTTP executes (WebSocket operations are streamed), and over
        HTTP Strawberry would run a subscription as a query and fail on its
        stream; refused, it is a 400 that says where subscriptions go."""
        allowed = set(allowed_operation_types or _ALL_OPERATIONS) - {OperationType.SUBSCRIPTION}
        return await super().execute(
            query,
            variable_values,
            context_value,
            root_value,
            operation_name,
            allowed,
            operation_extensions,
        )

    async def after_execution(
        self,
        context: ExecutionContext,
        result: Any,
        handled: ExecutionResult,
        extensions_runner: SchemaExtensionsRunner,
    ) -> ExecutionResult:
        """Strawberry hands incremental delivery's results on as graphql-core
        made them; the initial payload gets what every other result gets: its
        errors mapped and the extensions' results (cost, trace)."""
        if isinstance(result, ExperimentalIncrementalExecutionResults):
            initial = result.initial_result
            if initial.errors:
                initial.errors = map_errors(initial.errors, _request_id(context))
            extensions = await extensions_runner.get_extensions_results(context)
            initial.extensions = {**(initial.extensions or {}), **extensions} or None
        return handled

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        """Strawberry logs every error with its traceback; here a NOT_FOUND or
        a CONFLICT is an answer, not an incident. ``ErrorMapper`` logs the
        internal ones, under the request id the client was given."""

    def create_extensions_runner(
        self, execution_context: ExecutionContext, extensions: list[SchemaExtension]
    ) -> ClassifiedExtensionsRunner:
        """Strawberry's runner, with each extension class's hooks classified
        once rather than on every request (``api/graphql/extension_hooks.py``)."""
        return ClassifiedExtensionsRunner(execution_context, extensions)

    @staticmethod
    def remove_field_suggestion(error: GraphQLError) -> None:
        """With suggestions off, every "Did you mean", not only the field
        ones Strawberry removes: argument, type and enum value names spell
        out the schema just as well."""
        error.message = hide_suggestions(error.message)


def _request_id(context: ExecutionContext) -> str | None:
    request = request_context(context.context)
    return request.request_id if request is not None else None


_Factory = Callable[[], SchemaExtension]


def _shared_state(
    limits: Limits,
    redis_url: str | None,
    on_redis_outage: Callable[[], None] | None,
    redis_prefix: str,
    closers: list[Callable[[], Awaitable[None]]],
) -> tuple[_Factory, _Factory, RateCheck]:
    """The persisted-query and rate-limit extensions, and the limiter's
    buckets: in process, or in Redis (every key under ``redis_prefix``)."""
    persisted = PersistedQueryStore(limits.persisted_queries)
    if redis_url is None:
        limiter = RateLimiter(limits.anonymous_rate, limits.key_rate)
        return partial(PersistedQueries, persisted), partial(RateLimit, limiter), limiter.take
    from api.limits.shared_ratelimit import SharedRateLimit, SharedRateLimiter
    from api.operations.shared_persisted import SharedPersistedQueries, SharedQueries

    shared_limiter = SharedRateLimiter(
        limits.anonymous_rate,
        limits.key_rate,
        redis_url,
        on_outage=on_redis_outage,
        prefix=redis_prefix,
    )
    shared_queries = SharedQueries(redis_url, on_outage=on_redis_outage, prefix=redis_prefix)
    closers.extend((shared_limiter.close, shared_queries.close))
    return (
        partial(SharedPersistedQueries, persisted, shared_queries),
        partial(SharedRateLimit, shared_limiter),
        shared_limiter.check,
    )


def _extensions(
    limits: Limits,
    documents: DocumentCache,
    shared: tuple[_Factory, _Factory],
    operations: OperationRegistry | None,
    trusted_documents: TrustedDocuments,
    untrusted: UntrustedCounter | None,
) -> list[type[SchemaExtension] | Callable[[], SchemaExtension]]:
    """In the order ``build_schema`` explains."""
    persisted_queries, rate_limit = shared
    validated = partial(ValidatedDocuments, documents)
    extensions: list[type[SchemaExtension] | Callable[[], SchemaExtension]] = [
        persisted_queries,
        OperationObserver,
        OperationSpans,
        ErrorMapper,
        StorageTracing,
        partial(DocumentLimits, documents, max_tokens=limits.max_tokens),
        partial(AddValidationRules, document_rules(limits)),
        validated,
        partial(CostBudget, max_cost=limits.max_cost),
        SubscriptionCost,
        rate_limit,
        partial(ReadLimit, max_items=limits.max_read_items, max_units=limits.max_read_units),
    ]
    if operations is not None:
        extensions.insert(0, partial(NamedOperations, operations))
        check = partial(
            TrustedDocumentCheck, operations, trusted_documents, untrusted or UntrustedCounter()
        )
        extensions.insert(extensions.index(validated) + 1, check)
    return extensions


def build_schema(
    limits: Limits | None = None,
    operations: OperationRegistry | Callable[[ProofgateSchema], OperationRegistry] | None = None,
    trusted_documents: TrustedDocuments = TrustedDocuments.OFF,
    untrusted: UntrustedCounter | None = None,
    *,
    redis_url: str | None = None,
    on_redis_outage: Callable[[], None] | None = None,
    redis_prefix: str = "proofgate:",
) -> ProofgateSchema:
    """A schema enforcing ``limits``; each app builds its own from its settings.

    Extensions are factories, so each request gets fresh instances. What they
    share is built here once per schema: the validation rules (so the document
    cache recognises a repeated document), the document cache within its byte
    budget, the rate limiter, the persisted queries and the compiled plans.
    ``PersistedQueries`` comes first: it must find the query before anything
    else looks at it, after the registered operations (``operations``), which
    answer a name or a hash the registry holds; the trusted-documents check
    follows the validated documents, whose result it replaces when it refuses.
    With ``redis_url`` the rate limits and the persisted queries are shared by
    every process using that Redis. ``operations`` may be a loader, given the
    schema before its extensions are set: the registry is then checked
    against the very schema that serves it, and no other is built for it.
    """
    limits = limits or Limits()
    documents = DocumentCache(limits.document_cache_bytes)
    closers: list[Callable[[], Awaitable[None]]] = []
    persisted_queries, rate_limit, rate_check = _shared_state(
        limits, redis_url, on_redis_outage, redis_prefix, closers
    )
    shared = (persisted_queries, rate_limit)
    built = ProofgateSchema(
        execution_context_class=compiled_executor(
            _plans(limits), limits.max_response_bytes, limits.fanout_events
        ),
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        config=StrawberryConfig(
            scalar_map=SCALAR_MAP,
            disable_field_suggestions=not limits.suggestions,
            # @defer and @stream, over multipart HTTP (docs/design.md, Incremental delivery)
            enable_experimental_incremental_execution=True,
        ),
    )
    if operations is not None and not isinstance(operations, OperationRegistry):
        operations = operations(built)
    # Read per request (``get_extensions``), so set once the registry is known.
    built.extensions = tuple(
        _extensions(limits, documents, shared, operations, trusted_documents, untrusted)
    )
    built.operations = operations
    built.document_cache = documents
    built.rate_check = rate_check
    built.closers = tuple(closers)
    if operations is not None:
        prepare_operations(built, operations, limits.max_tokens)
    return built


def _plans(limits: Limits) -> PlanCache | None:
    """The plan cache, with the lanes a plan takes; None without the ``plan``
    lane (docs/design.md, Fast paths and their switches)."""
    lanes = limits.execution
    if Lane.PLAN not in lanes:
        return None
    return PlanCache(fused=Lane.FUSED in lanes, projection=Lane.PROJECTION in lanes)


@cache
def default_schema() -> ProofgateSchema:
    """A schema with the default limits, for the commands that only read the
    types (``export-schema``, ``explain``); built on first use, not at import."""
    return build_schema()


def __getattr__(name: str) -> ProofgateSchema:
    """``from api.graphql.schema import schema``: the default schema, lazily."""
    if name == "schema":
        return default_schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
