"""orjson writes items whenever its text is ``_encode``'s; ``_encode`` (the
writer orjson replaced, still the fallback) is the oracle."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import LimitExceeded
from storage.sqlite import _codec
from storage.sqlite._codec import encode_item
from storage.values import normalize_item

_texts = st.text() | st.sampled_from(
    ["\x00", "\x00b", "\x00\x00", "\\u0000", '"', "\\", "\x1f\x7f", "\u2028\u2029", "é😀", ""]
)
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.decimals(
        allow_nan=False, allow_infinity=False, places=6, min_value=-(10**20), max_value=10**20
    ),
    st.decimals(allow_nan=False, allow_infinity=False).filter(
        lambda d: d.is_zero() or -130 <= d.adjusted() <= 125
    ),
    _texts,
    st.binary(max_size=8),
)
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(_texts.filter(bool), inner, max_size=4)
    ),
    max_leaves=16,
)


def _normalized(item: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return normalize_item(item)
    except LimitExceeded:
        return None


@settings(max_examples=500)
@given(st.dictionaries(_texts.filter(bool), _values, max_size=6))
def test_orjson_writes_what_encode_writes(item: dict[str, Any]) -> None:
    normalized = _normalized(item)
    if normalized is None:
        return
    assert encode_item(normalized) == _codec._encode(normalized)


def test_plain_items_take_orjson(monkeypatch: pytest.MonkeyPatch) -> None:
    """Positive control: the test above compared orjson's text for items
    without bytes, NUL escapes or big integers, not ``_encode``'s twice."""
    calls: list[Any] = []
    real = _codec._encode
    monkeypatch.setattr(_codec, "_encode", lambda value: calls.append(value) or real(value))
    plain = {
        "PK": "A",
        "n": 1,
        "d": Decimal("1.50"),
        "l": [True, None, ("x", -2)],
        "m": {"é": "\\"},
    }
    assert (
        encode_item(plain) == '{"PK":"A","n":1,"d":1.5,"l":[true,null,["x",-2]],"m":{"é":"\\\\"}}'
    )
    assert calls == []
    fallbacks = ({"b": b"x"}, {"big": 2**64}, {"\x00k": 1}, {"s": "\x00"})
    for fallback in fallbacks:
        encode_item(fallback)
    assert all(any(call is fallback for call in calls) for fallback in fallbacks)


def test_numbers_orjson_cannot_write_are_written_as_before() -> None:
    with pytest.raises(LimitExceeded):
        encode_item({"d": Decimal("NaN")})
    assert encode_item({"big": 10**40}) == '{"big":1' + "0" * 40 + "}"
