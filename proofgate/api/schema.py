"""The Strawberry schema: root types from resolvers, extensions from api."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import strawberry
from graphql import GraphQLError
from strawberry.extensions import (
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    SchemaExtension,
    ValidationCache,
)
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext

from proofgate.resolvers.root import Mutation, Query, Subscription
from proofgate.resolvers.types.scalars import SCALAR_MAP

from .errors import ErrorMapper
from .tracing import StorageTracing

__all__ = ["ProofgateSchema", "build_schema", "schema"]

MAX_DEPTH = 10
MAX_ALIASES = 30
MAX_TOKENS = 2000


class ProofgateSchema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        """Strawberry logs every error with its traceback; here a NOT_FOUND or
        a CONFLICT is an answer, not an incident. ``ErrorMapper`` logs the
        internal ones, under the request id the client was given."""


def build_schema(
    *, max_depth: int = MAX_DEPTH, max_aliases: int = MAX_ALIASES, max_tokens: int = MAX_TOKENS
) -> strawberry.Schema:
    # Factories, so each request gets fresh extensions; the parser and
    # validation caches live at module level, shared by every instance.
    extensions: list[type[SchemaExtension] | Callable[[], SchemaExtension]] = [
        ErrorMapper,
        StorageTracing,
        partial(ParserCache, maxsize=1024),
        partial(ValidationCache, maxsize=1024),
        partial(MaxTokensLimiter, max_token_count=max_tokens),
        partial(MaxAliasesLimiter, max_alias_count=max_aliases),
        partial(QueryDepthLimiter, max_depth=max_depth),
    ]
    return ProofgateSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        extensions=extensions,
        config=StrawberryConfig(scalar_map=SCALAR_MAP),
    )


schema = build_schema()
