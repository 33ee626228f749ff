"""Alert filters, and their index held to the plain loop over every filter."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.enums import Severity, ThreatType
from domain.errors import BadUserInput
from domain.threats.filters import (
    MAX_PRODUCT_IDS,
    AlertFacts,
    AlertFilter,
    FilterIndex,
    build_filter,
)

PRODUCTS = [f"01JD8X3V9Q7ZK5M2N4P6R8T0{n:02d}" for n in range(12)]
COUNTRIES = ["DE", "US", "FR", "JP", "BR"]

products = st.sampled_from(PRODUCTS)
countries = st.sampled_from(COUNTRIES)
facts = st.builds(
    AlertFacts,
    products,
    st.none() | countries,
    st.sampled_from(list(ThreatType)),
    st.sampled_from(list(Severity)),
)


def _maybe(values: st.SearchStrategy[frozenset[object]]) -> st.SearchStrategy[object]:
    return st.none() | values


filters = st.builds(
    AlertFilter,
    _maybe(st.frozensets(products, max_size=4)),
    _maybe(st.frozensets(countries, max_size=3)),
    _maybe(st.frozensets(st.sampled_from(list(ThreatType)), max_size=4)),
    _maybe(st.frozensets(st.sampled_from(list(Severity)), max_size=3)),
)
operations = st.lists(
    st.tuples(st.sampled_from(["add", "remove"]), st.integers(0, 30), filters), max_size=80
)


@settings(max_examples=300, deadline=None)
@given(operations, st.lists(facts, min_size=1, max_size=20))
def test_the_index_matches_exactly_what_the_loop_over_every_filter_matches(
    ops: list[tuple[str, int, AlertFilter]], alerts: list[AlertFacts]
) -> None:
    index: FilterIndex[int] = FilterIndex()
    live: dict[int, AlertFilter] = {}
    for op, key, alert_filter in ops:
        if op == "add":
            index.add(key, alert_filter)
            live[key] = alert_filter
        else:
            index.remove(key)
            live.pop(key, None)
    assert len(index) == len(live)
    for alert in alerts:
        got = index.match(alert)
        assert len(got) == len(set(got)), "a filter matched twice"
        expected = {key for key, f in live.items() if f.matches(alert)}
        assert set(got) == expected
        if index.unfiltered:  # the broker then offers to every key without a lookup
            assert set(index.keys()) == expected


def test_a_product_filter_is_reached_through_its_products_only() -> None:
    index: FilterIndex[str] = FilterIndex()
    for n in range(1_000):
        index.add(f"s{n}", AlertFilter(product_ids=frozenset({PRODUCTS[n % 10]})))
    alert = AlertFacts(PRODUCTS[3], "DE", ThreatType.BURST_SCAN, Severity.MEDIUM)
    # The posting of the alert's product holds the 100 that match; the other
    # 900 are never looked at (the positive control: all 100 are found).
    assert sorted(index.match(alert)) == sorted(f"s{n}" for n in range(3, 1_000, 10))
    assert all(len(index._postings[("product_ids", p)]) == 100 for p in PRODUCTS[:10])


def test_fields_combine_with_and_values_with_or() -> None:
    wanted = build_filter(
        product_ids=PRODUCTS[:2], countries=["DE", "FR"], min_severity=Severity.HIGH
    )
    hit = AlertFacts(PRODUCTS[1], "FR", ThreatType.HASH_TAMPERING, Severity.CRITICAL)
    assert wanted.matches(hit)
    assert not wanted.matches(AlertFacts(PRODUCTS[1], "US", hit.type, hit.severity))
    assert not wanted.matches(AlertFacts(PRODUCTS[1], None, hit.type, hit.severity))
    assert not wanted.matches(AlertFacts(PRODUCTS[5], "FR", hit.type, hit.severity))
    assert not wanted.matches(AlertFacts(PRODUCTS[1], "FR", hit.type, Severity.MEDIUM))
    assert wanted.size == 2 + 2 + 2


def test_min_severity_and_severities_intersect() -> None:
    both = build_filter(severities=[Severity.LOW, Severity.CRITICAL], min_severity=Severity.HIGH)
    assert both.severities == frozenset({Severity.CRITICAL})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"product_ids": ["01JD8X3V9Q7ZK5M2N4P6R8T0W1"] * (MAX_PRODUCT_IDS + 1)}, "at most 10,000"),
        ({"product_ids": ["nope"]}, "is not a product id"),
        ({"product_ids": []}, "at least one value"),
        ({"countries": ["DEU"]}, "ISO 3166-1 alpha-2"),
        ({"countries": ["de"]}, "ISO 3166-1 alpha-2"),
        ({"countries": ["ZZ"]}, "ISO 3166-1 alpha-2"),
        ({"countries": ["DE"] * 250}, "at most 249"),
        ({"types": []}, "at least one type"),
        ({"severities": []}, "at least one severity"),
    ],
)
def test_bad_filters_are_refused_naming_the_limit(
    arguments: dict[str, object], message: str
) -> None:
    with pytest.raises(BadUserInput, match=message):
        build_filter(**arguments)  # type: ignore[arg-type]


def test_both_intersects_field_by_field() -> None:
    a = AlertFilter(types=frozenset({ThreatType.BURST_SCAN, ThreatType.CHAIN_GAP}))
    b = AlertFilter(types=frozenset({ThreatType.CHAIN_GAP}), countries=frozenset({"DE"}))
    assert a.both(b) == AlertFilter(
        countries=frozenset({"DE"}), types=frozenset({ThreatType.CHAIN_GAP})
    )
