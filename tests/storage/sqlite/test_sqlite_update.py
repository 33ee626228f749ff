from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import LimitExceeded
from storage import Item, Key, Update
from storage.sqlite._update import apply_sized_update, apply_update
from storage.values import item_size, normalize_item

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


# ``apply_sized_update`` measures the new image from the old image's size,
# attribute by attribute; ``item_size`` of the whole new image is its oracle.
_NAMES = ["a", "b", "n", "hour_07", "c_DE", "é", "ß_long_name"]
_NUMBERS = st.one_of(
    st.integers(-(10**38) + 1, 10**38 - 1),
    st.integers(0, 2000),
    st.decimals(
        allow_nan=False, allow_infinity=False, places=3, min_value=-(10**9), max_value=10**9
    ),
)
_LEAVES = st.one_of(_NUMBERS, st.text(max_size=8), st.none(), st.booleans(), st.binary(max_size=6))
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_NAMES), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def _case(draw: st.DrawFn) -> tuple[Item | None, Update]:
    current = draw(st.none() | st.dictionaries(st.sampled_from(_NAMES), _VALUES, max_size=6))
    if current is not None:
        current = normalize_item({"PK": KEY.pk, "SK": KEY.sk, **current})
    names = draw(st.lists(st.sampled_from(_NAMES), unique=True, min_size=1))
    clauses = draw(st.lists(st.integers(0, 3), min_size=len(names), max_size=len(names)))
    chosen = dict(zip(names, clauses, strict=True))
    update = Update(
        KEY,
        set={n: draw(_VALUES) for n, c in chosen.items() if c == 0},
        set_if_absent={n: draw(_VALUES) for n, c in chosen.items() if c == 1},
        add={n: draw(_NUMBERS) for n, c in chosen.items() if c == 2},
        remove=tuple(n for n, c in chosen.items() if c == 3),
    )
    return current, update


@settings(max_examples=400)
@given(_case())
def test_a_sized_update_measures_what_item_size_measures(case: tuple[Item | None, Update]) -> None:
    current, update = case
    size = 0 if current is None else item_size(current)
    try:
        item, new_size = apply_sized_update(current, size, update)
    except LimitExceeded:
        return  # ADD to a non-number, or a sum out of range: refused either way
    assert new_size == item_size(item)
    assert item == apply_update(current, update)


def test_day_counters_grow_by_the_attributes_they_add() -> None:
    current = {"PK": "p", "SK": "s", "scans": 9, "h_07": 1023}
    item, size = apply_sized_update(
        current, item_size(current), Update(KEY, add={"scans": 1, "h_07": 1, "c_DE": 1})
    )
    assert item == {"PK": "p", "SK": "s", "scans": 10, "h_07": 1024, "c_DE": 1}
    assert size == item_size(item) == item_size(current) + len("c_DE") + 2
