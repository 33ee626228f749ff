"""Store's own logic over a dict-backed fake driver.

The fake emulates only what Store must cope with: pages cut short (as by the
1 MB limit) that still carry a LastEvaluatedKey, a LastEvaluatedKey at the end
of a partition followed by an empty page, and unprocessed batch keys. Real
engines are covered by the backend and conformance suites.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.errors import (
    AccessPatternError,
    InvalidCursor,
    LimitExceeded,
    ServiceUnavailable,
)
from storage import store as store_module
from storage.access_patterns import (
    API_KEY_BY_HASH,
    BRAND_BY_ID,
    BRAND_PRODUCTS,
    PRODUCT_BY_ID,
    PRODUCT_SCANS,
    PROVENANCE_CHAIN,
    REGISTRY,
)
from storage.conditions import ItemExists
from storage.cursor import CursorCodec
from storage.driver import BatchGetResult, QueryRequest, QueryResult
from storage.keys import Key, encode_int, encode_time
from storage.limits import (
    BACKOFF_BASE_SECONDS,
    BACKOFF_CAP_SECONDS,
    BATCH_GET_MAX_ATTEMPTS,
    BATCH_GET_MAX_KEYS,
    TRANSACT_MAX_BYTES,
    TRANSACT_MAX_ITEMS,
)
from storage.registry import AccessPattern, Operation, Registry, SortCondition
from storage.store import Store, backoff_delay
from storage.table import IndexName
from storage.trace import tracing
from storage.values import Item, item_size
from storage.writes import ConditionCheck, Delete, Put, Update, WriteAction

CODEC = CursorCodec(bytes(range(32)))
DAY = datetime(2024, 5, 1, tzinfo=UTC)


class FakeDriver:
    name = "fake"

    def __init__(
        self, items: Sequence[Item] = (), *, page_cap: int = 1000, stutter: bool = False
    ) -> None:
        self.items = {Key(i["PK"], i["SK"]): dict(i) for i in items}
        self.page_cap = page_cap
        self.stutter = stutter
        self.unprocessed_plan: list[int] = []
        self.calls: list[tuple[str, Any]] = []
        self.closed = False
        self._stuttered: set[str] = set()

    async def get_item(self, key: Key, consistent: bool) -> tuple[Item | None, float]:
        self.calls.append(("get_item", (key, consistent)))
        item = self.items.get(key)
        return item, 0.5 if item else 0.0

    async def batch_get_items(self, keys: Sequence[Key], consistent: bool) -> BatchGetResult:
        keys = list(keys)
        self.calls.append(("batch_get_items", (keys, consistent)))
        assert 0 < len(keys) <= BATCH_GET_MAX_KEYS, "DynamoDB refuses this batch size"
        assert len(set(keys)) == len(keys), "DynamoDB refuses duplicate keys"
        hold = self.unprocessed_plan.pop(0) if self.unprocessed_plan else 0
        processed, unprocessed = keys[: len(keys) - hold], keys[len(keys) - hold :]
        found = [self.items[k] for k in processed if k in self.items]
        return BatchGetResult(found, unprocessed, 0.5 * len(found))

    async def query(self, request: QueryRequest) -> QueryResult:
        self.calls.append(("query", request))
        index = request.table_index
        pk, sk = index.partition_key, index.sort_key

        def order(item: dict[str, str]) -> tuple[bytes, ...]:
            return (item[sk].encode(), item["PK"].encode(), item["SK"].encode())

        rows = [
            i
            for i in self.items.values()
            if i.get(pk) == request.partition
            and isinstance(i.get(sk), str)
            and request.sort.matches(i[sk])
        ]
        rows.sort(key=order, reverse=not request.forward)
        if request.start_key is not None:
            start = order(request.start_key)
            rows = [r for r in rows if (order(r) > start) == request.forward and order(r) != start]
            marker = repr(sorted(request.start_key.items()))
            if self.stutter and marker not in self._stuttered:
                self._stuttered.add(marker)
                return QueryResult([], dict(request.start_key), 0.5)
        cap = min(request.limit, self.page_cap)
        page = rows[:cap]
        # Like DynamoDB: a page that stopped at its limit carries a
        # LastEvaluatedKey even when nothing follows.
        last = (
            {a: page[-1][a] for a in dict.fromkeys(("PK", "SK", pk, sk))}
            if len(page) == cap
            else None
        )
        return QueryResult(page, last, 0.5)

    async def write(self, action: WriteAction) -> float:
        self.calls.append(("write", action))
        return 1.0

    async def transact_write(self, actions: Sequence[WriteAction]) -> float:
        self.calls.append(("transact_write", list(actions)))
        return 2.0 * len(actions)

    async def close(self) -> None:
        self.closed = True

    def count(self, operation: str) -> int:
        return sum(1 for name, _ in self.calls if name == operation)


def make_store(driver: FakeDriver, registry: Registry = REGISTRY) -> Store:
    return Store(driver, CODEC, registry)


def scan(product: str, hour: int) -> Item:
    at = encode_time(DAY + timedelta(hours=hour, minutes=1))
    return {"PK": f"PRODUCT#{product}", "SK": f"SCAN#{at}#s{hour}", "hour": hour}


def event(product: str, n: int) -> Item:
    return {"PK": f"PRODUCT#{product}", "SK": f"EVENT#{encode_int(n)}", "n": n}


def product(brand: str, n: int) -> Item:
    return {
        "PK": f"PRODUCT#{brand}-{n}",
        "SK": "META",
        "GSI1PK": f"BRAND#{brand}",
        "GSI1SK": f"PRODUCT#{encode_int(n)}",
        "n": n,
    }


def scans_params(start: int, end: int, product_id: str = "p1") -> dict[str, Any]:
    return {
        "product_id": product_id,
        "start": DAY + timedelta(hours=start),
        "end": DAY + timedelta(hours=end),
    }


EVENTS = [event("p1", n) for n in range(1, 8)] + [
    event("p2", 1),
    {"PK": "PRODUCT#p1", "SK": "META"},
]


# --- query: paging -------------------------------------------------------------------


@pytest.mark.parametrize("page_cap", [1, 2, 3, 1000])
@pytest.mark.parametrize("stutter", [False, True])
async def test_has_next_page_is_exact_despite_short_and_empty_pages(
    page_cap: int, stutter: bool
) -> None:
    driver = FakeDriver(EVENTS, page_cap=page_cap, stutter=stutter)
    store = make_store(driver)
    for first in range(0, 10):
        page = await store.query(PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t", first=first)
        assert [i["n"] for i in page.items] == list(range(1, 8))[:first]
        assert page.has_next_page is (first < 7)


async def test_reads_first_plus_one_and_stops() -> None:
    driver = FakeDriver(EVENTS, page_cap=1)
    page = await make_store(driver).query(
        PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t", first=2
    )
    assert len(page) == 2 and page.has_next_page
    requests = [r for name, r in driver.calls if name == "query"]
    assert len(requests) == 3
    assert [r.limit for r in requests] == [3, 2, 1]
    assert all(r.consistent and r.forward for r in requests)


async def test_an_empty_trailing_page_ends_the_list() -> None:
    driver = FakeDriver(EVENTS, page_cap=7)
    page = await make_store(driver).query(
        PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t", first=7
    )
    assert len(page) == 7
    assert page.has_next_page is False
    assert driver.count("query") == 2


@pytest.mark.parametrize("page_cap", [1, 3, 1000])
@pytest.mark.parametrize("first", [1, 2, 3, 7])
async def test_walking_end_cursors_visits_every_item_once(page_cap: int, first: int) -> None:
    store = make_store(
        FakeDriver(
            [scan("p1", h) for h in range(12)] + [scan("p2", 3)], page_cap=page_cap, stutter=True
        )
    )
    params = scans_params(2, 10)
    seen: list[int] = []
    after = None
    for _ in range(20):
        page = await store.query(PRODUCT_SCANS, params, tenant="t", first=first, after=after)
        seen.extend(i["hour"] for i in page.items)
        if not page.has_next_page:
            break
        after = page.end_cursor
    assert seen == list(range(9, 1, -1))


async def test_every_edge_has_its_own_cursor() -> None:
    store = make_store(FakeDriver(EVENTS))
    page = await store.query(PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t", first=5)
    for index, item in enumerate(page.items):
        rest = await store.query(
            PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t", first=3, after=page.cursor(index)
        )
        assert [i["n"] for i in rest.items] == list(range(item["n"] + 1, 8))[:3]


async def test_empty_result_has_no_end_cursor() -> None:
    page = await make_store(FakeDriver(EVENTS)).query(
        PROVENANCE_CHAIN, {"product_id": "nobody"}, tenant="t"
    )
    assert page.items == [] and page.has_next_page is False and page.end_cursor is None


async def test_default_page_size_applies() -> None:
    many = [event("p1", n) for n in range(1, 30)]
    page = await make_store(FakeDriver(many)).query(
        PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t"
    )
    assert len(page) == PROVENANCE_CHAIN.default_page
    assert page.has_next_page


@pytest.mark.parametrize("first", [-1, PROVENANCE_CHAIN.max_page + 1, True, 2.0, "3"])
async def test_first_out_of_range_is_refused_before_io(first: Any) -> None:
    driver = FakeDriver(EVENTS)
    with pytest.raises(LimitExceeded):
        await make_store(driver).query(
            PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t", first=first
        )
    assert driver.calls == []


async def test_gsi_cursor_carries_table_and_index_keys() -> None:
    store = make_store(FakeDriver([product("b1", n) for n in range(5)] + [product("b2", 9)]))
    page = await store.query(BRAND_PRODUCTS, {"brand_id": "b1"}, tenant="b1", first=2)
    assert [i["n"] for i in page.items] == [4, 3]
    assert page.end_cursor is not None
    last = CODEC.decode(page.end_cursor, "AP07", "BRAND#b1", "b1")
    assert last == {
        "PK": "PRODUCT#b1-3",
        "SK": "META",
        "GSI1PK": "BRAND#b1",
        "GSI1SK": "PRODUCT#000000000003",
    }
    rest = await store.query(
        BRAND_PRODUCTS, {"brand_id": "b1"}, tenant="b1", first=5, after=page.end_cursor
    )
    assert [i["n"] for i in rest.items] == [2, 1, 0]


# --- query: cursors that must be refused ------------------------------------------


async def _scan_cursor(store: Store) -> str:
    page = await store.query(PRODUCT_SCANS, scans_params(5, 9), tenant="t", first=2)
    assert [i["hour"] for i in page.items] == [8, 7]
    assert page.end_cursor is not None
    return page.end_cursor


async def test_cursor_from_another_range_of_the_same_partition_is_refused() -> None:
    driver = FakeDriver([scan("p1", h) for h in range(12)])
    store = make_store(driver)
    cursor = await _scan_cursor(store)
    calls = len(driver.calls)
    with pytest.raises(InvalidCursor):
        await store.query(PRODUCT_SCANS, scans_params(0, 4), tenant="t", after=cursor)
    assert len(driver.calls) == calls
    wider = await store.query(PRODUCT_SCANS, scans_params(0, 11), tenant="t", after=cursor)
    assert [i["hour"] for i in wider.items] == list(range(6, -1, -1))


@pytest.mark.parametrize(
    ("ap", "params", "tenant"),
    [
        (PRODUCT_SCANS, scans_params(5, 9, "p2"), "t"),
        (PRODUCT_SCANS, scans_params(5, 9), "other-tenant"),
        (PROVENANCE_CHAIN, {"product_id": "p1"}, "t"),
    ],
)
async def test_cursor_of_another_partition_tenant_or_pattern_is_refused(
    ap: AccessPattern, params: dict[str, Any], tenant: str
) -> None:
    store = make_store(FakeDriver([scan("p1", h) for h in range(12)]))
    cursor = await _scan_cursor(store)
    with pytest.raises(InvalidCursor):
        await store.query(ap, params, tenant=tenant, after=cursor)


@pytest.mark.parametrize("after", ["", "garbage", "AAAA"])
async def test_garbage_or_empty_cursor_is_refused(after: str) -> None:
    driver = FakeDriver(EVENTS)
    with pytest.raises(InvalidCursor):
        await make_store(driver).query(
            PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t", after=after
        )
    assert driver.calls == []


# --- access-pattern checks before I/O ---------------------------------------------


async def test_unregistered_pattern_is_refused_before_io() -> None:
    driver = FakeDriver(EVENTS)
    store = make_store(driver, Registry())
    with pytest.raises(AccessPatternError):
        await store.get(BRAND_BY_ID, brand_id="b1")
    with pytest.raises(AccessPatternError):
        await store.batch_get(BRAND_BY_ID, [{"brand_id": "b1"}])
    with pytest.raises(AccessPatternError):
        await store.query(PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t")
    assert driver.calls == []


async def test_operation_must_match_the_pattern() -> None:
    driver = FakeDriver(EVENTS)
    store = make_store(driver)
    with pytest.raises(AccessPatternError):
        await store.get(PROVENANCE_CHAIN, product_id="p1")
    with pytest.raises(AccessPatternError):
        await store.batch_get(PROVENANCE_CHAIN, [{"product_id": "p1"}])
    with pytest.raises(AccessPatternError):
        await store.query(BRAND_BY_ID, {"brand_id": "b1"}, tenant="t")
    assert driver.calls == []


async def test_missing_or_unknown_parameters_fail_before_io() -> None:
    driver = FakeDriver(EVENTS)
    store = make_store(driver)
    with pytest.raises(AccessPatternError):
        await store.get(BRAND_BY_ID)
    with pytest.raises(AccessPatternError):
        await store.get(BRAND_BY_ID, brand_id="b1", extra="x")
    with pytest.raises(AccessPatternError):
        await store.batch_get(BRAND_BY_ID, [{"brand_id": "b1"}, {}])
    with pytest.raises(AccessPatternError):
        await store.query(PRODUCT_SCANS, {"product_id": "p1", "start": DAY}, tenant="t")
    assert driver.calls == []


# --- get ----------------------------------------------------------------------------


async def test_get_reads_the_pattern_key_with_its_consistency() -> None:
    driver = FakeDriver([{"PK": "APIKEY#h", "SK": "META", "brand": "b1"}])
    store = make_store(driver)
    with tracing() as trace:
        assert await store.get(API_KEY_BY_HASH, key_hash="h") == {
            "PK": "APIKEY#h",
            "SK": "META",
            "brand": "b1",
        }
        assert await store.get(BRAND_BY_ID, brand_id="missing") is None
    assert driver.calls == [
        ("get_item", (Key("APIKEY#h", "META"), True)),
        ("get_item", (Key("BRAND#missing", "PROFILE"), False)),
    ]
    assert [(c.operation, c.access_pattern, c.items, c.capacity) for c in trace.calls] == [
        ("GetItem", "AP20", 1, 0.5),
        ("GetItem", "AP01", 0, 0.0),
    ]


# --- batch_get -----------------------------------------------------------------------


def products(n: int) -> list[Item]:
    return [{"PK": f"PRODUCT#p{i}", "SK": "META", "i": i} for i in range(n)]


async def test_batch_get_dedupes_and_keeps_input_order() -> None:
    driver = FakeDriver(products(5))
    params = [{"product_id": p} for p in ("p3", "p1", "nope", "p3", "p0", "p1")]
    result = await make_store(driver).batch_get(PRODUCT_BY_ID, params)
    assert [r["i"] if r else None for r in result] == [3, 1, None, 3, 0, 1]
    [(_, (keys, consistent))] = driver.calls
    assert keys == [Key(f"PRODUCT#{p}", "META") for p in ("p3", "p1", "nope", "p0")]
    assert consistent is False


async def test_batch_get_chunks_to_100_distinct_keys() -> None:
    driver = FakeDriver(products(250))
    params = [{"product_id": f"p{i}"} for i in range(250)] * 2
    with tracing() as trace:
        result = await make_store(driver).batch_get(PRODUCT_BY_ID, params)
    assert [r["i"] for r in result if r] == list(range(250)) * 2
    sizes = sorted(len(keys) for name, (keys, _) in driver.calls if name == "batch_get_items")
    assert sizes == [50, 100, 100]
    assert trace.storage_calls == 3
    assert trace.items == 250
    assert trace.access_patterns == ["AP04"]


async def test_batch_get_of_nothing_makes_no_call() -> None:
    driver = FakeDriver()
    assert await make_store(driver).batch_get(PRODUCT_BY_ID, []) == []
    assert driver.calls == []


async def test_batch_get_retries_unprocessed_keys_with_backoff(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    delays: list[int] = []

    def no_wait(attempt: int) -> float:
        delays.append(attempt)
        return 0.0

    monkeypatch.setattr(store_module, "backoff_delay", no_wait)
    driver = FakeDriver(products(10))
    driver.unprocessed_plan = [6, 4, 1]
    with tracing() as trace:
        result = await make_store(driver).batch_get(
            PRODUCT_BY_ID, [{"product_id": f"p{i}"} for i in range(10)]
        )
    assert [r["i"] for r in result if r] == list(range(10))
    requested = [len(keys) for name, (keys, _) in driver.calls if name == "batch_get_items"]
    assert requested == [10, 6, 4, 1]
    assert delays == [1, 2, 3]
    assert [c.items for c in trace.calls] == [4, 2, 3, 1]


async def test_batch_get_gives_up_with_a_retryable_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "backoff_delay", lambda attempt: 0.0)
    driver = FakeDriver(products(3))
    driver.unprocessed_plan = [1] * 100
    with pytest.raises(ServiceUnavailable) as raised:
        await make_store(driver).batch_get(
            PRODUCT_BY_ID, [{"product_id": f"p{i}"} for i in range(3)]
        )
    assert driver.count("batch_get_items") == BATCH_GET_MAX_ATTEMPTS
    assert raised.value.hint


def test_backoff_is_full_jitter_exponential_and_capped() -> None:
    for attempt in range(1, 20):
        ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt)
        samples = [backoff_delay(attempt) for _ in range(50)]
        assert all(0 <= s <= ceiling for s in samples)
        assert max(samples) > ceiling / 2
    assert max(backoff_delay(30) for _ in range(50)) <= BACKOFF_CAP_SECONDS


# --- transact_write ------------------------------------------------------------------


def put(n: int, **extra: Any) -> Put:
    return Put({"PK": f"X#{n}", "SK": "META", **extra})


async def _refused(actions: list[WriteAction], error: type[Exception]) -> None:
    driver = FakeDriver()
    with pytest.raises(error):
        await make_store(driver).transact_write(actions)
    assert driver.calls == []


async def test_empty_transaction_is_refused() -> None:
    await _refused([], AccessPatternError)


async def test_more_than_100_actions_are_refused() -> None:
    await _refused([put(n) for n in range(TRANSACT_MAX_ITEMS + 1)], LimitExceeded)


async def test_100_actions_are_allowed() -> None:
    driver = FakeDriver()
    await make_store(driver).transact_write([put(n) for n in range(TRANSACT_MAX_ITEMS)])
    assert driver.count("transact_write") == 1


@pytest.mark.parametrize(
    "second",
    [
        Update(Key("X#1", "META"), set={"a": 1}),
        Delete(Key("X#1", "META")),
        ConditionCheck(Key("X#1", "META"), ItemExists()),
        Put({"PK": "X#1", "SK": "META", "other": True}),
    ],
)
async def test_two_actions_on_one_item_are_refused(second: WriteAction) -> None:
    await _refused([put(0), put(1), second], LimitExceeded)


def _filler(total: int, base: Item) -> str:
    return "x" * (total - item_size(base))


async def test_transaction_size_limit_is_checked_before_io() -> None:
    full = [put(n, data=_filler(400 * 1024, put(n, data="").item)) for n in range(10)]
    used = sum(item_size(a.item) for a in full)
    last_base = put(10, data="").item
    exact = [*full, put(10, data=_filler(TRANSACT_MAX_BYTES - used, last_base))]
    assert sum(item_size(a.item) for a in exact) == TRANSACT_MAX_BYTES
    driver = FakeDriver()
    await make_store(driver).transact_write(exact)
    assert driver.count("transact_write") == 1
    over = [*full, put(10, data=_filler(TRANSACT_MAX_BYTES - used + 1, last_base))]
    await _refused(over, LimitExceeded)


async def test_update_values_count_toward_the_transaction_size() -> None:
    value = "x" * (50 * 1024)
    updates: list[WriteAction] = [
        Update(Key(f"X#{n}", "META"), set={"v": value}) for n in range(90)
    ]
    await _refused(updates, LimitExceeded)


async def test_a_single_write_uses_a_plain_write() -> None:
    driver = FakeDriver()
    action = Update(Key("X#1", "META"), add={"n": 1})
    with tracing() as trace:
        await make_store(driver).transact_write([action])
    assert driver.calls == [("write", action)]
    assert [(c.operation, c.items, c.capacity) for c in trace.calls] == [("UpdateItem", 1, 1.0)]


async def test_a_single_condition_check_stays_a_transaction() -> None:
    driver = FakeDriver()
    check = ConditionCheck(Key("X#1", "META"), ItemExists())
    await make_store(driver).transact_write([check])
    assert driver.calls == [("transact_write", [check])]


async def test_several_actions_make_one_transaction() -> None:
    driver = FakeDriver()
    actions: list[WriteAction] = [
        put(1),
        Delete(Key("X#2", "META")),
        ConditionCheck(Key("X#3", "META"), ItemExists()),
    ]
    with tracing() as trace:
        await make_store(driver).transact_write(actions)
    assert driver.calls == [("transact_write", actions)]
    assert [(c.operation, c.access_pattern, c.items, c.capacity) for c in trace.calls] == [
        ("TransactWriteItems", None, 3, 6.0)
    ]


# --- tracing and lifecycle ----------------------------------------------------------


async def test_trace_records_every_query_call() -> None:
    store = make_store(FakeDriver(EVENTS, page_cap=2))
    with tracing() as trace:
        await store.query(PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t", first=4)
    assert [(c.operation, c.access_pattern, c.items) for c in trace.calls] == [
        ("Query", "AP09", 2),
        ("Query", "AP09", 2),
        ("Query", "AP09", 1),
    ]
    assert trace.capacity == 1.5
    assert trace.items == 5


async def test_nothing_is_recorded_outside_a_trace() -> None:
    store = make_store(FakeDriver(EVENTS))
    await store.get(PRODUCT_BY_ID, product_id="p1")
    with tracing() as trace:
        pass
    assert trace.calls == []


async def test_close_closes_the_driver_and_backend_is_named() -> None:
    driver = FakeDriver()
    store = make_store(driver)
    assert store.backend == "fake"
    await store.close()
    assert driver.closed


async def test_a_private_registry_serves_its_own_patterns() -> None:
    registry = Registry()
    ap = registry.register(
        AccessPattern(
            "X01",
            "things",
            Operation.QUERY,
            IndexName.TABLE,
            PROVENANCE_CHAIN.partition_key,
            SortCondition("begins_with", "EVENT#"),
            "Thing",
            max_page=3,
            default_page=2,
        )
    )
    store = make_store(FakeDriver(EVENTS), registry)
    page = await store.query(ap, {"product_id": "p1"}, tenant="t")
    assert len(page) == 2
    with pytest.raises(LimitExceeded):
        await store.query(ap, {"product_id": "p1"}, tenant="t", first=4)
    with pytest.raises(AccessPatternError):
        await store.query(PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t")
