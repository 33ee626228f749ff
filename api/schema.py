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

from resolvers.root import Mutation, Query, Subscription
from resolvers.types.scalars import SCALAR_MAP

from .cost import CostBudget
from .document_cache import DocumentCache, ValidatedDocuments
from .errors import ErrorMapper
from .execution import PlanCache, compiled_executor
from .limits import MAX_ALIASES, MAX_DEPTH, MAX_TOKENS, Execution, Limits
from .operations import TrustedDocuments
from .operations.registry import OperationRegistry
from .operations.trusted import NamedOperations, TrustedDocumentCheck, UntrustedCounter
from .persisted import PersistedQueries, PersistedQueryStore
from .ratelimit import RateLimit, RateLimiter
from .request_log import OperationObserver
from .subscription_cost import SubscriptionCost
from .tracing import StorageTracing
from .validation import DocumentLimits, document_rules, hide_suggestions

__all__ = ["MAX_ALIASES", "MAX_DEPTH", "MAX_TOKENS", "ProofgateSchema", "build_schema", "schema"]

_ALL_OPERATIONS = frozenset(OperationType)


class ProofgateSchema(strawberry.Schema):
    document_cache: DocumentCache | None = None

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

    @staticmethod
    def remove_field_suggestion(error: GraphQLError) -> None:
        """With suggestions off, every "Did you mean", not only the field
        ones Strawberry removes: argument, type and enum value names spell
        out the schema just as well."""
        error.message = hide_suggestions(error.message)


_Factory = Callable[[], SchemaExtension]


def _shared_state(
    limits: Limits, redis_url: str | None, on_redis_outage: Callable[[], None] | None
) -> tuple[_Factory, _Factory]:
    """The persisted-query and rate-limit extensions: in process, or in Redis."""
    persisted = PersistedQueryStore(limits.persisted_queries)
    if redis_url is None:
        limiter = RateLimiter(limits.anonymous_rate, limits.key_rate)
        return partial(PersistedQueries, persisted), partial(RateLimit, limiter)
    from .shared_persisted import SharedPersistedQueries, SharedQueries
    from .shared_ratelimit import SharedRateLimit, SharedRateLimiter

    shared_limiter = SharedRateLimiter(
        limits.anonymous_rate, limits.key_rate, redis_url, on_outage=on_redis_outage
    )
    shared_queries = SharedQueries(redis_url, on_outage=on_redis_outage)
    return (
        partial(SharedPersistedQueries, persisted, shared_queries),
        partial(SharedRateLimit, shared_limiter),
    )


def build_schema(
    limits: Limits | None = None,
    operations: OperationRegistry | None = None,
    trusted_documents: TrustedDocuments = TrustedDocuments.OFF,
    untrusted: UntrustedCounter | None = None,
    *,
    redis_url: str | None = None,
    on_redis_outage: Callable[[], None] | None = None,
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
    rules = document_rules(limits)
    persisted_queries, rate_limit = _shared_state(limits, redis_url, on_redis_outage)
    documents = DocumentCache(limits.document_cache_bytes)
    validated = partial(ValidatedDocuments, documents)
    extensions: list[type[SchemaExtension] | Callable[[], SchemaExtension]] = [
        persisted_queries,
        OperationObserver,
        ErrorMapper,
        StorageTracing,
        partial(DocumentLimits, documents, max_tokens=limits.max_tokens),
        partial(AddValidationRules, rules),
        validated,
        partial(CostBudget, max_cost=limits.max_cost),
        SubscriptionCost,
        rate_limit,
    ]
    if operations is not None:
        extensions.insert(0, partial(NamedOperations, operations))
        check = partial(
            TrustedDocumentCheck, operations, trusted_documents, untrusted or UntrustedCounter()
        )
        extensions.insert(extensions.index(validated) + 1, check)
    compiled = limits.execution is Execution.COMPILED
    built = ProofgateSchema(
        execution_context_class=compiled_executor(PlanCache() if compiled else None),
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        extensions=extensions,
        config=StrawberryConfig(
            scalar_map=SCALAR_MAP, disable_field_suggestions=not limits.suggestions
        ),
    )
    built.document_cache = documents
    return built


schema = build_schema()
