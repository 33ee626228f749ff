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
from .operations import TrustedDocuments
from .operations.registry import OperationRegistry
from .operations.trusted import NamedOperations, TrustedDocumentCheck, UntrustedCounter
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


def build_schema(
    limits: Limits | None = None,
    operations: OperationRegistry | None = None,
    trusted_documents: TrustedDocuments = TrustedDocuments.OFF,
    untrusted: UntrustedCounter | None = None,
) -> strawberry.Schema:
    """A schema enforcing ``limits``; each app builds its own from its settings.

    Extensions are factories, so each request gets fresh instances. What they
    share is built here once per schema (validation rules, so
    ``ValidationCache`` recognises a repeated document; the rate limiter; the
    persisted queries; the compiled plans) or lives at module level (the parse
    and validation caches). ``PersistedQueries`` comes first: it must find the
    query before anything else looks at it, after the registered operations
    (``operations``), which answer a name or a hash the registry holds; the
    trusted-documents check follows ``ValidationCache``, whose result it
    replaces when it refuses.
    """
    limits = limits or Limits()
    rules = document_rules(limits)
    limiter = RateLimiter(limits.anonymous_rate, limits.key_rate)
    persisted = PersistedQueryStore(limits.persisted_queries)
    validation_cache = partial(ValidationCache, maxsize=PARSE_CACHE_SIZE)
    extensions: list[type[SchemaExtension] | Callable[[], SchemaExtension]] = [
        partial(PersistedQueries, persisted),
        OperationObserver,
        ErrorMapper,
        StorageTracing,
        partial(DocumentLimits, max_tokens=limits.max_tokens),
        partial(AddValidationRules, rules),
        validation_cache,
        partial(CostBudget, max_cost=limits.max_cost),
        partial(RateLimit, limiter),
    ]
    if operations is not None:
        extensions.insert(0, partial(NamedOperations, operations))
        check = partial(
            TrustedDocumentCheck, operations, trusted_documents, untrusted or UntrustedCounter()
        )
        extensions.insert(extensions.index(validation_cache) + 1, check)
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
