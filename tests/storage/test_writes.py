from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from domain.errors import AccessPatternError, LimitExceeded
from storage.conditions import ItemAbsent, ItemExists
from storage.keys import Key
from storage.values import item_size
from storage.writes import ConditionCheck, Delete, Put, Update

KEY = Key("PRODUCT#p1", "META")


# --- Put -------------------------------------------------------------------------


def test_put_normalises_its_item_and_exposes_the_key() -> None:
    put = Put({"PK": "PRODUCT#p1", "SK": "META", "n": Decimal("3.0"), "l": ("a",)}, ItemAbsent())
    assert put.item == {"PK": "PRODUCT#p1", "SK": "META", "n": 3, "l": ["a"]}
    assert put.key == KEY
    assert put.key == KEY
    assert put.condition == ItemAbsent()


@pytest.mark.parametrize(
    "item",
    [
        {"SK": "META"},
        {"PK": "P"},
        {"PK": 1, "SK": "META"},
        {"PK": "P", "SK": b"META"},
        {"PK": "P", "SK": None},
    ],
)
def test_put_requires_string_pk_and_sk(item: dict[str, Any]) -> None:
    with pytest.raises(AccessPatternError):
        Put(item)


@pytest.mark.parametrize(
    "item",
    [
        {"PK": "", "SK": "META"},
        {"PK": "P", "SK": ""},
        {"PK": "P", "SK": "S", "GSI1PK": ""},
        {"PK": "P", "SK": "S", "GSI1SK": 5},
        {"PK": "P", "SK": "S", "GSI2PK": None},
        {"PK": "P", "SK": "S", "GSI2SK": "x" * 1025},
        {"PK": "P", "SK": "S", "GSI1PK": "x" * 2049},
        {"PK": "P" * 2049, "SK": "S"},
        {"PK": "P", "SK": "S" * 1025},
    ],
)
def test_put_refuses_empty_mistyped_or_oversized_key_attributes(item: dict[str, Any]) -> None:
    with pytest.raises(LimitExceeded):
        Put(item)


def test_put_accepts_index_keys_at_their_limits() -> None:
    Put({"PK": "P", "SK": "S", "GSI1PK": "x" * 2048, "GSI1SK": "y" * 1024})


@pytest.mark.parametrize("value", [1.5, [0.5], {"k": 2.0}])
def test_put_refuses_floats(value: Any) -> None:
    with pytest.raises(LimitExceeded):
        Put({"PK": "P", "SK": "S", "x": value})


def test_put_refuses_an_oversized_item() -> None:
    with pytest.raises(LimitExceeded):
        Put({"PK": "P", "SK": "S", "x": "y" * 400 * 1024})


def test_put_measures_its_normalized_item_once() -> None:
    put = Put({"PK": "P", "SK": "S", "n": Decimal("12.50"), "m": {"é": [True, None]}})
    assert put.size == item_size(put.item)
    assert put == Put({"PK": "P", "SK": "S", "n": Decimal("12.5"), "m": {"é": [True, None]}})
    assert "size" not in repr(put)


def test_put_is_frozen() -> None:
    put = Put({"PK": "P", "SK": "S"})
    with pytest.raises(AttributeError):
        put.item = {}  # type: ignore[misc]


# --- Update ------------------------------------------------------------------------


def test_update_normalises_its_clauses() -> None:
    update = Update(
        KEY,
        set={"status": "ACTIVE", "price": Decimal("1.50")},
        set_if_absent={"createdAt": "2024"},
        add={"scanCount": Decimal("1.0")},
        remove=["claim"],  # type: ignore[arg-type]
        condition=ItemExists(),
    )
    assert update.set == {"status": "ACTIVE", "price": Decimal("1.5")}
    assert update.add == {"scanCount": 1}
    assert update.remove == ("claim",)
    assert update.key == KEY


def test_update_allows_index_keys_to_change() -> None:
    update = Update(KEY, set={"GSI1PK": "BRAND#b1"}, remove=("GSI2PK", "GSI2SK"))
    assert update.set == {"GSI1PK": "BRAND#b1"}


def test_update_that_changes_nothing_is_refused() -> None:
    with pytest.raises(AccessPatternError, match="nothing"):
        Update(KEY)


@pytest.mark.parametrize(
    "clauses",
    [
        {"set": {"a": 1}, "add": {"a": 1}},
        {"set": {"a": 1}, "remove": ("a",)},
        {"set_if_absent": {"a": 1}, "set": {"a": 2}},
        {"add": {"a": 1}, "remove": ("a",)},
        {"remove": ("a", "a")},
    ],
)
def test_an_attribute_in_two_clauses_is_refused(clauses: dict[str, Any]) -> None:
    with pytest.raises(AccessPatternError, match="one clause"):
        Update(KEY, **clauses)


@pytest.mark.parametrize(
    "clauses",
    [{"set": {"PK": "X"}}, {"set_if_absent": {"SK": "X"}}, {"add": {"PK": 1}}, {"remove": ("SK",)}],
)
def test_changing_the_primary_key_is_refused(clauses: dict[str, Any]) -> None:
    with pytest.raises(AccessPatternError, match="key attribute"):
        Update(KEY, **clauses)


def test_index_keys_stay_non_empty_strings() -> None:
    with pytest.raises(LimitExceeded):
        Update(KEY, set={"GSI1PK": ""})
    with pytest.raises(LimitExceeded):
        Update(KEY, set_if_absent={"GSI2SK": 5})
    with pytest.raises(LimitExceeded):
        Update(KEY, set={"GSI1SK": "x" * 1025})
    with pytest.raises(AccessPatternError):
        Update(KEY, add={"GSI1SK": 1})


@pytest.mark.parametrize("name", ["a.b", "a[0]", "#a", "", "a-b", "a b"])
@pytest.mark.parametrize("clause", ["set", "set_if_absent", "add", "remove"])
def test_non_identifier_names_are_refused(clause: str, name: str) -> None:
    value: Any = (name,) if clause == "remove" else {name: 1}
    with pytest.raises(AccessPatternError, match="identifier"):
        Update(KEY, **{clause: value})


def test_remove_given_one_string_is_refused() -> None:
    with pytest.raises(AccessPatternError, match="tuple"):
        Update(KEY, remove="status")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [1.0, True, "1", Decimal("NaN")])
def test_add_takes_numbers_only(value: Any) -> None:
    with pytest.raises(LimitExceeded):
        Update(KEY, add={"n": value})


def test_set_refuses_floats() -> None:
    with pytest.raises(LimitExceeded):
        Update(KEY, set={"n": 0.1})


@pytest.mark.parametrize("key", [Key("", "S"), Key("P", ""), Key("P" * 2049, "S")])
def test_every_action_checks_its_key(key: Key) -> None:
    with pytest.raises(LimitExceeded):
        Update(key, set={"a": 1})
    with pytest.raises(LimitExceeded):
        Delete(key)
    with pytest.raises(LimitExceeded):
        ConditionCheck(key, ItemExists())


def test_delete_and_condition_check_keys() -> None:
    assert Delete(KEY, ItemExists()).key == KEY
    assert ConditionCheck(KEY, ItemExists()).key == KEY
