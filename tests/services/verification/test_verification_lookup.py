"""The assumption AP33 rests on: in ``PRODUCT#<id>``, nothing but the claim,
the chain and the product sorts between CLAIM and META (docs/design.md,
Verify path). Every pattern registered on the partition, and every sort key
written there without a pattern, is held to it."""

from __future__ import annotations

import pytest

from services.claims.items import DISPUTE_SORT
from services.provenance.items import EVENT_SORT
from storage import KeyTemplate
from storage.access_patterns import (
    PRODUCT_BY_ID,
    PRODUCT_CLAIM,
    PRODUCT_RECORD,
    PROVENANCE_CHAIN,
    REGISTRY,
)
from storage.registry import SortOperator
from storage.table import IndexName

LOWER, UPPER = "CLAIM", "META"
INSIDE = {PRODUCT_CLAIM.id, PROVENANCE_CHAIN.id, PRODUCT_BY_ID.id, PRODUCT_RECORD.id}
WRITTEN_WITHOUT_A_PATTERN = {"dispute": DISPUTE_SORT}


def may_fall_inside(template: KeyTemplate) -> bool:
    """Whether a key the template spells can sort between LOWER and UPPER,
    in byte order as DynamoDB compares: a template without parameters is one
    key; with parameters, every key that starts with its literal prefix."""
    source = template.source
    lower, upper = LOWER.encode(), UPPER.encode()
    if "{" not in source:
        return lower <= source.encode() <= upper
    prefix = source.split("{", 1)[0].encode()
    if prefix > upper:
        return False
    return prefix >= lower or lower.startswith(prefix)


def test_the_range_holds_the_claim_the_chain_and_the_product() -> None:
    assert PRODUCT_RECORD.sort_key.operator is SortOperator.BETWEEN
    sort = PRODUCT_RECORD.sort_range({"product_id": "p1"})
    assert (sort.value, sort.upper) == (LOWER, UPPER)
    assert PRODUCT_RECORD.partition_key == PRODUCT_BY_ID.partition_key
    assert PRODUCT_RECORD.consistent and PRODUCT_RECORD.index is IndexName.TABLE
    for key in ("CLAIM", EVENT_SORT.format({"sequence": 1}), "META"):
        assert sort.matches(key)


def test_no_other_pattern_of_the_product_partition_sorts_inside_the_range() -> None:
    same_partition = [
        ap
        for ap in REGISTRY
        if ap.index is IndexName.TABLE and ap.partition_key == PRODUCT_RECORD.partition_key
    ]
    assert {ap.id for ap in same_partition} >= INSIDE | {"AP10"}
    inside = {ap.id for ap in same_partition if may_fall_inside(ap.sort_key.template)}
    assert inside == INSIDE


@pytest.mark.parametrize("name", sorted(WRITTEN_WITHOUT_A_PATTERN))
def test_keys_written_without_a_pattern_sort_outside_the_range(name: str) -> None:
    assert not may_fall_inside(WRITTEN_WITHOUT_A_PATTERN[name])


@pytest.mark.parametrize(
    ("source", "inside"),
    [
        ("DISPUTE#{at:time}#{id}", True),  # where disputes were stored before
        ("CLAIM", True),
        ("CLAIM#{n:int}", True),
        ("C{n:int}", True),  # a prefix of CLAIM: C, CLAIM, CZ... all possible
        ("MARK#{n:int}", True),
        ("META", True),
        ("META#{n:int}", False),
        ("OWNERSHIP_DISPUTE#{id}", False),
        ("SCAN#{at:time}", False),
        ("BRAND", False),
        ("B{n:int}", False),
    ],
)
def test_the_guard_tells_inside_from_outside(source: str, inside: bool) -> None:
    """Positive controls: the check flags the keys it must flag."""
    assert may_fall_inside(KeyTemplate(source)) is inside
