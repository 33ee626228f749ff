"""A scan's and an outbox item's times are spelled once, in their sort keys,
and read back from them (``KeyTemplate.span``): the attributes beside the
keys must be exactly ``format_datetime``'s spelling, and the keys the
templates' general path (services/scans/items.py, services/pipeline/outbox/items.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.datetimes import format_datetime
from domain.enums import ProductStatus, ScanResult
from domain.threats.rules import ProductFacts
from services.pipeline.events import ScanEvent
from services.pipeline.outbox.items import DUE_SORT, Lease, born_put, claim_update, outbox_put
from services.pipeline.settings import PipelineSettings
from services.scans.items import SCAN_SORT, scan_item
from storage import Put
from storage.access_patterns import PRODUCT_SCANS

_MOMENTS = st.builds(
    lambda moment, zone: moment.replace(tzinfo=zone),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.sampled_from([UTC, timezone(timedelta(hours=-7)), timezone(timedelta(0))]),
)
_IDS = st.one_of(st.from_regex(r"[0-9A-Z]{1,26}", fullmatch=True), st.text(min_size=1, max_size=8))


@settings(max_examples=150, deadline=None)
@given(moment=_MOMENTS, scan_id=_IDS, product_id=_IDS)
def test_a_scan_item_spells_its_time_once(moment: datetime, scan_id: str, product_id: str) -> None:
    item = scan_item(
        scan_id=scan_id,
        product_id=product_id,
        brand_id="b",
        scanned_at=moment,
        result=next(iter(ScanResult)),
        country=None,
        city=None,
        device_hash=None,
        ip_hash=None,
        user_agent=None,
    )
    assert item["scannedAt"] == format_datetime(moment)
    assert item["SK"] == SCAN_SORT.format_general({"scanned_at": moment, "scan_id": scan_id})
    assert item["PK"] == PRODUCT_SCANS.partition_key.format_general({"product_id": product_id})


def _event(moment: datetime) -> ScanEvent:
    return ScanEvent(
        scan_id="S1",
        scanned_at=moment,
        country=None,
        city=None,
        device_hash=None,
        result=next(iter(ScanResult)),
        product=ProductFacts(
            product_id="P1",
            brand_id="B1",
            created_at=moment,
            status=next(iter(ProductStatus)),
            scan_count=1,
        ),
        claim=None,
    )


@settings(max_examples=100, deadline=None)
@given(now=_MOMENTS, later=_MOMENTS, due=st.none() | _MOMENTS)
def test_outbox_items_spell_their_times_once(
    now: datetime, later: datetime, due: datetime | None
) -> None:
    event = _event(datetime(2026, 12, 1, tzinfo=UTC))
    lease = Lease("relay", "token", later)
    put = outbox_put(event, now=now, settings=PipelineSettings(), due=due)
    item = put.item
    assert (item["createdAt"], item["dueAt"]) == (
        format_datetime(now),
        format_datetime(now if due is None else due),
    )
    assert item["GSI2SK"] == DUE_SORT.format_general(
        {"due": now if due is None else due, "event_id": event.event_id}
    )
    born = born_put(put, lease).item
    claim = claim_update(item, lease).set
    built = outbox_put(event, now=now, settings=PipelineSettings(), due=due, lease=lease).item
    assert built == born
    for claimed in (born, claim, built):
        assert claimed["leaseUntil"] == format_datetime(later)
        assert claimed["GSI2SK"] == DUE_SORT.format_general(
            {"due": later, "event_id": event.event_id}
        )
    assert isinstance(put, Put)
