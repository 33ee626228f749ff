"""The response cache: registered queries' encoded answers, opted in by name,
keyed by document, variables and what the caller may see, and dropped by the
storage cache's invalidations (docs/design.md, Response cache)."""

from .answers import ResponseAnswers, Ticket, not_modified
from .entries import CachedResponse, ResponseCache, ResponseKey, ResponseStats, etag_of
from .requests import CacheableOperations, scope_of

__all__ = [
    "CacheableOperations",
    "CachedResponse",
    "ResponseAnswers",
    "ResponseCache",
    "ResponseKey",
    "ResponseStats",
    "Ticket",
    "etag_of",
    "not_modified",
    "scope_of",
]
