"""The exact cache: a ``Storage`` over another that keeps what the registry
says may be kept, and drops it by the keys each write changes
(docs/design.md, Storage cache)."""

from .freshness import Freshness, LocalFreshness
from .invalidation import Entered, Invalidation, Moved, invalidation_of
from .rules import RULES, Rule, rule_of
from .stats import CacheCounts, CacheStats
from .storage import EXPIRY_MARGIN_SECONDS, REPLICA_SETTLE_SECONDS, CachedStorage

__all__ = [
    "EXPIRY_MARGIN_SECONDS",
    "REPLICA_SETTLE_SECONDS",
    "RULES",
    "CacheCounts",
    "CacheStats",
    "CachedStorage",
    "Entered",
    "Freshness",
    "Invalidation",
    "LocalFreshness",
    "Moved",
    "Rule",
    "invalidation_of",
    "rule_of",
]
