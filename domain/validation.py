"""Input validation: the limits of every field a client can send, and the checks.

Every failure is ``BadUserInput`` naming the field and saying how to fix it.
Validators return the value to store and never silently alter meaning: text
is kept byte for byte (a certificate hashes it), only case-insensitive codes
(countries, enum names) are brought to their canonical case.

Lengths count Unicode code points. Single-line fields refuse control
characters; multi-line fields allow tab, newline and carriage return.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import TypeVar

from domain.errors import BadUserInput

from .canonical import JSONObject, canonical_json, decimal_text, json_depth, normalize_object
from .countries import COUNTRY_CODES
from .identifiers import is_id

__all__ = [
    "ACTOR",
    "API_KEY_NAME",
    "BATCH_MAX_ITEMS",
    "BRAND_NAME",
    "CATEGORY",
    "CITY",
    "COORDINATE_MAX_DECIMALS",
    "DESCRIPTION",
    "DEVICE_FINGERPRINT",
    "EVENT_DATA_MAX_BYTES",
    "IDEMPOTENCY_KEY",
    "INDUSTRY",
    "INGEST_EVENT_ID",
    "INTEGRATION_NAME",
    "JSON_MAX_DEPTH",
    "LATITUDE_LIMIT",
    "LOCATION",
    "LONGITUDE_LIMIT",
    "MEMO",
    "METADATA_MAX_BYTES",
    "PRODUCT_NAME",
    "REASON",
    "SKU",
    "TRANSFER_TO",
    "USER_AGENT",
    "TextRule",
    "ascii_digits",
    "parse_enum",
    "validate_batch",
    "validate_coordinates",
    "validate_country",
    "validate_event_data",
    "validate_id",
    "validate_json_object",
    "validate_latitude",
    "validate_longitude",
    "validate_metadata",
]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_MULTILINE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_PRINTABLE_ASCII = re.compile(r"[\x21-\x7e]*")


@dataclass(frozen=True)
class TextRule:
    """The limits of one text field, declared once and imported by tests.

    ``required`` refuses empty and whitespace-only text: a name of three spaces
    is as absent as an empty one.
    """

    field: str
    max_length: int
    required: bool = True
    multiline: bool = False
    ascii_token: bool = False

    def __call__(self, value: str, *, field: str | None = None) -> str:
        name = field or self.field
        if not isinstance(value, str):
            raise BadUserInput(f"{name}: expected a string, got {type(value).__name__}")
        if len(value) > self.max_length:
            raise BadUserInput(
                f"{name}: at most {self.max_length} characters allowed, got {len(value)}",
                hint=f"Shorten {name} to {self.max_length} characters or fewer.",
            )
        if self.required and not value.strip():
            raise BadUserInput(f"{name}: must not be empty", hint=f"Provide a value for {name}.")
        if self.ascii_token:
            if not _PRINTABLE_ASCII.fullmatch(value):
                raise BadUserInput(
                    f"{name}: only printable ASCII without spaces is allowed",
                    hint="Use letters, digits and punctuation, e.g. a UUID.",
                )
            return value
        control = (_CONTROL_MULTILINE if self.multiline else _CONTROL).search(value)
        if control:
            raise BadUserInput(
                f"{name}: control character U+{ord(control.group()):04X} is not allowed",
                hint="Remove control characters"
                + ("." if self.multiline else " (this field is a single line)."),
            )
        if value.isascii():  # no surrogate is ASCII: nothing to encode
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BadUserInput(
                f"{name}: text is not valid Unicode", hint="Send well-formed UTF-8 text."
            ) from None
        return value

    def optional(self, value: str | None, *, field: str | None = None) -> str | None:
        """``None`` means absent; an empty string is still checked (and refused
        when required), because ``""`` and absent hash differently."""
        return None if value is None else self(value, field=field)


BRAND_NAME = TextRule("name", 200)
PRODUCT_NAME = TextRule("name", 200)
SKU = TextRule("sku", 100)
CATEGORY = TextRule("category", 100)
INDUSTRY = TextRule("industry", 100)
DESCRIPTION = TextRule("description", 2000, required=False, multiline=True)
ACTOR = TextRule("actor", 200)
LOCATION = TextRule("location", 200)
CITY = TextRule("city", 100)
USER_AGENT = TextRule("userAgent", 512, required=False)
DEVICE_FINGERPRINT = TextRule("deviceFingerprint", 256)
REASON = TextRule("reason", 1000, multiline=True)
MEMO = TextRule("memo", 500, required=False, multiline=True)
API_KEY_NAME = TextRule("name", 100)
TRANSFER_TO = TextRule("to", 200)
IDEMPOTENCY_KEY = TextRule("idempotencyKey", 128, ascii_token=True)
INTEGRATION_NAME = TextRule("name", 100)
INGEST_EVENT_ID = TextRule("eventId", 128, ascii_token=True)

BATCH_MAX_ITEMS = 100

# --- JSON --------------------------------------------------------------------

METADATA_MAX_BYTES = 16 * 1024
"""Measured on the canonical form, the bytes that are stored and hashed."""
EVENT_DATA_MAX_BYTES = 16 * 1024
JSON_MAX_DEPTH = 8
"""``{}`` has depth 1, ``{"a": {"b": []}}`` depth 3."""


def _refuse_empty_keys(value: object, path: str) -> None:
    """Empty attribute names cannot be stored in a DynamoDB map."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not key:
                raise BadUserInput(f"{path}: object keys must not be empty", hint="Name every key.")
            _refuse_empty_keys(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_empty_keys(item, f"{path}[{index}]")


def validate_json_object(
    value: object, *, field: str, max_bytes: int, max_depth: int = JSON_MAX_DEPTH
) -> JSONObject:
    normalized = normalize_object(value, field=field)
    depth = json_depth(normalized)
    if depth > max_depth:
        raise BadUserInput(
            f"{field}: nested {depth} levels deep, at most {max_depth} allowed",
            hint="Flatten the structure.",
        )
    _refuse_empty_keys(normalized, field)
    size = len(canonical_json(normalized, field=field))
    if size > max_bytes:
        raise BadUserInput(
            f"{field}: {size} bytes as canonical JSON, at most {max_bytes} allowed",
            hint="Store large documents elsewhere and reference them by URL.",
        )
    return normalized


def validate_metadata(value: object | None, *, field: str = "metadata") -> JSONObject:
    """Absent metadata is ``{}``, as in the certificate's canonical record."""
    if value is None:
        return {}
    return validate_json_object(value, field=field, max_bytes=METADATA_MAX_BYTES)


def validate_event_data(value: object | None, *, field: str = "data") -> JSONObject:
    if value is None:
        return {}
    return validate_json_object(value, field=field, max_bytes=EVENT_DATA_MAX_BYTES)


# --- places ------------------------------------------------------------------

LATITUDE_LIMIT = Decimal(90)
LONGITUDE_LIMIT = Decimal(180)
COORDINATE_MAX_DECIMALS = 7
"""About 1 cm. Coordinates are hashed as exact decimals, so more digits would be
float noise (``0.1 + 0.2``) that the client never meant to sign."""


def _decimal(value: Decimal | int | float | str, field: str) -> Decimal:
    if isinstance(value, bool):
        raise BadUserInput(f"{field}: expected a number, got a boolean")
    try:
        # repr is the shortest text that round-trips a float: 48.8566, not its binary expansion.
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, TypeError, ValueError):
        raise BadUserInput(f"{field}: {value!r} is not a number") from None
    if not number.is_finite():
        raise BadUserInput(f"{field}: {value!r} is not a finite number")
    return number


def _coordinate(
    value: Decimal | int | float | str | None, field: str, limit: Decimal
) -> Decimal | None:
    if value is None:
        return None
    number = _decimal(value, field)
    if not -limit <= number <= limit:
        raise BadUserInput(
            f"{field}: {number} is outside -{limit}..{limit}",
            hint="Use decimal degrees (WGS 84).",
        )
    exponent = number.normalize().as_tuple().exponent
    assert isinstance(exponent, int)
    if -exponent > COORDINATE_MAX_DECIMALS:
        raise BadUserInput(
            f"{field}: at most {COORDINATE_MAX_DECIMALS} decimal places allowed",
            hint=f"Round {field} to {COORDINATE_MAX_DECIMALS} decimal places.",
        )
    return Decimal(decimal_text(number))


def validate_latitude(
    value: Decimal | int | float | str | None, *, field: str = "latitude"
) -> Decimal | None:
    return _coordinate(value, field, LATITUDE_LIMIT)


def validate_longitude(
    value: Decimal | int | float | str | None, *, field: str = "longitude"
) -> Decimal | None:
    return _coordinate(value, field, LONGITUDE_LIMIT)


def validate_coordinates(
    latitude: Decimal | int | float | str | None,
    longitude: Decimal | int | float | str | None,
) -> tuple[Decimal | None, Decimal | None]:
    """Both or neither: half a position is not a place."""
    if (latitude is None) != (longitude is None):
        missing = "longitude" if longitude is None else "latitude"
        raise BadUserInput(
            f"{missing}: required when the other coordinate is given",
            hint="Send latitude and longitude together, or neither.",
        )
    return validate_latitude(latitude), validate_longitude(longitude)


def validate_country(value: str | None, *, field: str = "country") -> str | None:
    """An assigned ISO 3166-1 alpha-2 code, uppercased; ``None`` when unknown."""
    if value is None:
        return None
    code = value.upper() if isinstance(value, str) and value.isascii() else value
    if code not in COUNTRY_CODES:
        raise BadUserInput(
            f"{field}: {value!r} is not an ISO 3166-1 alpha-2 country code",
            hint="Use a two-letter code such as FR, US or JP, or omit the field when unknown.",
        )
    assert isinstance(code, str)
    return code


# --- identifiers, enums, batches -----------------------------------------------

E = TypeVar("E", bound=StrEnum)


def validate_id(value: str, *, field: str = "id") -> str:
    if not isinstance(value, str) or not is_id(value):
        raise BadUserInput(
            f"{field}: {value!r} is not a valid id",
            hint="Ids are 26 characters as returned by the API, e.g. 01JD8X3V9Q7ZK5M2N4P6R8T0W1.",
        )
    return value


def parse_enum(enum: type[E], value: str | E, *, field: str) -> E:
    """The member named ``value``. Exact spelling: GraphQL enums are case-sensitive."""
    if isinstance(value, enum):
        return value
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(member.value for member in enum)
        raise BadUserInput(
            f"{field}: {value!r} is not a valid {enum.__name__}", hint=f"Use one of {allowed}."
        ) from None


T = TypeVar("T")


def validate_batch(
    items: Sequence[T], *, field: str, max_items: int = BATCH_MAX_ITEMS
) -> Sequence[T]:
    if not 1 <= len(items) <= max_items:
        raise BadUserInput(
            f"{field}: between 1 and {max_items} items allowed, got {len(items)}",
            hint=f"Split the request into batches of at most {max_items}.",
        )
    return items


def ascii_digits(text: str) -> bool:
    """Whether ``int(text)`` reads ``text`` as the decimal digits it shows:
    ``str.isdigit`` is also true of "²" and other Unicode digits, which
    ``int`` refuses (or reads as another number), so every count or time
    from outside is checked with this instead."""
    return text.isascii() and text.isdigit()
