from __future__ import annotations

import json
import random
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.canonical import (
    MAX_NESTING,
    SAFE_INTEGER_MAX,
    canonical_json,
    decimal_text,
    json_depth,
    normalize_json,
    normalize_object,
    sha256_hex,
)
from domain.errors import BadUserInput

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-SAFE_INTEGER_MAX, SAFE_INTEGER_MAX)
    | st.text(st.characters(exclude_categories=["Cs"])),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(st.characters(exclude_categories=["Cs"])), children, max_size=4)
    ),
    max_leaves=20,
)


def test_keys_are_sorted_at_every_level_without_whitespace() -> None:
    value = {"b": 1, "a": {"d": [1, {"z": None, "y": True}], "c": "x"}}
    assert canonical_json(value) == b'{"a":{"c":"x","d":[1,{"y":true,"z":null}]},"b":1}'


def test_keys_sort_by_code_point() -> None:
    value = {"é": 1, "z": 2, "Z": 3, "a": 4, "\U0001f600": 5, "\uff01": 6}
    assert canonical_json(value).decode() == '{"Z":3,"a":4,"z":2,"é":1,"\uff01":6,"😀":5}'


def test_non_ascii_is_written_as_utf8() -> None:
    assert canonical_json({"n": "café ✓"}) == '{"n":"café ✓"}'.encode()


def test_only_quote_backslash_and_c0_controls_are_escaped() -> None:
    text = '"\\\b\f\n\r\t\x01\x1f\x7f\u2028/'
    assert canonical_json(text) == b'"\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\xe2\x80\xa8/"'


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2.0, b"2"),
        (-0.0, b"0"),
        (Decimal("2.00"), b"2"),
        (Decimal("-1E+3"), b"-1000"),
        (True, b"true"),
    ],
)
def test_integral_numbers_are_integers(value: object, expected: bytes) -> None:
    assert canonical_json(value) == expected


@pytest.mark.parametrize(
    "value",
    [1.5, Decimal("0.1"), float("nan"), float("inf"), Decimal("NaN"), Decimal("Infinity")],
)
def test_fractional_and_non_finite_numbers_are_refused(value: object) -> None:
    with pytest.raises(BadUserInput) as info:
        canonical_json({"a": [0, value]}, field="metadata")
    assert "metadata.a[1]" in info.value.message
    assert info.value.hint is not None


@pytest.mark.parametrize("bound", [SAFE_INTEGER_MAX, -SAFE_INTEGER_MAX])
def test_safe_integer_range_is_inclusive(bound: int) -> None:
    assert canonical_json(bound) == str(bound).encode()
    with pytest.raises(BadUserInput):
        canonical_json(bound + (1 if bound > 0 else -1))
    with pytest.raises(BadUserInput):
        canonical_json(float(2**53))


@pytest.mark.parametrize("value", ["\ud800", {"\udfff": 1}])
def test_lone_surrogates_are_refused(value: object) -> None:
    with pytest.raises(BadUserInput, match="Unicode"):
        canonical_json(value)


@pytest.mark.parametrize("value", [{1: "a"}, {None: 1}])
def test_non_string_keys_are_refused(value: object) -> None:
    with pytest.raises(BadUserInput, match="keys must be strings"):
        canonical_json(value)


@pytest.mark.parametrize("value", [{1, 2}, b"x", object(), Decimal])
def test_non_json_types_are_refused(value: object) -> None:
    with pytest.raises(BadUserInput, match="not a JSON value"):
        canonical_json(value)


def test_tuples_are_arrays() -> None:
    assert canonical_json((1, ("a",))) == b'[1,["a"]]'


def _nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


def test_nesting_cap() -> None:
    assert json_depth(normalize_json(_nested(MAX_NESTING))) == MAX_NESTING
    with pytest.raises(BadUserInput, match="nested"):
        normalize_json(_nested(MAX_NESTING + 1))


def test_deep_nesting_is_bad_input_not_recursion_error() -> None:
    with pytest.raises(BadUserInput):
        normalize_json(_nested(5000))


@pytest.mark.parametrize(
    ("value", "depth"), [(1, 0), ({}, 1), ([], 1), ({"a": [1]}, 2), ({"a": {"b": []}, "c": 1}, 3)]
)
def test_json_depth(value: object, depth: int) -> None:
    assert json_depth(normalize_json(value)) == depth


def test_normalize_object_requires_an_object() -> None:
    assert normalize_object({"a": 1.0}) == {"a": 1}
    with pytest.raises(BadUserInput, match="expected a JSON object"):
        normalize_object([1], field="metadata")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Decimal("48.85660"), "48.8566"),
        (Decimal("1E+2"), "100"),
        (Decimal("-0.0"), "0"),
        (Decimal("-0.0000001"), "-0.0000001"),
        (Decimal("1E-9"), "0.000000001"),
        (5, "5"),
        (-180, "-180"),
    ],
)
def test_decimal_text(value: Decimal | int, text: str) -> None:
    assert decimal_text(value) == text


def test_decimal_text_refuses_non_finite() -> None:
    with pytest.raises(BadUserInput):
        decimal_text(Decimal("NaN"))


def test_sha256_hex() -> None:
    assert sha256_hex(b"abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


@given(json_values)
def test_round_trip_through_any_json_parser(value: object) -> None:
    encoded = canonical_json(value)
    assert json.loads(encoded) == value
    assert canonical_json(json.loads(encoded)) == encoded


@given(st.dictionaries(st.text(max_size=3), st.integers(0, 9), max_size=8), st.randoms())
def test_insertion_order_does_not_matter(value: dict[str, int], rng: random.Random) -> None:
    items = list(value.items())
    rng.shuffle(items)
    assert canonical_json(dict(items)) == canonical_json(value)
