"""The Strawberry schema: root types from resolvers, extensions from api."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.extensions import (
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    ValidationCache,
)

from proofgate.resolvers.root import Mutation, Query

from .errors import ErrorMapper
from .tracing import StorageTracing

__all__ = ["build_schema", "schema"]

MAX_DEPTH = 10
MAX_ALIASES = 30
MAX_TOKENS = 2000


def build_schema(*, max_depth: int = MAX_DEPTH, max_aliases: int = MAX_ALIASES, max_tokens: int = MAX_TOKENS) -> strawberry.Schema:
    # Strawberry accepts configured extension instances, though its annotation
    # names only classes and factories.
    extensions: list[Any] = [
        ErrorMapper,
        StorageTracing,
        ParserCache(maxsize=1024),
        ValidationCache(maxsize=1024),
        MaxTokensLimiter(max_token_count=max_tokens),
        MaxAliasesLimiter(max_alias_count=max_aliases),
        QueryDepthLimiter(max_depth=max_depth),
    ]
    return strawberry.Schema(query=Query, mutation=Mutation, extensions=extensions)


schema = build_schema()
