"""msgspec reads every untagged row; the standard decoder it replaces is the oracle."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_sqlite_codec import same

from storage.sqlite import _codec
from storage.sqlite._codec import decode_item, encode_item

_reference = json.JSONDecoder(parse_float=Decimal, object_hook=_codec._untag).decode

_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    # Stored numbers have at most 38 significant digits, as in DynamoDB.
    st.decimals(min_value=-(10**30), max_value=10**30, places=3),
    st.text(),
    st.sampled_from(["a:1.5", "x,2e3", "[3.", "\x00b", "é", "\ud7ff", 'q":2.5', "T19:50:12.5Z"]),
    st.binary(max_size=8),
)
_values = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=400)
@given(st.dictionaries(st.text(), _values, max_size=6))
def test_decoding_agrees_with_the_standard_decoder(item: dict[str, Any]) -> None:
    text = encode_item(item)
    assert same(decode_item(text), _reference(text))


def test_untagged_rows_take_msgspec(monkeypatch: Any) -> None:
    """Positive control for the fast path: the test above compared msgspec's
    reading, not the standard decoder's, for every row without a tag."""
    calls: list[str] = []
    real = _codec._untagged
    monkeypatch.setattr(_codec, "_untagged", lambda text: calls.append(text) or real(text))
    plain = encode_item({"n": 1, "s": "a.b", "at": "2026-11-30T19:50:12.5Z"})
    decimal = encode_item({"d": Decimal("1.5"), "big": 2**70})
    decode_item(plain)
    decode_item(decimal)
    decode_item(encode_item({"b": b"x"}))
    assert calls == [plain, decimal]


def test_non_integral_numbers_are_decimals_of_the_stored_text() -> None:
    decoded = decode_item(encode_item({"d": Decimal("0.1"), "e": Decimal("-1.25E-30")}))
    assert same(decoded, {"d": Decimal("0.1"), "e": Decimal("-1.25E-30")})


def test_integers_beyond_64_bits_stay_integers() -> None:
    """A 64-bit decoder would read these as floats, silently."""
    decoded = decode_item(encode_item({"big": 2**70, "neg": -(2**65), "l": [10**19]}))
    assert same(decoded, {"big": 2**70, "neg": -(2**65), "l": [10**19]})
