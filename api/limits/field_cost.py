"""What one field reads: the price of its access pattern, and the fields
that read more than one page of it.

``api.limits.cost`` walks an operation and adds these up:

- a get pattern costs 1, and so does the entity a field ``loads`` through it;
- a query pattern costs its page size: ``first``, else the pattern's default
  page (20), or its maximum page when the field takes no ``first``; a field
  that ``loads`` one entity per entry costs the page again;
- a field given an alert filter with product ids reads them once, to check
  they are the brand's: one read per 100 ids (one BatchGetItem each;
  docs/design.md, Alert filters);
- a field that reads a list to its end (a product's whole chain, for a
  verification or the passport) costs the longest that list can be, and a
  filter no key condition can express (``threats(minSeverity:)``) the most
  items it may examine (docs/design.md, Limits and cost).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from graphql import GraphQLField, GraphQLList, get_nullable_type

from domain.analytics import BRAND_SHARDS, MAX_DAYS
from domain.errors import BadUserInput
from resolvers.fields import FieldAccess
from resolvers.threats.paging import SCAN_MAX_ITEMS
from services.provenance.walk import CHAIN_READ_ITEMS
from services.threats.filters import FILTER_CHECK_BATCH
from storage.access_patterns import REGISTRY
from storage.limits import PAGE_SIZE_MAX
from storage.registry import AccessPattern, Operation

__all__ = [
    "DAY_RANGES",
    "EXTRA_READS",
    "FAN_OUT",
    "FILTERED",
    "FILTER_CHECKS",
    "READS_TO_THE_END",
    "FieldReads",
    "check_first",
    "counts_arguments",
    "days_covered",
    "field_cost",
    "field_reads",
    "filter_check_cost",
]

FAN_OUT: Mapping[tuple[str, str], str] = {("Query", "auditLog"): "days"}
"""Fields that run their query once per unit of an argument: ``auditLog``
reads one partition per day (a scatter-gather)."""

_CLAIM_AND_CHAIN = 1 + CHAIN_READ_ITEMS
EXTRA_READS: Mapping[tuple[str, str], int] = {
    ("Mutation", "verifyProduct"): 1 + _CLAIM_AND_CHAIN,
    ("Query", "verification"): _CLAIM_AND_CHAIN,
}
"""Reads a field makes beyond the access pattern it declares (and the entity it
declares it loads): checking a product reads the product (declared by
``verification`` as what it loads, AP04), its claim and its whole chain (at
most ``CHAIN_READ_ITEMS`` events), all three in one Query paged like AP09
(AP33: docs/design.md, Verify path; Limits and cost)."""
READS_TO_THE_END: Mapping[tuple[str, str], int] = {("Product", "passport"): CHAIN_READ_ITEMS}
"""Fields that read their query pattern to its end rather than one page, with
the most items that end can be: the passport lists the whole chain."""
FILTERED: Mapping[tuple[str, str], tuple[str, int]] = {
    ("Brand", "threats"): ("minSeverity", SCAN_MAX_ITEMS)
}
"""Fields that, given a filter no key condition can express, read past their
page for matches, up to a bound: ``threats(minSeverity:)`` examines up to
``SCAN_MAX_ITEMS`` alerts to fill its page."""
FILTER_CHECKS: Mapping[tuple[str, str], str] = {
    ("Subscription", "threatAlerts"): "filter",
    ("Mutation", "registerWebhook"): "filter",
}
"""Fields whose alert filter argument names products that are read once, to
check they are the brand's."""
DAY_RANGES: Mapping[tuple[str, str], int] = {
    ("Brand", "analytics"): BRAND_SHARDS,
    ("Product", "analytics"): 1,
}
"""Fields that read items per day of their ``from``..``to`` range: a brand's
analytics read every shard of every day (one batch its fields share), so an
alias costs days x shards, not 1 (docs/design.md, Analytics)."""


@dataclass(frozen=True, slots=True)
class FieldReads:
    pattern: AccessPattern
    loads: AccessPattern | None
    fan_out: str | None
    extra: int = 0
    to_the_end: int | None = None
    """The most items a field that reads its pattern to the end can read."""
    filtered: tuple[str, int] | None = None
    """The filter argument that makes the field read past its page, and how far."""
    per_element: bool = False
    """A list field whose get runs once per element of its list argument."""


def field_reads(access: FieldAccess) -> FieldReads | None:
    """What the field declares it reads, with the exceptions above; None for
    a field that reads nothing."""
    # node(id:): each type's pattern is a get, costing 1 whichever the id names.
    pattern = access.access_pattern or next(iter(dict(access.by_type).values()), None)
    if pattern is None:
        return None
    key = (access.type_name, access.field_name)
    return FieldReads(
        REGISTRY[pattern],
        REGISTRY[access.loads] if access.loads else None,
        FAN_OUT.get(key),
        EXTRA_READS.get(key, 0),
        READS_TO_THE_END.get(key),
        FILTERED.get(key),
        per_element=bool(access.by_type),
    )


def counts_arguments(definition: GraphQLField, reads: FieldReads | None) -> bool:
    """Whether the field's arguments change its cost: a page size, a fan-out
    or, for a list without paging, the lists it is given."""
    return (
        "first" in definition.args
        or (reads is not None and reads.fan_out is not None)
        or isinstance(get_nullable_type(definition.type), GraphQLList)
    )


def check_first(
    type_name: str, field_name: str, arguments: Mapping[str, Any], reads: FieldReads | None
) -> None:
    first = arguments.get("first")
    if first is None:
        return
    maximum = PAGE_SIZE_MAX
    if reads is not None and reads.pattern.operation is Operation.QUERY:
        maximum = reads.pattern.max_page
    if not 0 <= first <= maximum:
        raise BadUserInput(
            f"first on {type_name}.{field_name} must be between 0 and {maximum}, got {first}",
            hint="Page through with after: pageInfo.endCursor.",
        )


def field_cost(
    definition: GraphQLField,
    arguments: Mapping[str, Any],
    reads: FieldReads | None,
    *,
    per_event: bool,
) -> tuple[int, int]:
    """What one resolution of the field reads, and how many times the fields
    below it resolve."""
    if reads is None:
        return 0, _list_length(definition, arguments)
    pattern = reads.pattern
    if reads.to_the_end is not None:
        return reads.to_the_end + (reads.loads is not None) + reads.extra, 1
    if pattern.operation is not Operation.QUERY or per_event:
        reads_once = 1 + (reads.loads is not None) + reads.extra
        length = _list_length(definition, arguments)
        # A list of gets (nodes(ids:)) reads once per element.
        return reads_once * (length if reads.per_element else 1), length
    if "first" in definition.args:
        first = arguments.get("first")
        page = pattern.default_page if first is None else first
    else:
        page = pattern.max_page
    fan_out = arguments.get(reads.fan_out, 1) if reads.fan_out else 1
    entries = max(page, 1) * max(fan_out, 1)
    if reads.filtered is not None and arguments.get(reads.filtered[0]) is not None:
        entries = max(entries, reads.filtered[1])
    return entries + (page if reads.loads is not None else 0), page


def filter_check_cost(alert_filter: Any) -> int:
    """The batches that check a filter's product ids (an ``AlertFilterInput``
    as Strawberry builds it, or its fields as a mapping)."""
    if alert_filter is None:
        return 0
    if isinstance(alert_filter, Mapping):
        products = alert_filter.get("productIds", alert_filter.get("product_ids"))
    else:
        products = getattr(alert_filter, "product_ids", None)
    return -(-len(products or ()) // FILTER_CHECK_BATCH)


def days_covered(arguments: Mapping[str, Any]) -> int:
    """The days a ``from``..``to`` range covers, within what ``days_in`` allows
    (a range it refuses fails at execution, before any read)."""
    dates = sorted(value for value in arguments.values() if isinstance(value, date))
    if len(dates) != 2:
        return MAX_DAYS
    return min(max((dates[1] - dates[0]).days + 1, 1), MAX_DAYS)


def _list_length(definition: GraphQLField, arguments: Mapping[str, Any]) -> int:
    if not isinstance(get_nullable_type(definition.type), GraphQLList):
        return 1
    lengths = [len(value) for value in arguments.values() if isinstance(value, list)]
    return max(lengths, default=1)
