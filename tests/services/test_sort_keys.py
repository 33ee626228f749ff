"""The keys a scan spells directly (services/sort_keys.py) against the key
codec's own spelling: same key for every input, same error where it refuses."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import services.sort_keys as sort_keys
from domain.analytics import shard_of
from domain.datetimes import format_datetime
from domain.enums import ScanResult
from services.analytics.counters import day_keys
from services.brands.items import brand_stats_key
from services.pipeline.outbox.items import DUE_SORT, due_sort
from services.scans.items import SCAN_SORT, scan_item
from services.sort_keys import PlainKey, TimedSort
from storage.access_patterns import (
    BRAND_ANALYTICS_DAY,
    BRAND_STATS,
    PRODUCT_ANALYTICS_DAY,
    PRODUCT_BY_ID,
    PRODUCT_SCANS,
)

_IDS = st.one_of(
    st.text(max_size=12),
    st.text(alphabet="ab#%é", max_size=6),
    st.text(alphabet="abc", min_size=190, max_size=300),
    st.from_regex(r"[0-9A-Za-z_-]{1,30}", fullmatch=True),
)
_ZONES = st.sampled_from(
    [UTC, None, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(0))]
)
_MOMENTS = st.builds(
    lambda moment, zone: moment.replace(tzinfo=zone),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    _ZONES,
)


def _outcome(spell: Callable[[], Any]) -> Any:
    try:
        return spell()
    except Exception as error:  # the codec's error, by type and text
        return type(error), str(error)


def _codec(template: Any, time: str, ident: str, moment: datetime, value: str) -> Any:
    def spell() -> tuple[str, str]:
        return template.format({time: moment, ident: value}), format_datetime(moment)

    return _outcome(spell)


_SORT = TimedSort("SCAN", "scanned_at", "scan_id")


@settings(max_examples=150, deadline=None)
@given(moment=_MOMENTS, ident=_IDS)
def test_timed_sort_spells_as_the_codec(moment: datetime, ident: str) -> None:
    assert _outcome(lambda: _SORT.spell(moment, ident)) == _codec(
        SCAN_SORT, "scanned_at", "scan_id", moment, ident
    )
    assert _outcome(lambda: due_sort(moment, ident)) == _outcome(
        lambda: DUE_SORT.format({"due": moment, "event_id": ident})
    )


@settings(max_examples=100, deadline=None)
@given(brand=_IDS, product=_IDS, event=_IDS, moment=_MOMENTS)
def test_day_keys_are_the_access_patterns_keys(
    brand: str, product: str, event: str, moment: datetime
) -> None:
    day = moment.date().isoformat()

    def codec() -> Any:
        shard = str(shard_of(event))
        return (
            BRAND_ANALYTICS_DAY.key(brand_id=brand, shard=shard, day=day),
            PRODUCT_ANALYTICS_DAY.key(product_id=product, day=day),
        )

    assert _outcome(lambda: day_keys(brand, product, event, day)) == _outcome(codec)


@settings(max_examples=100, deadline=None)
@given(product=_IDS, scan=_IDS)
def test_scan_item_keys_are_the_codecs(product: str, scan: str) -> None:
    moment = datetime(2026, 12, 1, 12, 30, 1, 5, tzinfo=UTC)

    def fields() -> tuple[str, str, str]:
        item = scan_item(
            scan_id=scan,
            product_id=product,
            brand_id="b",
            scanned_at=moment,
            result=next(iter(ScanResult)),
            country=None,
            city=None,
            device_hash=None,
            ip_hash=None,
            user_agent=None,
        )
        return item["PK"], item["SK"], item["scannedAt"]

    def codec() -> tuple[str, str, str]:
        return (
            PRODUCT_SCANS.partition_key.format({"product_id": product}),
            SCAN_SORT.format({"scanned_at": moment, "scan_id": scan}),
            format_datetime(moment),
        )

    assert _outcome(fields) == _outcome(codec)


@pytest.mark.parametrize(
    ("fault", "ident"),
    [
        (lambda value: type(value) is str and value.isascii() and "#" not in value, "a%b"),
        (lambda value: type(value) is str and value.isascii(), "a#b"),
        (lambda value: type(value) is str and "#" not in value and "%" not in value, ""),
    ],
)
def test_a_planted_fault_is_caught(
    monkeypatch: pytest.MonkeyPatch, fault: Callable[[object], bool], ident: str
) -> None:
    """Positive control: a ``plain`` that lets an escape, a separator or an
    empty value through spells a key the codec does not."""
    moment = datetime(2026, 12, 1, tzinfo=UTC)
    assert _outcome(lambda: _SORT.spell(moment, ident)) == _codec(
        SCAN_SORT, "scanned_at", "scan_id", moment, ident
    )
    monkeypatch.setattr(sort_keys, "plain", fault)
    assert _outcome(lambda: _SORT.spell(moment, ident)) != _codec(
        SCAN_SORT, "scanned_at", "scan_id", moment, ident
    )


@settings(max_examples=150, deadline=None)
@given(ident=_IDS)
def test_plain_keys_are_the_access_patterns_keys(ident: str) -> None:
    product_key = PlainKey(PRODUCT_BY_ID, "product_id")
    assert _outcome(lambda: product_key(ident)) == _outcome(
        lambda: PRODUCT_BY_ID.key(product_id=ident)
    )
    assert _outcome(lambda: brand_stats_key(ident)) == _outcome(
        lambda: BRAND_STATS.key(brand_id=ident)
    )


def test_a_plain_key_needs_a_constant_sort_key() -> None:
    with pytest.raises(ValueError, match="not constant"):
        PlainKey(BRAND_ANALYTICS_DAY, "brand_id")


@pytest.mark.parametrize("ident", ["a#b", "50%", ""])
def test_a_planted_fault_in_a_plain_key_is_caught(
    monkeypatch: pytest.MonkeyPatch, ident: str
) -> None:
    """Positive control: a ``plain`` that lets an escape, a separator or an
    empty value through spells a key the pattern does not."""
    product_key = PlainKey(PRODUCT_BY_ID, "product_id")
    codec = _outcome(lambda: PRODUCT_BY_ID.key(product_id=ident))
    assert _outcome(lambda: product_key(ident)) == codec
    monkeypatch.setattr(sort_keys, "plain", lambda value: type(value) is str)
    assert _outcome(lambda: product_key(ident)) != codec
