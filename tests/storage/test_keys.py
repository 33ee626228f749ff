from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from domain.errors import AccessPatternError, LimitExceeded
from storage.keys import (
    INT_MAX,
    INT_WIDTH,
    SEPARATOR,
    Key,
    KeyTemplate,
    check_key,
    decode_int,
    decode_str,
    decode_time,
    encode_int,
    encode_str,
    encode_time,
)
from storage.limits import PARTITION_KEY_MAX_BYTES, SORT_KEY_MAX_BYTES

texts = st.text(min_size=1)
key_ints = st.integers(min_value=0, max_value=INT_MAX)
aware_times = st.datetimes(
    min_value=datetime(1, 1, 2),
    max_value=datetime(9999, 12, 30),
    timezones=st.timezones(),
)


# --- str ---------------------------------------------------------------------


@given(texts)
def test_str_round_trips(value: str) -> None:
    assert decode_str(encode_str(value)) == value


@given(texts, texts)
def test_str_escaping_is_injective(a: str, b: str) -> None:
    assume(a != b)
    assert encode_str(a) != encode_str(b)


@given(texts)
def test_encoded_str_never_contains_the_separator(value: str) -> None:
    assert SEPARATOR not in encode_str(value)


@given(st.text(alphabet="#%23ab", min_size=1))
def test_separator_heavy_values_round_trip(value: str) -> None:
    encoded = encode_str(value)
    assert SEPARATOR not in encoded
    assert decode_str(encoded) == value


@given(st.text(alphabet="#%a", min_size=1), st.text(alphabet="#%a", min_size=1))
def test_a_value_cannot_forge_a_second_field(a: str, b: str) -> None:
    template = KeyTemplate("X#{a}#{b}")
    forged = {"a": f"{a}#{b}", "b": "z"}
    assert template.format({"a": a, "b": b}) != template.format(forged)
    assert template.parse(template.format(forged)) == forged


def test_case_is_never_folded() -> None:
    assert encode_str("AbC") == "AbC"
    assert encode_str("ÉTÉ") != encode_str("été")
    assert KeyTemplate("P#{x}").format({"x": "MiXeD"}) == "P#MiXeD"


def test_percent_and_separator_are_escaped() -> None:
    assert encode_str("a#b") == "a%23b"
    assert encode_str("%23") == "%2523"
    assert decode_str("%2523") == "%23"


@pytest.mark.parametrize("value", ["", None, 1, b"x"])
def test_str_refuses_non_strings_and_empty(value: object) -> None:
    with pytest.raises((AccessPatternError, LimitExceeded)):
        encode_str(value)  # type: ignore[arg-type]


def test_str_refuses_lone_surrogates() -> None:
    with pytest.raises(LimitExceeded):
        encode_str("a\ud800")


# --- int ---------------------------------------------------------------------


@given(key_ints, key_ints)
def test_int_encoding_preserves_order(a: int, b: int) -> None:
    ea, eb = encode_int(a).encode(), encode_int(b).encode()
    assert (a < b) == (ea < eb)
    assert (a == b) == (ea == eb)


@given(key_ints)
def test_int_round_trips_at_fixed_width(value: int) -> None:
    encoded = encode_int(value)
    assert len(encoded) == INT_WIDTH
    assert decode_int(encoded) == value


@pytest.mark.parametrize("value", [-1, INT_MAX + 1, -(10**20)])
def test_int_out_of_range_is_refused(value: int) -> None:
    with pytest.raises(LimitExceeded):
        encode_int(value)


@pytest.mark.parametrize("value", [True, False, 1.0, "1", None])
def test_int_refuses_bool_and_non_ints(value: object) -> None:
    with pytest.raises(AccessPatternError):
        encode_int(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "encoded", ["", "1", "+00000000001", " 00000000001", "0000000000001", "00000000000a"]
)
def test_decode_int_refuses_non_canonical_text(encoded: str) -> None:
    with pytest.raises(ValueError):
        decode_int(encoded)


# --- time --------------------------------------------------------------------


def _instant(value: datetime) -> datetime:
    """Compared in UTC: Python never equates a time in a DST gap or fold with
    one in another zone (PEP 495), though they name the same instant."""
    return value.astimezone(UTC)


@given(aware_times, aware_times)
def test_time_encoding_preserves_order(a: datetime, b: datetime) -> None:
    ea, eb = encode_time(a).encode(), encode_time(b).encode()
    assert (_instant(a) < _instant(b)) == (ea < eb)
    assert (_instant(a) == _instant(b)) == (ea == eb)


@given(aware_times)
def test_time_round_trips_as_utc(value: datetime) -> None:
    decoded = decode_time(encode_time(value))
    assert decoded == _instant(value)
    assert decoded.utcoffset() == timedelta(0)


def test_time_has_fixed_width_and_utc_form() -> None:
    local = datetime(2024, 3, 5, 1, 2, 3, 45, tzinfo=timezone(timedelta(hours=2)))
    assert encode_time(local) == "2024-03-04T23:02:03.000045Z"
    assert encode_time(datetime(5, 1, 1, tzinfo=UTC)) == "0005-01-01T00:00:00.000000Z"
    assert encode_time(datetime(999, 12, 31, tzinfo=UTC)) < encode_time(
        datetime(1000, 1, 1, tzinfo=UTC)
    )


def test_time_normalises_any_timezone() -> None:
    paris = datetime(2024, 7, 1, 12, 0, tzinfo=ZoneInfo("Europe/Paris"))
    assert encode_time(paris) == encode_time(datetime(2024, 7, 1, 10, 0, tzinfo=UTC))


def test_naive_time_is_refused() -> None:
    with pytest.raises(AccessPatternError):
        encode_time(datetime(2024, 1, 1))


@pytest.mark.parametrize("value", ["2024-01-01", 0, None])
def test_time_refuses_non_datetimes(value: object) -> None:
    with pytest.raises(AccessPatternError):
        encode_time(value)  # type: ignore[arg-type]


def test_time_that_leaves_the_calendar_in_utc_is_refused() -> None:
    with pytest.raises(LimitExceeded):
        encode_time(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5))))


# --- templates ---------------------------------------------------------------

MIXED = KeyTemplate("ALERT#{at:time}#{kind}#{n:int}#{product}")


@given(aware_times, texts, key_ints, texts)
def test_template_round_trips_mixed_fields(at: datetime, kind: str, n: int, product: str) -> None:
    params = {"at": at, "kind": kind, "n": n, "product": product}
    parsed = MIXED.parse(MIXED.format(params))
    assert parsed == {**params, "at": _instant(at)}


def test_template_params_and_literal_only_templates() -> None:
    assert MIXED.params == ("at", "kind", "n", "product")
    fixed = KeyTemplate("HEALTH")
    assert fixed.params == ()
    assert fixed.format({}) == "HEALTH"
    assert fixed.parse("HEALTH") == {}


def test_template_format_example() -> None:
    key = KeyTemplate("EVENT#{sequence:int}").format({"sequence": 7})
    assert key == "EVENT#000000000007"


@pytest.mark.parametrize(
    "source",
    [
        "",
        "A#{}",
        "A#{:int}",
        "A#{x:float}",
        "A#{x:int:str}",
        "A#{x}{y}",
        "A#{x}#{x}",
        "A#{x:int}#{x:str}",
        "A#{x",
        "A#x}",
        "A#{{x}}",
        "A#{x}}",
        "A#{1x}",
        "A#{x y}",
        "A#{x}B#{y}",
        "{x}.{y}",
        "{x}suffix",
    ],
)
def test_template_compile_errors(source: str) -> None:
    with pytest.raises(AccessPatternError):
        KeyTemplate(source)


def test_template_missing_parameter_names_it() -> None:
    with pytest.raises(AccessPatternError, match="'b'"):
        KeyTemplate("X#{a}#{b}").format({"a": "1"})


def test_template_converter_type_errors_surface() -> None:
    template = KeyTemplate("X#{n:int}")
    with pytest.raises(AccessPatternError):
        template.format({"n": "1"})


@pytest.mark.parametrize("key", ["Y#a#b", "X#a", "X#a#b#c", "X##b", "X#a#"])
def test_template_parse_refuses_foreign_keys(key: str) -> None:
    with pytest.raises(ValueError):
        KeyTemplate("X#{a}#{b}").parse(key)


# --- key lengths -------------------------------------------------------------


@pytest.mark.parametrize("char", ["a", "é", "€", "𝄞"])
def test_key_lengths_count_utf8_bytes(char: str) -> None:
    width = len(char.encode())
    pk = "a" * (PARTITION_KEY_MAX_BYTES - width) + char
    sk = "a" * (SORT_KEY_MAX_BYTES - width) + char
    assert check_key(Key(pk, sk)) == Key(pk, sk)
    with pytest.raises(LimitExceeded, match="Partition"):
        check_key(Key("a" + pk, sk))
    with pytest.raises(LimitExceeded, match="Sort"):
        check_key(Key(pk, "a" + sk))
    if width > 1:
        with pytest.raises(LimitExceeded, match="Partition"):
            check_key(Key("a" * (PARTITION_KEY_MAX_BYTES - width + 1) + char, sk))


def test_key_length_boundaries_exactly() -> None:
    assert PARTITION_KEY_MAX_BYTES == 2048
    assert SORT_KEY_MAX_BYTES == 1024
    check_key(Key("p" * 2048, "s" * 1024))
    with pytest.raises(LimitExceeded):
        check_key(Key("p" * 2049, "s"))
    with pytest.raises(LimitExceeded):
        check_key(Key("p", "s" * 1025))
    with pytest.raises(LimitExceeded):
        check_key(Key("p" * 2047 + "é", "s"))


@pytest.mark.parametrize("key", [Key("", "s"), Key("p", "")])
def test_empty_key_attributes_are_refused(key: Key) -> None:
    with pytest.raises(LimitExceeded):
        check_key(key)


@pytest.mark.parametrize(
    "encoded", ["2024-5-01T00:00:00.000000Z", "2024-05-01T00:00:00Z", "2024-05-01 00:00:00.000000Z"]
)
def test_decode_time_refuses_non_canonical_text(encoded: str) -> None:
    with pytest.raises(ValueError):
        decode_time(encoded)


class _Instant(datetime):
    """A datetime subclass: ``encode_time`` takes its general path for it."""


@given(st.datetimes(timezones=st.just(UTC)))
def test_time_fast_path_agrees_with_the_general_path(value: datetime) -> None:
    """A UTC datetime is written by ``isoformat``; anything else by the
    general formatting, which any other aware datetime proves."""
    general = _Instant.combine(value.date(), value.timetz())
    assert encode_time(value) == encode_time(general)
