"""orjson writes the responses; the standard library's json is the oracle."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from api.wire.json_response import encode_json

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_json_values)
def test_bodies_parse_as_the_standard_library_writes_them(value: Any) -> None:
    body = {"data": value}
    assert json.loads(encode_json(body)) == json.loads(json.dumps(body))


def test_what_orjson_refuses_is_written_by_the_standard_library() -> None:
    for body in ({"data": {"big": 2**70}}, {"data": {1: "non-str key"}}):
        assert encode_json(body) == json.dumps(body, separators=(",", ":"))


def test_key_order_and_text_are_kept() -> None:
    body = {"data": {"z": 1, "a": "é\u2028\U0001f600", "m": None}}
    text = encode_json(body)
    assert isinstance(text, str)
    assert list(json.loads(text)["data"]) == ["z", "a", "m"]
    assert json.loads(text) == body
