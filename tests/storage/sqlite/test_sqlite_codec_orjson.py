"""orjson reads most rows; the standard decoder it replaces is the oracle."""

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


def test_rows_with_only_integers_take_orjson(monkeypatch: Any) -> None:
    """Positive control for the fast path: with orjson disabled, decoding
    such a row would fail, so the test above really compared orjson."""
    calls: list[str] = []
    real = _codec.orjson.loads
    monkeypatch.setattr(_codec.orjson, "loads", lambda text: calls.append(text) or real(text))
    plain = encode_item(
        {
            "n": 1,
            "s": "a.b",
            "l": [1, -2],
            "eighteen_digits": 10**17,
            "at": "2026-11-30T19:50:12.5Z",
        }
    )
    decode_item(plain)
    decode_item(encode_item({"d": Decimal("1.5")}))
    decode_item(encode_item({"big": 2**70}))
    assert calls == [plain]


def test_integers_beyond_64_bits_stay_integers() -> None:
    """orjson would read these as floats, silently."""
    decoded = decode_item(encode_item({"big": 2**70, "neg": -(2**65), "l": [10**19]}))
    assert same(decoded, {"big": 2**70, "neg": -(2**65), "l": [10**19]})
