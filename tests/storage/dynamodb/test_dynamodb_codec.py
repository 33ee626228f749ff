"""The wire codec keeps the value model: int when integral, normalised Decimal
otherwise, bytes for binary."""

from __future__ import annotations

from decimal import Context, Decimal
from typing import Any

import orjson
import pytest

from domain.errors import LimitExceeded
from storage.dynamodb._codec import (
    decode,
    decode_item,
    decode_key,
    serialize,
    serialize_item,
    serialize_key,
)
from storage.dynamodb._wire import encode_body
from storage.keys import Key
from storage.values import normalize_item


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("-17", -17),
        ("100", 100),
        ("1E+2", 100),
        ("100.000", 100),
        ("-0.0", 0),
        ("1.50", Decimal("1.5")),
        ("-0.010", Decimal("-0.01")),
        (
            "12345678901234567890.123456789012345678",
            Decimal("12345678901234567890.123456789012345678"),
        ),
        ("99999999999999999999999999999999999999", 10**38 - 1),
    ],
)
def test_numbers(text: str, expected: int | Decimal) -> None:
    number = decode({"N": text})
    assert number == expected
    assert type(number) is type(expected)
    if isinstance(expected, Decimal):
        assert number.as_tuple() == expected.normalize(Context(prec=38)).as_tuple()


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ({"S": ""}, ""),
        ({"B": "AAE="}, b"\x00\x01"),
        ({"BOOL": True}, True),
        ({"NULL": True}, None),
        ({"L": [{"N": "1"}, {"S": "a"}]}, [1, "a"]),
        ({"M": {"a": {"M": {"b": {"N": "2.50"}}}}}, {"a": {"b": Decimal("2.5")}}),
        ({"SS": ["b", "a"]}, ["a", "b"]),
        ({"NS": ["10", "1.5"]}, [Decimal("1.5"), 10]),
        ({"BS": ["Yg==", "YQ=="]}, [b"a", b"b"]),
    ],
)
def test_other_types(wire: dict[str, Any], expected: Any) -> None:
    assert decode(wire) == expected


def test_value_model_round_trips() -> None:
    item = normalize_item(
        {
            "PK": "A",
            "SK": "B",
            "n": Decimal("0.10"),
            "i": -3,
            "bytes": b"\xff",
            "flag": False,
            "none": None,
            "nested": {"list": [Decimal("1.0"), {"x": b""}], "empty": {}},
        }
    )
    wire = serialize_item(item)
    assert wire["n"] == {"N": "0.1"}
    assert wire["bytes"] == {"B": b"\xff"}
    assert decode_item(orjson.loads(encode_body(wire))) == item


def test_keys() -> None:
    key = Key("BRAND#1", "PROFILE")
    assert serialize_key(key) == {"PK": {"S": "BRAND#1"}, "SK": {"S": "PROFILE"}}
    assert decode_key(serialize_key(key)) == key


@pytest.mark.parametrize("value", [1.5, Decimal("NaN"), Decimal("Infinity"), {1, 2}, object()])
def test_values_outside_the_model_are_refused(value: Any) -> None:
    with pytest.raises(LimitExceeded):
        serialize(value)
