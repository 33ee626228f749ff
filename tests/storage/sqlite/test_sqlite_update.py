from __future__ import annotations

from decimal import Decimal

import pytest

from domain.errors import LimitExceeded
from storage import Key, Update
from storage.sqlite._update import apply_update

KEY = Key("BRAND#b", "STATS")


def test_update_of_a_missing_item_creates_it_with_its_key() -> None:
    assert apply_update(None, Update(KEY, set={"a": 1})) == {"PK": "BRAND#b", "SK": "STATS", "a": 1}


def test_add_starts_a_missing_attribute_at_zero() -> None:
    assert apply_update({"PK": "BRAND#b", "SK": "STATS"}, Update(KEY, add={"n": 3}))["n"] == 3


def test_add_is_exact_beyond_the_default_decimal_context() -> None:
    current = {
        "PK": "BRAND#b",
        "SK": "STATS",
        "n": Decimal("1234567890123456789012345678901234567.8"),
    }
    updated = apply_update(current, Update(KEY, add={"n": Decimal("0.1")}))
    assert updated["n"] == Decimal("1234567890123456789012345678901234567.9")


def test_add_results_are_normalised_numbers() -> None:
    updated = apply_update(
        {"PK": "p", "SK": "s", "n": Decimal("0.5")}, Update(KEY, add={"n": Decimal("0.5")})
    )
    assert type(updated["n"]) is int and updated["n"] == 1


def test_add_refuses_a_sum_dynamodb_could_not_store() -> None:
    with pytest.raises(LimitExceeded):
        apply_update({"PK": "p", "SK": "s", "n": 10**37}, Update(KEY, add={"n": Decimal("0.1")}))


@pytest.mark.parametrize("current", ["1", True, [1], None])
def test_add_to_a_non_number_is_refused(current: object) -> None:
    with pytest.raises(LimitExceeded):
        apply_update({"PK": "p", "SK": "s", "n": current}, Update(KEY, add={"n": 1}))


def test_set_if_absent_keeps_an_existing_value_and_fills_a_missing_one() -> None:
    updated = apply_update(
        {"PK": "p", "SK": "s", "a": "old"}, Update(KEY, set_if_absent={"a": "new", "b": "new"})
    )
    assert (updated["a"], updated["b"]) == ("old", "new")


def test_remove_drops_attributes_and_ignores_missing_ones() -> None:
    updated = apply_update({"PK": "p", "SK": "s", "a": 1}, Update(KEY, remove=("a", "missing")))
    assert updated == {"PK": "p", "SK": "s"}


def test_the_current_image_is_not_mutated() -> None:
    current = {"PK": "p", "SK": "s", "a": 1}
    apply_update(current, Update(KEY, set={"a": 2}, add={"n": 1}))
    assert current == {"PK": "p", "SK": "s", "a": 1}
