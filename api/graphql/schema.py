"""The Strawberry schema: root types from resolvers, extensions from api."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import AddValidationRules, SchemaExtension
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.graphql import OperationType

from api.graphql.document_cache import DocumentCache, ValidatedDocuments
from api.graphql.errors import ErrorMapper
from api.graphql.execution import PlanCache, compiled_executor
from api.graphql.extension_hooks import ClassifiedExtensionsRunner
from api.graphql.persisted import PersistedQueries, PersistedQueryStore
from api.limits.cost import CostBudget
from api.limits.ratelimit import RateCheck, RateLimit, RateLimiter
from api.limits.read_budget import ReadLimit
from api.limits.subscription_cost import SubscriptionCost
from api.limits.validation import DocumentLimits, document_rules, hide_suggestions
from api.observability.request_log import OperationObserver
from api.observability.spans import OperationSpans
from api.observability.trace_extension import StorageTracing
from api.operations import TrustedDocuments
from api.operations.prepare import prepare_operations
from api.operations.registry import OperationRegistry
from api.operations.trusted import NamedOperations, TrustedDocumentCheck, UntrustedCounter
from api.settings.limits import MAX_ALIASES, MAX_DEPTH, MAX_TOKENS, Execution, Limits
from resolvers.root import Mutation, Query, Subscription
from resolvers.types.scalars import SCALAR_MAP

__all__ = ["MAX_ALIASES", "MAX_DEPTH", "MAX_TOKENS", "ProofgateSchema", "build_schema", "schema"]

_ALL_OPERATIONS = frozenset(OperationType)


class ProofgateSchema(strawberry.Schema):
    document_cache: DocumentCache | None = None
    rate_check: RateCheck | None = None
    """The buckets of this schema's rate limits, for ``POST /ingest``."""

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


_Factory = Callable[[], SchemaExtension]


def _shared_state(
    limits: Limits,
    redis_url: str | None,
    on_redis_outage: Callable[[], None] | None,
    redis_prefix: str,
) -> tuple[_Factory, _Factory, RateCheck]:
    """The persisted-query and rate-limit extensions, and the limiter's
    buckets: in process, or in Redis (every key under ``redis_prefix``)."""
    persisted = PersistedQueryStore(limits.persisted_queries)
    if redis_url is None:
        limiter = RateLimiter(limits.anonymous_rate, limits.key_rate)
        return partial(PersistedQueries, persisted), partial(RateLimit, limiter), limiter.take
    from api.graphql.shared_persisted import SharedPersistedQueries, SharedQueries
    from api.limits.shared_ratelimit import SharedRateLimit, SharedRateLimiter

    shared_limiter = SharedRateLimiter(
        limits.anonymous_rate,
        limits.key_rate,
        redis_url,
        on_outage=on_redis_outage,
        prefix=redis_prefix,
    )
    shared_queries = SharedQueries(redis_url, on_outage=on_redis_outage, prefix=redis_prefix)
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
    operations: OperationRegistry | None = None,
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
    every process using that Redis.
    """
    limits = limits or Limits()
    documents = DocumentCache(limits.document_cache_bytes)
    persisted_queries, rate_limit, rate_check = _shared_state(
        limits, redis_url, on_redis_outage, redis_prefix
    )
    shared = (persisted_queries, rate_limit)
    extensions = _extensions(limits, documents, shared, operations, trusted_documents, untrusted)
    compiled = limits.execution is Execution.COMPILED
    built = ProofgateSchema(
        execution_context_class=compiled_executor(
            PlanCache() if compiled else None, limits.max_response_bytes
        ),
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        extensions=extensions,
        config=StrawberryConfig(
            scalar_map=SCALAR_MAP, disable_field_suggestions=not limits.suggestions
        ),
    )
    built.document_cache = documents
    built.rate_check = rate_check
    if operations is not None:
        prepare_operations(built, operations, limits.max_tokens)
    return built


schema = build_schema()
