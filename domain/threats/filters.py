"""Alert filters and the index that matches an alert against many of them.

A filter constrains up to four fields of an alert: its product, its country,
its type and its severity. Fields combine with AND, values within a field
with OR, and a field left out (None) matches anything. An alert without a
country never matches a filter that names countries.

``FilterIndex`` answers "which of these filters match this alert" without
looking at every filter (docs/design.md, Alert filters): each filter is
posted under the values of its most selective field (its anchor: product ids
before countries before types before severities, by the share of the
field's values it lets through), and an alert visits only the postings of its
own values, plus the filters that constrain nothing. Each candidate is then
checked whole with ``AlertFilter.matches`` (set lookups), so the work per
alert follows the filters whose anchor matches, not the number of filters.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from domain.countries import COUNTRY_CODES
from domain.enums import Severity, ThreatType
from domain.errors import BadUserInput
from domain.identifiers import is_id

__all__ = [
    "MAX_COUNTRIES",
    "MAX_PRODUCT_IDS",
    "AlertFacts",
    "AlertFilter",
    "FilterIndex",
    "build_filter",
]

MAX_PRODUCT_IDS = 10_000
"""Product ids one filter may name (a marketplace's listings)."""
MAX_COUNTRIES = len(COUNTRY_CODES)
"""Every assigned country once; more can only be repeats."""

_ANCHORS = ("product_ids", "countries", "types", "severities")
_DOMAIN_SIZE = {
    "countries": len(COUNTRY_CODES),
    "types": len(ThreatType),
    "severities": len(Severity),
}

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class AlertFacts:
    """What a filter looks at in an alert."""

    product_id: str
    country: str | None
    type: ThreatType
    severity: Severity

    def value(self, field: str) -> object:
        if field == "product_ids":
            return self.product_id
        if field == "countries":
            return self.country
        if field == "types":
            return self.type
        return self.severity


@dataclass(frozen=True, slots=True)
class AlertFilter:
    product_ids: frozenset[str] | None = None
    countries: frozenset[str] | None = None
    types: frozenset[ThreatType] | None = None
    severities: frozenset[Severity] | None = None

    def matches(self, alert: AlertFacts) -> bool:
        return (
            (self.product_ids is None or alert.product_id in self.product_ids)
            and (self.countries is None or alert.country in self.countries)
            and (self.types is None or alert.type in self.types)
            and (self.severities is None or alert.severity in self.severities)
        )

    def values(self, field: str) -> frozenset[object] | None:
        values: frozenset[object] | None = getattr(self, field)
        return values

    @property
    def size(self) -> int:
        """How many values the filter names: what it holds in an index."""
        return sum(len(values) for field in _ANCHORS if (values := self.values(field)) is not None)

    def both(self, other: AlertFilter) -> AlertFilter:
        """The filter matching what both match (each field intersected)."""

        return AlertFilter(
            _meet(self.product_ids, other.product_ids),
            _meet(self.countries, other.countries),
            _meet(self.types, other.types),
            _meet(self.severities, other.severities),
        )

    def anchor(self) -> str | None:
        """The field whose values let the smallest share of alerts through."""
        if self.product_ids is not None:
            return "product_ids"
        best: tuple[float, str] | None = None
        for field in _ANCHORS[1:]:
            values = self.values(field)
            if values is not None:
                share = len(values) / _DOMAIN_SIZE[field]
                if best is None or share < best[0]:
                    best = (share, field)
        return None if best is None else best[1]


_T = TypeVar("_T")


def _meet(a: frozenset[_T] | None, b: frozenset[_T] | None) -> frozenset[_T] | None:
    return b if a is None else a if b is None else a & b


class FilterIndex(Generic[K]):
    """Filters by key, posted under their anchor's values."""

    __slots__ = ("_filters", "_postings", "_unconstrained")

    def __init__(self) -> None:
        self._filters: dict[K, AlertFilter] = {}
        self._postings: dict[tuple[str, object], set[K]] = {}
        self._unconstrained: set[K] = set()

    def __len__(self) -> int:
        return len(self._filters)

    def __contains__(self, key: object) -> bool:
        return key in self._filters

    def add(self, key: K, alert_filter: AlertFilter) -> None:
        if key in self._filters:
            self.remove(key)
        self._filters[key] = alert_filter
        anchor = alert_filter.anchor()
        if anchor is None:
            self._unconstrained.add(key)
            return
        for value in alert_filter.values(anchor) or ():
            self._postings.setdefault((anchor, value), set()).add(key)

    def remove(self, key: K) -> None:
        alert_filter = self._filters.pop(key, None)
        if alert_filter is None:
            return
        anchor = alert_filter.anchor()
        if anchor is None:
            self._unconstrained.discard(key)
            return
        for value in alert_filter.values(anchor) or ():
            posting = self._postings.get((anchor, value))
            if posting is not None:
                posting.discard(key)
                if not posting:
                    del self._postings[(anchor, value)]

    def keys(self) -> Iterator[K]:
        return iter(self._filters)

    @property
    def unfiltered(self) -> bool:
        """Whether every filter matches everything: ``match`` returns every key.
        Not "no postings": a filter with an empty field matches nothing and
        has none."""
        return len(self._unconstrained) == len(self._filters)

    def match(self, alert: AlertFacts) -> list[K]:
        """The keys whose filters match ``alert``."""
        matched = list(self._unconstrained)
        filters = self._filters
        for field in _ANCHORS:
            posting = self._postings.get((field, alert.value(field)))
            if posting:
                matched.extend(key for key in posting if filters[key].matches(alert))
        return matched


def _listed(
    name: str, values: Sequence[str] | None, limit: int, hint: str
) -> frozenset[str] | None:
    if values is None:
        return None
    if not values:
        raise BadUserInput(f"filter.{name}: send null for any, or at least one value")
    if len(values) > limit:
        raise BadUserInput(
            f"filter.{name}: at most {limit:,} values, got {len(values):,}", hint=hint
        )
    return frozenset(values)


def build_filter(
    *,
    product_ids: Sequence[str] | None = None,
    countries: Sequence[str] | None = None,
    types: Iterable[ThreatType] | None = None,
    severities: Iterable[Severity] | None = None,
    min_severity: Severity | None = None,
    max_product_ids: int = MAX_PRODUCT_IDS,
) -> AlertFilter:
    """A client's filter, checked: BAD_USER_INPUT naming the limit or the
    value at fault. Whether the products exist and are the brand's is for
    the caller, which can read them."""
    products = _listed(
        "productIds",
        product_ids,
        max_product_ids,
        "Subscribe to the brand's whole stream, or split the products over subscriptions.",
    )
    bad_id = next((p for p in products or () if not is_id(p)), None)
    if bad_id is not None:
        raise BadUserInput(f"filter.productIds: {bad_id[:40]!r} is not a product id")
    codes = _listed("countries", countries, MAX_COUNTRIES, "Each country once.")
    bad_code = next((c for c in codes or () if c not in COUNTRY_CODES), None)
    if bad_code is not None:
        raise BadUserInput(
            f"filter.countries: {bad_code[:8]!r} is not an ISO 3166-1 alpha-2 country code",
            hint="Use two upper-case letters of an assigned code, e.g. DE or US.",
        )
    kinds = None if types is None else frozenset(types)
    if kinds is not None and not kinds:
        raise BadUserInput("filter.types: send null for any, or at least one type")
    levels = None if severities is None else frozenset(severities)
    if levels is not None and not levels:
        raise BadUserInput("filter.severities: send null for any, or at least one severity")
    if min_severity is not None:
        at_least = frozenset(s for s in Severity if s.at_least(min_severity))
        levels = at_least if levels is None else levels & at_least
    return AlertFilter(products, codes, kinds, levels)
