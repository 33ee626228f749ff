"""Query through access patterns: order, sort-key conditions, sparse indexes and
paging that stays exact across DynamoDB's 1 MB page cut."""

from __future__ import annotations

import pytest

from domain.errors import LimitExceeded
from storage import Delete, Key, Storage, Update
from storage.access_patterns import (
    BRAND_PRODUCTS,
    BRAND_THREATS,
    OUTBOX_DUE,
    PRODUCT_SCANS,
    PROVENANCE_CHAIN,
)
from storage.keys import encode_int, encode_time
from storage.limits import PAGE_SIZE_DEFAULT, QUERY_PAGE_MAX_BYTES
from storage.trace import tracing

from ._support import (
    TENANT,
    at,
    chain_event,
    collect,
    gallery_product,
    outbox_entry,
    put_all,
    scan_record,
    sort_keys,
    walk,
)


def event_sk(sequence: int) -> str:
    return f"EVENT#{encode_int(sequence)}"


# --- order and sort-key conditions ------------------------------------------------


async def test_forward_order_is_numeric_through_zero_padding(storage: Storage, uid: str) -> None:
    sequences = [3, 10, 1, 2, 100, 20]
    await put_all(storage, [chain_event(uid, n) for n in sequences])
    found = await collect(storage, PROVENANCE_CHAIN, {"product_id": uid})
    assert [item["sequence"] for item in found] == sorted(sequences)


async def test_gsi_backward_order_is_newest_first(storage: Storage, uid: str) -> None:
    minutes = [5, 0, 30, 7, 12]
    await put_all(storage, [gallery_product(uid, f"{uid}-{m}", at(m)) for m in minutes])
    found = await collect(storage, BRAND_PRODUCTS, {"brand_id": uid})
    assert [item["productId"] for item in found] == [
        f"{uid}-{m}" for m in sorted(minutes, reverse=True)
    ]


async def test_begins_with_matches_only_its_prefix(storage: Storage, uid: str) -> None:
    partition = PROVENANCE_CHAIN.partition({"product_id": uid})
    decoys = [
        "EVENT",
        "EVENTS",
        "EVENT$1",
        "EVENU#1",
        "event#000000000001",
        "Event#1",
        "META",
        "CLAIM",
        "SCAN#x",
    ]
    await put_all(
        storage,
        [
            chain_event(uid, 1),
            chain_event(uid, 2),
            *({"PK": partition, "SK": sk} for sk in decoys),
            chain_event(f"{uid}x", 1),
            chain_event(uid[:-1], 1),
        ],
    )
    found = await collect(storage, PROVENANCE_CHAIN, {"product_id": uid})
    assert sort_keys(found) == [event_sk(1), event_sk(2)]
    assert {item["PK"] for item in found} == {partition}


async def test_between_includes_both_bounds(storage: Storage, uid: str) -> None:
    await put_all(storage, [scan_record(uid, at(m), minute=m) for m in range(6)])
    await put_all(storage, [chain_event(uid, 1)])
    page = await storage.query(
        PRODUCT_SCANS, {"product_id": uid, "start": at(1), "end": at(4)}, tenant=TENANT
    )
    assert [item["minute"] for item in page.items] == [4, 3, 2, 1]
    assert not page.has_next_page


async def test_between_with_equal_bounds_is_an_exact_match(storage: Storage, uid: str) -> None:
    await put_all(storage, [scan_record(uid, at(m), minute=m) for m in range(3)])
    page = await storage.query(
        PRODUCT_SCANS, {"product_id": uid, "start": at(1), "end": at(1)}, tenant=TENANT
    )
    assert [item["minute"] for item in page.items] == [1]


async def test_less_than_on_gsi2_excludes_the_bound(storage: Storage, uid: str) -> None:
    shard = int(uid, 16) % 10**12
    entries = [outbox_entry(shard, at(m), f"{uid}-{m}") for m in (9, 1, 5, 10, 11)]
    await put_all(storage, entries)
    found = await collect(storage, OUTBOX_DUE, {"shard": shard, "before": at(10)})
    assert sort_keys(found, "GSI2SK") == [f"DUE#{encode_time(at(m))}#{uid}-{m}" for m in (1, 5, 9)]
    assert [item["PK"] for item in found] == [f"OUTBOX#{uid}-{m}" for m in (1, 5, 9)]


async def test_one_gsi_partition_holds_two_patterns_apart(storage: Storage, uid: str) -> None:
    brand_partition = BRAND_PRODUCTS.partition({"brand_id": uid})
    threats = [
        {
            "PK": f"THREAT#{uid}#{m}",
            "SK": "ALERT",
            "GSI1PK": brand_partition,
            "GSI1SK": f"THREAT#{encode_time(at(m))}",
        }
        for m in (1, 2, 3)
    ]
    await put_all(storage, [*threats, gallery_product(uid, f"{uid}-p", at(2))])
    products = await collect(storage, BRAND_PRODUCTS, {"brand_id": uid})
    assert [item["productId"] for item in products] == [f"{uid}-p"]
    recent = await collect(storage, BRAND_THREATS, {"brand_id": uid, "since": at(2)})
    assert sort_keys(recent, "PK") == [f"THREAT#{uid}#3", f"THREAT#{uid}#2"]


async def test_sparse_gsi_returns_only_projected_items(storage: Storage, uid: str) -> None:
    indexed = gallery_product(uid, f"{uid}-indexed", at(1))
    unindexed = gallery_product(uid, f"{uid}-unindexed", None)
    half_keyed = {
        **gallery_product(uid, f"{uid}-half", None),
        "GSI1PK": BRAND_PRODUCTS.partition({"brand_id": uid}),
    }
    await put_all(storage, [indexed, unindexed, half_keyed])
    assert await collect(storage, BRAND_PRODUCTS, {"brand_id": uid}) == [indexed]


async def test_removing_gsi_keys_drops_the_item_from_the_index(storage: Storage, uid: str) -> None:
    item = gallery_product(uid, f"{uid}-p", at(1))
    await put_all(storage, [item])
    await storage.transact_write([Update(Key(item["PK"], item["SK"]), remove=("GSI1PK", "GSI1SK"))])
    assert await collect(storage, BRAND_PRODUCTS, {"brand_id": uid}) == []


async def test_strings_order_by_utf8_bytes(storage: Storage, uid: str) -> None:
    """DynamoDB orders by UTF-8 bytes: U+FF5E sorts before U+1F600 there, after it in UTF-16."""
    suffixes = [
        "a",
        "Z",
        "A",
        "\u00e9",
        "\u00ff",
        "\u0100",
        "\uff5e",
        "\U0001f600",
        "~",
        "0",
        "\u4e16",
    ]
    partition = PROVENANCE_CHAIN.partition({"product_id": uid})
    await put_all(storage, [{"PK": partition, "SK": f"EVENT#{s}"} for s in suffixes])
    found = await collect(storage, PROVENANCE_CHAIN, {"product_id": uid}, first=3)
    assert sort_keys(found) == sorted((f"EVENT#{s}" for s in suffixes), key=lambda sk: sk.encode())
    assert sort_keys(found)[-2:] == ["EVENT#\uff5e", "EVENT#\U0001f600"]


async def test_unicode_partition_values_are_exact(storage: Storage, uid: str) -> None:
    ids = [f"{uid}-\u00fc", f"{uid}-u\u0308", f"{uid}-\U0001f600"]
    await put_all(storage, [chain_event(product_id, 1, owner=product_id) for product_id in ids])
    for product_id in ids:
        found = await collect(storage, PROVENANCE_CHAIN, {"product_id": product_id})
        assert [item["owner"] for item in found] == [product_id]


# --- paging ----------------------------------------------------------------------


@pytest.mark.parametrize(("first", "has_next"), [(4, False), (5, False), (3, True)])
async def test_has_next_page_is_exact(
    storage: Storage, uid: str, first: int, has_next: bool
) -> None:
    await put_all(storage, [chain_event(uid, n) for n in range(1, 5)])
    page = await storage.query(PROVENANCE_CHAIN, {"product_id": uid}, tenant=TENANT, first=first)
    assert len(page) == min(first, 4)
    assert page.has_next_page is has_next


async def test_empty_partition_gives_an_empty_page_without_cursor(
    storage: Storage, uid: str
) -> None:
    page = await storage.query(PROVENANCE_CHAIN, {"product_id": uid}, tenant=TENANT)
    assert page.items == []
    assert page.has_next_page is False
    assert page.end_cursor is None


async def test_last_page_ending_on_the_last_item_has_no_next_page(
    storage: Storage, uid: str
) -> None:
    await put_all(storage, [chain_event(uid, n) for n in range(1, 7)])
    pages = await walk(storage, PROVENANCE_CHAIN, {"product_id": uid}, first=3)
    assert [len(page) for page in pages] == [3, 3]


@pytest.mark.parametrize("first", [1, 3, 7, 10, 11])
async def test_walking_pages_yields_every_item_once_in_order(
    storage: Storage, uid: str, first: int
) -> None:
    await put_all(storage, [chain_event(uid, n) for n in range(1, 11)])
    pages = await walk(storage, PROVENANCE_CHAIN, {"product_id": uid}, first=first)
    assert [item["sequence"] for page in pages for item in page] == list(range(1, 11))
    assert all(pages[:-1]) and len(pages) == max(1, -(-10 // first))


async def test_walking_gsi_pages_with_equal_index_keys_loses_nothing(
    storage: Storage, uid: str
) -> None:
    """GSI keys are not unique; the cursor must carry the table key to resume between ties."""
    products = [gallery_product(uid, f"{uid}-{n}", at(1)) for n in range(7)]
    await put_all(storage, [*products, gallery_product(uid, f"{uid}-new", at(2))])
    pages = await walk(storage, BRAND_PRODUCTS, {"brand_id": uid}, first=2)
    found = [item["productId"] for page in pages for item in page]
    assert found[0] == f"{uid}-new"
    assert sorted(found[1:]) == sorted(p["productId"] for p in products)


async def test_walking_forward_gsi_pages_with_equal_index_keys_loses_nothing(
    storage: Storage, uid: str
) -> None:
    shard = int(uid, 16) % 10**12
    tied = [
        {**outbox_entry(shard, at(1), f"{uid}-{n}"), "GSI2SK": f"DUE#{encode_time(at(1))}"}
        for n in range(7)
    ]
    await put_all(storage, [*tied, outbox_entry(shard, at(0), f"{uid}-first")])
    pages = await walk(storage, OUTBOX_DUE, {"shard": shard, "before": at(5)}, first=2)
    found = [item["PK"] for page in pages for item in page]
    assert found[0] == f"OUTBOX#{uid}-first"
    assert sorted(found[1:]) == sorted(item["PK"] for item in tied)


async def test_every_edge_cursor_resumes_after_its_item(storage: Storage, uid: str) -> None:
    await put_all(storage, [chain_event(uid, n) for n in range(1, 9)])
    page = await storage.query(PROVENANCE_CHAIN, {"product_id": uid}, tenant=TENANT, first=5)
    for index in range(len(page)):
        rest = await storage.query(
            PROVENANCE_CHAIN,
            {"product_id": uid},
            tenant=TENANT,
            first=100,
            after=page.cursor(index),
        )
        assert [item["sequence"] for item in rest.items] == list(range(index + 2, 9))
        assert rest.has_next_page is False


async def test_backward_cursor_resumes_after_its_item(storage: Storage, uid: str) -> None:
    await put_all(storage, [scan_record(uid, at(m), minute=m) for m in range(6)])
    params = {"product_id": uid, "start": at(0), "end": at(5)}
    page = await storage.query(PRODUCT_SCANS, params, tenant=TENANT, first=2)
    rest = await storage.query(PRODUCT_SCANS, params, tenant=TENANT, after=page.end_cursor)
    assert [item["minute"] for item in page.items] == [5, 4]
    assert [item["minute"] for item in rest.items] == [3, 2, 1, 0]


async def test_cursor_of_a_deleted_item_still_resumes(storage: Storage, uid: str) -> None:
    await put_all(storage, [chain_event(uid, n) for n in range(1, 6)])
    page = await storage.query(PROVENANCE_CHAIN, {"product_id": uid}, tenant=TENANT, first=2)
    await storage.transact_write([Delete(Key(page.items[-1]["PK"], page.items[-1]["SK"]))])
    rest = await storage.query(
        PROVENANCE_CHAIN, {"product_id": uid}, tenant=TENANT, after=page.end_cursor
    )
    assert [item["sequence"] for item in rest.items] == [3, 4, 5]


async def test_first_zero_returns_no_items(storage: Storage, uid: str) -> None:
    empty = await storage.query(PROVENANCE_CHAIN, {"product_id": uid}, tenant=TENANT, first=0)
    await put_all(storage, [chain_event(uid, 1)])
    page = await storage.query(PROVENANCE_CHAIN, {"product_id": uid}, tenant=TENANT, first=0)
    assert (empty.items, empty.has_next_page, empty.end_cursor) == ([], False, None)
    assert (page.items, page.has_next_page, page.end_cursor) == ([], True, None)


async def test_default_page_size(storage: Storage, uid: str) -> None:
    await put_all(storage, [chain_event(uid, n) for n in range(PAGE_SIZE_DEFAULT + 1)])
    page = await storage.query(PROVENANCE_CHAIN, {"product_id": uid}, tenant=TENANT)
    assert len(page) == PAGE_SIZE_DEFAULT
    assert page.has_next_page


@pytest.mark.parametrize("first", [PROVENANCE_CHAIN.max_page + 1, -1, 10**9])
async def test_first_outside_the_allowed_range_is_refused_before_io(
    storage: Storage, uid: str, first: int
) -> None:
    with tracing() as trace, pytest.raises(LimitExceeded):
        await storage.query(PROVENANCE_CHAIN, {"product_id": uid}, tenant=TENANT, first=first)
    assert trace.calls == []


async def test_pages_stay_exact_across_the_1mb_cut(storage: Storage, uid: str) -> None:
    """Twelve ~100 KB items: a page of ten cannot come back from one Query call."""
    body = "x" * (100 * 1024)
    await put_all(storage, [chain_event(uid, n, body=body) for n in range(1, 13)])
    with tracing() as trace:
        pages = await walk(storage, PROVENANCE_CHAIN, {"product_id": uid}, first=10)
    assert [[item["sequence"] for item in page] for page in pages] == [list(range(1, 11)), [11, 12]]
    assert all(item["body"] == body for page in pages for item in page)
    queries = [call for call in trace.calls if call.operation == "Query"]
    assert len(queries) >= 3, "the backend did not cut the first page at 1 MB"
    assert all(call.items * len(body) <= QUERY_PAGE_MAX_BYTES for call in queries)
