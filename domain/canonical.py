r"""Canonical JSON: the bytes that certificate and provenance hashes are taken over.

This is a contract: anyone verifying a certificate offline rebuilds these bytes
from the API's answer, in any language.

- Objects have string keys, sorted by Unicode code point at every level.
- No insignificant whitespace (separators ``,`` and ``:``).
- UTF-8. Non-ASCII characters are written as themselves; only ``"``, ``\`` and
  the control characters U+0000..U+001F are escaped (``\b \f \n \r \t``, the rest
  as ``\u00xx`` in lowercase hex). ``JSON.stringify`` and Python's
  ``json.dumps(..., ensure_ascii=False)`` both produce exactly this.
- Literals ``true``, ``false``, ``null``.
- Numbers are integers in the interoperable range -(2**53 - 1)..2**53 - 1,
  written as plain decimal digits. An integral float or Decimal (``2.0``,
  ``Decimal("2.00")``) is the integer ``2``. Anything else is refused: a
  fractional number has no single spelling across languages (Python writes
  ``1e-07`` where JavaScript writes ``1e-7``; ``0.1`` is a different value as a
  binary float and as a decimal), and larger integers lose precision in
  JavaScript. Send such values as strings (``"1.50"``).
- Strings must be valid Unicode: a lone surrogate cannot be written as UTF-8.

Exact decimals that must be hashed (coordinates) are therefore strings, spelled
by ``decimal_text``: the shortest plain notation of the value, no exponent, no
trailing zeros, no ``-0`` (``Decimal("48.85660")`` -> ``"48.8566"``,
``Decimal("1E+2")`` -> ``"100"``). Stores that normalise numbers (DynamoDB)
return the same value, so the hash survives a round trip.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import TypeAlias

import orjson

from domain.errors import BadUserInput

__all__ = [
    "JSON",
    "MAX_NESTING",
    "SAFE_INTEGER_MAX",
    "JSONObject",
    "canonical_json",
    "decimal_text",
    "json_depth",
    "normalize_json",
    "normalize_object",
    "sha256_hex",
]

JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | bool | None"
JSONObject: TypeAlias = "dict[str, JSON]"

SAFE_INTEGER_MAX = 2**53 - 1
MAX_NESTING = 64
"""A hard cap far above any input limit, so hostile nesting fails as bad input
instead of exhausting the interpreter's recursion limit."""

_NUMBER_HINT = 'Use integers, or send fractional and very large numbers as strings ("1.50").'


Path: TypeAlias = "str | tuple[Path, str] | tuple[Path, int]"
"""Where a value sits, spelled only for an error: ``(parent, key)`` is
``parent.key`` and ``(parent, index)`` is ``parent[index]``."""


def _spell(path: Path) -> str:
    if isinstance(path, str):
        return path
    parent, step = path
    return f"{_spell(parent)}[{step}]" if isinstance(step, int) else f"{_spell(parent)}.{step}"


def _integer(value: int | float | Decimal, path: Path) -> int:
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            raise BadUserInput(f"{_spell(path)}: {value!r} is not an integer", hint=_NUMBER_HINT)
        number = int(value)
    elif isinstance(value, Decimal):
        if not (value.is_finite() and value == value.to_integral_value()):
            raise BadUserInput(f"{_spell(path)}: {value} is not an integer", hint=_NUMBER_HINT)
        number = int(value)
    else:
        number = value
    if abs(number) > SAFE_INTEGER_MAX:
        raise BadUserInput(
            f"{_spell(path)}: {number} is outside -(2**53-1)..2**53-1", hint=_NUMBER_HINT
        )
    return number


def _string(value: str, path: Path) -> str:
    if value.isascii():  # no surrogate is ASCII
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadUserInput(
            f"{_spell(path)}: string is not valid Unicode (lone surrogate)",
            hint="Send well-formed UTF-8 text.",
        ) from None
    return value


def _normalize(value: object, path: Path, depth: int) -> JSON:
    # The exact built-in types first, as they are nearly every value; the
    # checks below them decide the rest exactly as before.
    kind = type(value)
    if kind is str:
        return _string(value, path)  # type: ignore[arg-type]
    if kind is dict or kind is list:
        return _nested(value, path, depth)  # type: ignore[arg-type]
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float, Decimal)):
        return _integer(value, path)
    if isinstance(value, str):
        return _string(value, path)
    if isinstance(value, (Mapping, list, tuple)):
        return _nested(value, path, depth)
    raise BadUserInput(
        f"{_spell(path)}: {type(value).__name__} is not a JSON value",
        hint="Use objects, arrays, strings, integers, booleans and null.",
    )


def _nested(
    value: Mapping[object, object] | list[object] | tuple[object, ...], path: Path, depth: int
) -> JSON:
    if depth >= MAX_NESTING:
        raise BadUserInput(f"{_spell(path)}: nested more than {MAX_NESTING} levels")
    if isinstance(value, Mapping):
        return _object(value, path, depth)
    return _array(value, path, depth)


def _array(value: list[object] | tuple[object, ...], path: Path, depth: int) -> list[JSON]:
    return [_normalize(item, (path, index), depth + 1) for index, item in enumerate(value)]


def _object(value: Mapping[object, object], path: Path, depth: int) -> dict[str, JSON]:
    normalized: dict[str, JSON] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise BadUserInput(f"{_spell(path)}: object keys must be strings")
        normalized[_string(key, path)] = _normalize(item, (path, key), depth + 1)
    return normalized


def normalize_json(value: object, *, field: str = "value") -> JSON:
    """Return ``value`` in the canonical model (dict, list, str, int, bool, None).

    Errors name the offending path, e.g. ``metadata.sizes[2]``.
    """
    return _normalize(value, field, 0)


def normalize_object(value: object, *, field: str = "value") -> JSONObject:
    """``normalize_json`` for values that must be a JSON object (metadata, event data)."""
    if not isinstance(value, Mapping):
        raise BadUserInput(
            f"{field}: expected a JSON object, got {type(value).__name__}",
            hint='Wrap the value in an object, e.g. {"value": ...}.',
        )
    normalized = normalize_json(value, field=field)
    assert isinstance(normalized, dict)
    return normalized


def json_depth(value: JSON) -> int:
    """Nesting depth: a scalar is 0, ``{}`` and ``[]`` are 1, ``{"a": [1]}`` is 2."""
    if isinstance(value, dict):
        return 1 + max((json_depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((json_depth(item) for item in value), default=0)
    return 0


_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
"""What ``json.dumps`` with these options builds for every call."""
_SORTED = orjson.OPT_SORT_KEYS


def _flat(value: object) -> bool:
    """A dict of ASCII text, nulls, booleans, safe integers and empty objects
    under ASCII keys, all of exact built-in types: what a certificate record
    and an event's content nearly always are. Such a dict is already in the
    canonical model, so ``normalize_json`` would copy it unchanged."""
    if type(value) is not dict:
        return False
    for key, item in value.items():
        if type(key) is not str or not key.isascii():
            return False
        kind = type(item)
        if kind is str:
            if not item.isascii():
                return False
        elif kind is int:
            if not -SAFE_INTEGER_MAX <= item <= SAFE_INTEGER_MAX:
                return False
        elif kind is dict:
            if item:
                return False
        elif item is not None and kind is not bool:
            return False
    return True


def canonical_json(value: object, *, field: str = "value") -> bytes:
    """The bytes are orjson's: on every value ``normalize_json`` returns they
    equal ``json.dumps``'s (module docstring) in a tenth of the time. orjson
    refuses a key of a ``str`` subclass; the stdlib encoder writes those.
    A flat dict (``_flat``) is encoded as it is, without the walk that would
    copy it unchanged: twice a verification (docs/design.md, Verify path)."""
    if _flat(value):
        return orjson.dumps(value, option=_SORTED)
    normalized = normalize_json(value, field=field)
    try:
        return orjson.dumps(normalized, option=_SORTED)
    except TypeError:
        return _CANONICAL.encode(normalized).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decimal_text(value: Decimal | int) -> str:
    number = Decimal(value)
    if not number.is_finite():
        raise BadUserInput(f"{value} is not a finite number")
    if number.is_zero():
        return "0"
    return format(number.normalize(), "f")
