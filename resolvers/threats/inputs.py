"""AlertFilterInput: which alerts a subscription or a webhook receives."""

from __future__ import annotations

import strawberry

from domain.enums import Severity, ThreatType
from domain.threats.filters import AlertFilter, build_filter

from ..types import enums as _enums  # noqa: F401  (registers the GraphQL enums)

__all__ = ["AlertFilterInput", "legacy_filter"]


@strawberry.input(
    description="Alerts matching every field given (AND); within a field, any of its values "
    "(OR). A field left out or null matches anything."
)
class AlertFilterInput:
    product_ids: list[strawberry.ID] | None = strawberry.field(
        default=None, description="The brand's products, at most 10,000 (1,000 for a webhook)."
    )
    countries: list[str] | None = strawberry.field(
        default=None,
        description="ISO 3166-1 alpha-2 codes (`DE`, `US`); an alert without a country "
        "never matches.",
    )
    types: list[ThreatType] | None = None
    severities: list[Severity] | None = None
    min_severity: Severity | None = strawberry.field(
        default=None, description="Only alerts at least this severe (with severities: both)."
    )

    def unchecked(self, max_product_ids: int) -> AlertFilter:
        """The filter, its values checked; its products' brand is the service's
        to check (``services.threats.filters.check_products``)."""
        return build_filter(
            product_ids=None if self.product_ids is None else [str(p) for p in self.product_ids],
            countries=self.countries,
            types=self.types,
            severities=self.severities,
            min_severity=self.min_severity,
            max_product_ids=max_product_ids,
        )


def legacy_filter(min_severity: Severity | None, types: list[ThreatType] | None) -> AlertFilter:
    """``threatAlerts(minSeverity:, types:)`` as before the filter input: an
    empty ``types`` matches nothing."""
    severities = (
        None if min_severity is None else frozenset(s for s in Severity if s.at_least(min_severity))
    )
    return AlertFilter(types=None if types is None else frozenset(types), severities=severities)
