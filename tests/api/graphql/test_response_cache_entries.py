"""The response cache's entries on their own: the storage cache's rule for
pages applied per answer, the TTL and item expiry, the byte cap and the
freshness gate (docs/design.md, Response cache)."""

from __future__ import annotations

from api.graphql.response_cache import ResponseCache, ResponseKey
from storage.cache import Entered, PageKey, ReadLog
from storage.keys import Key
from storage.registry import SortOperator, SortRange
from storage.table import IndexName

PRODUCTS = SortRange(SortOperator.BEGINS_WITH, "PRODUCT#")
ITEM = Key("BRAND#a", "META")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _key(name: str) -> ResponseKey:
    return ResponseKey("doc", name, b"{}", "ANONYMOUS||")


def _log(*, page: bool = False, item: bool = False, expiry: float = float("inf")) -> ReadLog:
    log = ReadLog(expiry=expiry)
    if item:
        log.keys.add(ITEM)
    if page:
        log.pages.add(PageKey("AP07", "t", IndexName.GSI1, "BRAND#a", PRODUCTS, 50, None))
    return log


def _kept(cache: ResponseCache, name: str, log: ReadLog) -> None:
    assert cache.put(_key(name), b'{"x":1}', 1, log, cache.begin()) is not None
    cache.end()


def test_a_page_is_dropped_by_an_image_entering_its_range_alone() -> None:
    cache = ResponseCache(1 << 20, 60)
    _kept(cache, "page", _log(page=True))
    _kept(cache, "item", _log(item=True))
    outside = Entered(IndexName.GSI1, "BRAND#a", "SCAN#1")
    other = Entered(IndexName.GSI1, "BRAND#b", "PRODUCT#1")
    cache.invalidated([Key("X", "Y")], [outside, other], [])
    assert len(cache) == 2
    cache.invalidated([Key("X", "Y")], [Entered(IndexName.GSI1, "BRAND#a", "PRODUCT#9")], [])
    assert cache.held() == {_key("item")}
    cache.invalidated([ITEM], [], [])
    assert len(cache) == 0 and cache.stats.dropped == 2 and cache.bytes == 0


def test_a_move_anywhere_in_an_index_drops_pages_whose_range_holds_it() -> None:
    cache = ResponseCache(1 << 20, 60)
    _kept(cache, "page", _log(page=True))
    cache.invalidated([], [], [(IndexName.GSI1, "THREAT#1")])
    cache.invalidated([], [], [(IndexName.GSI2, "PRODUCT#1")])
    assert len(cache) == 1
    cache.invalidated([], [], [(IndexName.GSI1, "PRODUCT#1")])
    assert len(cache) == 0


def test_the_ttl_and_an_items_expiry_bound_an_answer() -> None:
    clock = Clock()
    cache = ResponseCache(1 << 20, 60, clock=clock)
    _kept(cache, "ttl", _log(item=True))
    _kept(cache, "expiring", _log(item=True, expiry=clock.now + 5))
    clock.now += 6
    assert cache.get(_key("expiring")) is None and cache.get(_key("ttl")) is not None
    clock.now += 60
    assert cache.get(_key("ttl")) is None
    assert cache.stats.evictions[("expiring", "expired")] == 1
    assert cache.stats.evictions[("ttl", "expired")] == 1


def test_nothing_is_served_or_kept_while_untrusted_or_inexact() -> None:
    trusted = [True]
    cache = ResponseCache(1 << 20, 60, trusted=lambda: trusted[0])
    _kept(cache, "a", _log(item=True))
    trusted[0] = False
    assert cache.get(_key("a")) is None
    assert cache.put(_key("b"), b"1", None, _log(item=True), cache.begin()) is None
    cache.end()
    trusted[0] = True
    inexact = _log(item=True)
    inexact.refuse("AP20 read through")
    assert cache.put(_key("c"), b"1", None, inexact, cache.begin()) is None
    cache.end()
    assert cache.get(_key("a")) is not None
    assert cache.stats.skipped == {"untrusted": 1, "read through": 1}


def test_the_byte_cap_evicts_the_least_recently_used() -> None:
    cache = ResponseCache(4000, 60)
    for name in ("a", "b", "c"):
        _kept(cache, name, _log(item=True))
    cache.get(_key("a"))
    _kept(cache, "d", _log(item=True))
    assert cache.bytes <= 4000
    assert _key("a") in cache.held() and _key("b") not in cache.held()
