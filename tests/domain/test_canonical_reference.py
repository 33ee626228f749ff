"""``normalize_json`` and ``canonical_json`` agree with the plain walk they
replaced (kept here as the oracle): the same values, the same bytes, and the
same refusal with the same message, for values of every kind a caller may pass."""

from __future__ import annotations

import json
import math
import types
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from enum import IntEnum, StrEnum
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from domain.canonical import (
    MAX_NESTING,
    SAFE_INTEGER_MAX,
    canonical_json,
    normalize_json,
    sha256_hex,
)
from domain.certificates import CertificateRecord
from domain.chain import ProvenanceEvent, event_hash
from domain.enums import ProvenanceEventType
from domain.errors import BadUserInput
from tests._support.identical import identical

_HINT = 'Use integers, or send fractional and very large numbers as strings ("1.50").'


def _integer(value: Any, path: str) -> int:
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            raise BadUserInput(f"{path}: {value!r} is not an integer", hint=_HINT)
        number = int(value)
    elif isinstance(value, Decimal):
        if not (value.is_finite() and value == value.to_integral_value()):
            raise BadUserInput(f"{path}: {value} is not an integer", hint=_HINT)
        number = int(value)
    else:
        number = value
    if abs(number) > SAFE_INTEGER_MAX:
        raise BadUserInput(f"{path}: {number} is outside -(2**53-1)..2**53-1", hint=_HINT)
    return number


def _string(value: str, path: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadUserInput(f"{path}: string is not valid Unicode (lone surrogate)") from None
    return value


def _reference(value: object, path: str, depth: int) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float, Decimal)):
        return _integer(value, path)
    if isinstance(value, str):
        return _string(value, path)
    if isinstance(value, (Mapping, list, tuple)):
        if depth >= MAX_NESTING:
            raise BadUserInput(f"{path}: nested more than {MAX_NESTING} levels")
        if isinstance(value, Mapping):
            normalized = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise BadUserInput(f"{path}: object keys must be strings")
                normalized[_string(key, path)] = _reference(item, f"{path}.{key}", depth + 1)
            return normalized
        return [_reference(item, f"{path}[{index}]", depth + 1) for index, item in enumerate(value)]
    raise BadUserInput(f"{path}: {type(value).__name__} is not a JSON value")


def _outcome(function: Any, value: object) -> tuple[str, Any]:
    try:
        return "value", function(value)
    except BadUserInput as error:
        return "refused", error.message


_keys = st.text(max_size=4) | st.sampled_from(["a.b", "[0]", "\ud800", "é"])
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=True, allow_infinity=True, places=2),
    st.text(max_size=6),
    st.sampled_from(["\ud800", "\udfff x", b"x", frozenset([1]), object()]),
)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_keys, inner, max_size=3),
        st.dictionaries(_keys, inner, max_size=3).map(types.MappingProxyType),
        st.dictionaries(st.integers(0, 3) | st.none(), inner, min_size=1, max_size=2),
    ),
    max_leaves=12,
)


@settings(max_examples=500)
@given(_values)
def test_normalize_json_is_the_plain_walk(value: object) -> None:
    ours = _outcome(lambda v: normalize_json(v, field="data"), value)
    theirs = _outcome(lambda v: _reference(v, "data", 0), value)
    assert ours[0] == theirs[0]
    if ours[0] == "value":
        assert identical(ours[1], theirs[1])
        assert canonical_json(value, field="data") == json.dumps(
            theirs[1], sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")
    else:
        assert ours[1] == theirs[1]


def test_deep_paths_are_spelled_as_before() -> None:
    value = {"a": [{"b.c": [0, 1.5]}]}
    with_message = _outcome(lambda v: normalize_json(v, field="m"), value)
    assert with_message == ("refused", "m.a[0].b.c[1]: 1.5 is not an integer")
    nested: Any = 1
    for _ in range(MAX_NESTING + 1):
        nested = [nested]
    assert _outcome(normalize_json, nested) == _outcome(lambda v: _reference(v, "value", 0), nested)


class _Text(str):
    pass


class _Kind(StrEnum):
    A = "a"
    ACCENT = "é\x1f"


class _Level(IntEnum):
    HIGH = 2**53 - 1


_any_text = st.text(max_size=6)
_subclassed = st.one_of(_any_text, _any_text.map(_Text), st.sampled_from(list(_Kind)))
_plain = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-SAFE_INTEGER_MAX, SAFE_INTEGER_MAX),
        st.sampled_from(list(_Level)),
        _subclassed,
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_subclassed, inner, max_size=4),
    max_leaves=16,
)


@settings(max_examples=400)
@given(_plain)
def test_the_bytes_are_json_dumps_on_every_valid_value(value: object) -> None:
    """The encoder (orjson) against the stdlib's ``json.dumps``, kept as the
    oracle, over text of any code point (controls, non-ASCII, astral), ``str``
    and ``int`` subclasses as values and keys, and the integer bounds."""
    oracle = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == oracle.encode("utf-8")


def _oracle_bytes(document: Any) -> bytes:
    plain = _reference(document, "value", 0)
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _kind(function: Any) -> tuple[str, Any]:
    try:
        return "value", function()
    except BadUserInput:
        return "refused", None


_objects = st.dictionaries(_keys, _values, max_size=4) | _values


@settings(max_examples=300)
@given(_objects, st.text(max_size=4) | st.just("\ud800"))
def test_hashes_walk_the_record_once_and_match_the_document_walked_twice(
    nested: Any, name: str
) -> None:
    """``CertificateRecord.canonical_bytes`` and ``event_hash`` normalise
    metadata/data once, inside ``canonical_json``; the oracle is what they did
    before: ``document()``/``content()`` (normalising the nested object), then
    the plain walk and ``json.dumps`` over the result. Same bytes, or both refuse."""
    when = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    record = CertificateRecord("p1", "b1", name, when, sku=None, metadata=nested)
    ours = _kind(record.canonical_bytes)
    theirs = _kind(lambda: _oracle_bytes(record.document()))
    assert ours == theirs
    event = ProvenanceEvent(
        1, ProvenanceEventType.SHIPPED, when, "0" * 64, "", actor=name, data=nested
    )
    ours = _kind(lambda: event_hash(event))
    theirs = _kind(lambda: sha256_hex(_oracle_bytes(event.content())))
    assert ours == theirs


_flat_keys = st.text(st.characters(max_codepoint=127), max_size=4) | _keys | _keys.map(_Text)
_flat_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-SAFE_INTEGER_MAX, SAFE_INTEGER_MAX),
    st.text(st.characters(max_codepoint=127), max_size=6),
    st.just({}),
)
_edges = st.one_of(
    _leaves,
    st.sampled_from(
        [2**53, -(2**53), "\ud800", "é", 1.0, Decimal(2), {"a": 1}, {"a": 1.5}, [], b"x"]
    ),
    st.sampled_from([_Kind.A, _Level.HIGH, _Text("x")]),
    st.dictionaries(_keys, _leaves, max_size=2),
)
_flat_dicts = st.builds(
    lambda plain, edge: {**plain, **edge},
    st.dictionaries(_flat_keys, _flat_values, max_size=6),
    st.dictionaries(_flat_keys, _edges, max_size=1),
)
"""Flat dicts, some with one value or key either side of a shortcut check."""


@settings(max_examples=500)
@given(_flat_dicts)
@example({"id": "p1", "n": 2**53})
@example({"id": "p1", "n": -(2**53)})
@example({"id": "p1", "name": "\ud800"})
@example({"id": "p1", "name": "é"})
@example({"id": "p1", "data": {"a": 1.5}})
@example({"id": "p1", "n": 2.0})
@example({"é": "p1"})
def test_a_flat_dict_takes_the_shortcut_to_the_same_bytes_or_refusal(value: object) -> None:
    """``canonical_json`` encodes a flat dict without normalising it first:
    the same bytes as the plain walk and ``json.dumps``, or the same refusal
    with the same message, over values either side of every shortcut check."""
    ours = _outcome(lambda v: canonical_json(v, field="data"), value)
    theirs = _outcome(
        lambda v: json.dumps(
            _reference(v, "data", 0), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8"),
        value,
    )
    assert ours == theirs
