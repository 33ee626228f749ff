"""The response cache as a process builds it (docs/design.md, Response cache):
checked against the registry when the app is made, attached to the storage
cache, whose invalidations and flushes it hears, once the store is open."""

from __future__ import annotations

from api.operations.registry import OperationRegistry
from api.settings.gateway import Settings
from domain.errors import ConfigurationError
from storage import Storage
from storage.cache import CachedStorage

from .answers import ResponseAnswers
from .entries import ResponseCache
from .requests import CacheableOperations

__all__ = ["attach_response_cache", "response_answers"]


def response_answers(settings: Settings, registry: OperationRegistry) -> ResponseAnswers | None:
    """The response cache the settings ask for, or None; a one-line error for
    a setting that cannot work."""
    if not settings.response_cache:
        return None
    if not settings.cache:
        raise ConfigurationError(
            "PROOFGATE_RESPONSE_CACHE=on needs PROOFGATE_CACHE=on",
            hint="Responses are dropped by the storage cache's invalidations: "
            "set PROOFGATE_CACHE=on, or PROOFGATE_RESPONSE_CACHE=off.",
        )
    operations = CacheableOperations(registry, settings.response_cache_operations)
    if not operations:
        raise ConfigurationError(
            "PROOFGATE_RESPONSE_CACHE=on lists no operation to cache",
            hint="Set PROOFGATE_RESPONSE_CACHE_OPERATIONS to registered queries' names.",
        )
    cache = ResponseCache(settings.response_cache_bytes, settings.response_cache_ttl_ms / 1000)
    return ResponseAnswers(
        cache,
        operations,
        max_cost=settings.limits.max_cost,
        cdn_seconds=settings.response_cache_cdn_seconds,
    )


def attach_response_cache(answers: ResponseAnswers | None, storage: Storage) -> None:
    """``answers``' cache hears ``storage``'s invalidations and serves only
    while the storage cache is trusted."""
    if answers is None:
        return
    if not isinstance(storage, CachedStorage):  # PROOFGATE_CACHE=on opened it so
        raise ConfigurationError("The response cache needs the storage cache")
    cache = answers.cache
    cache.flushed()  # a store opened again: nothing kept before is known exact
    cache.trusted = lambda: storage.freshness.trusted()
    storage.add_dependent(cache)
