"""The invalidation event: what each write kind names, and its plain form for
another process (docs/design.md, Storage cache)."""

from __future__ import annotations

import json

import pytest

from storage import ConditionCheck, Delete, ItemExists, Key, Put, Update
from storage.access_patterns import REGISTRY
from storage.cache import RULES, Entered, Invalidation, Moved, invalidation_of
from storage.cache.scope import Scope
from storage.table import IndexName

KEY = Key("PRODUCT#p", "META")


def test_a_put_names_its_key_and_every_partition_its_image_enters() -> None:
    put = Put({"PK": KEY.pk, "SK": KEY.sk, "GSI1PK": "BRAND#b", "GSI1SK": "PRODUCT#1"})
    event = invalidation_of([put])
    assert event.keys == {KEY}
    assert event.entered == {
        Entered(IndexName.TABLE, KEY.pk, KEY.sk),
        Entered(IndexName.GSI1, "BRAND#b", "PRODUCT#1"),
    }
    assert event.moved == frozenset()


def test_an_update_names_the_indexes_it_sets_and_moves_within_others() -> None:
    counters = invalidation_of([Update(KEY, add={"scanCount": 1})])
    assert counters.entered == {Entered(IndexName.TABLE, KEY.pk, KEY.sk)}
    moved = invalidation_of([Update(KEY, set={"GSI1SK": "PRODUCT#2", "GSI2PK": "X"})])
    assert Entered(IndexName.GSI2, "X", None) in moved.entered
    assert moved.moved == {Moved(KEY, IndexName.GSI1, "PRODUCT#2")}


def test_a_delete_names_its_key_and_a_condition_check_nothing() -> None:
    event = invalidation_of([Delete(KEY), ConditionCheck(Key("A", "B"), ItemExists())])
    assert event.keys == {KEY} and event.entered == frozenset()
    assert not invalidation_of([ConditionCheck(KEY, ItemExists())])


def test_the_plain_form_travels_as_json_and_back() -> None:
    event = invalidation_of(
        [
            Put({"PK": KEY.pk, "SK": KEY.sk, "GSI1PK": "BRAND#b"}),
            Update(Key("A", "B"), set={"GSI2SK": "S"}),
        ]
    )
    assert Invalidation.from_plain(json.loads(json.dumps(event.to_plain()))) == event


@pytest.mark.parametrize(
    "plain",
    [
        {},
        {"keys": [[1, "x"]], "entered": [], "moved": []},
        {"keys": [], "entered": [["GSI9", "p", None]], "moved": []},
    ],
)
def test_anything_else_is_refused(plain: object) -> None:
    with pytest.raises(ValueError):
        Invalidation.from_plain(plain)


def test_images_where_no_served_page_can_be_are_left_out_but_keys_stay() -> None:
    """The scope of the registry's served queries (docs/design.md, Storage
    cache): an outbox item's table partition and a lease's move through GSI2
    drop no page anywhere; a product's partition and GSI1 still count."""
    scope = Scope.of(REGISTRY, lambda pattern: RULES[pattern.id].served)
    outbox = Key("OUTBOX#scan:1", "OUTBOX")
    lease = Update(outbox, set={"GSI2SK": "DUE#2026"}, add={"attempts": 1})
    event = invalidation_of(
        [Put({"PK": outbox.pk, "SK": outbox.sk, "GSI2PK": "OUTBOX"}), lease], scope
    )
    assert event.keys == {outbox}
    assert event.entered == frozenset() and event.moved == frozenset()
    assert invalidation_of([lease]).moved  # without a scope: everything
    product = Put({"PK": KEY.pk, "SK": KEY.sk, "GSI1PK": "BRAND#b", "GSI1SK": "PRODUCT#1"})
    assert invalidation_of([product], scope) == invalidation_of([product])
