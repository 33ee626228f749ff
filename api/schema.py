"""The Strawberry schema: root types from resolvers, extensions from api."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import strawberry
from graphql import GraphQLError
from strawberry.extensions import AddValidationRules, SchemaExtension, ValidationCache
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext

from resolvers.root import Mutation, Query, Subscription
from resolvers.types.scalars import SCALAR_MAP

from .cost import CostBudget
from .errors import ErrorMapper
from .execution import PlanCache, compiled_executor
from .limits import MAX_ALIASES, MAX_DEPTH, MAX_TOKENS, Execution, Limits
from .persisted import PersistedQueries, PersistedQueryStore
from .ratelimit import RateLimit, RateLimiter
from .request_log import OperationObserver
from .tracing import StorageTracing
from .validation import PARSE_CACHE_SIZE, DocumentLimits, document_rules, hide_suggestions

__all__ = ["MAX_ALIASES", "MAX_DEPTH", "MAX_TOKENS", "ProofgateSchema", "build_schema", "schema"]


class ProofgateSchema(strawberry.Schema):
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
    *,
    redis_url: str | None = None,
    on_redis_outage: Callable[[], None] | None = None,
) -> strawberry.Schema:
    """A schema enforcing ``limits``; each app builds its own from its settings.

    Extensions are factories, so each request gets fresh instances. What they
    share is built here once per schema (validation rules, so
    ``ValidationCache`` recognises a repeated document; the rate limiter; the
    persisted queries; the compiled plans) or lives at module level (the parse
    and validation caches). ``PersistedQueries`` comes first: it must find the
    query before anything else looks at it. With ``redis_url`` the rate limits
    and the persisted queries are shared by every process using that Redis.
    """
    limits = limits or Limits()
    rules = document_rules(limits)
    persisted_queries, rate_limit = _shared_state(limits, redis_url, on_redis_outage)
    extensions: list[type[SchemaExtension] | Callable[[], SchemaExtension]] = [
        persisted_queries,
        OperationObserver,
        ErrorMapper,
        StorageTracing,
        partial(DocumentLimits, max_tokens=limits.max_tokens),
        partial(AddValidationRules, rules),
        partial(ValidationCache, maxsize=PARSE_CACHE_SIZE),
        partial(CostBudget, max_cost=limits.max_cost),
        rate_limit,
    ]
    compiled = limits.execution is Execution.COMPILED
    return ProofgateSchema(
        execution_context_class=compiled_executor(PlanCache() if compiled else None),
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        extensions=extensions,
        config=StrawberryConfig(
            scalar_map=SCALAR_MAP, disable_field_suggestions=not limits.suggestions
        ),
    )


schema = build_schema()
