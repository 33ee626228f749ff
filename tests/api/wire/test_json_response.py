"""orjson writes the responses; the standard library's json is the oracle."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.graphql.execution.encoded import EncodedList
from api.wire.json_response import encode_json, encode_json_bytes
from storage.cache.frozen import FrozenItem, FrozenList

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


_subclassed = st.recursive(
    _json_values,
    lambda inner: (
        st.lists(inner, max_size=4).map(EncodedList)
        | st.dictionaries(st.text(), inner, max_size=4).map(FrozenItem)
        | st.lists(inner, max_size=4).map(FrozenList)
    ),
    max_leaves=20,
)


@given(_subclassed)
def test_encoded_lists_and_builtin_subclasses_are_written_as_their_builtins(value: Any) -> None:
    """An ``EncodedList`` is written from the bytes it encoded once; a frozen
    item, a frozen list, a str or int enum as the builtin would be."""
    body = {"data": [value, value]}
    plain = json.loads(json.dumps(body))
    assert json.loads(encode_json_bytes(body)) == plain
    assert json.loads(encode_json(body)) == plain  # the second copy from the bytes kept


def test_an_encoded_list_is_read_only_and_written_from_its_bytes() -> None:
    class Color(enum.StrEnum):
        RED = "red"

    class Size(enum.IntEnum):
        BIG = 3

    edges = EncodedList([{"name": "a", "color": Color.RED, "size": Size.BIG}])
    assert encode_json_bytes({"edges": edges}) == b'{"edges":[{"name":"a","color":"red","size":3}]}'
    with pytest.raises(TypeError, match="read-only"):
        edges.append({})
    with pytest.raises(TypeError, match="read-only"):
        edges[0] = {}
    # The bytes are the list's own: a planted change behind its back shows.
    list.append(edges, {"name": "b"})
    assert encode_json_bytes({"edges": edges}) == b'{"edges":[{"name":"a","color":"red","size":3}]}'
    assert json.loads(json.dumps(edges)) == [
        {"name": "a", "color": "red", "size": 3},
        {"name": "b"},
    ]
