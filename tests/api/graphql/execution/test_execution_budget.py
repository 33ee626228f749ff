"""What the response budget counts: a leaf as orjson writes it, exactly."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.graphql.execution.budget import ResponseBytes, ends_operation, key_bytes, leaf_bytes
from domain.errors import QueryTooComplex, ReadBudgetExceeded, ResponseTooLarge


@given(st.text())
def test_a_string_counts_its_json_bytes(text: str) -> None:
    assert leaf_bytes(text) == len(orjson.dumps(text))


@pytest.mark.parametrize(
    "value", ["", "plain", 'a "quote"', "back\\slash", "\u0001" * 5, "é", "\U0001f600", "\x7f"]
)
def test_escapes_count_as_written(value: str) -> None:
    assert leaf_bytes(value) == len(orjson.dumps(value))


@pytest.mark.parametrize("value", [0, -12, 2**31, 1.5, True, None, {"a": [1, "x"]}, [1, 2]])
def test_other_leaves_count_their_encoding(value: Any) -> None:
    assert leaf_bytes(value) == len(orjson.dumps(value))


def test_a_key_counts_its_quotes_colon_and_comma() -> None:
    assert key_bytes("name") == len('"name":,')
    assert key_bytes("é") == len('"é":,'.encode())


def test_the_budget_stops_past_its_limit() -> None:
    budget = ResponseBytes(10)
    budget.charge(10)
    with pytest.raises(ResponseTooLarge) as over:
        budget.charge(1)
    assert over.value.code.value == "QUERY_TOO_COMPLEX"
    assert over.value.extensions["maxResponseBytes"] == 10


def test_only_an_operation_budget_ends_the_operation() -> None:
    assert ends_operation(ResponseTooLarge("x"))
    assert ends_operation(ReadBudgetExceeded("x"))
    wrapped = Exception("outer")
    wrapped.original_error = ReadBudgetExceeded("x")  # type: ignore[attr-defined]
    assert ends_operation(wrapped)
    assert not ends_operation(QueryTooComplex("x"))
    assert not ends_operation(ValueError("x"))
