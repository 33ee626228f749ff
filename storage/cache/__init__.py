"""The exact cache: a ``Storage`` over another that keeps what the registry
says may be kept, and drops it by the keys each write changes
(docs/design.md, Storage cache)."""

from .entries import PageKey
from .freshness import Freshness, LocalFreshness
from .generations import Generations
from .invalidation import Entered, Invalidation, Moved, invalidation_of
from .reads import ReadLog, current_reads, recording
from .rules import RULES, Rule, rule_of
from .stats import CacheCounts, CacheStats
from .storage import EXPIRY_MARGIN_SECONDS, REPLICA_SETTLE_SECONDS, CachedStorage, Dependent

__all__ = [
    "EXPIRY_MARGIN_SECONDS",
    "REPLICA_SETTLE_SECONDS",
    "RULES",
    "CacheCounts",
    "CacheStats",
    "CachedStorage",
    "Dependent",
    "Entered",
    "Freshness",
    "Generations",
    "Invalidation",
    "LocalFreshness",
    "Moved",
    "PageKey",
    "ReadLog",
    "Rule",
    "current_reads",
    "invalidation_of",
    "recording",
    "rule_of",
]
