from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.enums import Severity, ThreatType
from domain.threats import (
    AlertDraft,
    ThreatSettings,
    alert_id,
    chain_gap,
    ownership_dispute,
    product_recall,
)

T0 = datetime(2026, 3, 10, 12, 30, tzinfo=UTC)
GAP = timedelta(hours=72)


def gap(
    after: timedelta, *, settings: ThreatSettings | None = None, sequence: int = 4
) -> AlertDraft | None:
    return chain_gap(
        brand_id="brd_1",
        product_id="prd_1",
        sequence=sequence,
        occurred_at=T0 + after,
        previous_occurred_at=T0,
        settings=settings,
    )


@pytest.mark.parametrize(
    ("after", "alerts"),
    [
        (GAP - timedelta(microseconds=1), False),
        (GAP, False),
        (GAP + timedelta(microseconds=1), True),
    ],
    ids=["under", "exactly-72h", "just-over"],
)
def test_chain_gap_boundary(after: timedelta, alerts: bool) -> None:
    assert (gap(after) is not None) is alerts


def test_chain_gap_alert() -> None:
    draft = chain_gap(
        brand_id="brd_1",
        product_id="prd_1",
        sequence=4,
        occurred_at=T0 + GAP + timedelta(hours=1),
        previous_occurred_at=T0,
        country="DE",
        city="Berlin",
    )
    assert draft is not None
    assert (draft.type, draft.severity) == (ThreatType.CHAIN_GAP, Severity.MEDIUM)
    assert draft.details == {
        "sequence": 4,
        "occurredAt": "2026-03-13T13:30:00.000000Z",
        "previousOccurredAt": "2026-03-10T12:30:00.000000Z",
        "gapSeconds": 73 * 3600,
        "maxGapSeconds": 72 * 3600,
    }
    assert (draft.country, draft.city) == ("DE", "Berlin")
    assert draft.window_start == draft.detected_at == T0 + GAP + timedelta(hours=1)


def test_first_event_has_no_predecessor_gap() -> None:
    draft = chain_gap(
        brand_id="brd_1",
        product_id="prd_1",
        sequence=1,
        occurred_at=T0,
        previous_occurred_at=None,
    )
    assert draft is None


def test_chain_gap_limit_is_a_setting() -> None:
    assert gap(timedelta(hours=2), settings=ThreatSettings(chain_gap_max=timedelta(hours=1)))


def test_each_gap_has_its_own_alert() -> None:
    first, second = gap(GAP * 2), gap(GAP * 3)
    assert first is not None and second is not None
    assert alert_id(first) != alert_id(second)
    again = gap(GAP * 2)
    assert again is not None
    assert alert_id(again) == alert_id(first)


def test_product_recall() -> None:
    draft = product_recall(brand_id="brd_1", product_id="prd_1", recalled_at=T0, reason="batch 7")
    assert (draft.type, draft.severity) == (ThreatType.PRODUCT_RECALL, Severity.CRITICAL)
    assert draft.details == {"reason": "batch 7"}
    assert draft.window_start == T0


def dispute(at: datetime, settings: ThreatSettings | None = None) -> str:
    draft = ownership_dispute(
        brand_id="brd_1",
        product_id="prd_1",
        disputed_at=at,
        reason="mine",
        dispute_count=2,
        settings=settings,
    )
    assert (draft.type, draft.severity) == (ThreatType.OWNERSHIP_DISPUTE, Severity.CRITICAL)
    assert draft.details == {"reason": "mine", "disputeCount": 2}
    return alert_id(draft)


def test_each_dispute_raises_its_own_alert_by_default() -> None:
    assert dispute(T0) != dispute(T0 + timedelta(seconds=1))
    assert dispute(T0) == dispute(T0)


def test_dispute_dedupe_window_is_a_setting() -> None:
    daily = ThreatSettings(dispute_dedupe=timedelta(days=1))
    assert dispute(T0, daily) == dispute(T0 + timedelta(hours=5), daily)
    assert dispute(T0, daily) != dispute(T0 + timedelta(days=1), daily)
