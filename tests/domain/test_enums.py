from __future__ import annotations

from enum import StrEnum

import pytest

from domain.enums import (
    Plan,
    ProductStatus,
    ProvenanceEventType,
    ScanResult,
    Severity,
    ThreatType,
)

CONTRACT: dict[type[StrEnum], str] = {
    Plan: "FREE PRO ENTERPRISE",
    ProductStatus: "ACTIVE TRANSFERRED RECALLED FLAGGED",
    ProvenanceEventType: "MANUFACTURED SHIPPED RECEIVED INSPECTED SOLD TRANSFERRED RECALLED CUSTOM",
    ScanResult: "AUTHENTIC SUSPICIOUS COUNTERFEIT UNKNOWN",
    ThreatType: "GEOGRAPHIC_ANOMALY BURST_SCAN SCAN_VELOCITY CLAIMED_PRODUCT_SCAN HASH_TAMPERING "
    "RECALLED_PRODUCT_SCAN CHAIN_GAP PRODUCT_RECALL OWNERSHIP_DISPUTE",
    Severity: "LOW MEDIUM HIGH CRITICAL",
}


@pytest.mark.parametrize("enum", list(CONTRACT))
def test_members_match_the_contract_and_values_equal_names(enum: type[StrEnum]) -> None:
    assert [member.name for member in enum] == CONTRACT[enum].split()
    assert all(member.value == member.name for member in enum)


def test_severity_orders_by_rank_not_by_string() -> None:
    assert [s.rank for s in Severity] == [0, 1, 2, 3]
    assert Severity.LOW.rank < Severity.HIGH.rank
    assert Severity.HIGH.at_least(Severity.MEDIUM)
    assert Severity.MEDIUM.at_least(Severity.MEDIUM)
    assert not Severity.LOW.at_least(Severity.MEDIUM)
    assert sorted(Severity, key=lambda s: s.rank)[-1] is Severity.CRITICAL
