from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from domain.errors import AccessPatternError
from storage import access_patterns as aps
from storage.access_patterns import REGISTRY
from storage.keys import Key
from storage.registry import AccessPattern, Direction, Operation, SortOperator, SortRange
from storage.table import IndexName

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
T1 = datetime(2024, 5, 2, 12, 0, tzinfo=UTC)
T0_KEY = "2024-05-01T12:00:00.000000Z"
T1_KEY = "2024-05-02T12:00:00.000000Z"

GETS: dict[str, tuple[dict[str, Any], Key]] = {
    "AP01": ({"brand_id": "b1"}, Key("BRAND#b1", "PROFILE")),
    "AP03": ({"brand_id": "b1"}, Key("BRAND#b1", "STATS")),
    "AP04": ({"product_id": "p1"}, Key("PRODUCT#p1", "META")),
    "AP05": ({"code": "Ab3"}, Key("VERIFY#Ab3", "META")),
    "AP06": ({"certificate_hash": "ff00"}, Key("HASH#ff00", "META")),
    "AP11": ({"product_id": "p1"}, Key("PRODUCT#p1", "CLAIM")),
    "AP26": (
        {"brand_id": "b1", "shard": "7", "day": "2024-05-01"},
        Key("ANALYTICS#BRAND#b1#7", "DAY#2024-05-01"),
    ),
    "AP27": (
        {"product_id": "p1", "day": "2024-05-01"},
        Key("ANALYTICS#PRODUCT#p1", "DAY#2024-05-01"),
    ),
    "AP13": (
        {
            "brand_id": "b1",
            "month": "2024-05",
            "detected_at": T0,
            "threat_type": "BURST_SCAN",
            "product_id": "p1",
        },
        Key("THREAT#b1#2024-05", f"ALERT#{T0_KEY}#BURST_SCAN#p1"),
    ),
    "AP15": ({"brand_id": "b1", "currency": "CREDIT"}, Key("LEDGER#b1", "BAL#CREDIT")),
    "AP17": ({"transaction_id": "t1"}, Key("LTXN#t1", "META")),
    "AP18": ({"scope": "registerProduct", "key": "k1"}, Key("IDEM#registerProduct#k1", "REQUEST")),
    "AP20": ({"key_hash": "abc"}, Key("APIKEY#abc", "META")),
    "AP21": ({}, Key("HEALTH", "PROBE")),
    "AP24": ({"brand_id": "b1", "webhook_id": "w1"}, Key("BRAND#b1", "WEBHOOK#w1")),
    "AP28": ({}, Key("STORE", "VERSION")),
    "AP31": ({"brand_id": "b1", "integration_id": "i1"}, Key("BRAND#b1", "INTEGRATION#i1")),
    "AP32": (
        {"brand_id": "b1", "integration_id": "i1", "event_id": "partner#7"},
        Key("INGEST#b1#i1", "EVENT#partner%237"),
    ),
    # A serial may hold "/" and "%" (GS1 character set 82), never changed but escaped.
    "AP34": (
        {"gtin": "09506000134352", "serial": "A/1%2"},
        Key("GTIN#09506000134352#A/1%252", "META"),
    ),
}

QUERIES: dict[str, tuple[IndexName, dict[str, Any], str, SortRange]] = {
    "AP02": (IndexName.TABLE, {}, "BRAND_INDEX", SortRange(SortOperator.BEGINS_WITH, "BRAND#")),
    "AP07": (
        IndexName.GSI1,
        {"brand_id": "b1"},
        "BRAND#b1",
        SortRange(SortOperator.BEGINS_WITH, "PRODUCT#"),
    ),
    "AP08": (IndexName.TABLE, {}, "PRODUCT_INDEX", SortRange(SortOperator.BEGINS_WITH, "PRODUCT#")),
    "AP09": (
        IndexName.TABLE,
        {"product_id": "p1"},
        "PRODUCT#p1",
        SortRange(SortOperator.BEGINS_WITH, "EVENT#"),
    ),
    "AP10": (
        IndexName.TABLE,
        {"product_id": "p1", "start": T0, "end": T1},
        "PRODUCT#p1",
        SortRange(SortOperator.BETWEEN, f"SCAN#{T0_KEY}", f"SCAN#{T1_KEY}"),
    ),
    "AP12": (
        IndexName.GSI1,
        {"brand_id": "b1", "since": T0},
        "BRAND#b1",
        SortRange(SortOperator.BETWEEN, f"THREAT#{T0_KEY}", "THREAT#~"),
    ),
    "AP14": (
        IndexName.TABLE,
        {"day": "2024-05-01"},
        "AUDIT#2024-05-01",
        SortRange(SortOperator.BEGINS_WITH, "ENTRY#"),
    ),
    "AP16": (
        IndexName.TABLE,
        {"brand_id": "b1", "month": "2024-05"},
        "LEDGER#b1#2024-05",
        SortRange(SortOperator.BEGINS_WITH, "POST#"),
    ),
    "AP19": (
        IndexName.GSI2,
        {"shard": 3, "before": T0},
        "OUTBOX#READY#000000000003",
        SortRange(SortOperator.LT, f"DUE#{T0_KEY}"),
    ),
    "AP22": (IndexName.GSI2, {}, "OUTBOX#PARKED", SortRange(SortOperator.BEGINS_WITH, "PARKED#")),
    "AP23": (
        IndexName.TABLE,
        {"brand_id": "b1"},
        "BRAND#b1",
        SortRange(SortOperator.BEGINS_WITH, "WEBHOOK#"),
    ),
    "AP25": (
        IndexName.TABLE,
        {"brand_id": "b1"},
        "DELIVERIES#b1",
        SortRange(SortOperator.BEGINS_WITH, "DELIVERY#"),
    ),
    "AP29": (IndexName.TABLE, {}, "KEYRING", SortRange(SortOperator.BEGINS_WITH, "KEY#")),
    "AP30": (
        IndexName.TABLE,
        {"brand_id": "b1"},
        "BRAND#b1",
        SortRange(SortOperator.BEGINS_WITH, "INTEGRATION#"),
    ),
    "AP33": (
        IndexName.TABLE,
        {"product_id": "p1"},
        "PRODUCT#p1",
        SortRange(SortOperator.BETWEEN, "CLAIM", "META"),
    ),
    "AP35": (
        IndexName.TABLE,
        {"since": T0},
        "CACHELOG",
        SortRange(SortOperator.BETWEEN, f"LOG#{T0_KEY}", "LOG#~"),
    ),
    "AP36": (
        IndexName.TABLE,
        {"webhook": "wh_b1_w1"},
        "WEBHOOKQ#wh_b1_w1",
        SortRange(SortOperator.BEGINS_WITH, "AT#"),
    ),
}


def test_all_36_patterns_are_registered_with_ids_ap01_to_ap36() -> None:
    ids = [ap.id for ap in REGISTRY]
    assert ids == [f"AP{n:02d}" for n in range(1, 37)]
    assert sorted(GETS.keys() | QUERIES.keys()) == ids


def test_every_exported_pattern_is_the_registered_one() -> None:
    exported = [getattr(aps, name) for name in aps.__all__ if name != "REGISTRY"]
    assert all(isinstance(ap, AccessPattern) for ap in exported)
    assert {ap.id for ap in exported} == {ap.id for ap in REGISTRY}
    assert all(ap in REGISTRY and REGISTRY[ap.id] is ap for ap in exported)


def test_names_are_unique_and_descriptive() -> None:
    names = [ap.name for ap in REGISTRY]
    assert len(set(names)) == len(names)
    assert all(name.strip() for name in names)


@pytest.mark.parametrize("ap_id", sorted(GETS))
def test_get_pattern_builds_its_key(ap_id: str) -> None:
    ap = REGISTRY[ap_id]
    params, expected = GETS[ap_id]
    assert ap.operation is Operation.GET
    assert ap.index is IndexName.TABLE
    assert ap.key(**params) == expected
    assert set(ap.params) == set(params)


@pytest.mark.parametrize("ap_id", sorted(QUERIES))
def test_query_pattern_resolves_partition_and_sort(ap_id: str) -> None:
    ap = REGISTRY[ap_id]
    index, params, partition, sort = QUERIES[ap_id]
    assert ap.operation is Operation.QUERY
    assert ap.index is index
    assert ap.partition(params) == partition
    assert ap.sort_range(params) == sort
    assert set(ap.params) == set(params)


@pytest.mark.parametrize("ap_id", sorted(GETS))
def test_get_patterns_refuse_a_missing_parameter(ap_id: str) -> None:
    ap = REGISTRY[ap_id]
    params, _ = GETS[ap_id]
    for name in params:
        with pytest.raises(AccessPatternError, match=name):
            ap.key(**{k: v for k, v in params.items() if k != name})


def test_newest_first_patterns_read_backward() -> None:
    backward = {ap.id for ap in REGISTRY if ap.direction is Direction.BACKWARD}
    assert backward == {"AP02", "AP07", "AP08", "AP10", "AP12", "AP14", "AP25", "AP30"}


def test_consistent_reads_only_on_the_table() -> None:
    consistent = {ap.id for ap in REGISTRY if ap.consistent}
    assert consistent == {
        "AP09",
        "AP18",
        "AP20",
        "AP23",
        "AP24",
        "AP28",
        "AP29",
        "AP30",
        "AP31",
        "AP32",
        "AP33",
        "AP35",
        "AP36",
    }
    assert all(REGISTRY[i].index is IndexName.TABLE for i in consistent)


def test_threat_range_covers_every_later_alert() -> None:
    sort = REGISTRY["AP12"].sort_range({"brand_id": "b1", "since": T0})
    assert sort.matches(f"THREAT#{T1_KEY}#x")
    assert not sort.matches("THREAT#2024-04-30T00:00:00.000000Z#x")
    assert sort.matches("THREAT#9999-12-31T23:59:59.999999Z#zzz")


def test_provenance_chain_reads_only_events() -> None:
    sort = aps.PROVENANCE_CHAIN.sort_range({"product_id": "p1"})
    assert sort.matches("EVENT#000000000010")
    assert not sort.matches("CLAIM")
