"""How many live subscriptions, and how much work per alert, one caller may hold.

A process-wide cap alone lets one key fill it and lock every other brand out;
so a key and a brand have their own caps below it, and a brand's
subscriptions together may plan at most ``cost_per_brand`` reads per alert,
since every one of them runs its selection on each of the brand's alerts
(docs/design.md, Subscription limits).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from domain.errors import QueryTooComplex, RateLimited, ServiceUnavailable

__all__ = ["SubscriptionLimits", "SubscriptionQuota"]


@dataclass(frozen=True, slots=True)
class SubscriptionLimits:
    per_process: int = 10_000
    per_key: int = 100
    per_brand: int = 1_000
    cost_per_brand: int = 20_000
    """The sum of the planned cost (one event's) of a brand's live subscriptions."""
    filter_values_per_brand: int = 100_000
    filter_values_per_process: int = 1_000_000
    """Values (product ids, countries, types, severities) the filters of live
    subscriptions name, which the broker's index holds (docs/design.md, Alert filters)."""


class SubscriptionQuota:
    def __init__(self, limits: SubscriptionLimits) -> None:
        self.limits = limits
        self.count = 0
        self._per_key: Counter[str] = Counter()
        self._per_brand: Counter[str] = Counter()
        self._cost: Counter[str] = Counter()
        self._values: Counter[str] = Counter()
        self.filter_values = 0

    def take(self, brand_id: str, key: str | None, cost: int, values: int = 0) -> None:
        """Counts one subscription, or raises without counting anything."""
        limits = self.limits
        if self.count >= limits.per_process:
            raise ServiceUnavailable(
                "This gateway has reached its limit of live subscriptions",
                hint="Retry later or connect to another gateway process.",
            )
        if key is not None and self._per_key[key] >= limits.per_key:
            raise RateLimited(
                f"This API key already holds {limits.per_key} live subscriptions",
                hint="Close subscriptions you no longer read; one can follow every alert type.",
            )
        if self._per_brand[brand_id] >= limits.per_brand:
            raise RateLimited(
                f"This brand already has {limits.per_brand} live subscriptions",
                hint="Close subscriptions you no longer read, on any of the brand's keys.",
            )
        held = self._cost[brand_id]
        if held + cost > limits.cost_per_brand:
            raise QueryTooComplex(
                f"Each alert would cost the brand's subscriptions {held + cost} reads, "
                f"over the limit of {limits.cost_per_brand}",
                hint="Select fewer fields per alert, or close other subscriptions of the brand.",
                cost=held + cost,
                maxCost=limits.cost_per_brand,
            )
        self._check_values(brand_id, values)
        self.count += 1
        if key is not None:
            self._per_key[key] += 1
        self._per_brand[brand_id] += 1
        self._cost[brand_id] += cost
        if values:
            self._values[brand_id] += values
            self.filter_values += values

    def _check_values(self, brand_id: str, values: int) -> None:
        limits = self.limits
        if self.filter_values + values > limits.filter_values_per_process:
            raise ServiceUnavailable(
                f"This gateway's live subscriptions would filter on more than "
                f"{limits.filter_values_per_process:,} values",
                hint="Retry later or connect to another gateway process.",
            )
        held = self._values[brand_id]
        if held + values > limits.filter_values_per_brand:
            raise RateLimited(
                f"The brand's live subscriptions would filter on {held + values:,} values, "
                f"over the limit of {limits.filter_values_per_brand:,}",
                hint="Close subscriptions you no longer read, or filter on fewer products.",
            )

    def give_back(self, brand_id: str, key: str | None, cost: int, values: int = 0) -> None:
        self.count -= 1
        if values:
            _decrement(self._values, brand_id, values)
            self.filter_values -= values
        if key is not None:
            _decrement(self._per_key, key, 1)
        _decrement(self._per_brand, brand_id, 1)
        _decrement(self._cost, brand_id, cost)


def _decrement(counter: Counter[str], name: str, by: int) -> None:
    """Drops a name at zero, so the counters hold only live callers."""
    left = counter[name] - by
    if left > 0:
        counter[name] = left
    else:
        del counter[name]
