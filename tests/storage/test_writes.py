from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    with pytest.raises(AttributeError):
        put.key = KEY  # type: ignore[misc]


def test_put_builds_its_key_once_from_its_item() -> None:
    put = Put({"PK": "P", "SK": "S", "n": 1})
    assert put.key is put.key
    assert put.key == Key("P", "S")
    assert "key" not in repr(put)
    assert replace(put, condition=ItemAbsent()).key == Key("P", "S")
    assert put == Put({"PK": "P", "SK": "S", "n": 1})


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


@pytest.mark.parametrize("key", [Key("", "S"), Key("P", ""), Key("P" * 2049, "S")])
def test_update_at_checks_the_key_as_update_does(key: Key) -> None:
    with pytest.raises(LimitExceeded):
        Update(KEY, set={"a": 1}).at(key)


def test_update_at_is_the_update_built_at_that_key() -> None:
    clauses: dict[str, Any] = {
        "set": {"status": "ACTIVE", "price": Decimal("1.50")},
        "set_if_absent": {"entity": "Day"},
        "add": {"scans": Decimal("1.0")},
        "remove": ("claim",),
        "condition": ItemExists(),
    }
    other = Key("PRODUCT#p2", "DAY#2030-01-02")
    moved = Update(KEY, **clauses).at(other)
    assert moved == Update(other, **clauses)
    assert (moved.key, moved.add, moved.set) == (other, {"scans": 1}, clauses["set"])
    with pytest.raises(AttributeError):
        moved.key = KEY  # type: ignore[misc]


def test_update_measures_the_values_it_writes_once() -> None:
    update = Update(
        KEY, set={"a": "é"}, set_if_absent={"e": "Day"}, add={"n": Decimal("1.50")}, remove=("r",)
    )
    assert update.size == item_size({"a": "é", "e": "Day", "n": Decimal("1.5")}) == 10
    assert update.at(Key("PRODUCT#p2", "META")).size == update.size
    assert "size" not in repr(update)


def test_delete_and_condition_check_keys() -> None:
    assert Delete(KEY, ItemExists()).key == KEY
    assert ConditionCheck(KEY, ItemExists()).key == KEY


# --- differential: the checks as first written -------------------------------

_NAMES = st.sampled_from(["a", "count", "PK", "SK", "GSI1PK", "GSI1SK", "GSI2SK", "1x", "a-b", ""])
_KEY_VALUES = st.one_of(
    st.text(max_size=3),
    st.integers(0, 2),
    # Lengths at the byte limits of 1-, 2- and 4-byte characters, either side.
    st.builds(
        lambda c, n: c * n,
        st.sampled_from(["a", "é", "😀"]),
        st.sampled_from([255, 256, 257, 511, 512, 513, 1024, 1025, 2048, 2049]),
    ),
)


def _reference_key_attributes(values: dict[str, Any]) -> None:
    for name in sorted(_INDEX_KEY_LIMITS.keys() & values.keys()):
        value = values[name]
        if not isinstance(value, str) or not value:
            raise LimitExceeded(f"Key attribute {name} must be a non-empty string")
        if len(value.encode("utf-8")) > _INDEX_KEY_LIMITS[name]:
            raise LimitExceeded(
                f"Key attribute {name} is longer than {_INDEX_KEY_LIMITS[name]} bytes"
            )


_INDEX_KEY_LIMITS = dict.fromkeys(("PK", "GSI1PK", "GSI2PK"), 2048) | dict.fromkeys(
    ("SK", "GSI1SK", "GSI2SK"), 1024
)


def _reference_update_checks(
    set_: dict[str, Any], set_if_absent: dict[str, Any], add: dict[str, Any]
) -> None:
    """``Update.__post_init__``'s name and key checks before their fast path."""
    names = [*set_, *set_if_absent, *add]
    if not names:
        raise AccessPatternError("Update changes nothing")
    if len(names) != len(set(names)):
        raise AccessPatternError("An attribute may appear in only one clause of an Update")
    for name in names:
        if not name.isidentifier():
            raise AccessPatternError(f"Update attribute {name!r} must be a plain identifier")
        if name in ("PK", "SK"):
            raise AccessPatternError(f"Update cannot change the key attribute {name}")
        if name in add and name in _INDEX_KEY_LIMITS:
            raise AccessPatternError(f"ADD cannot change the string key attribute {name}")
    _reference_key_attributes(set_)
    _reference_key_attributes(set_if_absent)


def _outcome(build: Any, *args: Any, **kwargs: Any) -> tuple[str, str]:
    try:
        build(*args, **kwargs)
    except (AccessPatternError, LimitExceeded) as error:
        return type(error).__name__, str(error)
    return "ok", ""


@given(
    st.dictionaries(_NAMES, _KEY_VALUES, max_size=3),
    st.dictionaries(_NAMES, _KEY_VALUES, max_size=2),
    st.dictionaries(_NAMES, st.integers(-5, 5), max_size=2),
)
def test_update_checks_agree_with_the_checks_as_first_written(
    set_: dict[str, Any], set_if_absent: dict[str, Any], add: dict[str, Any]
) -> None:
    """At most one bad key attribute per clause: the first version checked
    them in a set's order, so with two the error it named was arbitrary."""
    for clause in (set_, set_if_absent):
        bad = [n for n in clause if n in _INDEX_KEY_LIMITS]
        for name in bad[1:]:
            del clause[name]
    expected = _outcome(lambda: _reference_update_checks(set_, set_if_absent, add))
    actual = _outcome(lambda: Update(KEY, set=set_, set_if_absent=set_if_absent, add=add))
    assert actual == expected


@given(st.dictionaries(_NAMES, _KEY_VALUES, max_size=3))
def test_put_key_checks_agree_with_the_checks_as_first_written(extra: dict[str, Any]) -> None:
    extra.pop("PK", None)
    extra.pop("SK", None)
    bad = [n for n in extra if n in _INDEX_KEY_LIMITS]
    for name in bad[1:]:
        del extra[name]
    item = {"PK": "P#1", "SK": "S", **{k: v for k, v in extra.items() if k.isidentifier()}}
    assert _outcome(lambda: Put(item)) == _outcome(lambda: _reference_key_attributes(item))


def test_key_limit_checks_agree_with_the_checks_as_first_written_at_every_boundary() -> None:
    """Every index key attribute, with 1-, 2- and 4-byte characters, at and
    either side of each length where the byte count crosses a limit."""
    lengths = [n + d for n in (256, 512, 1024, 2048) for d in (-1, 0, 1)]
    for name in _INDEX_KEY_LIMITS:
        for char in ("a", "é", "😀"):
            for length in lengths:
                item = {"PK": "P#1", "SK": "S", name: char * length}
                expected = _outcome(_reference_key_attributes, item)
                assert _outcome(Put, item) == expected, (name, char, length)
                if name not in ("PK", "SK"):
                    assert _outcome(Update, KEY, set={name: char * length}) == expected
