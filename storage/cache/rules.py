"""Which access patterns the cache serves, and why: one rule per pattern.

Every registered pattern must have a rule here; a pattern without one stops
start-up (as a bad pattern does), so a new read is cached only when someone
decided it may be (docs/design.md, Storage cache).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from domain.errors import AccessPatternError

from ..access_patterns import REGISTRY
from ..registry import AccessPattern, Registry

__all__ = ["RULES", "Rule", "rule_of"]


class Rule(StrEnum):
    CACHED = "cached"
    """Eventually consistent, read for display: served from the cache."""
    FRESHNESS = "freshness"
    """Strong only so a reader sees what was committed before it began:
    served when the watermark proves every such invalidation was heard."""
    REWRITTEN = "rewritten"
    """Strong for freshness, but its one reader writes inside what it read
    right after (a verification adds to the product's scanCount, in AP33's
    window): a kept page would be dropped before anyone could be served it."""
    STRONG = "strong"
    """Strong because a decision rests on it (auth, dedupe, versions): passes."""
    BALANCE = "balance"
    """Decides or reconciles a balance: passes."""
    TRANSITION = "transition"
    """Decides a status transition (a claim, an outbox lease): passes."""
    TAIL = "tail"
    """Polled to learn what other processes wrote: a cache would hide it."""
    PROBE = "probe"
    """Its point is to reach the store."""

    @property
    def served(self) -> bool:
        return self in (Rule.CACHED, Rule.FRESHNESS)


_RULES: Mapping[str, Rule] = {
    "AP01": Rule.CACHED,
    "AP02": Rule.CACHED,
    "AP03": Rule.CACHED,
    "AP04": Rule.CACHED,
    "AP05": Rule.CACHED,
    "AP06": Rule.CACHED,
    "AP07": Rule.CACHED,
    "AP08": Rule.CACHED,
    "AP09": Rule.FRESHNESS,
    "AP10": Rule.CACHED,
    "AP11": Rule.TRANSITION,
    "AP12": Rule.TAIL,
    "AP13": Rule.TRANSITION,
    "AP14": Rule.CACHED,
    "AP15": Rule.BALANCE,
    "AP16": Rule.BALANCE,
    "AP17": Rule.BALANCE,
    "AP18": Rule.STRONG,
    "AP19": Rule.TRANSITION,
    "AP20": Rule.STRONG,
    "AP21": Rule.PROBE,
    "AP22": Rule.TRANSITION,
    "AP23": Rule.STRONG,
    "AP24": Rule.STRONG,
    "AP25": Rule.CACHED,
    "AP26": Rule.CACHED,
    "AP27": Rule.CACHED,
    "AP28": Rule.STRONG,
    "AP29": Rule.STRONG,
    "AP30": Rule.STRONG,
    "AP31": Rule.STRONG,
    "AP32": Rule.STRONG,
    "AP33": Rule.REWRITTEN,
    "AP34": Rule.CACHED,
    "AP35": Rule.TAIL,
    "AP36": Rule.TRANSITION,
}


def _compile(registry: Registry, rules: Mapping[str, Rule]) -> dict[str, Rule]:
    ids = {pattern.id for pattern in registry}
    missing = sorted(ids - rules.keys())
    if missing:
        raise AccessPatternError(f"No cache rule for {', '.join(missing)} (storage/cache/rules.py)")
    unknown = sorted(rules.keys() - ids)
    if unknown:
        raise AccessPatternError(f"Cache rules for unregistered {', '.join(unknown)}")
    for pattern in registry:
        rule = rules[pattern.id]
        if pattern.consistent and rule is Rule.CACHED:
            raise AccessPatternError(
                f"{pattern.id} reads strongly consistent: its rule cannot be 'cached'"
            )
    return dict(rules)


RULES: Mapping[str, Rule] = _compile(REGISTRY, _RULES)


def rule_of(pattern: AccessPattern) -> Rule:
    return RULES[pattern.id]
