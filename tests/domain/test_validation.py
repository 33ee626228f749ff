from __future__ import annotations

from decimal import Decimal

import pytest

from domain import validation as v
from domain.enums import Severity, ThreatType
from domain.errors import BadUserInput
from domain.identifiers import new_id

RULES = {
    "BRAND_NAME": (v.BRAND_NAME, 1, 200),
    "PRODUCT_NAME": (v.PRODUCT_NAME, 1, 200),
    "SKU": (v.SKU, 1, 100),
    "CATEGORY": (v.CATEGORY, 1, 100),
    "INDUSTRY": (v.INDUSTRY, 1, 100),
    "DESCRIPTION": (v.DESCRIPTION, 0, 2000),
    "ACTOR": (v.ACTOR, 1, 200),
    "LOCATION": (v.LOCATION, 1, 200),
    "CITY": (v.CITY, 1, 100),
    "USER_AGENT": (v.USER_AGENT, 0, 512),
    "DEVICE_FINGERPRINT": (v.DEVICE_FINGERPRINT, 1, 256),
    "REASON": (v.REASON, 1, 1000),
    "MEMO": (v.MEMO, 0, 500),
    "API_KEY_NAME": (v.API_KEY_NAME, 1, 100),
    "TRANSFER_TO": (v.TRANSFER_TO, 1, 200),
    "IDEMPOTENCY_KEY": (v.IDEMPOTENCY_KEY, 1, 128),
    "INTEGRATION_NAME": (v.INTEGRATION_NAME, 1, 100),
    "INGEST_EVENT_ID": (v.INGEST_EVENT_ID, 1, 128),
}


def test_every_rule_is_covered() -> None:
    declared = {name for name in v.__all__ if isinstance(getattr(v, name), v.TextRule)}
    assert declared == set(RULES)


@pytest.mark.parametrize("name", sorted(RULES))
def test_length_boundaries(name: str) -> None:
    rule, minimum, maximum = RULES[name]
    assert (rule.required, rule.max_length) == (bool(minimum), maximum)
    assert rule("x" * maximum) == "x" * maximum
    with pytest.raises(BadUserInput) as info:
        rule("x" * (maximum + 1))
    assert info.value.message.startswith(f"{rule.field}:")
    assert str(maximum) in info.value.message
    assert info.value.hint
    if minimum:
        with pytest.raises(BadUserInput, match=f"^{rule.field}: must not be empty"):
            rule("")
        assert rule("x") == "x"
    else:
        assert rule("") == ""


def test_lengths_count_code_points() -> None:
    assert v.PRODUCT_NAME("é" * 200) == "é" * 200
    assert v.PRODUCT_NAME("😀" * 200) == "😀" * 200


@pytest.mark.parametrize("rule", [v.PRODUCT_NAME, v.ACTOR, v.REASON])
def test_whitespace_only_is_empty_for_required_fields(rule: v.TextRule) -> None:
    with pytest.raises(BadUserInput, match="must not be empty"):
        rule("   ")


def test_text_is_kept_as_sent() -> None:
    assert v.PRODUCT_NAME("  Étoile  ") == "  Étoile  "


def test_field_override_names_the_input_path() -> None:
    with pytest.raises(BadUserInput, match=r"^inputs\[3\]\.name:"):
        v.PRODUCT_NAME("", field="inputs[3].name")


@pytest.mark.parametrize("char", ["\x00", "\n", "\r", "\t", "\x1b", "\x7f", "\x85"])
def test_single_line_fields_refuse_control_characters(char: str) -> None:
    with pytest.raises(BadUserInput, match="control character"):
        v.PRODUCT_NAME(f"a{char}b")


def test_multiline_fields_allow_line_breaks_only() -> None:
    assert v.DESCRIPTION("a\nb\r\n\tc") == "a\nb\r\n\tc"
    with pytest.raises(BadUserInput, match="U\\+0000"):
        v.DESCRIPTION("a\x00b")


def test_lone_surrogate_is_refused() -> None:
    with pytest.raises(BadUserInput, match="Unicode"):
        v.PRODUCT_NAME("a\ud800")


def test_non_string_is_refused() -> None:
    with pytest.raises(BadUserInput, match="expected a string"):
        v.PRODUCT_NAME(5)  # type: ignore[arg-type]


def test_optional() -> None:
    assert v.SKU.optional(None) is None
    assert v.SKU.optional("A-1") == "A-1"
    with pytest.raises(BadUserInput):
        v.SKU.optional("")


@pytest.mark.parametrize("key", ["a b", "clé", "a\tb"])
def test_idempotency_keys_are_printable_ascii_tokens(key: str) -> None:
    with pytest.raises(BadUserInput, match="printable ASCII"):
        v.IDEMPOTENCY_KEY(key)
    assert v.IDEMPOTENCY_KEY("9f1c-4b2a_x.Y:z") == "9f1c-4b2a_x.Y:z"


# --- JSON ----------------------------------------------------------------------


def _sized(size: int) -> dict[str, str]:
    """An object whose canonical form is exactly ``size`` bytes: {"k":"xxx..."}."""
    return {"k": "x" * (size - 8)}


@pytest.mark.parametrize(
    ("validate", "field", "limit"),
    [
        (v.validate_metadata, "metadata", v.METADATA_MAX_BYTES),
        (v.validate_event_data, "data", v.EVENT_DATA_MAX_BYTES),
    ],
)
def test_json_size_boundary(validate: object, field: str, limit: int) -> None:
    assert limit == 16 * 1024
    assert callable(validate)
    assert validate(_sized(limit)) == _sized(limit)
    with pytest.raises(BadUserInput, match=f"^{field}: {limit + 1} bytes"):
        validate(_sized(limit + 1))


def test_json_size_counts_utf8_bytes() -> None:
    with pytest.raises(BadUserInput, match="bytes"):
        v.validate_metadata({"k": "é" * (v.METADATA_MAX_BYTES // 2)})


def _deep(depth: int) -> dict[str, object]:
    value: dict[str, object] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_json_depth_boundary() -> None:
    assert v.JSON_MAX_DEPTH == 8
    assert v.validate_metadata(_deep(8)) == _deep(8)
    with pytest.raises(BadUserInput, match="nested 9 levels"):
        v.validate_metadata(_deep(9))


def test_metadata_absent_is_empty_object() -> None:
    assert v.validate_metadata(None) == {}
    assert v.validate_event_data(None) == {}


def test_metadata_must_be_an_object() -> None:
    with pytest.raises(BadUserInput, match="metadata: expected a JSON object"):
        v.validate_metadata([1, 2])


def test_metadata_is_normalised() -> None:
    assert v.validate_metadata({"n": 2.0, "d": Decimal("3.00")}) == {"n": 2, "d": 3}
    with pytest.raises(BadUserInput, match=r"metadata\.w"):
        v.validate_metadata({"w": 0.25})


def test_empty_keys_are_refused_at_any_depth() -> None:
    with pytest.raises(BadUserInput, match=r"metadata\.a\[0\]: object keys must not be empty"):
        v.validate_metadata({"a": [{"": 1}]})


# --- places ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("validate", "limit"), [(v.validate_latitude, 90), (v.validate_longitude, 180)]
)
def test_coordinate_range_is_inclusive(validate: object, limit: int) -> None:
    assert callable(validate)
    for edge in (limit, -limit, f"{limit}.0000000", Decimal(f"-{limit}.0")):
        assert abs(validate(edge)) == limit
    for outside in (Decimal(f"{limit}.0000001"), Decimal(f"-{limit}.0000001"), limit + 1):
        with pytest.raises(BadUserInput, match="outside"):
            validate(outside)


def test_coordinate_decimal_places_boundary() -> None:
    assert v.COORDINATE_MAX_DECIMALS == 7
    assert v.validate_latitude(Decimal("1.1234567")) == Decimal("1.1234567")
    with pytest.raises(BadUserInput, match="7 decimal places"):
        v.validate_latitude(Decimal("1.12345678"))
    assert v.validate_latitude(Decimal("1.12345670")) == Decimal("1.1234567")


def test_floats_become_their_shortest_decimal() -> None:
    assert v.validate_latitude(48.8566) == Decimal("48.8566")
    with pytest.raises(BadUserInput, match="decimal places"):
        v.validate_latitude(0.1 + 0.2)


def test_coordinates_are_normalised_like_the_store() -> None:
    assert str(v.validate_longitude(Decimal("120.00"))) == "120"
    assert str(v.validate_longitude("-0.0")) == "0"


@pytest.mark.parametrize("value", [True, "north", "NaN", float("inf"), [1]])
def test_coordinates_must_be_finite_numbers(value: object) -> None:
    with pytest.raises(BadUserInput, match="latitude"):
        v.validate_latitude(value)  # type: ignore[arg-type]


def test_coordinates_come_in_pairs() -> None:
    assert v.validate_coordinates(None, None) == (None, None)
    assert v.validate_coordinates(1, "2.5") == (Decimal(1), Decimal("2.5"))
    with pytest.raises(BadUserInput, match=r"^longitude: required"):
        v.validate_coordinates(1, None)
    with pytest.raises(BadUserInput, match=r"^latitude: required"):
        v.validate_coordinates(None, 1)


@pytest.mark.parametrize(
    ("value", "code"), [("FR", "FR"), ("fr", "FR"), ("gB", "GB"), (None, None)]
)
def test_country(value: str | None, code: str | None) -> None:
    assert v.validate_country(value) == code


@pytest.mark.parametrize("value", ["UK", "XX", "ZZ", "", "FRA", "F", "\uff26\uff32", " FR"])
def test_country_refused(value: str) -> None:
    with pytest.raises(BadUserInput, match=r"^scan\.country: .* ISO 3166-1 alpha-2") as info:
        v.validate_country(value, field="scan.country")
    assert info.value.hint


# --- ids, enums, batches -----------------------------------------------------------


def test_validate_id() -> None:
    identifier = new_id()
    assert v.validate_id(identifier) == identifier
    for bad in (identifier.lower(), identifier[:-1], "", "8" + identifier[1:]):
        with pytest.raises(BadUserInput, match=r"^productId: .* not a valid id"):
            v.validate_id(bad, field="productId")


def test_parse_enum() -> None:
    assert v.parse_enum(Severity, "HIGH", field="minSeverity") is Severity.HIGH
    assert v.parse_enum(ThreatType, ThreatType.BURST_SCAN, field="types") is ThreatType.BURST_SCAN
    with pytest.raises(BadUserInput, match=r"^minSeverity: 'high'") as info:
        v.parse_enum(Severity, "high", field="minSeverity")
    assert info.value.hint == "Use one of LOW, MEDIUM, HIGH, CRITICAL."


def test_batch_boundaries() -> None:
    assert v.BATCH_MAX_ITEMS == 100
    assert v.validate_batch([1], field="inputs") == [1]
    assert len(v.validate_batch(list(range(100)), field="inputs")) == 100
    for size in (0, 101):
        with pytest.raises(
            BadUserInput, match=f"^inputs: between 1 and 100 items allowed, got {size}"
        ):
            v.validate_batch(list(range(size)), field="inputs")
