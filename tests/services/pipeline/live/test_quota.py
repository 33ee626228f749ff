from __future__ import annotations

import pytest

from domain.errors import ProofgateError, QueryTooComplex, RateLimited, ServiceUnavailable
from services.pipeline import SubscriptionLimits
from services.pipeline.live.quota import SubscriptionQuota

LIMITS = SubscriptionLimits(per_process=6, per_key=2, per_brand=4, cost_per_brand=10)


def test_a_key_a_brand_and_the_process_each_have_a_cap() -> None:
    quota = SubscriptionQuota(LIMITS)
    quota.take("B1", "k1", 1)
    quota.take("B1", "k1", 1)
    with pytest.raises(RateLimited, match="API key"):
        quota.take("B1", "k1", 1)
    quota.take("B1", "k2", 1)
    quota.take("B1", None, 1)  # the admin key has no per-key count
    with pytest.raises(RateLimited, match="brand"):
        quota.take("B1", "k3", 1)
    quota.take("B2", "k4", 1)
    quota.take("B2", "k4", 1)
    with pytest.raises(ServiceUnavailable):
        quota.take("B3", "k5", 1)
    assert quota.count == 6


def test_a_refusal_counts_nothing_and_giving_back_frees_every_count() -> None:
    quota = SubscriptionQuota(LIMITS)
    quota.take("B1", "k1", 6)
    with pytest.raises(QueryTooComplex) as refused:
        quota.take("B1", "k2", 5)
    assert (refused.value.extensions["cost"], refused.value.extensions["maxCost"]) == (11, 10)
    quota.take("B1", "k2", 4)
    quota.give_back("B1", "k1", 6)
    quota.give_back("B1", "k2", 4)
    assert quota.count == 0
    for _ in range(2):
        quota.take("B1", "k1", 5)
    assert quota.count == 2


@pytest.mark.parametrize(
    ("brand", "key", "cost"), [("B1", "k1", 11), ("B9", "k1", 0)], ids=["cost", "key"]
)
def test_each_refusal_leaves_the_counts_as_they_were(brand: str, key: str, cost: int) -> None:
    quota = SubscriptionQuota(LIMITS)
    quota.take("B1", "k1", 0)
    quota.take("B2", "k1", 0)
    with pytest.raises(ProofgateError):
        quota.take(brand, key, cost)
    quota.give_back("B1", "k1", 0)
    quota.take("B9", "k1", 10)
    assert quota.count == 2


def test_filter_values_count_per_brand_and_per_process() -> None:
    limits = SubscriptionLimits(filter_values_per_brand=10, filter_values_per_process=15)
    quota = SubscriptionQuota(limits)
    quota.take("B1", "k1", 1, 8)
    with pytest.raises(RateLimited, match="over the limit of 10"):
        quota.take("B1", "k1", 1, 3)
    quota.take("B2", "k2", 1, 7)
    with pytest.raises(ServiceUnavailable, match="15 values"):
        quota.take("B3", "k3", 1, 1)
    assert (quota.count, quota.filter_values) == (2, 15)
    quota.give_back("B1", "k1", 1, 8)
    quota.take("B3", "k3", 1, 8)
    assert quota.filter_values == 15
